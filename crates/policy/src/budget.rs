//! Budgets per client: calls per minute and per day, questions to the person per hour.
//!
//! Windows are **fixed and aligned** to the UTC minute, day and hour (a window starts at a
//! multiple of its length in unix seconds), so "resets at" is a single exact instant that a person
//! can read, and the counters in /health agree with it. The price of fixed windows is that a
//! client can spend up to twice a budget across a boundary (the end of one window and the start of
//! the next); the per-day budget bounds that. A call refused for budget is not charged.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Seconds in a minute window.
pub const MINUTE: u64 = 60;
/// Seconds in an hour window.
pub const HOUR: u64 = 60 * 60;
/// Seconds in a day window (UTC day).
pub const DAY: u64 = 24 * 60 * 60;

/// One client's budget, from config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Calls per minute (default 120). 0 allows none.
    pub per_minute: u32,
    /// Calls per UTC day (default 2000). 0 allows none.
    pub per_day: u32,
    /// Questions to the person per hour (default 30). 0 allows none.
    pub questions_per_hour: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            per_minute: 120,
            per_day: 2000,
            questions_per_hour: 30,
        }
    }
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// Calls per minute.
    CallsPerMinute,
    /// Calls per day.
    CallsPerDay,
    /// Questions per hour.
    QuestionsPerHour,
}

impl fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BudgetKind::CallsPerMinute => "calls per minute",
            BudgetKind::CallsPerDay => "calls per day",
            BudgetKind::QuestionsPerHour => "questions to the person per hour",
        })
    }
}

/// A budget is exhausted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize)]
#[error(
    "This client has used its budget of {limit} {which}; it resets at unix time {resets_at} \
     (in {wait_secs} seconds)."
)]
pub struct Exhausted {
    /// Which budget.
    pub which: BudgetKind,
    /// Its limit.
    pub limit: u32,
    /// When the window resets, unix seconds.
    pub resets_at: u64,
    /// Seconds until then.
    pub wait_secs: u64,
}

impl Exhausted {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        "budget_exhausted"
    }
}

/// A fixed window: its start and how much was charged in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Window {
    start: u64,
    count: u32,
}

impl Window {
    /// The count at `now` for windows of `len` seconds (0 once the window has passed).
    fn count_at(&self, len: u64, now: u64) -> u32 {
        if now - now % len == self.start {
            self.count
        } else {
            0
        }
    }

    fn roll(&mut self, len: u64, now: u64) {
        let start = now - now % len;
        if start != self.start {
            *self = Window { start, count: 0 };
        }
    }

    fn check(&self, which: BudgetKind, limit: u32, len: u64, now: u64) -> Result<(), Exhausted> {
        if self.count_at(len, now) < limit {
            return Ok(());
        }
        let resets_at = (now - now % len).saturating_add(len);
        Err(Exhausted {
            which,
            limit,
            resets_at,
            wait_secs: resets_at - now,
        })
    }
}

/// One client's spending so far.
#[derive(Debug, Clone, Default)]
pub struct BudgetState {
    minute: Window,
    day: Window,
    questions: Window,
}

/// Counters for /health and the approval page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetCounters {
    /// Calls in the current minute.
    pub calls_this_minute: u32,
    /// When the minute window resets, unix seconds.
    pub minute_resets_at: u64,
    /// Calls in the current UTC day.
    pub calls_today: u32,
    /// When the day window resets, unix seconds.
    pub day_resets_at: u64,
    /// Questions in the current hour.
    pub questions_this_hour: u32,
    /// When the hour window resets, unix seconds.
    pub hour_resets_at: u64,
}

impl BudgetState {
    /// A fresh state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Charges one call at `now`, or says which budget is exhausted (the daily one first, since
    /// it resets last). A refused call is not charged.
    pub fn charge_call(&mut self, budget: &Budget, now: u64) -> Result<(), Exhausted> {
        self.day
            .check(BudgetKind::CallsPerDay, budget.per_day, DAY, now)?;
        self.minute
            .check(BudgetKind::CallsPerMinute, budget.per_minute, MINUTE, now)?;
        self.day.roll(DAY, now);
        self.minute.roll(MINUTE, now);
        self.day.count = self.day.count.saturating_add(1);
        self.minute.count = self.minute.count.saturating_add(1);
        Ok(())
    }

    /// Charges one question to the person at `now`, or says the hourly budget is exhausted.
    pub fn charge_question(&mut self, budget: &Budget, now: u64) -> Result<(), Exhausted> {
        self.questions.check(
            BudgetKind::QuestionsPerHour,
            budget.questions_per_hour,
            HOUR,
            now,
        )?;
        self.questions.roll(HOUR, now);
        self.questions.count = self.questions.count.saturating_add(1);
        Ok(())
    }

    /// The counters at `now`.
    pub fn counters(&self, now: u64) -> BudgetCounters {
        let next = |len: u64| (now - now % len).saturating_add(len);
        BudgetCounters {
            calls_this_minute: self.minute.count_at(MINUTE, now),
            minute_resets_at: next(MINUTE),
            calls_today: self.day.count_at(DAY, now),
            day_resets_at: next(DAY),
            questions_this_hour: self.questions.count_at(HOUR, now),
            hour_resets_at: next(HOUR),
        }
    }
}
