//! Budgets: fixed windows aligned to the minute, UTC day and hour; `resets_at` exact.

use archgate_policy::{Budget, BudgetKind, BudgetState, Exhausted};

/// 2027-01-15 08:00:00 UTC: a multiple of 3600 (and of 60), not of 86400.
const HOUR_START: u64 = 1_800_000_000;
/// 2027-01-15 00:00:00 UTC.
const DAY_START: u64 = HOUR_START - 8 * 3600;

#[test]
fn fixture_times_are_aligned() {
    assert_eq!(HOUR_START % 3600, 0);
    assert_eq!(DAY_START % 86_400, 0);
}

fn small() -> Budget {
    Budget {
        per_minute: 3,
        per_day: 5,
        questions_per_hour: 2,
    }
}

#[test]
fn defaults() {
    assert_eq!(
        Budget::default(),
        Budget {
            per_minute: 120,
            per_day: 2000,
            questions_per_hour: 30
        }
    );
    let b: Budget = toml::from_str("per_day = 10").expect("valid");
    assert_eq!(
        b,
        Budget {
            per_day: 10,
            ..Budget::default()
        }
    );
    assert!(toml::from_str::<Budget>("per_hour = 1").is_err());
}

#[test]
fn per_minute_exhausts_and_resets_at_the_next_minute() {
    let b = Budget {
        per_day: 100,
        ..small()
    };
    let mut s = BudgetState::new();
    let t = HOUR_START + 17; // 17 s into a minute
    for i in 0..3 {
        assert_eq!(s.charge_call(&b, t + i), Ok(()), "call {i}");
    }
    let err = s.charge_call(&b, t + 5).expect_err("exhausted");
    assert_eq!(
        err,
        Exhausted {
            which: BudgetKind::CallsPerMinute,
            limit: 3,
            resets_at: HOUR_START + 60,
            wait_secs: 60 - 22,
        }
    );
    assert_eq!(err.kind(), "budget_exhausted");
    assert!(err.to_string().contains("calls per minute"), "{err}");
    assert!(s.charge_call(&b, HOUR_START + 59).is_err());
    assert_eq!(s.charge_call(&b, HOUR_START + 60), Ok(()), "new minute");
}

#[test]
fn refused_calls_are_not_charged() {
    let b = Budget {
        per_day: 100,
        ..small()
    };
    let mut s = BudgetState::new();
    for _ in 0..10 {
        let _ = s.charge_call(&b, HOUR_START);
    }
    let c = s.counters(HOUR_START);
    assert_eq!((c.calls_this_minute, c.calls_today), (3, 3));
}

#[test]
fn per_day_exhausts_and_resets_at_utc_midnight() {
    let b = small();
    let mut s = BudgetState::new();
    for i in 0..5 {
        assert_eq!(s.charge_call(&b, HOUR_START + 60 * i), Ok(()), "call {i}");
    }
    let err = s
        .charge_call(&b, HOUR_START + 3600)
        .expect_err("day exhausted");
    assert_eq!(err.which, BudgetKind::CallsPerDay);
    assert_eq!(err.resets_at, DAY_START + 86_400);
    assert_eq!(err.wait_secs, DAY_START + 86_400 - (HOUR_START + 3600));
    assert!(s.charge_call(&b, DAY_START + 86_399).is_err());
    assert_eq!(s.charge_call(&b, DAY_START + 86_400), Ok(()), "new day");
}

#[test]
fn day_reported_before_minute_when_both_are_out() {
    let b = Budget {
        per_minute: 2,
        per_day: 2,
        questions_per_hour: 1,
    };
    let mut s = BudgetState::new();
    s.charge_call(&b, HOUR_START).expect("1");
    s.charge_call(&b, HOUR_START).expect("2");
    let err = s.charge_call(&b, HOUR_START).expect_err("out");
    assert_eq!(
        err.which,
        BudgetKind::CallsPerDay,
        "the later reset is the honest one"
    );
}

#[test]
fn questions_per_hour() {
    let b = small();
    let mut s = BudgetState::new();
    let t = HOUR_START + 1800;
    assert_eq!(s.charge_question(&b, t), Ok(()));
    assert_eq!(s.charge_question(&b, t + 1), Ok(()));
    let err = s.charge_question(&b, t + 2).expect_err("exhausted");
    assert_eq!(err.which, BudgetKind::QuestionsPerHour);
    assert_eq!(err.resets_at, HOUR_START + 3600);
    assert_eq!(s.charge_question(&b, HOUR_START + 3600), Ok(()));
    // Questions do not spend the call budget.
    assert_eq!(s.counters(HOUR_START + 3600).calls_today, 0);
}

#[test]
fn zero_budget_allows_nothing() {
    let b = Budget {
        per_minute: 0,
        ..Budget::default()
    };
    let mut s = BudgetState::new();
    assert_eq!(
        s.charge_call(&b, HOUR_START).map_err(|e| e.which),
        Err(BudgetKind::CallsPerMinute)
    );
}

#[test]
fn counters_follow_the_windows() {
    let b = Budget::default();
    let mut s = BudgetState::new();
    s.charge_call(&b, HOUR_START + 10).expect("call");
    s.charge_call(&b, HOUR_START + 20).expect("call");
    s.charge_question(&b, HOUR_START + 20).expect("question");
    let c = s.counters(HOUR_START + 30);
    assert_eq!(
        (c.calls_this_minute, c.calls_today, c.questions_this_hour),
        (2, 2, 1)
    );
    assert_eq!(c.minute_resets_at, HOUR_START + 60);
    assert_eq!(c.hour_resets_at, HOUR_START + 3600);
    assert_eq!(c.day_resets_at, DAY_START + 86_400);
    let later = s.counters(HOUR_START + 3600);
    assert_eq!(
        (
            later.calls_this_minute,
            later.calls_today,
            later.questions_this_hour
        ),
        (0, 2, 0)
    );
    let json = serde_json::to_value(later).expect("json");
    assert_eq!(json["calls_today"], 2);
}
