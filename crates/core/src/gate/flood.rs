//! Refused floods, summarised: a client over its budget is answered `budget_exhausted` on every
//! call, and a loop of such calls must not push the person's history out of the log. The first
//! refusal of a client in a minute is recorded whole; the next ones in that minute are counted,
//! and one `refused_flood` event says how many when the minute is over (on the client's next
//! call, or when archgate stops).

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

/// Seconds one summary covers.
const WINDOW_S: u64 = 60;

struct Flood {
    since: u64,
    folded: u64,
}

/// Per client: the window of budget refusals being counted.
#[derive(Default)]
pub(super) struct Floods(Mutex<HashMap<String, Flood>>);

/// What to do with a budget refusal's record.
pub(super) enum Fold {
    /// Write it (the first of its window); and first, the summary of the window before, if any.
    Record(Option<Value>),
    /// Counted in the window's summary: no record of its own.
    Folded,
}

fn summary(client: &str, f: &Flood) -> Option<Value> {
    (f.folded > 0).then(|| {
        json!({
            "event": "refused_flood",
            "client": client,
            "outcome": "budget_exhausted",
            "folded": f.folded,
            "since_unix": f.since,
            "window_s": WINDOW_S,
        })
    })
}

impl Floods {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Flood>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A budget refusal of `client` at `now`.
    pub(super) fn refused(&self, client: &str, now: u64) -> Fold {
        let mut m = self.lock();
        match m.get_mut(client) {
            Some(f) if now.saturating_sub(f.since) < WINDOW_S => {
                f.folded += 1;
                Fold::Folded
            }
            _ => {
                let before = m
                    .insert(
                        client.to_owned(),
                        Flood {
                            since: now,
                            folded: 0,
                        },
                    )
                    .and_then(|f| summary(client, &f));
                Fold::Record(before)
            }
        }
    }

    /// Any other outcome of `client`: its flood, if one was being counted, is over.
    pub(super) fn ended(&self, client: &str) -> Option<Value> {
        let f = self.lock().remove(client)?;
        summary(client, &f)
    }

    /// Every window still counting, summarised and forgotten (archgate stopping).
    pub(super) fn drain(&self) -> Vec<Value> {
        self.lock()
            .drain()
            .filter_map(|(c, f)| summary(&c, &f))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_refusal_of_a_minute_is_recorded_and_the_rest_counted() {
        let f = Floods::default();
        assert!(matches!(f.refused("a", 100), Fold::Record(None)));
        for t in 101..110 {
            assert!(matches!(f.refused("a", t), Fold::Folded));
        }
        // Another client has its own window.
        assert!(matches!(f.refused("b", 105), Fold::Record(None)));
        // The next minute: recorded again, with the summary of the last one first.
        match f.refused("a", 160) {
            Fold::Record(Some(s)) => assert_eq!(s["folded"], 9),
            _ => panic!("expected a record and a summary"),
        }
        assert!(matches!(f.refused("a", 161), Fold::Folded));
        assert_eq!(f.ended("a").unwrap()["folded"], 1);
        assert!(f.ended("a").is_none());
        assert!(f.drain().is_empty(), "b folded nothing");
    }
}
