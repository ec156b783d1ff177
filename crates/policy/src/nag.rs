//! The nag guard: archgate does not pester the person.
//!
//! Two limits, both pure bookkeeping over unix seconds:
//! - after the person declines a (client, route), asking about it again backs off exponentially
//!   (30 s, 60 s, 120 s, … up to 1 h). A route left alone for a full maximum backoff after its
//!   last pause starts again at 30 s. An approval clears it.
//! - at most 12 questions in any rolling 10 minutes, across all clients.
//!
//! Core asks [`NagGuard::may_ask`] before parking a question, calls [`NagGuard::on_asked`] when
//! the question goes out, and [`NagGuard::on_declined`] / [`NagGuard::on_approved`] with the
//! answer. A refusal here becomes the approval outcome `unsupported` with the refusal's sentence.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::pattern::normalize_route;

/// The nag guard's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NagConfig {
    /// First pause after a decline, in seconds (default 30).
    pub base_backoff_secs: u64,
    /// Longest pause, in seconds (default 3600).
    pub max_backoff_secs: u64,
    /// The rolling window for the question cap, in seconds (default 600).
    pub window_secs: u64,
    /// Questions allowed per window across all clients (default 12).
    pub max_questions: u32,
}

impl Default for NagConfig {
    fn default() -> Self {
        NagConfig {
            base_backoff_secs: 30,
            max_backoff_secs: 60 * 60,
            window_secs: 10 * 60,
            max_questions: 12,
        }
    }
}

impl NagConfig {
    /// The pause after the `declines`-th decline in a row (1-based).
    pub fn backoff(&self, declines: u32) -> Duration {
        let shift = declines.saturating_sub(1).min(63);
        let secs = self
            .base_backoff_secs
            .checked_shl(shift)
            .filter(|s| s >> shift == self.base_backoff_secs)
            .unwrap_or(u64::MAX)
            .min(self.max_backoff_secs);
        Duration::from_secs(secs)
    }
}

/// Why archgate will not ask the person now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum NagRefusal {
    /// The person declined this route for this client recently.
    #[error(
        "The person declined {route:?} from {client:?} recently ({declines} time(s) in a row); \
         archgate will not ask again for {wait_secs} seconds (until unix time {until})."
    )]
    BackingOff {
        /// The client.
        client: String,
        /// The route (normalized).
        route: String,
        /// Declines in a row.
        declines: u32,
        /// When asking is possible again, unix seconds.
        until: u64,
        /// Seconds until then.
        wait_secs: u64,
    },
    /// Too many questions recently, across all clients.
    #[error(
        "The person has already been asked {limit} questions in the last {} minutes; \
         archgate will not ask again for {wait_secs} seconds (until unix time {until}).",
        window_secs / 60
    )]
    TooManyQuestions {
        /// Questions allowed per window.
        limit: u32,
        /// The window, seconds.
        window_secs: u64,
        /// When asking is possible again, unix seconds.
        until: u64,
        /// Seconds until then.
        wait_secs: u64,
    },
}

impl NagRefusal {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        match self {
            NagRefusal::BackingOff { .. } => "backing_off",
            NagRefusal::TooManyQuestions { .. } => "too_many_questions",
        }
    }

    /// When asking is possible again, unix seconds.
    pub fn retry_at(&self) -> u64 {
        match self {
            NagRefusal::BackingOff { until, .. } | NagRefusal::TooManyQuestions { until, .. } => {
                *until
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Backoff {
    declines: u32,
    until: u64,
}

/// Per-(client, route) backoff and the global question cap.
#[derive(Debug, Clone, Default)]
pub struct NagGuard {
    config: NagConfig,
    backoff: BTreeMap<(String, String), Backoff>,
    asked: VecDeque<u64>,
}

impl NagGuard {
    /// A guard with these limits.
    pub fn new(config: NagConfig) -> Self {
        NagGuard {
            config,
            backoff: BTreeMap::new(),
            asked: VecDeque::new(),
        }
    }

    /// The limits in force.
    pub fn config(&self) -> &NagConfig {
        &self.config
    }

    /// Replaces the limits (a config reload); history is kept.
    pub fn set_config(&mut self, config: NagConfig) {
        self.config = config;
    }

    fn forget_old(&mut self, now: u64) {
        let window = self.config.window_secs;
        while self
            .asked
            .front()
            .is_some_and(|&t| t <= now && now - t >= window)
        {
            self.asked.pop_front();
        }
        let quiet = self.config.max_backoff_secs;
        self.backoff
            .retain(|_, b| now < b.until.saturating_add(quiet));
    }

    /// Whether a question about `route` from `client` may go to the person at `now`.
    pub fn may_ask(&mut self, client: &str, route: &str, now: u64) -> Result<(), NagRefusal> {
        self.forget_old(now);
        let route = normalize_route(route);
        if let Some(b) = self.backoff.get(&(client.to_owned(), route.clone()))
            && now < b.until
        {
            return Err(NagRefusal::BackingOff {
                client: client.to_owned(),
                route,
                declines: b.declines,
                until: b.until,
                wait_secs: b.until - now,
            });
        }
        let limit = self.config.max_questions;
        if self.asked.len() >= usize::try_from(limit).unwrap_or(usize::MAX) {
            // The window frees a slot when the oldest question counted in it leaves.
            let excess = self.asked.len() + 1 - usize::try_from(limit).unwrap_or(usize::MAX);
            // With a limit of 0 no slot ever frees.
            let until = self.asked.get(excess - 1).map_or(u64::MAX, |&oldest| {
                oldest.saturating_add(self.config.window_secs).max(now)
            });
            return Err(NagRefusal::TooManyQuestions {
                limit,
                window_secs: self.config.window_secs,
                until,
                wait_secs: until - now,
            });
        }
        Ok(())
    }

    /// Records that a question went to the person at `now`.
    pub fn on_asked(&mut self, _client: &str, _route: &str, now: u64) {
        self.forget_old(now);
        self.asked.push_back(now);
    }

    /// Records that the person declined (`client`, `route`) at `now`; returns the pause.
    pub fn on_declined(&mut self, client: &str, route: &str, now: u64) -> Duration {
        self.forget_old(now);
        let key = (client.to_owned(), normalize_route(route));
        // `forget_old` dropped entries quiet for a whole maximum backoff: they restart at 1.
        let declines = self.backoff.get(&key).map_or(0, |b| b.declines) + 1;
        let pause = self.config.backoff(declines);
        self.backoff.insert(
            key,
            Backoff {
                declines,
                until: now.saturating_add(pause.as_secs()),
            },
        );
        pause
    }

    /// Records that the person approved (`client`, `route`): its backoff is cleared.
    pub fn on_approved(&mut self, client: &str, route: &str) {
        self.backoff
            .remove(&(client.to_owned(), normalize_route(route)));
    }

    /// Questions counted in the current window at `now`.
    pub fn questions_in_window(&self, now: u64) -> u32 {
        let window = self.config.window_secs;
        let n = self
            .asked
            .iter()
            .filter(|&&t| t > now || now - t < window)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}
