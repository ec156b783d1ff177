//! Class: *a record that cannot be written does not stop the call it records* (attack 33 F1: the
//! log's disk filled by one `dd`, and thirty reads were answered with no line at all). No call is
//! answered while its record cannot be written: the call whose record failed has its answer
//! withheld, every call after it is refused before any work, and the log that can be written
//! again is noticed by the next call (its refusal's record is the try that succeeds).

use super::*;

fn text_of(r: &archgate_core::gate::CallResult) -> String {
    match &r.output {
        Ok(o) => format!("{:?}", o.content),
        Err(refusal) => refusal.message.clone(),
    }
}

/// Every write of `e`'s log fails from now on, as on a full disk: the log's name holds a
/// directory, which the writer finds at its next look (every 100 ms) and cannot open. The log
/// as it was is kept beside it (`.before`).
fn break_log(e: &Env) {
    std::fs::rename(&e.log, e.log.with_extension("before")).unwrap();
    std::fs::create_dir(&e.log).unwrap();
}

#[tokio::test]
async fn no_call_is_answered_while_its_record_cannot_be_written() {
    let e = env("");
    let first = e
        .gate
        .call(&client(), "echo", json!({"words": ["first"]}))
        .await;
    assert!(first.output.is_ok(), "{}", text_of(&first));
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    assert!(e.gate.audit().writable());

    break_log(&e);
    std::thread::sleep(Duration::from_millis(250));
    let withheld = e
        .gate
        .call(&client(), "echo", json!({"words": ["second"]}))
        .await;
    assert!(withheld.output.is_err(), "answered: {}", text_of(&withheld));
    assert!(
        text_of(&withheld).contains("activity log cannot be written"),
        "{}",
        text_of(&withheld)
    );
    assert!(!e.gate.audit().writable());
    let refused = e
        .gate
        .call(&client(), "echo", json!({"words": ["third"]}))
        .await;
    assert!(refused.output.is_err(), "answered: {}", text_of(&refused));
    assert_eq!(refused.outcome, Outcome::Refused);

    // Writable again: noticed by the next write that succeeds — a line still queued, which the
    // writer tries again, or the next call's refusal, whose record is the try. At most one call
    // is refused after the disk is free.
    std::fs::remove_dir(&e.log).unwrap();
    let mut refusals = 0;
    let answered = loop {
        let r = e
            .gate
            .call(&client(), "echo", json!({"words": ["again"]}))
            .await;
        if r.output.is_ok() {
            break r;
        }
        refusals += 1;
        assert!(
            refusals <= 1,
            "refused with the log writable: {}",
            text_of(&r)
        );
        assert!(e.gate.audit().flush(Duration::from_secs(5)));
    };
    assert!(e.gate.audit().writable());
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    // What reached the log: the answered call last; the withheld call's line failed with its
    // write, and no call was answered unrecorded (the refusals' lines, queued while the log
    // failed, may land once it is writable).
    let ids: Vec<(String, Outcome)> = records(&e).into_iter().map(|r| (r.id, r.outcome)).collect();
    assert_eq!(
        ids.last(),
        Some(&(answered.id.clone(), Outcome::Ok)),
        "{ids:?}"
    );
    assert!(!ids.iter().any(|(id, _)| *id == withheld.id), "{ids:?}");
    assert!(
        ids.iter()
            .all(|(id, o)| *o == Outcome::Refused || *id == answered.id),
        "{ids:?}"
    );
    assert!(
        e.gate
            .audit()
            .stats()
            .write_failures
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
}

/// Attack 34 F1: near its rotation (the last 512 KiB, or always with a small `max_bytes`) the
/// log is written by its writer thread, after the caller returned — the check above saw a log
/// that had not failed yet, and a read was answered whose record the full disk tore. Now a record
/// handed to the writer thread is waited for before the answer goes out.
#[tokio::test]
async fn a_record_the_writer_thread_writes_is_waited_for_before_the_answer() {
    let loaded = load_str("");
    let e = env_with_log(
        ConfigHandle::fixed(loaded.config),
        Arc::new(archgate_core::clock::SystemClock),
        |_| {},
        64 * 1024,
    );
    let first = e
        .gate
        .call(&client(), "echo", json!({"words": ["first"]}))
        .await;
    assert!(first.output.is_ok(), "{}", text_of(&first));
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    break_log(&e);
    std::thread::sleep(Duration::from_millis(250));
    let withheld = e
        .gate
        .call(&client(), "echo", json!({"words": ["second"]}))
        .await;
    assert!(withheld.output.is_err(), "answered: {}", text_of(&withheld));
    assert!(!e.gate.audit().writable());
}

/// Attack 34 F7: an act call that ran to its end, its last record failing, was answered
/// "refused … nothing was answered" — and an agent makes a change that happened again. Its
/// `started` line is on disk before its work, so what it did is recorded: its answer says what
/// ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_act_call_that_ran_is_answered_as_it_ran_when_its_last_record_fails() {
    // `started.rs`'s act tool: it holds its work `hold_ms`.
    let e = super::started::watcher_env();
    let gate = e.gate.clone();
    let call = tokio::spawn(async move {
        gate.call(&client(), "watcher", json!({"hold_ms": 600}))
            .await
    });
    // While the work runs (its started line already written), the log breaks.
    std::thread::sleep(Duration::from_millis(200));
    break_log(&e);
    let r = call.await.unwrap();
    assert!(
        r.output.is_ok(),
        "a change that ran was answered as none: {}",
        text_of(&r)
    );
    assert_eq!(r.outcome, Outcome::Ok);
    let started = std::fs::read_to_string(e.log.with_extension("before")).unwrap();
    assert!(
        started
            .lines()
            .any(|l| l.contains("\"started\"") && l.contains(&r.id)),
        "{started}"
    );
}
