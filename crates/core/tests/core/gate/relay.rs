//! The relaying client as a channel: tickets on the stateless protocol, live elicitation, the
//! person's trust, and presence.

use super::*;

/// Under `approval.presence = "polkit"` a trusted relaying client is never asked: it cannot
/// show that the person is there. The question waits on the person's own channels.
#[tokio::test]
async fn a_relay_is_not_asked_where_presence_is_needed() {
    let e = env(&format!("{TRUSTED}[approval]\npresence = \"polkit\"\n"));
    let r = relayed(&e, &client(), "a", None, None).await;
    assert_ne!(
        r.outcome,
        Outcome::InputRequired,
        "no ticket is handed to the client"
    );
    let r = relayed(&e, &client(), "a", Some("made-up"), Some(Answer::Allow)).await;
    assert_ne!(
        r.outcome,
        Outcome::Ok,
        "a relayed yes does not run the call"
    );
}

/// The person trusts the client `local` (the tests' client) to relay their answer.
const TRUSTED: &str = "[clients.local]\ntrusted_relay = true\n";

fn resume(ticket: Option<&str>, answer: Option<Answer>) -> Relay {
    Relay::Resume {
        ticket: ticket.map(str::to_owned),
        answer,
    }
}

/// `secret {text}` from a relaying client on the stateless protocol, with `ticket` and `answer`.
async fn relayed(
    e: &Env,
    c: &Client,
    text: &str,
    ticket: Option<&str>,
    answer: Option<Answer>,
) -> archgate_core::gate::CallResult {
    e.gate
        .call_relayed(
            c,
            "secret",
            json!({ "text": text }),
            &resume(ticket, answer),
        )
        .await
}

/// The first request of a relaying client on the stateless protocol: `input_required` with the
/// ticket, the question parked.
async fn first_request(e: &Env, c: &Client, text: &str) -> String {
    let r = relayed(e, c, text, None, None).await;
    assert_eq!(r.outcome, Outcome::InputRequired);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, Kind::InputRequired);
    let ticket = err.input_required().expect("typed ticket").ticket.clone();
    assert!(e.gate.broker().pending().iter().any(|q| q.id == ticket));
    ticket
}

#[tokio::test]
async fn a_relaying_client_brings_the_answer_back_once_and_only_for_that_call() {
    // No channel of the person's is running: the relaying client is the only one. `other` is
    // trusted too, so only the ticket's binding can refuse it.
    let e = env(&format!("{TRUSTED}[clients.other]\ntrusted_relay = true\n"));
    let c = client();
    let ticket = first_request(&e, &c, "a").await;

    // Another client cannot use the ticket; the same client cannot use it for another call.
    let other = Client {
        name: "other".into(),
        grant: Grant::full(),
        agent: None,
        transport: archgate_core::gate::Transport::Http,
        token: None,
    };
    let r = relayed(&e, &other, "a", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, Kind::TicketUnknown);
    let r = relayed(&e, &c, "b", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, Kind::TicketMismatch);
    assert!(
        e.gate.broker().pending().iter().any(|q| q.id == ticket),
        "still parked"
    );

    // The right call with the person's yes runs, once.
    let r = relayed(&e, &c, "a", Some(&ticket), Some(Answer::AllowAlways)).await;
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(
        matches!(&r.output.unwrap().content[..], [archgate_core::tool::Content::Text(t)] if t == "output a")
    );
    let r = relayed(&e, &c, "a", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, Kind::TicketUnknown);

    let recs = records(&e);
    let outcomes: Vec<_> = recs.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::InputRequired,
            Outcome::Refused,
            Outcome::Refused,
            Outcome::Ok,
            Outcome::Refused
        ]
    );
    let first = recs[0].approval.as_ref().unwrap();
    assert_eq!(
        (first.outcome.as_str(), first.channel.as_deref()),
        ("input_required", Some("client"))
    );
    let ran = recs[3].approval.as_ref().unwrap();
    assert_eq!(
        (ran.outcome.as_str(), ran.channel.as_deref()),
        ("accepted", Some("client"))
    );
    // A relay never creates a standing rule, even when it says "always".
    assert_eq!(ran.rule_id, None);
    assert!(e.gate.person().rules().is_empty());
}

#[tokio::test]
async fn a_ticket_keeps_the_first_answer_whichever_channel_gave_it() {
    let e = env(TRUSTED);
    let _page = e.gate.broker().register_pull_channel();
    let c = client();
    // Coming back without an answer waits for the person's other channels.
    let ticket = first_request(&e, &c, "y").await;
    let g = e.gate.clone();
    let t2 = ticket.clone();
    let waiting = tokio::spawn(async move {
        g.call_relayed(
            &client(),
            "secret",
            json!({"text": "y"}),
            &resume(Some(&t2), None),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished());
    e.gate
        .broker()
        .answer(&ticket, Answer::Allow, "cli")
        .unwrap();
    assert_eq!(waiting.await.unwrap().outcome, Outcome::Ok);
    // The page's no came first: the client's later yes changes nothing.
    let ticket = first_request(&e, &c, "x").await;
    e.gate
        .broker()
        .answer(&ticket, Answer::Deny, "page")
        .unwrap();
    let r = relayed(&e, &c, "x", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.outcome, Outcome::Declined);
    let recs = records(&e);
    let a = recs[3].approval.as_ref().unwrap();
    assert_eq!(
        (a.outcome.as_str(), a.channel.as_deref()),
        ("declined", Some("page"))
    );
}

/// The question's deadline passes on the gate's clock (no sleeping): one second before it the
/// question still waits; at it, the client's yes comes too late and nothing runs (silence is no).
#[tokio::test]
async fn a_ticket_past_its_deadline_runs_nothing() {
    let clock = archgate_core::clock::ManualClock::at(1_790_000_000);
    let e = env_on(
        &format!("{TRUSTED}[approval]\ntimeout_s = 5\n"),
        clock.clone(),
    );
    let c = client();
    let ticket = first_request(&e, &c, "late").await;
    clock.advance(4);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        e.gate.broker().pending().len(),
        1,
        "still before the deadline"
    );
    clock.advance(1);
    let r = relayed(&e, &c, "late", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.outcome, Outcome::TimedOut);
    assert!(e.gate.broker().pending().is_empty());
    let recs = records(&e);
    let a = recs.last().unwrap().approval.as_ref().unwrap();
    assert_eq!(
        (a.outcome.as_str(), a.channel.as_deref()),
        ("timed_out", None)
    );
}

/// A client that answers its elicitation at once, and says when it was withdrawn.
struct Elicited(Answer, Arc<std::sync::atomic::AtomicUsize>);
impl Channel for Elicited {
    fn name(&self) -> &'static str {
        "client"
    }
    fn ask(&self, q: &Question, broker: Broker) {
        let (id, answer) = (q.id.clone(), self.0);
        tokio::spawn(async move { broker.answer(&id, answer, "client") });
    }
    fn withdraw(&self, _id: &str) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_live_relay_answers_while_the_call_waits_and_is_withdrawn_after() {
    let e = env(TRUSTED);
    let c = client();
    for (answer, expect) in [
        (Answer::Allow, Outcome::Ok),
        (Answer::Deny, Outcome::Declined),
    ] {
        let withdrawn = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let relay = Relay::Live(Arc::new(Elicited(answer, withdrawn.clone())));
        let r = e
            .gate
            .call_relayed(&c, "secret", json!({"text": "z"}), &relay)
            .await;
        assert_eq!(r.outcome, expect);
        assert_eq!(withdrawn.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
    let recs = records(&e);
    assert!(
        recs.iter()
            .all(|r| r.approval.as_ref().unwrap().channel.as_deref() == Some("client"))
    );
    // Without the relay, and with no channel of the person's, nobody can be asked.
    let r = e.gate.call(&c, "secret", json!({"text": "z"})).await;
    assert_eq!(r.outcome, Outcome::Unsupported);
}

#[tokio::test]
async fn a_client_the_person_does_not_trust_is_never_a_relay() {
    let e = env("");
    let c = client();
    // Offered by the transport, refused by the gate: nobody else can be asked.
    let r = relayed(&e, &c, "t", None, None).await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    let withdrawn = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let relay = Relay::Live(Arc::new(Elicited(Answer::Allow, withdrawn.clone())));
    let r = e
        .gate
        .call_relayed(&c, "secret", json!({"text": "t"}), &relay)
        .await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    assert_eq!(
        withdrawn.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "never asked"
    );
    assert!(e.gate.broker().pending().is_empty());
}

/// What the person was asked about is what runs, across a ticket too (issue 33, item 9): the
/// client's second request is judged again, and the program its command names was renamed over
/// since the question. The second request pins another file than the one asked about, so the
/// relayed yes does not run it.
#[tokio::test]
async fn a_ticket_does_not_run_a_program_swapped_since_the_question() {
    let bin = tempfile::tempdir().unwrap();
    let prog = bin.path().join("hello");
    let install = |text: &str| {
        let tmp = bin.path().join(".hello.new");
        std::fs::write(&tmp, text).unwrap();
        std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::rename(&tmp, &prog).unwrap();
    };
    install("#!/bin/sh\necho approved\n");
    let e = env(&format!(
        "{TRUSTED}[exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\nrequire_root_owned = false\n\
         [policy]\nask = [\"from_file app\"]\n",
        bin.path().display()
    ));
    entry(&e, &["hello"]);
    let c = client();
    let r = e
        .gate
        .call_relayed(&c, "from_file", json!({}), &resume(None, None))
        .await;
    assert_eq!(r.outcome, Outcome::InputRequired);
    let ticket = r
        .output
        .unwrap_err()
        .input_required()
        .unwrap()
        .ticket
        .clone();

    install("#!/bin/sh\necho swapped\n");
    let r = e
        .gate
        .call_relayed(
            &c,
            "from_file",
            json!({}),
            &resume(Some(&ticket), Some(Answer::Allow)),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Refused);
    let err = r.output.unwrap_err();
    assert_eq!(
        err.kind,
        Kind::Tool(archgate_core::tool::ErrorKind::ChangedSinceApproval),
        "{}",
        err.message
    );
    // Nothing ran, and the question stays parked under its deadline for the person.
    assert!(e.gate.broker().pending().iter().any(|q| q.id == ticket));
}
