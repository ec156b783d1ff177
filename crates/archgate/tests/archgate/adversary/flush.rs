//! Attack 7 of issue 16 (part of `hostile.rs`): flushing the audit trail. Fourteen calls with
//! unknown tool names of almost 4 MiB (the HTTP body limit) were recorded in full, twice, and
//! rotated every earlier record out of all six files. Now a record is bounded (the name cut to
//! 128 bytes plus its SHA-256), so every earlier record stays, and each flood call still leaves
//! its own record.

use crate::support::*;
use serde_json::{Value, json};

const CONFIG: &str = "[approval]\npage = false\nnotifications = false\n\
[budgets]\nper_minute = 100000\nper_day = 10000000\n";

/// Every call record in the log and its rotated files.
fn every_record(env: &Env) -> Vec<Value> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(env.state_dir()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("activity.jsonl") {
            continue;
        }
        for l in std::fs::read_to_string(e.path()).unwrap().lines() {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e})"));
            if v.get("event").is_none() {
                out.push(v);
            }
        }
    }
    out
}

#[test]
fn fourteen_calls_with_four_mebibyte_tool_names_leave_every_earlier_record() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let token = env.token();
    for _ in 0..20 {
        let r = d.call(&token, "system_status", json!({}));
        assert_ne!(r["isError"], true, "{r}");
    }
    let earlier: Vec<String> = wait_for("the honest records", || {
        let ids: Vec<String> = every_record(&env)
            .iter()
            .filter(|r| r["tool"] == "system_status")
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect();
        (ids.len() == 20).then_some(ids)
    });
    let before = std::fs::metadata(env.audit_file()).unwrap().len();

    // The flood over stdio (a handshake-era session: no header carries the name, no body
    // limit but the tool's own): each request names an unknown tool of ~4 MiB.
    let name = "A".repeat(4 * 1024 * 1024 - 4096);
    let mut serve = env
        .command(&["serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("archgate serve");
    let mut stdin = serve.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(serve.stdout.take().unwrap());
    fn line(stdin: &mut std::process::ChildStdin, msg: &Value) {
        use std::io::Write;
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }
    let read = |stdout: &mut std::io::BufReader<std::process::ChildStdout>| {
        use std::io::BufRead;
        let mut l = String::new();
        stdout.read_line(&mut l).unwrap();
        serde_json::from_str::<Value>(&l).unwrap_or(Value::Null)
    };
    line(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"}}}),
    );
    assert_eq!(read(&mut stdout)["id"], 0);
    line(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    for i in 0..14 {
        line(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                     "params": {"name": format!("{name}{i}"), "arguments": {}}}),
        );
        let answer = read(&mut stdout);
        assert_eq!(answer["id"], i + 1, "{:.300}", answer.to_string());
    }
    drop(stdin); // end of the session: archgate flushes its log and exits
    let _ = serve.wait();
    let flood = wait_for("the flood's records", || {
        let n = every_record(&env)
            .iter()
            .filter(|r| r["tool"].as_str().is_some_and(|t| t.starts_with("AAAA")))
            .count();
        (n >= 14).then_some(n)
    });
    assert_eq!(flood, 14, "one record per flood call");

    let all = every_record(&env);
    for id in &earlier {
        assert!(
            all.iter().any(|r| r["id"] == id.as_str()),
            "record {id} was flushed out of the log"
        );
    }
    let grown = std::fs::metadata(env.audit_file()).unwrap().len() - before;
    assert!(grown < 14 * 8 * 1024, "14 flood records took {grown} bytes");
    for r in all
        .iter()
        .filter(|r| r["tool"].as_str().is_some_and(|t| t.starts_with("AAAA")))
    {
        let tool = r["tool"].as_str().unwrap();
        assert!(
            tool.contains("sha256:"),
            "a cut name names its digest: {tool:.200}"
        );
        assert!(serde_json::to_string(r).unwrap().len() <= 8 * 1024);
    }
    eprintln!("14 calls with ~4 MiB tool names grew the log by {grown} bytes");
}
