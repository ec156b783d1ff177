//! The standing rules: the person's "always" for a call, stored in `standing-rules.json`, shared
//! by every archgate process (re-read when another wrote it, changed under `rules_lock.rs`'s
//! lock), found and used by the gate, made, revoked and moved with their client by the person.

use archgate_policy::StandingRule;

use super::{Inner, PersonError, PersonState, read_json, rules_lock};
use crate::paths::write_private_file;

pub(super) type FileStamp = (u64, u64, i64, i64);

pub(super) fn stamp(path: &std::path::Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    // Of the name itself: a link swapped in (or out) is a change even when its target is the
    // file read before.
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

impl PersonState {
    /// The state with the rules as currently stored: re-read when another instance wrote them.
    pub(super) fn lock_rules(&self) -> std::sync::MutexGuard<'_, Inner> {
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
    /// Renamed, its budget's counts go with it too: [`PersonState::client_budget_follows`], which
    /// every process runs when it sees the rename (`ClientStore::on_renamed`), not only the one
    /// that made it.
    pub(crate) fn client_rules_follow(&self, from: &str, to: Option<&str>) -> usize {
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
}

#[cfg(test)]
mod tests {
    use super::super::now_secs;
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

    /// The person's state stored in `dir`, as every archgate process there opens it.
    fn store(dir: &std::path::Path) -> PersonState {
        PersonState::load(
            dir.join("standing-rules.json"),
            dir.join("acknowledged-routes.json"),
        )
    }

    #[test]
    fn two_instances_share_the_stored_rules() {
        let t = tempfile::tempdir().unwrap();
        let open = || store(t.path());
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

    /// Class: *read-modify-write of shared state without a lock across the processes that
    /// write it* (attack 21 F2's, here for the standing rules): two archgate processes (the
    /// daemon and an in-process stdio server, or the CLI) each add rules at once; every rule
    /// each added is kept (no save starts from a list another save has since replaced).
    #[test]
    fn two_processes_adding_rules_at_once_keep_every_rule() {
        let t = tempfile::tempdir().unwrap();
        let open = || store(t.path());
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

    /// Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6). A
    /// client's rules and budget go with it: moved on rename (what the new name had is dropped),
    /// removed on revoke; another client's stay.
    #[test]
    fn a_clients_rules_and_budget_follow_it_and_nothing_else_does() {
        let t = tempfile::tempdir().unwrap();
        let p = store(t.path());
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
        p.client_budget_follows("phone", "phone2");
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
