//! The approval broker, tried: first answer wins, deadlines decide, a dropped wait withdraws (`approval.rs`).

use super::*;

fn q(id: &str) -> Question {
    Question {
        id: id.into(),
        client: "local".into(),
        token: None,
        agent: None,
        tool: "theme".into(),
        route: "theme set".into(),
        summary: "omarchy-theme-set nord".into(),
        sentence: crate::sentence::Sentence {
            parts: Vec::new(),
            replaces: None,
        },
        picture: None,
        tier: Tier::Act,
        args: serde_json::json!({}),
        created: 0,
        deadline: 0,
        rule_allowed: true,
        follows: None,
    }
}

/// `q("a")` parked on `b` (out with the channels on return), waited for on its own task.
fn parked(b: &Broker, timeout: Duration) -> tokio::task::JoinHandle<ApprovalOutcome> {
    let p = b
        .park(q("a"), timeout, None)
        .expect("a channel is registered");
    tokio::spawn(p.wait())
}

#[tokio::test]
async fn no_channel_is_unsupported() {
    let b = Broker::new();
    assert!(matches!(
        b.ask(q("a"), Duration::from_secs(5)).await,
        ApprovalOutcome::Unsupported { .. }
    ));
}

#[tokio::test]
async fn first_answer_wins_and_second_finds_nothing() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    let t = parked(&b, Duration::from_secs(5));
    assert_eq!(b.answer("a", Answer::Allow, "cli"), Ok(()));
    assert_eq!(
        b.answer("a", Answer::Deny, "page"),
        Err(AnswerError::NotPending("a".into()))
    );
    assert_eq!(
        t.await.unwrap(),
        ApprovalOutcome::Accepted {
            channel: "cli".into(),
            always: false
        }
    );
}

#[tokio::test]
async fn deadline_decides_and_a_late_answer_does_nothing() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    let t = parked(&b, Duration::from_millis(50));
    tokio::time::sleep(Duration::from_millis(51)).await;
    // Either the deadline already removed it, or answer() sees the deadline passed.
    assert!(b.answer("a", Answer::Allow, "cli").is_err());
    assert_eq!(t.await.unwrap(), ApprovalOutcome::TimedOut);
}

/// The deadline is judged on the broker's clock, not the wall's: nothing passes while the
/// clock stands, an answer once it has passed is too late (silence is no), and the waiter
/// ends `timed_out` as soon as the clock is advanced — no sleeping.
#[tokio::test]
async fn the_deadline_passes_on_the_brokers_clock() {
    let clock = crate::clock::ManualClock::at(1_000);
    let b = Broker::with_clock(clock.clone());
    let _g = b.register_pull_channel();
    // Answered too late: the deadline passed before anyone answered.
    let p = b.park(q("late"), Duration::from_secs(5), None).unwrap();
    clock.advance(5);
    assert_eq!(
        b.answer("late", Answer::Allow, "cli"),
        Err(AnswerError::TooLate("late".into()))
    );
    assert_eq!(p.wait().await, ApprovalOutcome::TimedOut);
    assert!(b.pending().is_empty());
    // Not answered: the waiter wakes when the clock passes the deadline, not before.
    let t = parked(&b, Duration::from_secs(5));
    clock.advance(4);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!t.is_finished(), "one second is left on the broker's clock");
    assert_eq!(b.pending().len(), 1);
    clock.advance(1);
    let out = tokio::time::timeout(Duration::from_secs(2), t).await;
    assert_eq!(
        out.expect("woken by the clock").unwrap(),
        ApprovalOutcome::TimedOut
    );
    assert!(b.answer("a", Answer::Allow, "cli").is_err());
}

#[tokio::test]
async fn dropping_the_waiter_withdraws_the_question() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    let mut rx = b.subscribe();
    {
        let fut = b.ask(q("a"), Duration::from_secs(5));
        tokio::select! { _ = fut => unreachable!(), _ = tokio::time::sleep(Duration::from_millis(20)) => {} }
    }
    assert!(b.pending().is_empty());
    assert_eq!(
        b.answer("a", Answer::Allow, "cli"),
        Err(AnswerError::NotPending("a".into()))
    );
    let mut saw = false;
    while let Ok(ev) = rx.try_recv() {
        if let BrokerEvent::Decided { outcome, .. } = ev {
            saw = outcome == "unreachable";
        }
    }
    assert!(saw);
}

#[tokio::test]
async fn withdraw_all_makes_parked_questions_unreachable_and_later_answers_do_nothing() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    let t = parked(&b, Duration::from_secs(5));
    assert_eq!(b.withdraw_all(), 1);
    assert_eq!(t.await.unwrap(), ApprovalOutcome::Unreachable);
    assert_eq!(
        b.answer("a", Answer::Allow, "cli"),
        Err(AnswerError::NotPending("a".into()))
    );
}

#[tokio::test]
async fn concurrent_answers_run_at_most_once() {
    for _ in 0..50 {
        let b = Broker::new();
        let _g = b.register_pull_channel();
        let t = parked(&b, Duration::from_secs(5));
        let (x, y) = (b.clone(), b.clone());
        let h1 = std::thread::spawn(move || x.answer("a", Answer::Allow, "page").is_ok());
        let h2 = std::thread::spawn(move || y.answer("a", Answer::Allow, "notification").is_ok());
        let wins = [h1.join().unwrap(), h2.join().unwrap()]
            .iter()
            .filter(|w| **w)
            .count();
        assert_eq!(wins, 1);
        assert!(matches!(t.await.unwrap(), ApprovalOutcome::Accepted { .. }));
    }
}

#[tokio::test]
async fn withdraw_client_ends_only_that_clients_questions() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    let mut theirs = q("t");
    theirs.client = "bot".into();
    let t = tokio::spawn(b.park(theirs, Duration::from_secs(5), None).unwrap().wait());
    let mine = parked(&b, Duration::from_secs(5));
    assert_eq!(b.withdraw_client("nobody"), 0);
    assert_eq!(b.withdraw_client("bot"), 1);
    assert_eq!(t.await.unwrap(), ApprovalOutcome::Unreachable);
    assert_eq!(
        b.answer("t", Answer::Allow, "cli"),
        Err(AnswerError::NotPending("t".into()))
    );
    assert_eq!(b.answer("a", Answer::Allow, "cli"), Ok(()));
    assert!(matches!(
        mine.await.unwrap(),
        ApprovalOutcome::Accepted { .. }
    ));
}

/// Attack 23 F1: a question whose asker no longer counts when it is listed (its token revoked
/// between the call's authentication and its question) is never asked: it ends `unreachable`,
/// nothing is pending, no channel is told; another asker's question waits as before.
#[tokio::test]
async fn a_question_whose_asker_is_refused_when_listed_ends_unreachable_unasked() {
    let b = Broker::new();
    let _g = b.register_pull_channel();
    b.set_admit(|q| q.client != "revoked");
    let mut events = b.subscribe();
    let gone = Question {
        client: "revoked".into(),
        ..q("gone")
    };
    let outcome = b.park(gone, Duration::from_secs(5), None).unwrap().wait();
    assert_eq!(outcome.await, ApprovalOutcome::Unreachable);
    assert!(b.pending().is_empty());
    assert!(
        matches!(events.try_recv(), Ok(BrokerEvent::Decided { ref id, .. }) if id == "gone"),
        "never asked, only decided"
    );
    let t = parked(&b, Duration::from_secs(5));
    assert_eq!(b.pending().len(), 1);
    assert_eq!(b.answer("a", Answer::Allow, "cli"), Ok(()));
    assert!(matches!(t.await.unwrap(), ApprovalOutcome::Accepted { .. }));
}
