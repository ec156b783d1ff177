//! Call counters by client, tool and outcome, taken at the same seam as the audit record, for
//! `/health` and the approval page. Counts only: never arguments.
//!
//! Bounded whatever the agents send: the catalogue's tool names (`set_known`) are always
//! counted by name; at most `MAX_UNKNOWN_TOOLS` other names are, and every further one counts
//! under `OTHER`, as do client names past `MAX_CLIENTS`. Names are cut to `MAX_NAME` bytes.

use crate::audit::Outcome;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};

/// The bucket for names past a bound.
pub const OTHER: &str = "other";
/// Names not in the catalogue counted one by one before they fold into `OTHER`.
pub const MAX_UNKNOWN_TOOLS: usize = 32;
/// Client names counted one by one before they fold into `OTHER`.
pub const MAX_CLIENTS: usize = 256;
/// Longest name kept (bytes, cut at a character boundary).
pub const MAX_NAME: usize = 64;

/// The counts, in shards by client name, so calls of different clients do not wait for one
/// another; a name is admitted (against the bounds) under `names` only the first time it is
/// counted, and a call of a client and tool counted before takes one shard's lock and copies
/// nothing (issue 34).
#[derive(Debug, Default)]
pub struct Counters {
    shards: [Mutex<Counts>; SHARDS],
    names: Mutex<Names>,
}

const SHARDS: usize = 16;

/// Client → tool → outcome → count, each name as admitted (or `OTHER`).
type Counts = HashMap<String, HashMap<String, BTreeMap<Outcome, u64>>>;

#[derive(Debug, Default)]
struct Names {
    known: BTreeSet<String>,
    unknown: BTreeSet<String>,
    clients: BTreeSet<String>,
}

fn shard_of(client: &str) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    client.hash(&mut h);
    (h.finish() as usize) % SHARDS
}

fn cut(name: &str) -> &str {
    if name.len() <= MAX_NAME {
        return name;
    }
    let mut end = MAX_NAME;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// `name` if it is in `seen` or there is room for it there (then it is added), else `OTHER`.
fn admit(seen: &mut BTreeSet<String>, name: &str, room: usize) -> String {
    let name = cut(name);
    if seen.contains(name) {
        return name.to_owned();
    }
    if seen.len() < room {
        seen.insert(name.to_owned());
        return name.to_owned();
    }
    OTHER.to_owned()
}

#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct CounterSnapshot {
    pub total: u64,
    pub by_outcome: BTreeMap<String, u64>,
    pub by_tool: BTreeMap<String, BTreeMap<String, u64>>,
    pub by_client: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Counters {
    /// The tool names that are always counted by name (the catalogue's).
    pub fn set_known(&self, names: impl IntoIterator<Item = String>) {
        self.lock_names().known = names.into_iter().collect();
    }

    fn lock_names(&self) -> MutexGuard<'_, Names> {
        self.names.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_shard(&self, client: &str) -> MutexGuard<'_, Counts> {
        self.shards[shard_of(client)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub fn bump(&self, client: &str, tool: &str, outcome: Outcome) {
        // A client and tool counted before: their names are in the shard as admitted.
        {
            let mut shard = self.lock_shard(cut(client));
            if let Some(n) = shard
                .get_mut(cut(client))
                .and_then(|tools| tools.get_mut(tool))
            {
                *n.entry(outcome).or_default() += 1;
                return;
            }
        }
        let (client, tool) = {
            let mut names = self.lock_names();
            let names = &mut *names;
            let tool = if names.known.contains(tool) {
                tool.to_owned()
            } else {
                admit(&mut names.unknown, tool, MAX_UNKNOWN_TOOLS)
            };
            (admit(&mut names.clients, client, MAX_CLIENTS), tool)
        };
        *self
            .lock_shard(&client)
            .entry(client)
            .or_default()
            .entry(tool)
            .or_default()
            .entry(outcome)
            .or_default() += 1;
    }

    pub fn snapshot(&self) -> CounterSnapshot {
        let mut s = CounterSnapshot {
            total: 0,
            by_outcome: BTreeMap::new(),
            by_tool: BTreeMap::new(),
            by_client: BTreeMap::new(),
        };
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            for (client, tools) in shard.iter() {
                for (tool, outcomes) in tools {
                    for (outcome, n) in outcomes {
                        s.total += n;
                        *s.by_outcome.entry(outcome.to_string()).or_default() += n;
                        *s.by_tool
                            .entry(tool.clone())
                            .or_default()
                            .entry(outcome.to_string())
                            .or_default() += n;
                        *s.by_client
                            .entry(client.clone())
                            .or_default()
                            .entry(outcome.to_string())
                            .or_default() += n;
                    }
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_by_outcome_tool_and_client() {
        let c = Counters::default();
        c.bump("local", "system_status", Outcome::Ok);
        c.bump("local", "system_status", Outcome::Ok);
        c.bump("bot", "pkg_search", Outcome::Refused);
        let s = c.snapshot();
        assert_eq!(s.total, 3);
        assert_eq!(s.by_outcome["ok"], 2);
        assert_eq!(s.by_tool["pkg_search"]["refused"], 1);
        assert_eq!(s.by_client["local"]["ok"], 2);
    }

    #[test]
    fn ten_thousand_unknown_names_fold_into_one_bucket_and_known_ones_stay() {
        let c = Counters::default();
        c.set_known(["system_status".to_owned()]);
        for i in 0..10_000 {
            c.bump(
                &format!("client{i}"),
                &format!("{i}{}", "x".repeat(4096)),
                Outcome::NotGranted,
            );
        }
        c.bump("local", "system_status", Outcome::Ok);
        let s = c.snapshot();
        assert_eq!(s.total, 10_001);
        assert_eq!(
            s.by_tool.len(),
            MAX_UNKNOWN_TOOLS + 2,
            "{:?}",
            s.by_tool.keys()
        );
        assert_eq!(
            s.by_tool[OTHER]["not_granted"],
            (10_000 - MAX_UNKNOWN_TOOLS) as u64
        );
        assert_eq!(s.by_tool["system_status"]["ok"], 1);
        assert!(s.by_tool.keys().all(|k| k.len() <= MAX_NAME));
        assert_eq!(s.by_client.len(), MAX_CLIENTS + 1);
        assert!(serde_json::to_string(&s).unwrap().len() < 64 * 1024);
    }
}
