//! The journal over MCP: real journal files (made here by the real systemd-journal-remote from
//! export-format entries we write) read through `[diagnostics] journal_dir` by the `journal`
//! tool and the `journal://boot/{n}` resource over stdio — and the activity log holds the calls,
//! never a word of what they answered.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Env, StdioServer};

const SECRET: &str = "journal-secret-4f1c9e";

/// Journal files of one boot in `dir`: four entries, two of them errors, each message holding
/// `SECRET`.
fn make_journal(dir: &std::path::Path) {
    let mut export = String::new();
    for i in 0..4u64 {
        export.push_str(&format!(
            "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={}\n\
             _SYSTEMD_UNIT=sshd.service\nPRIORITY={}\n_PID=77\nMESSAGE={SECRET} line{i}\n\n",
            1_764_500_000_000_000 + i * 1_000_000,
            i * 1000 + 1,
            "5e".repeat(16),
            if i % 2 == 0 { 3 } else { 6 },
        ));
    }
    let mut child = Command::new("/lib/systemd/systemd-journal-remote")
        .arg(format!("--output={}", dir.join("t.journal").display()))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("systemd-journal-remote (scripts/test-deps.sh installs it)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(export.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn journal_entries_reach_the_agent_and_never_the_activity_log() {
    let env = Env::new();
    let journal = tempfile::tempdir().unwrap();
    make_journal(journal.path());
    env.write_config(&format!(
        "[diagnostics]\njournal_dir = \"{}\"\n",
        journal.path().display()
    ));
    let mut s = StdioServer::initialized(&env);

    let r = s.request(
        2,
        "tools/call",
        json!({"name": "journal", "arguments": {"unit": "sshd", "priority": "error", "limit": 1}}),
    );
    let page = &r["result"]["structuredContent"];
    assert_eq!(r["result"]["isError"], false, "{r}");
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{page}");
    assert_eq!(entries[0]["message"], format!("{SECRET} line2"));
    assert_eq!(entries[0]["priority"], "err");
    assert_eq!(entries[0]["unit"], "sshd.service");
    let next = page["next"].as_str().expect("a next page").to_owned();
    let r = s.request(
        3,
        "tools/call",
        json!({"name": "journal", "arguments": {"unit": "sshd", "priority": "err", "cursor": next}}),
    );
    let entries = r["result"]["structuredContent"]["entries"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        entries
            .iter()
            .map(|e| e["message"].clone())
            .collect::<Vec<_>>(),
        [json!(format!("{SECRET} line0"))],
        "{r}"
    );

    // The resource: boot 0's warnings and worse.
    let r = s.request(4, "resources/read", json!({"uri": "journal://boot/0"}));
    let text = r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let v: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("{r}"));
    assert_eq!(v["entries"].as_array().unwrap().len(), 2, "{v}");
    let r = s.request(5, "resources/read", json!({"uri": "journal://boot/-4"}));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("out_of_range"),
        "{r}"
    );
    // Bad words are typed refusals.
    let r = s.request(
        6,
        "tools/call",
        json!({"name": "journal", "arguments": {"priority": "loud"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["error"]["kind"], "invalid_arguments",
        "{r}"
    );
    s.close();

    let records = env.audit();
    let tools: Vec<&str> = records.iter().filter_map(|r| r["tool"].as_str()).collect();
    assert_eq!(
        tools.iter().filter(|t| **t == "journal").count(),
        5,
        "{records:?}"
    );
    let log = std::fs::read_to_string(env.state_dir().join("activity.jsonl")).unwrap();
    assert!(
        !log.contains(SECRET),
        "a journal message reached the activity log:\n{log}"
    );
    assert!(!log.contains("line2"), "{log}");
}
