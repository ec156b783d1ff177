//! Call counters by client, tool and outcome, taken at the same seam as the audit record, for
//! `/health` and the approval page. Counts only: never arguments.

use crate::audit::Outcome;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct Counters {
    inner: Mutex<BTreeMap<(String, String, Outcome), u64>>,
}

#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct CounterSnapshot {
    pub total: u64,
    pub by_outcome: BTreeMap<String, u64>,
    pub by_tool: BTreeMap<String, BTreeMap<String, u64>>,
    pub by_client: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Counters {
    pub fn bump(&self, client: &str, tool: &str, outcome: Outcome) {
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry((client.to_owned(), tool.to_owned(), outcome))
            .or_default() += 1;
    }

    pub fn snapshot(&self) -> CounterSnapshot {
        let m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut s = CounterSnapshot {
            total: 0,
            by_outcome: BTreeMap::new(),
            by_tool: BTreeMap::new(),
            by_client: BTreeMap::new(),
        };
        for ((client, tool, outcome), n) in m.iter() {
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
}
