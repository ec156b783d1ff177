//! What only the person changes: standing rules, acknowledged routes, developer mode — and the
//! per-client counters that protect them from being nagged (nag guard, budgets).
//! The standing rules' own methods are `person/rules.rs`'s; their cross-process lock
//! `person/rules_lock.rs`'s.
//!
//! No tool reaches this module's setters: the person's are `PersonChannel`'s, which the gate
//! hands out once (`Gate::take_person_channel`) and the binary gives only to the CLI's commands,
//! the control socket and the approval page (a tidy test holds that); the gate's own (budgets,
//! the nag guard, a rule's use, the rule an "Always…" answer creates) are `pub(crate)`. Standing rules and acknowledgements are stored 0600 in the state
//! directory; developer mode lives in memory only, so it is off after a restart.

mod acknowledged;
mod rules;
mod rules_lock;

use archgate_policy::{Budget, BudgetState, NagGuard, StandingRule};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub const DEV_MODE_MAX_SECS: u64 = 8 * 3600;

#[derive(Debug)]
pub struct PersonState {
    rules_file: PathBuf,
    inner: Mutex<Inner>,
    /// The acknowledged routes, following their file (`person/acknowledged.rs`).
    acknowledged: acknowledged::Acknowledged,
    /// Each client's budget, by a hash of its name: calls of different clients do not wait for
    /// one another, and no call waits for the person's state (issue 34).
    budgets: [Mutex<HashMap<String, BudgetState>>; BUDGET_SHARDS],
}

const BUDGET_SHARDS: usize = 16;

#[derive(Debug, Default)]
struct Inner {
    rules: Vec<StandingRule>,
    rules_enabled: bool,
    dev_mode_until: Option<u64>,
    /// The rules file as last read or written (inode, length, mtime): another archgate instance
    /// (one per stdio client) may have changed it since, and then it is read again.
    rules_stamp: Option<rules::FileStamp>,
    /// Why the stored rules or acknowledgements were not used as read (a directory or file that
    /// is not archgate's: `paths::read_private_file`); while set, no standing rule says yes.
    state_untrusted: Option<String>,
    nag: NagGuard,
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[derive(Debug, thiserror::Error)]
pub enum PersonError {
    #[error("developer mode lasts at most 8 hours; {0} seconds asked")]
    TooLong(u64),
    #[error("no standing rule {0}")]
    NoRule(String),
    #[error(transparent)]
    Rule(#[from] archgate_policy::RuleError),
    #[error("could not store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl PersonError {
    pub fn kind(&self) -> &'static str {
        match self {
            PersonError::TooLong(_) => "too_long",
            PersonError::NoRule(_) => "not_found",
            PersonError::Rule(e) => e.kind(),
            PersonError::Io { .. } => "io",
        }
    }
}

impl PersonState {
    /// Loads the stored rules and acknowledgements. A file that does not parse is kept aside
    /// (renamed `.bad`) and reported, never silently trusted.
    ///
    /// Fails closed on a file or directory that is not archgate's (another user's, a link, one
    /// reached through a directory another user may write): nothing of it is used — no rule,
    /// no acknowledgement — and [`PersonState::state_untrusted`] says why.
    pub fn load(rules_file: PathBuf, ack_file: PathBuf) -> PersonState {
        let (rules, mut state_untrusted) = match read_json::<Vec<StandingRule>>(&rules_file) {
            Ok(r) => (r.unwrap_or_default(), None),
            Err(why) => (Vec::new(), Some(why)),
        };
        let (acknowledged, ack_untrusted) = acknowledged::Acknowledged::load(ack_file);
        if let Some(why) = ack_untrusted {
            state_untrusted.get_or_insert(why);
        }
        let rules_stamp = rules::stamp(&rules_file);
        PersonState {
            rules_file,
            inner: Mutex::new(Inner {
                rules,
                rules_stamp,
                rules_enabled: true,
                state_untrusted,
                ..Default::default()
            }),
            acknowledged,
            budgets: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Why the stored rules (or acknowledgements) are not in use: their file or directory is
    /// not archgate's. `None` when they are. Said by `status`, `/health` and the bar.
    pub fn state_untrusted(&self) -> Option<String> {
        if let Some(why) = self.lock_rules().state_untrusted.clone() {
            return Some(why);
        }
        // A directory swapped where no rules file was, nor is, changes no stamp: judged here too.
        let dir = self.rules_file.parent()?;
        crate::paths::untrusted_dir(dir, nix::unistd::getuid().as_raw())
    }

    pub fn acknowledged(&self) -> Arc<BTreeSet<String>> {
        self.acknowledged.get()
    }

    pub(crate) fn acknowledge(&self, route: &str) -> Result<(), PersonError> {
        self.acknowledged.add(route)
    }

    pub fn dev_mode_until(&self, now: u64) -> Option<u64> {
        self.lock().dev_mode_until.filter(|u| *u > now)
    }

    pub(crate) fn set_dev_mode(
        &self,
        secs: Option<u64>,
        now: u64,
    ) -> Result<Option<u64>, PersonError> {
        let mut g = self.lock();
        match secs {
            Some(s) if s > DEV_MODE_MAX_SECS => Err(PersonError::TooLong(s)),
            Some(s) => {
                g.dev_mode_until = Some(now + s);
                Ok(g.dev_mode_until)
            }
            None => {
                g.dev_mode_until = None;
                Ok(None)
            }
        }
    }

    /// Whether a question may go to the person now, under the cap `max_questions` of the call's
    /// config snapshot (`approval.max_questions`); when it may, it is counted.
    pub(crate) fn nag_may_ask(
        &self,
        client: &str,
        route: &str,
        now: u64,
        max_questions: u32,
    ) -> Result<(), archgate_policy::NagRefusal> {
        let mut g = self.lock();
        if g.nag.config().max_questions != max_questions {
            let limits = archgate_policy::NagConfig {
                max_questions,
                ..*g.nag.config()
            };
            g.nag.set_config(limits);
        }
        g.nag.may_ask(client, route, now)?;
        g.nag.on_asked(client, route, now);
        Ok(())
    }

    pub(crate) fn nag_declined(&self, client: &str, route: &str, now: u64) {
        self.lock().nag.on_declined(client, route, now);
    }

    pub(crate) fn nag_approved(&self, client: &str, route: &str) {
        self.lock().nag.on_approved(client, route);
    }

    /// The shard holding `client`'s budget.
    fn budget_shard(
        &self,
        client: &str,
    ) -> std::sync::MutexGuard<'_, HashMap<String, BudgetState>> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        client.hash(&mut h);
        self.budgets[(h.finish() as usize) % BUDGET_SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// `f` on `client`'s budget (created when it has none; its name copied only then).
    fn with_budget<T>(&self, client: &str, f: impl FnOnce(&mut BudgetState) -> T) -> T {
        let mut shard = self.budget_shard(client);
        match shard.get_mut(client) {
            Some(b) => f(b),
            None => f(shard.entry(client.to_owned()).or_default()),
        }
    }

    pub(crate) fn charge_call(
        &self,
        client: &str,
        budget: &Budget,
        now: u64,
    ) -> Result<(), archgate_policy::Exhausted> {
        self.with_budget(client, |b| b.charge_call(budget, now))
    }

    pub(crate) fn charge_question(
        &self,
        client: &str,
        budget: &Budget,
        now: u64,
    ) -> Result<(), archgate_policy::Exhausted> {
        self.with_budget(client, |b| b.charge_question(budget, now))
    }

    /// Client `from` was renamed `to`: its budget's counts go with it, and the old name keeps
    /// none (what `to` had counted was another client's). Class: *trust keyed by a name outlives
    /// the token that owned it* (attack 18 F6); run by every process that sees the rename, since
    /// the counts live in each one's memory (attack 23 F3).
    pub(crate) fn client_budget_follows(&self, from: &str, to: &str) {
        if from == to {
            return;
        }
        let counted = self.budget_shard(from).remove(from);
        let mut shard = self.budget_shard(to);
        match counted {
            Some(b) => shard.insert(to.to_owned(), b),
            None => shard.remove(to),
        };
    }

    pub fn budget_counters(
        &self,
        now: u64,
    ) -> std::collections::BTreeMap<String, archgate_policy::BudgetCounters> {
        let mut all = std::collections::BTreeMap::new();
        for shard in &self.budgets {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            all.extend(shard.iter().map(|(c, s)| (c.clone(), s.counters(now))));
        }
        all
    }
}

/// The person's setters: developer mode, acknowledged routes, standing rules. Handed out once
/// by `Gate::take_person_channel`; the binary passes it to the person's channels only.
#[derive(Debug, Clone)]
pub struct PersonChannel(Arc<PersonState>);

impl PersonChannel {
    pub(crate) fn of(state: Arc<PersonState>) -> PersonChannel {
        PersonChannel(state)
    }
    /// The person's CLI when no archgate is running: the stored state, opened directly.
    pub fn offline(rules_file: PathBuf, ack_file: PathBuf) -> PersonChannel {
        PersonChannel(Arc::new(PersonState::load(rules_file, ack_file)))
    }
    /// What the person's state holds now.
    pub fn state(&self) -> &PersonState {
        &self.0
    }
    pub fn acknowledge(&self, route: &str) -> Result<(), PersonError> {
        self.0.acknowledge(route)
    }
    pub fn set_dev_mode(&self, secs: Option<u64>, now: u64) -> Result<Option<u64>, PersonError> {
        self.0.set_dev_mode(secs, now)
    }
    pub fn revoke_rule(&self, id: &str) -> Result<(), PersonError> {
        self.0.revoke_rule(id)
    }
    /// One action switches every rule off.
    pub fn revoke_all_rules(&self) {
        self.0.revoke_all_rules()
    }
    /// See [`PersonState::client_rules_follow`].
    pub fn client_rules_follow(&self, from: &str, to: Option<&str>) -> usize {
        self.0.client_rules_follow(from, to)
    }
    /// See [`PersonState::client_budget_follows`].
    pub fn client_budget_follows(&self, from: &str, to: &str) {
        self.0.client_budget_follows(from, to)
    }
    /// Unconfirmed: the person's channels confirm `on` through presence first
    /// (`person/actions.rs` `set_after_untrusted_confirmed`).
    pub fn set_after_untrusted(&self, id: &str, on: bool) -> Result<(), PersonError> {
        self.0.set_after_untrusted(id, on)
    }
}

/// Reads archgate's JSON file `path` through `paths::read_private_file`: `Ok(None)` when there
/// is none (or it did not parse: kept aside as `.bad` and reported, never silently trusted);
/// `Err(why)` when something is there that is not archgate's.
fn read_json<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Result<Option<T>, String> {
    let bytes = match crate::paths::read_private_file(path, nix::unistd::getuid().as_raw()) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(why) => {
            tracing::error!(path = %path.display(), "not used: {why}");
            return Err(why);
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            let bad = path.with_extension("bad");
            tracing::error!(path = %path.display(), "not valid JSON ({e}); moved aside to {}", bad.display());
            let _ = std::fs::rename(path, bad);
            Ok(None)
        }
    }
}
