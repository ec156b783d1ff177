//! Refused floods, summarised: a client over its budget is answered `budget_exhausted` on every
//! call, and a loop of such calls must not push the person's history out of the log. The first
//! refusal of a client in a minute is recorded whole; the next ones in that minute are counted,
//! and one `refused_flood` event says how many when the minute is over (on the client's next
//! call, or when archgate stops).
//!
//! The count is also written as it grows — a `refused_flood_count` event when the window's
//! count reaches 1, 2, 4, 8 … and at most every `COUNT_EVERY_S` seconds between — so a daemon
//! killed mid-flood leaves the count on disk (within a factor of two, or those seconds), in
//! O(log n + minutes) lines rather than one per refusal.
//!
//! A window is kept per client *and transport* (HTTP token, bridged stdio …), and every line
//! names both: two clients of one name — an HTTP token client and a bridged process using its
//! name — stay apart in the log (attack 10 F4; class: *two callers the log cannot tell apart*).

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Seconds one summary covers.
const WINDOW_S: u64 = 60;
/// Seconds between two `refused_flood_count` lines of one window, past the doublings.
const COUNT_EVERY_S: u64 = 5;

struct Flood {
    since: u64,
    folded: u64,
    /// When this window's count was last written.
    counted_at: u64,
}

/// A window's caller: the client's name and its transport.
type Caller = (String, String);

/// Per client and transport: the window of budget refusals being counted.
#[derive(Default)]
pub(super) struct Floods {
    windows: Mutex<HashMap<Caller, Flood>>,
    /// Whether `windows` may hold any: every call that ends otherwise asks whether its client's
    /// flood is over, and while none is counted (the common case) it takes no lock all calls
    /// share (issue 34). Written under `windows`' lock.
    counting: AtomicBool,
}

/// What to do with a budget refusal's record.
pub(super) enum Fold {
    /// Write it (the first of its window); and first, the summary of the window before, if any.
    Record(Option<Value>),
    /// Counted in the window's summary: no record of its own; the count so far to write now,
    /// when it is due (`refused_flood_count`).
    Folded(Option<Value>),
}

fn count_so_far((client, transport): &Caller, f: &Flood) -> Value {
    json!({
        "event": "refused_flood_count",
        "client": client,
        "transport": transport,
        "outcome": "budget_exhausted",
        "folded_so_far": f.folded,
        "since_unix": f.since,
        "window_s": WINDOW_S,
    })
}

fn summary((client, transport): &Caller, f: &Flood) -> Option<Value> {
    (f.folded > 0).then(|| {
        json!({
            "event": "refused_flood",
            "client": client,
            "transport": transport,
            "outcome": "budget_exhausted",
            "folded": f.folded,
            "since_unix": f.since,
            "window_s": WINDOW_S,
        })
    })
}

impl Floods {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Caller, Flood>> {
        self.windows.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A budget refusal of `client` through `transport` at `now`.
    pub(super) fn refused(&self, client: &str, transport: &str, now: u64) -> Fold {
        let key: Caller = (client.to_owned(), transport.to_owned());
        let mut m = self.lock();
        match m.get_mut(&key) {
            Some(f) if now.saturating_sub(f.since) < WINDOW_S => {
                f.folded += 1;
                let due =
                    f.folded.is_power_of_two() || now.saturating_sub(f.counted_at) >= COUNT_EVERY_S;
                if due {
                    f.counted_at = now;
                }
                Fold::Folded(due.then(|| count_so_far(&key, f)))
            }
            _ => {
                self.counting.store(true, Ordering::Release);
                let before = m
                    .insert(
                        key.clone(),
                        Flood {
                            since: now,
                            folded: 0,
                            counted_at: now,
                        },
                    )
                    .and_then(|f| summary(&key, &f));
                Fold::Record(before)
            }
        }
    }

    /// Any other outcome of `client` through `transport`: its flood, if one was being counted,
    /// is over.
    pub(super) fn ended(&self, client: &str, transport: &str) -> Option<Value> {
        if !self.counting.load(Ordering::Acquire) {
            return None;
        }
        let key: Caller = (client.to_owned(), transport.to_owned());
        let f = {
            let mut m = self.lock();
            let f = m.remove(&key);
            if m.is_empty() {
                self.counting.store(false, Ordering::Release);
            }
            f?
        };
        summary(&key, &f)
    }

    /// Every window still counting, summarised and forgotten (archgate stopping).
    pub(super) fn drain(&self) -> Vec<Value> {
        let mut m = self.lock();
        self.counting.store(false, Ordering::Release);
        m.drain().filter_map(|(c, f)| summary(&c, &f)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_refusal_of_a_minute_is_recorded_and_the_rest_counted() {
        let f = Floods::default();
        assert!(matches!(f.refused("a", "http", 100), Fold::Record(None)));
        // The count so far is written at 1, 2, 4, 8 (and every 5 s between).
        let mut counts = Vec::new();
        for t in 101..110 {
            match f.refused("a", "http", t) {
                Fold::Folded(Some(c)) => counts.push(c["folded_so_far"].as_u64().unwrap()),
                Fold::Folded(None) => {}
                Fold::Record(_) => panic!("folded expected"),
            }
        }
        assert_eq!(counts, vec![1, 2, 4, 8]);
        // Another client has its own window.
        assert!(matches!(f.refused("b", "http", 105), Fold::Record(None)));
        // The next minute: recorded again, with the summary of the last one first.
        match f.refused("a", "http", 160) {
            Fold::Record(Some(s)) => assert_eq!(s["folded"], 9),
            _ => panic!("expected a record and a summary"),
        }
        assert!(matches!(f.refused("a", "http", 161), Fold::Folded(Some(_))));
        // Past the doublings, the count is written once every 5 s at most.
        let mut lines = 0;
        for t in 162..172 {
            for _ in 0..10 {
                if let Fold::Folded(Some(_)) = f.refused("a", "http", t) {
                    lines += 1;
                }
            }
        }
        assert!(
            (2..=8).contains(&lines),
            "{lines} count lines in 10 s of 100 refusals"
        );
        assert_eq!(f.ended("a", "http").unwrap()["folded"], 101);
        assert!(matches!(f.refused("a", "http", 172), Fold::Record(None)));
        assert!(matches!(f.refused("a", "http", 173), Fold::Folded(Some(_))));
        assert_eq!(f.ended("a", "http").unwrap()["folded"], 1);
        assert!(f.ended("a", "http").is_none());
        assert!(f.drain().is_empty(), "b folded nothing");
    }

    /// Attack 10 F4: an HTTP client and a bridged process of one name fold apart, and every
    /// line names its transport.
    #[test]
    fn two_transports_of_one_client_name_fold_apart_and_say_which() {
        let f = Floods::default();
        assert!(matches!(
            f.refused("default", "http", 100),
            Fold::Record(None)
        ));
        assert!(matches!(
            f.refused("default", "bridge", 100),
            Fold::Record(None)
        ));
        match f.refused("default", "bridge", 101) {
            Fold::Folded(Some(c)) => {
                assert_eq!(c["transport"], "bridge", "{c}");
                assert_eq!(c["client"], "default", "{c}");
                assert_eq!(c["folded_so_far"], 1, "{c}");
            }
            _ => panic!("folded with its count expected"),
        }
        let s = f.ended("default", "bridge").unwrap();
        assert_eq!(
            (s["transport"].as_str(), s["folded"].as_u64()),
            (Some("bridge"), Some(1))
        );
        assert!(
            f.ended("default", "http").is_none(),
            "the HTTP one folded nothing"
        );
    }
}
