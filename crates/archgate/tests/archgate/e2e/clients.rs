//! Many agents at once: each HTTP client has its own token, its own view of the tools and its own
//! budget; the person's changes (revocation, grants) apply on the next request.

use serde_json::{Value, json};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::support::McpHttp;
use crate::support::Request;
use crate::support::{Env, HttpServer, PATIENCE, POLL};

/// `archgate clients add NAME --preset P` prints the token once; this finds it.
fn add_client(env: &Env, name: &str, preset: &str) -> String {
    let out = env.run(&["clients", "add", name, "--preset", preset]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let token = text
        .split_whitespace()
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("no token in: {text}"))
        .to_owned();
    let stored = std::fs::read_to_string(env.state_dir().join("clients.json")).unwrap();
    assert!(!stored.contains(&token), "only the token's hash is stored");
    token
}

/// Call records (not events), waiting briefly for the writer thread to catch up to `n`.
fn call_records(env: &Env, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let recs: Vec<Value> = env
            .audit()
            .into_iter()
            .filter(|r| r.get("tool").is_some())
            .collect();
        if recs.len() >= n || Instant::now() > deadline {
            return recs;
        }
        std::thread::sleep(POLL);
    }
}

fn names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn clients_see_only_their_grants_and_revocation_applies_at_once() {
    let env = Env::new();
    let reader = add_client(&env, "reader", "read-only");
    let mut server = HttpServer::start(&env);
    let full = env.token();

    let (r, _) = McpHttp::initialize(server.port, &reader);
    let (f, _) = McpHttp::initialize(server.port, &full);
    let reader_tools = names(&r.request(1, "tools/list", json!({})));
    let full_tools = names(&f.request(1, "tools/list", json!({})));
    assert!(reader_tools.contains(&"pkg_search".to_owned()));
    assert!(
        !reader_tools.contains(&"clipboard_write".to_owned()),
        "act tools are not granted to read-only"
    );
    assert!(full_tools.contains(&"clipboard_write".to_owned()));
    assert!(reader_tools.len() < full_tools.len());

    // Calling an ungranted tool by name is refused, and recorded under the client's name.
    let res = r.call_tool(2, "clipboard_write", json!({"text": "x"}));
    assert_eq!(res["isError"], true, "{res}");
    assert_eq!(
        res["structuredContent"]["error"]["kind"], "not_granted",
        "{res}"
    );
    let rec = call_records(&env, 1);
    assert!(
        rec.iter().any(|x| x["client"] == "reader"
            && x["tool"] == "clipboard_write"
            && x["outcome"] == "not_granted"),
        "{rec:?}"
    );

    // Revoked: refused with 401 on its next request, within a second.
    let out = env.run(&["clients", "revoke", "reader"]);
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(1);
    let status = loop {
        let resp = r.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
        if resp.status == 401 || Instant::now() > deadline {
            break resp.status;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status, 401, "a revoked token is refused");
    // The other client is untouched.
    assert!(names(&f.request(4, "tools/list", json!({}))).len() == full_tools.len());
    // Client names are in /health only for a request with a valid token.
    let health = Request::get("/health")
        .header("Authorization", format!("Bearer {full}"))
        .send(server.port)
        .json();
    assert!(
        health["calls"]["by_client"]["reader"].is_object(),
        "{health}"
    );
    server.stop();
}

/// The UTC day on this machine's wall clock: the real binary's daily budget window.
fn utc_day() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    now.as_secs() / 86_400
}

/// The sequence `budgets_and_argument_limits_are_enforced_before_the_gate` judges, on a fresh
/// state dir and server under `per_day = 3`: the four responses, and the outcomes recorded.
fn daily_budget_sequence() -> (Vec<Value>, Vec<String>) {
    let env = Env::new();
    env.write_config("[budgets]\nper_day = 3\n");
    let mut server = HttpServer::start(&env);
    let (c, _) = McpHttp::initialize(server.port, &env.token());
    let res = vec![
        // Schema violations are refused before anything runs, naming the field.
        c.call_tool(1, "pkg_search", json!({"query": "x", "colour": "red"})),
        // Oversized arguments too.
        c.call_tool(
            2,
            "pkgbuild_audit",
            json!({"pkgbuild": "#".repeat(70 * 1024)}),
        ),
        c.call_tool(3, "system_status", json!({})),
        c.call_tool(4, "system_status", json!({})),
    ];
    let outcomes = call_records(&env, 4)
        .iter()
        .map(|r| r["outcome"].as_str().unwrap().to_owned())
        .collect();
    server.stop();
    (res, outcomes)
}

#[test]
fn budgets_and_argument_limits_are_enforced_before_the_gate() {
    // The daily budget is the real binary's, on the wall clock (how a window turns is held on
    // the gate's own clock, without sleeping: core `the_budget_minute_turns_on_the_gates_clock`).
    // Calls that straddle midnight UTC fall in two windows and prove nothing either way, so such
    // a run is judged not at all and the sequence runs once more, wholly inside the new day. A
    // second straddle in a row cannot happen on a clock moving one day per day: it fails.
    let (res, outcomes) = (0..2)
        .find_map(|_| {
            let day = utc_day();
            let got = daily_budget_sequence();
            (utc_day() == day).then_some(got)
        })
        .expect("two runs in a row straddled midnight UTC");

    assert_eq!(
        res[0]["structuredContent"]["error"]["kind"], "invalid_arguments",
        "{}",
        res[0]
    );
    assert!(
        res[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("colour"),
        "{}",
        res[0]
    );
    assert_eq!(
        res[1]["structuredContent"]["error"]["kind"], "too_large",
        "{}",
        res[1]
    );
    assert_ne!(
        res[2]["isError"], true,
        "the third call of the day runs: {}",
        res[2]
    );
    assert_eq!(
        res[3]["structuredContent"]["error"]["kind"], "budget_exhausted",
        "three calls a day: {}",
        res[3]
    );
    assert!(
        res[3]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("reset"),
        "says when it resets: {}",
        res[3]
    );
    assert_eq!(
        outcomes,
        [
            "invalid_arguments",
            "invalid_arguments",
            "ok",
            "budget_exhausted"
        ]
    );
}
