//! The MCP tasks' table on disk: what a restarted daemon needs to say what became of a task
//! from before. One file per owner (`state/tasks/OWNER.json`, 0600, written whole and
//! atomically; the owner is the hashed identity that made the tasks, `server::tasks::owner`).
//! Each entry names the task, the tool, the call its question was (when it asked), whether it
//! ended, and the process that ran it. Results are never kept: they may hold screenshots,
//! clipboard text, files.
//!
//! At a start (`settle`), each entry whose process is gone is told from the activity log — after
//! the orphan finder gave every call a killed daemon left its one record — and keeps that
//! message: the question withdrawn and nothing ran (`unreachable`), the work's outcome unknown
//! (`unknown`), or the outcome of a call that ended before, without its result. A task whose
//! call is not in the log's tail is said to be unknown, never "did not run". An entry of a
//! process still running (another `archgate serve`) is its own.
//!
//! Bounded: an entry is forgotten when its task's retention (`ttlMs`) is over, each owner keeps
//! at most [`PER_OWNER`] entries (its oldest ended ones go first) and the table at most
//! [`MAX_ENTRIES`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Entries one owner keeps at most (open tasks are bounded by `approval.max_tasks` anyway).
pub const PER_OWNER: usize = 64;
/// Entries the table keeps at most.
pub const MAX_ENTRIES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The task's id.
    pub id: String,
    /// The identity that made it (`server::tasks::owner`).
    pub owner: String,
    /// The client's name when it made it (for messages only).
    pub client: String,
    pub tool: String,
    /// The call id of the question it asked, if it asked one.
    #[serde(default)]
    pub call: Option<String>,
    /// When it was made (RFC 3339), and until when (Unix seconds) it is kept.
    pub created: String,
    pub until: u64,
    /// It ended while this process ran.
    #[serde(default)]
    pub ended: bool,
    /// What a restarted daemon says of it (set once, at the first start after).
    #[serde(default)]
    pub after_restart: Option<String>,
    /// The process that ran it (its pid and start time: `audit::orphans::this_process`).
    #[serde(default)]
    pub pid: u32,
    #[serde(default)]
    pub pid_start: u64,
}

/// The table: in memory, and on disk when it has a directory.
#[derive(Default)]
pub struct Table {
    dir: Option<PathBuf>,
    entries: Mutex<Vec<Entry>>,
}

/// Whether `owner` names a file of the table: hex only (the owner is a digest).
fn valid_owner(owner: &str) -> bool {
    !owner.is_empty() && owner.len() <= 128 && owner.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The entries of one owner's file (none when absent or unreadable, with a warning).
fn read_file(path: &std::path::Path) -> Vec<Entry> {
    // Only archgate's own file (not a link, not another user's, in a directory only the person
    // controls): a planted table would tell an agent what became of calls it never made.
    match archgate_core::paths::read_private_file(path, nix::unistd::getuid().as_raw()) {
        Ok(Some(bytes)) => serde_json::from_slice::<Vec<Entry>>(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), "a tasks table file is not readable ({e}); its tasks are unknown");
            Vec::new()
        }),
        Ok(None) => Vec::new(),
        Err(why) => {
            tracing::warn!(path = %path.display(), "a tasks table file is not used: {why}");
            Vec::new()
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn now_secs() -> u64 {
    archgate_core::person::now_secs()
}

impl Table {
    /// The table kept in `dir` (made 0700 if absent): every owner's file there.
    pub fn open(dir: PathBuf) -> Table {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        let mut entries = Vec::new();
        if let Ok(files) = std::fs::read_dir(&dir) {
            for f in files.flatten() {
                let name = f.file_name();
                let Some(owner) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                    continue;
                };
                if !valid_owner(owner) {
                    continue;
                }
                entries.extend(
                    read_file(&f.path())
                        .into_iter()
                        .filter(|e| e.owner == owner),
                );
            }
        }
        Table {
            dir: Some(dir),
            entries: Mutex::new(entries),
        }
    }

    /// Writes `owner`'s file from `entries` (bounded first) while the lock is held, so writes
    /// of this process do not race; entries another process wrote there meanwhile are kept.
    fn keep(&self, entries: &mut Vec<Entry>, owner: &str) {
        let Some(dir) = &self.dir else {
            bound(entries, now_secs());
            return;
        };
        if !valid_owner(owner) {
            return;
        }
        let path = dir.join(format!("{owner}.json"));
        for d in read_file(&path) {
            if d.owner == owner && !entries.iter().any(|e| e.id == d.id) {
                entries.push(d);
            }
        }
        bound(entries, now_secs());
        let mine: Vec<&Entry> = entries.iter().filter(|e| e.owner == owner).collect();
        let bytes = serde_json::to_vec(&mine).unwrap_or_default();
        if let Err(e) = archgate_core::paths::write_private_file(&path, &bytes) {
            tracing::warn!(path = %path.display(), "the tasks table could not be written ({e}): after a restart these tasks would be unknown");
        }
    }

    /// A new task of this process.
    pub fn add(&self, mut entry: Entry) {
        (entry.pid, entry.pid_start) = archgate_core::audit::orphans::this_process();
        let owner = entry.owner.clone();
        let mut entries = lock(&self.entries);
        entries.retain(|e| e.id != entry.id);
        entries.push(entry);
        self.keep(&mut entries, &owner);
    }

    /// The task ended while this process ran.
    pub fn ended(&self, id: &str) {
        let mut entries = lock(&self.entries);
        let Some(e) = entries.iter_mut().find(|e| e.id == id) else {
            return;
        };
        e.ended = true;
        let owner = e.owner.clone();
        self.keep(&mut entries, &owner);
    }

    /// The task the call `call_id` asked for, if one did.
    pub fn task_of_call(&self, call_id: &str) -> Option<String> {
        lock(&self.entries)
            .iter()
            .find(|e| e.call.as_deref() == Some(call_id))
            .map(|e| e.id.clone())
    }

    /// Task `id` from before this process, if `owner` made it: what became of it.
    pub fn before_restart(&self, owner: &str, id: &str) -> Option<Entry> {
        lock(&self.entries)
            .iter()
            .find(|e| e.id == id && e.owner == owner && e.after_restart.is_some())
            .cloned()
    }

    /// At a start: every entry from before is told what became of it, from the activity log's
    /// `tail` (after the orphan finder wrote the records a killed daemon could not).
    pub fn settle(&self, tail: &str) {
        use archgate_core::audit::orphans::alive;
        let mut entries = lock(&self.entries);
        let records = records_of(tail, &entries);
        let mut owners = std::collections::BTreeSet::new();
        for e in entries
            .iter_mut()
            .filter(|e| e.after_restart.is_none() && !alive(e.pid, e.pid_start))
        {
            let record = records
                .get(&e.id)
                .or_else(|| e.call.as_ref().and_then(|c| records.get(c)));
            e.after_restart = Some(what_became(e, record));
            owners.insert(e.owner.clone());
        }
        for owner in owners {
            self.keep(&mut entries, &owner);
        }
    }
}

/// The call records in `tail` of these entries' tasks, by task id and by call id.
fn records_of(tail: &str, entries: &[Entry]) -> HashMap<String, Value> {
    let mut by = HashMap::new();
    let calls: std::collections::HashSet<&str> =
        entries.iter().filter_map(|e| e.call.as_deref()).collect();
    for line in tail.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("event").is_some() {
            continue;
        }
        if let Some(t) = v.get("task").and_then(Value::as_str) {
            by.insert(t.to_owned(), v.clone());
        }
        if let Some(id) = v.get("id").and_then(Value::as_str)
            && calls.contains(id)
        {
            by.insert(id.to_owned(), v);
        }
    }
    by
}

/// What a restarted daemon says of task `e`, from its call's record (if found).
fn what_became(e: &Entry, record: Option<&Value>) -> String {
    let outcome = record
        .and_then(|r| r.get("outcome"))
        .and_then(Value::as_str);
    let call = record
        .and_then(|r| r.get("id"))
        .and_then(Value::as_str)
        .or(e.call.as_deref());
    let see = match call {
        Some(c) => format!("`archgate log` shows the call {c} (task {})", e.id),
        None => format!("`archgate log` names the task {}", e.id),
    };
    let tool = &e.tool;
    match (outcome, e.ended) {
        // Withdrawn when archgate stopped (it records its waiting questions, or the next start
        // does for a killed one) — or, before that, when its client was revoked.
        (Some("unreachable"), ended) => format!(
            "this {tool} task's question was withdrawn before anyone answered{} and nothing ran; call the tool again if it is still wanted. {see}",
            if ended {
                " (archgate restarted, or its client was revoked, while it waited)"
            } else {
                " (archgate restarted while it waited)"
            }
        ),
        (Some("unknown"), _) => format!(
            "archgate stopped (killed or crashed) while this {tool} task's work ran: its outcome is unknown, it may have run in part or whole. Check the machine's state before calling again; {see}"
        ),
        (Some(o), true) => format!(
            "this {tool} task ended before archgate restarted (its call's outcome: {o}); its result was not kept across the restart: {see}"
        ),
        (None, true) => format!(
            "this {tool} task ended before archgate restarted; its result was not kept across the restart: {see}"
        ),
        (Some(o), false) => format!(
            "archgate restarted as this {tool} task ended (its call's outcome: {o}); its result was not kept across the restart: {see}"
        ),
        (None, false) => format!(
            "archgate restarted while this {tool} task ran, and its call is not in the activity log's tail: its outcome is unknown. Check the machine's state and {see}"
        ),
    }
}

/// Drops entries past their retention, then each owner's oldest past [`PER_OWNER`], then the
/// table's oldest past [`MAX_ENTRIES`] (ended ones first each time).
fn bound(entries: &mut Vec<Entry>, now: u64) {
    entries.retain(|e| e.until >= now);
    // Oldest first, ended before open at the same age: what is dropped first comes first.
    let drop_first = |v: &mut Vec<usize>, entries: &[Entry], keep: usize| -> Vec<usize> {
        if v.len() <= keep {
            return Vec::new();
        }
        v.sort_by_key(|&i| (!entries[i].ended && entries[i].after_restart.is_none(), i));
        v[..v.len() - keep].to_vec()
    };
    let mut per: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        per.entry(e.owner.as_str()).or_default().push(i);
    }
    let mut gone: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for v in per.values_mut() {
        gone.extend(drop_first(v, entries, PER_OWNER));
    }
    let mut all: Vec<usize> = (0..entries.len()).filter(|i| !gone.contains(i)).collect();
    gone.extend(drop_first(&mut all, entries, MAX_ENTRIES));
    let mut i = 0;
    entries.retain(|_| {
        let keep = !gone.contains(&i);
        i += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(id: &str, owner: &str, call: Option<&str>) -> Entry {
        Entry {
            id: id.into(),
            owner: owner.into(),
            client: "coder".into(),
            tool: "theme".into(),
            call: call.map(str::to_owned),
            created: "2026-12-06T00:00:00Z".into(),
            until: u64::MAX,
            ended: false,
            after_restart: None,
            pid: 0,
            pid_start: 0,
        }
    }

    /// Each task from before is told from its call's record: withdrawn (nothing ran), unknown
    /// (it may have run), ended (outcome, no result), or not found (unknown); only its owner
    /// reads it, and the table on disk says the same at the start after.
    #[test]
    fn a_restart_tells_each_task_what_became_of_it_from_its_calls_record() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("tasks");
        let table = Table::open(path.clone());
        table.add(entry("t-wait", "a1", Some("c-wait")));
        table.add(entry("t-run", "a1", None));
        table.add(entry("t-done", "a1", Some("c-done")));
        table.add(entry("t-lost", "a1", None));
        table.ended("t-done");
        assert_eq!(table.task_of_call("c-wait").as_deref(), Some("t-wait"));
        // Before a restart nothing is "from before".
        assert!(table.before_restart("a1", "t-wait").is_none());

        let tail = [
            json!({"event": "asking", "id": "c-wait"}),
            json!({"id": "c-wait", "outcome": "unreachable"}),
            json!({"id": "c-run", "outcome": "unknown", "task": "t-run"}),
            json!({"id": "c-done", "outcome": "declined", "task": "t-done"}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        // This process still runs its tasks: they are not "from before".
        let live = Table::open(path.clone());
        live.settle(&tail);
        assert!(live.before_restart("a1", "t-wait").is_none());
        // As a process that is gone had written them.
        for f in std::fs::read_dir(&path).unwrap() {
            let f = f.unwrap().path();
            let v = std::fs::read_to_string(&f).unwrap();
            let me = archgate_core::audit::orphans::this_process().0;
            std::fs::write(&f, v.replace(&format!("\"pid\":{me},"), "\"pid\":0,")).unwrap();
        }
        let after = Table::open(path.clone());
        after.settle(&tail);
        let said = |id: &str| {
            after
                .before_restart("a1", id)
                .unwrap()
                .after_restart
                .unwrap()
        };
        assert!(said("t-wait").contains("withdrawn"));
        assert!(said("t-wait").contains("nothing ran"));
        assert!(said("t-wait").contains("c-wait"));
        assert!(said("t-run").contains("outcome is unknown"));
        assert!(said("t-run").contains("c-run"));
        assert!(said("t-done").contains("ended before archgate restarted"));
        assert!(said("t-done").contains("declined"));
        assert!(said("t-lost").contains("outcome is unknown"));
        assert!(!said("t-lost").contains("nothing ran"));
        assert!(
            after.before_restart("b2", "t-wait").is_none(),
            "another owner's"
        );

        // The next start reads the same, without the log.
        let again = Table::open(path);
        again.settle("");
        assert_eq!(
            again.before_restart("a1", "t-wait").unwrap().after_restart,
            Some(said("t-wait"))
        );
    }

    /// Past retention an entry goes; an owner keeps at most PER_OWNER, its ended ones going
    /// first; another owner's entries are not touched by it.
    #[test]
    fn the_table_is_bounded_per_owner_and_by_retention() {
        let mut v: Vec<Entry> = Vec::new();
        let mut old = entry("expired", "a1", None);
        old.until = 10;
        v.push(old);
        v.push(entry("open-0", "a1", None));
        for i in 0..PER_OWNER {
            let mut e = entry(&format!("ended-{i}"), "a1", None);
            e.ended = true;
            v.push(e);
        }
        v.push(entry("theirs", "b2", None));
        bound(&mut v, 100);
        assert!(!v.iter().any(|e| e.id == "expired"));
        assert_eq!(v.iter().filter(|e| e.owner == "a1").count(), PER_OWNER);
        assert!(v.iter().any(|e| e.id == "open-0"), "open entries stay");
        assert!(
            !v.iter().any(|e| e.id == "ended-0"),
            "the oldest ended goes"
        );
        assert!(v.iter().any(|e| e.id == "theirs"));
    }
}
