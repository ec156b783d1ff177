//! The nag guard: backoff after a decline, and at most 12 questions per 10 minutes.

use std::time::Duration;

use archgate_policy::{NagConfig, NagGuard, NagRefusal};

const NOW: u64 = 1_800_000_000;

#[test]
fn backoff_doubles_up_to_an_hour() {
    let c = NagConfig::default();
    let secs: Vec<u64> = (1..=9).map(|n| c.backoff(n).as_secs()).collect();
    assert_eq!(secs, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    assert_eq!(c.backoff(u32::MAX), Duration::from_secs(3600));
}

#[test]
fn declined_route_backs_off_then_may_ask_again() {
    let mut g = NagGuard::default();
    assert_eq!(g.may_ask("local", "theme set", NOW), Ok(()));
    g.on_asked("local", "theme set", NOW);
    assert_eq!(
        g.on_declined("local", "theme set", NOW),
        Duration::from_secs(30)
    );

    let err = g
        .may_ask("local", "theme set", NOW + 29)
        .expect_err("backing off");
    assert!(
        matches!(err, NagRefusal::BackingOff { until, wait_secs: 1, declines: 1, .. } if until == NOW + 30)
    );
    assert_eq!(err.retry_at(), NOW + 30);
    assert_eq!(err.kind(), "backing_off");
    assert!(err.to_string().contains("1 seconds"), "{err}");
    assert_eq!(g.may_ask("local", "theme set", NOW + 30), Ok(()));

    // A second decline in a row doubles the pause.
    assert_eq!(
        g.on_declined("local", "theme set", NOW + 30),
        Duration::from_secs(60)
    );
    assert!(g.may_ask("local", "theme set", NOW + 89).is_err());
    assert_eq!(g.may_ask("local", "  Theme set ", NOW + 90), Ok(()));
}

#[test]
fn backoff_is_per_client_and_route() {
    let mut g = NagGuard::default();
    g.on_declined("local", "theme set", NOW);
    assert!(g.may_ask("local", "theme set", NOW + 1).is_err());
    assert_eq!(g.may_ask("local", "theme next", NOW + 1), Ok(()));
    assert_eq!(g.may_ask("cursor", "theme set", NOW + 1), Ok(()));
}

#[test]
fn approval_clears_backoff() {
    let mut g = NagGuard::default();
    g.on_declined("local", "theme set", NOW);
    g.on_declined("local", "theme set", NOW + 30);
    g.on_approved("local", "theme set");
    assert_eq!(g.may_ask("local", "theme set", NOW + 31), Ok(()));
    assert_eq!(
        g.on_declined("local", "theme set", NOW + 31),
        Duration::from_secs(30)
    );
}

#[test]
fn long_quiet_restarts_backoff() {
    let mut g = NagGuard::default();
    let mut t = NOW;
    for _ in 0..8 {
        let pause = g.on_declined("local", "pkg remove", t);
        t += pause.as_secs();
    }
    assert_eq!(
        g.on_declined("local", "pkg remove", t),
        Duration::from_secs(3600)
    );
    // Quiet for the pause plus a whole maximum backoff: back to the first step.
    assert_eq!(
        g.on_declined("local", "pkg remove", t + 3600 + 3600),
        Duration::from_secs(30)
    );
}

#[test]
fn twelve_questions_per_ten_minutes_across_clients() {
    let mut g = NagGuard::default();
    for i in 0..12u64 {
        let client = if i % 2 == 0 { "local" } else { "cursor" };
        let route = format!("route {i}");
        let at = NOW + i * 10;
        assert_eq!(g.may_ask(client, &route, at), Ok(()), "question {i}");
        g.on_asked(client, &route, at);
    }
    assert_eq!(g.questions_in_window(NOW + 110), 12);
    let err = g
        .may_ask("third", "route x", NOW + 120)
        .expect_err("cap reached");
    assert!(
        matches!(err, NagRefusal::TooManyQuestions { limit: 12, until, wait_secs: 480, .. } if until == NOW + 600),
        "{err:?}"
    );
    assert_eq!(err.kind(), "too_many_questions");
    assert!(
        err.to_string()
            .contains("12 questions in the last 10 minutes"),
        "{err}"
    );
    assert!(g.may_ask("third", "route x", NOW + 599).is_err());
    // The first question leaves the window at NOW + 600: one slot frees.
    assert_eq!(g.may_ask("third", "route x", NOW + 600), Ok(()));
    g.on_asked("third", "route x", NOW + 600);
    let err = g
        .may_ask("third", "route y", NOW + 600)
        .expect_err("full again");
    assert_eq!(err.retry_at(), NOW + 610, "the second question leaves next");
}

#[test]
fn custom_limits() {
    let mut g = NagGuard::new(NagConfig {
        max_questions: 1,
        window_secs: 60,
        ..NagConfig::default()
    });
    g.on_asked("local", "a", NOW);
    assert_eq!(
        g.may_ask("local", "b", NOW + 59).map_err(|e| e.retry_at()),
        Err(NOW + 60)
    );
    assert_eq!(g.may_ask("local", "b", NOW + 60), Ok(()));

    let mut never = NagGuard::new(NagConfig {
        max_questions: 0,
        ..NagConfig::default()
    });
    assert!(never.may_ask("local", "a", NOW).is_err());
}

#[test]
fn config_reads_from_toml_with_defaults() {
    let c: NagConfig = toml::from_str("max_questions = 5").expect("valid");
    assert_eq!(
        c,
        NagConfig {
            max_questions: 5,
            ..NagConfig::default()
        }
    );
    assert!(toml::from_str::<NagConfig>("max_question = 5").is_err());
}
