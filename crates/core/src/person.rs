//! What only the person changes: standing rules, acknowledged routes, developer mode — and the
//! per-client counters that protect them from being nagged (nag guard, budgets).
//!
//! No tool reaches this module's setters: the person's are `PersonChannel`'s, which the gate
//! hands out once (`Gate::take_person_channel`) and the binary gives only to the CLI's commands,
//! the control socket and the approval page (a tidy test holds that); the gate's own (budgets,
//! the nag guard, a rule's use, the rule an "Always…" answer creates) are `pub(crate)`. Standing rules and acknowledgements are stored 0600 in the state
//! directory; developer mode lives in memory only, so it is off after a restart.

mod rules_lock;

use arc_swap::ArcSwap;
use archgate_policy::{Budget, BudgetState, NagGuard, StandingRule};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::paths::write_private_file;

pub const DEV_MODE_MAX_SECS: u64 = 8 * 3600;

#[derive(Debug)]
pub struct PersonState {
    rules_file: PathBuf,
    ack_file: PathBuf,
    inner: Mutex<Inner>,
    /// Read by every call (policy judges on it) without a lock all callers share; replaced whole
    /// under `inner`'s lock. A call keeps the set it began with.
    acknowledged: ArcSwap<BTreeSet<String>>,
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
    rules_stamp: Option<FileStamp>,
    /// Why the stored rules or acknowledgements were not used as read (a directory or file that
    /// is not archgate's: `paths::read_private_file`); while set, no standing rule says yes.
    state_untrusted: Option<String>,
    nag: NagGuard,
}

type FileStamp = (u64, u64, i64, i64);

fn stamp(path: &std::path::Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    // Of the name itself: a link swapped in (or out) is a change even when its target is the
    // file read before.
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
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
        let acknowledged: BTreeSet<String> = match read_json(&ack_file) {
            Ok(a) => a.unwrap_or_default(),
            Err(why) => {
                state_untrusted.get_or_insert(why);
                BTreeSet::new()
            }
        };
        let rules_stamp = stamp(&rules_file);
        PersonState {
            rules_file,
            ack_file,
            inner: Mutex::new(Inner {
                rules,
                rules_stamp,
                rules_enabled: true,
                state_untrusted,
                ..Default::default()
            }),
            acknowledged: ArcSwap::from_pointee(acknowledged),
            budgets: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state with the rules as currently stored: re-read when another instance wrote them.
    fn lock_rules(&self) -> std::sync::MutexGuard<'_, Inner> {
        let mut g = self.lock();
        let now = stamp(&self.rules_file);
        if now != g.rules_stamp {
            match read_json(&self.rules_file) {
                Ok(rules) => {
                    g.rules = rules.unwrap_or_default();
                    g.state_untrusted = None;
                }
                Err(why) => {
                    g.rules = Vec::new();
                    g.state_untrusted = Some(why);
                }
            }
            g.rules_stamp = stamp(&self.rules_file);
        }
        g
    }

    /// [`PersonState::lock_rules`] for a change that is saved: the cross-process lock first
    /// (`person/rules_lock.rs`), then the rules as the file holds them under it.
    fn lock_rules_to_change(&self) -> (rules_lock::Held, std::sync::MutexGuard<'_, Inner>) {
        let held = rules_lock::take(&self.rules_file);
        (held, self.lock_rules())
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
        self.acknowledged.load_full()
    }

    pub(crate) fn acknowledge(&self, route: &str) -> Result<(), PersonError> {
        let _g = self.lock(); // one change at a time
        let mut set = BTreeSet::clone(&self.acknowledged.load());
        set.insert(archgate_policy::normalize_route(route));
        let bytes = serde_json::to_vec_pretty(&set).unwrap_or_default();
        self.acknowledged.store(Arc::new(set));
        write_private_file(&self.ack_file, &bytes).map_err(|source| PersonError::Io {
            path: self.ack_file.clone(),
            source,
        })
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

    pub fn rules(&self) -> Vec<StandingRule> {
        self.lock_rules().rules.clone()
    }

    pub fn rules_enabled(&self) -> bool {
        self.lock().rules_enabled
    }

    /// Finds a usable rule for the call and records its use (saved), returning its id.
    pub(crate) fn use_matching_rule(
        &self,
        client: &str,
        tool: &str,
        route: &str,
        command: &str,
        args: &serde_json::Value,
        now: u64,
    ) -> Option<String> {
        let (_held, mut g) = self.lock_rules_to_change();
        if !g.rules_enabled || g.state_untrusted.is_some() {
            return None;
        }
        let id = archgate_policy::find_matching(&g.rules, client, tool, route, command, args, now)?
            .id
            .clone();
        if let Some(r) = g.rules.iter_mut().find(|r| r.id == id) {
            r.record_use(now);
        }
        self.save_rules(&mut g);
        Some(id)
    }

    /// Peeks without recording a use (for the router's decision).
    pub fn matching_rule(
        &self,
        client: &str,
        tool: &str,
        route: &str,
        command: &str,
        args: &serde_json::Value,
        now: u64,
    ) -> Option<StandingRule> {
        let g = self.lock_rules();
        if !g.rules_enabled || g.state_untrusted.is_some() {
            return None;
        }
        archgate_policy::find_matching(&g.rules, client, tool, route, command, args, now).cloned()
    }

    pub(crate) fn add_rule(
        &self,
        spec: archgate_policy::NewRule,
        now: u64,
    ) -> Result<StandingRule, PersonError> {
        let rule = archgate_policy::new_rule(spec, now)?;
        let (_held, mut g) = self.lock_rules_to_change();
        g.rules.retain(|r| !r.is_expired(now));
        g.rules.push(rule.clone());
        g.rules_enabled = true;
        self.save_rules(&mut g);
        Ok(rule)
    }

    pub(crate) fn revoke_rule(&self, id: &str) -> Result<(), PersonError> {
        let (_held, mut g) = self.lock_rules_to_change();
        let before = g.rules.len();
        g.rules.retain(|r| r.id != id);
        if g.rules.len() == before {
            return Err(PersonError::NoRule(id.to_owned()));
        }
        self.save_rules(&mut g);
        Ok(())
    }

    /// Opts rule `id` in (`on`) or out of approving after untrusted text (`after_untrusted`).
    pub(crate) fn set_after_untrusted(&self, id: &str, on: bool) -> Result<(), PersonError> {
        let (_held, mut g) = self.lock_rules_to_change();
        let Some(rule) = g.rules.iter_mut().find(|r| r.id == id) else {
            return Err(PersonError::NoRule(id.to_owned()));
        };
        rule.after_untrusted = on;
        self.save_rules(&mut g);
        Ok(())
    }

    /// One action switches every rule off.
    pub(crate) fn revoke_all_rules(&self) {
        let (_held, mut g) = self.lock_rules_to_change();
        g.rules.clear();
        self.save_rules(&mut g);
    }

    /// The rules made for client `from` go with it: to `to` (renamed), or away (`None`: revoked,
    /// or the name given to a new token client, whose rules are never a bridge's). Returns how
    /// many. Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6).
    /// Renamed, its budget's counts go with it too (what the new name had counted was another
    /// client's).
    pub(crate) fn client_rules_follow(&self, from: &str, to: Option<&str>) -> usize {
        if let Some(to) = to {
            let counted = self.budget_shard(from).remove(from);
            let mut shard = self.budget_shard(to);
            match counted {
                Some(b) => shard.insert(to.to_owned(), b),
                None => shard.remove(to),
            };
        }
        let (_held, mut g) = self.lock_rules_to_change();
        let n = g.rules.iter().filter(|r| r.client == from).count();
        if n == 0 {
            return 0;
        }
        match to {
            Some(to) => g
                .rules
                .iter_mut()
                .filter(|r| r.client == from)
                .for_each(|r| r.client = to.to_owned()),
            None => g.rules.retain(|r| r.client != from),
        }
        self.save_rules(&mut g);
        n
    }

    fn save_rules(&self, g: &mut Inner) {
        let bytes = serde_json::to_vec_pretty(&g.rules).unwrap_or_default();
        if let Err(e) = write_private_file(&self.rules_file, &bytes) {
            tracing::error!(path = %self.rules_file.display(), "standing rules could not be saved: {e}");
        }
        g.rules_stamp = stamp(&self.rules_file);
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

#[cfg(test)]
mod tests {
    use super::*;
    use archgate_policy::{ArgPattern, NewRule};

    fn rule(id: &str) -> NewRule {
        NewRule {
            id: id.into(),
            client: "local".into(),
            tool: "system_status".into(),
            route: "system_status".into(),
            command: "fp".into(),
            args: ArgPattern::exact(serde_json::json!({})),
            ttl: None,
            max_uses_per_day: None,
        }
    }

    #[test]
    fn two_instances_share_the_stored_rules() {
        let t = tempfile::tempdir().unwrap();
        let open = || {
            PersonState::load(
                t.path().join("standing-rules.json"),
                t.path().join("acknowledged-routes.json"),
            )
        };
        let (a, b) = (open(), open());
        let now = now_secs();
        let args = serde_json::json!({});
        a.add_rule(rule("r-1"), now).unwrap();
        // The other instance sees the rule the person created through the first one.
        assert_eq!(
            b.use_matching_rule("local", "system_status", "system_status", "fp", &args, now),
            Some("r-1".into())
        );
        // Revoked through the second, it no longer approves through the first, and the first
        // does not write it back.
        b.revoke_rule("r-1").unwrap();
        assert!(
            a.matching_rule("local", "system_status", "system_status", "fp", &args, now)
                .is_none()
        );
        a.add_rule(rule("r-2"), now).unwrap();
        let ids: Vec<String> = b.rules().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, vec!["r-2".to_string()]);
    }

    /// Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6). A
    /// client's rules and budget go with it: moved on rename (what the new name had is dropped),
    /// removed on revoke; another client's stay.
    /// Class: *read-modify-write of shared state without a lock across the processes that
    /// write it* (attack 21 F2's, here for the standing rules): two archgate processes (the
    /// daemon and an in-process stdio server, or the CLI) each add rules at once; every rule
    /// each added is kept (no save starts from a list another save has since replaced).
    #[test]
    fn two_processes_adding_rules_at_once_keep_every_rule() {
        let t = tempfile::tempdir().unwrap();
        let open = || {
            PersonState::load(
                t.path().join("standing-rules.json"),
                t.path().join("acknowledged-routes.json"),
            )
        };
        let (a, b) = (open(), open());
        let now = now_secs();
        std::thread::scope(|s| {
            for (p, who) in [(&a, "a"), (&b, "b")] {
                s.spawn(move || {
                    for i in 0..60 {
                        p.add_rule(rule(&format!("r-{who}-{i}")), now).unwrap();
                    }
                });
            }
        });
        assert_eq!(open().rules().len(), 120);
    }

    #[test]
    fn a_clients_rules_and_budget_follow_it_and_nothing_else_does() {
        let t = tempfile::tempdir().unwrap();
        let p = PersonState::load(
            t.path().join("standing-rules.json"),
            t.path().join("acknowledged-routes.json"),
        );
        let now = now_secs();
        let of = |id: &str, client: &str| NewRule {
            client: client.into(),
            ..rule(id)
        };
        p.add_rule(of("r-phone", "phone"), now).unwrap();
        p.add_rule(of("r-bridge", "phone2"), now).unwrap();
        p.add_rule(of("r-other", "laptop"), now).unwrap();
        let budget = archgate_policy::Budget::default();
        p.charge_call("phone", &budget, now).unwrap();
        p.charge_call("phone2", &budget, now).unwrap();
        p.charge_call("phone2", &budget, now).unwrap();

        assert_eq!(p.client_rules_follow("phone2", None), 1);
        assert_eq!(p.client_rules_follow("phone", Some("phone2")), 1);
        let held: Vec<(String, String)> = p.rules().into_iter().map(|r| (r.id, r.client)).collect();
        assert_eq!(
            held,
            vec![
                ("r-phone".to_string(), "phone2".to_string()),
                ("r-other".to_string(), "laptop".to_string())
            ]
        );
        let counters = p.budget_counters(now);
        assert!(!counters.contains_key("phone"));
        assert_eq!(counters["phone2"].calls_this_minute, 1);

        assert_eq!(p.client_rules_follow("phone2", None), 1);
        let ids: Vec<String> = p.rules().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, vec!["r-other".to_string()]);
    }

    /// Class: archgate's own state trusted by its path. Rules read through a link (a stranger's
    /// file swapped in while serving) approve nothing, and say why; archgate's own file again
    /// applies again.
    #[test]
    fn rules_not_archgates_approve_nothing_and_say_why() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("standing-rules.json");
        let a = PersonState::load(file.clone(), t.path().join("acknowledged-routes.json"));
        let now = now_secs();
        let args = serde_json::json!({});
        a.add_rule(rule("r-1"), now).unwrap();
        assert_eq!(a.state_untrusted(), None);
        let planted = t.path().join("planted.json");
        std::fs::copy(&file, &planted).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&planted, &file).unwrap();
        assert!(
            a.matching_rule("local", "system_status", "system_status", "fp", &args, now)
                .is_none()
        );
        assert!(
            a.use_matching_rule("local", "system_status", "system_status", "fp", &args, now)
                .is_none()
        );
        let why = a.state_untrusted().expect("said");
        assert!(why.contains("symbolic link"), "{why}");
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(&planted, &file).unwrap();
        assert!(
            a.matching_rule("local", "system_status", "system_status", "fp", &args, now)
                .is_some()
        );
        assert_eq!(a.state_untrusted(), None);
        // Its directory others may write is said too, whatever the rules file's stamp.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(a.state_untrusted().is_some_and(|w| w.contains("writable")));
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
