//! Issue 9's benchmark: 50 concurrent clients, each with its own token and grants, 200 mixed
//! calls each: no errors beyond the expected refusals, no answer reaching the wrong client, and
//! p99 latency within 3x of a single client doing the same calls alone.
//!
//! Starts the release binary (`archgate serve --http --port 0`) in private XDG directories with
//! the per-client budgets raised (the defaults, 120 calls a minute, would refuse this load). Adds
//! BENCH_CLIENTS (50) clients with `archgate clients add`, cycling through four grants, each with
//! a tools/list of its own and a tool it is not granted:
//!
//! | grant | refused tool |
//! | --- | --- |
//! | `--preset read-only` (every read tool) | `notify` (act tier) |
//! | `--preset desktop --tools` six tools | `pacman_conf` (not in its list) |
//! | `--preset full --tools` five tools | `theme` (not in its list) |
//! | `--preset read-only --tools` five tools, `notify` among them | `notify` (act tier not granted) |
//!
//! Every client makes BENCH_CALLS (200) calls in a fixed cycle of ten (each client starting at
//! its own place in it, so the clients together always send the whole mix): tools/list (must equal
//! the list that client's grant gave when it was alone), `system_status` x3 (must carry this
//! machine's CPU count), `pkg_info` x3 and `pkg_owner` x2 with a name or path unique to the
//! client, phase and call (the not-found answer must name it), and the refused tool (must be
//! refused). Every answer's JSON-RPC id must be its request's; ids are unique across clients.
//!
//! Runs, one server, each client in its own session on its own connection:
//! 1. closed loop, alone: one client of each grant, one after another, calls back to back;
//! 2. closed loop, all clients at once, calls back to back (on 2 cores this is CPU-bound: the
//!    latency then measures queueing behind the other 49);
//! 3. paced, alone: one client of each grant, one after another, one call every BENCH_PACE_MS
//!    (100 ms), a plausible agent's rate;
//! 4. paced, all clients at once at that rate, their starts spread over one interval.
//!
//! Latency is from sending the request to having its whole answer. The load generator is one
//! thread (tokio current-thread runtime): at most one core. BENCH_ERA=stateless speaks
//! 2026-07-28 instead of sessions.
//!
//!     cargo bench -p archgate --bench clients

// A benchmark prints its figures on stdout.
#![allow(clippy::print_stdout)]

mod load;
#[path = "../support/mod.rs"]
mod support;

use anyhow::ensure;
use load::{Client, Row, Tally, run_all, run_each};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::mcp::Mcp;
use support::{Home, Server, Summary, cpu_seconds, knob, loadavg, ms};

const TARGET: f64 = 3.0;

struct Grant {
    label: &'static str,
    preset: &'static str,
    tools: &'static [&'static str],
    refused: &'static str,
}

const GRANTS: [Grant; 4] = [
    Grant {
        label: "read-only",
        preset: "read-only",
        tools: &[],
        refused: "notify",
    },
    Grant {
        label: "desktop, 6 tools",
        preset: "desktop",
        tools: &[
            "system_status",
            "pkg_info",
            "pkg_owner",
            "notify",
            "osd",
            "theme",
        ],
        refused: "pacman_conf",
    },
    Grant {
        label: "full, 5 tools",
        preset: "full",
        tools: &[
            "system_status",
            "pkg_info",
            "pkg_owner",
            "pacman_conf",
            "notify",
        ],
        refused: "theme",
    },
    Grant {
        label: "read-only, 4 tools + notify",
        preset: "read-only",
        tools: &[
            "system_status",
            "pkg_info",
            "pkg_owner",
            "pacman_conf",
            "notify",
        ],
        refused: "notify",
    },
];

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

fn config(standin: &str, pacman_conf: Option<&std::path::Path>) -> String {
    "[budgets]\nper_minute = 100000\nper_day = 10000000\n\
     [approval]\npage = false\nnotifications = false\n"
        .to_owned()
        + &support::offline_services(standin, pacman_conf)
}

async fn run() -> anyhow::Result<()> {
    let n_clients = knob("BENCH_CLIENTS", 50);
    let calls = knob("BENCH_CALLS", 200);
    let pace = Duration::from_millis(knob("BENCH_PACE_MS", 100) as u64);
    let era = support::era()?;
    let standin = support::standin::StandIn::start()?;
    // BENCH_PACMAN=remote: no pacman databases, so pkg_info asks the packages API (the stand-in).
    let remote = std::env::var("BENCH_PACMAN").is_ok_and(|v| v == "remote");
    let world = tempfile::Builder::new()
        .prefix("archgate-bench-world-")
        .tempdir()?;
    let pacman_conf = if remote {
        None
    } else {
        Some(support::pacman_world(world.path(), 2000, 300)?)
    };
    let home = Home::new(&config(&standin.url, pacman_conf.as_deref()))?;
    let mut tokens = Vec::new();
    for i in 0..n_clients {
        let g = &GRANTS[i % GRANTS.len()];
        tokens.push(home.add_client(&format!("bench-{i:02}"), g.preset, g.tools)?);
    }
    let server = Server::start(&home)?;
    let port = server.port;
    let load_before = loadavg();

    // Each grant's tools/list, asked alone before any load: the reference for every answer.
    let mut lists: HashMap<&str, Arc<Value>> = HashMap::new();
    let mut clients = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let g = &GRANTS[i % GRANTS.len()];
        let mcp = Mcp::connect(port, token, era).await?;
        if !lists.contains_key(g.label) {
            let a = mcp.request(1, "tools/list", json!({})).await?;
            let tools = a["result"]["tools"].clone();
            let names = names(&tools);
            ensure!(!names.is_empty(), "{}: empty tools/list: {a}", g.label);
            ensure!(
                !names.contains(&g.refused.to_owned()),
                "{}: the refused tool {} is listed",
                g.label,
                g.refused
            );
            if !g.tools.is_empty() {
                let mut want: Vec<String> = g
                    .tools
                    .iter()
                    .filter(|t| !(g.preset == "read-only" && **t == "notify"))
                    .map(|t| t.to_string())
                    .collect();
                want.sort();
                ensure!(
                    names == want,
                    "{}: tools/list {names:?}, want {want:?}",
                    g.label
                );
            }
            lists.insert(g.label, Arc::new(tools));
        }
        clients.push(Client {
            index: i,
            grant: g,
            mcp,
            expected_list: lists[g.label].clone(),
        });
    }
    let distinct: std::collections::BTreeSet<String> =
        lists.values().map(|l| l.to_string()).collect();
    ensure!(
        distinct.len() == GRANTS.len(),
        "the grants' tools/lists are not all different"
    );
    let clients: Vec<Arc<Client>> = clients.into_iter().map(Arc::new).collect();
    let alone: Vec<Arc<Client>> = clients.iter().take(GRANTS.len()).cloned().collect();

    // Warm-up (not counted): every client once through a short cycle.
    run_all(&clients, "w", 10, None).await;

    let mut rows = Vec::new();
    rows.push(
        measure(&server, "closed loop, one client alone", || {
            run_each(&alone, "a", calls, None)
        })
        .await,
    );
    rows.push(
        measure(
            &server,
            &format!("closed loop, {n_clients} clients at once"),
            || run_all(&clients, "b", calls, None),
        )
        .await,
    );
    rows.push(
        measure(
            &server,
            &format!("paced ({} ms), one client alone", pace.as_millis()),
            || run_each(&alone, "c", calls, Some(pace)),
        )
        .await,
    );
    rows.push(
        measure(
            &server,
            &format!(
                "paced ({} ms), {n_clients} clients at once",
                pace.as_millis()
            ),
            || run_all(&clients, "d", calls, Some(pace)),
        )
        .await,
    );
    let bench_cpu = cpu_seconds(None);
    let server_cpu = cpu_seconds(Some(server.pid()));
    let health = server.health(&support::mcp::http_client()).await.ok();
    server.stop();

    println!(
        "issue 9: {n_clients} clients, {calls} mixed calls each ({})",
        era.describe()
    );
    println!(
        "grants cycled: {}; each cycle of ten: tools/list, system_status x3, pkg_info x3 and \
         pkg_owner x2 (unique argument echoed), one refused call; load average {load_before} \
         before, {} after",
        GRANTS.map(|g| g.label).join(" / "),
        loadavg()
    );
    println!(
        "pkg_info and pkg_owner answer from {}",
        if remote {
            "no pacman databases: pkg_info asks the packages API (a stand-in on loopback)"
        } else {
            "a generated pacman world (2,000 sync packages, 300 installed; bench/pacman/generate.py), as on Arch"
        }
    );
    println!(
        "\"alone\" = one client of each of the 4 grants, one after another ({} calls); latency \
         from send to the whole answer",
        GRANTS.len() * calls
    );
    println!();
    println!(
        "| run | calls | calls/s | p50 ms | p90 ms | p99 ms | max ms | answered | refused as expected | errors | wrong client | server CPU s |"
    );
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in &rows {
        let s = Summary::of(&r.tally.lat);
        println!(
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            r.name,
            s.n,
            s.n as f64 / r.wall.as_secs_f64(),
            ms(s.p50),
            ms(s.p90),
            ms(s.p99),
            ms(s.max),
            r.tally.ok,
            r.tally.refused,
            r.tally.errors,
            r.tally.misrouted,
            r.server_cpu
        );
    }
    println!();
    let kinds = [
        "tools/list",
        "system_status",
        "pkg_info",
        "pkg_owner",
        "refused",
    ];
    println!("latency by kind of call, p50 / p99 ms:");
    println!();
    println!("| run | {} |", kinds.join(" | "));
    println!("| --- |{}", " ---: |".repeat(kinds.len()));
    for r in &rows {
        let cells: Vec<String> = kinds
            .iter()
            .map(|k| {
                let s = Summary::of(r.tally.by_kind.get(k).map_or(&[][..], |v| v.as_slice()));
                format!("{} / {}", ms(s.p50), ms(s.p99))
            })
            .collect();
        println!("| {} | {} |", r.name, cells.join(" | "));
    }
    println!();
    let p99 = |r: &Row| Summary::of(&r.tally.lat).p99.as_secs_f64();
    for (what, one, many) in [
        ("closed loop", &rows[0], &rows[1]),
        ("paced", &rows[2], &rows[3]),
    ] {
        let ratio = p99(many) / p99(one);
        println!(
            "{what}: p99 {n_clients} clients / alone = {ratio:.2}x (target <= {TARGET}x): {}",
            if ratio <= TARGET { "met" } else { "NOT met" }
        );
    }
    for r in [&rows[1], &rows[3]] {
        let f = Summary::of(&r.tally.finished);
        println!(
            "{}: clients finished between {:.2} s and {:.2} s (median {:.2} s) after the start",
            r.name,
            r.tally
                .finished
                .iter()
                .min()
                .copied()
                .unwrap_or_default()
                .as_secs_f64(),
            f.max.as_secs_f64(),
            f.p50.as_secs_f64()
        );
    }
    let due = Summary::of(&rows[3].tally.from_due);
    println!(
        "{}: p99 from the time each call was due (a late start counts): {} ms",
        rows[3].name,
        ms(due.p99)
    );
    println!(
        "CPU time in total: server {server_cpu:.2} s, load generator {bench_cpu:.2} s (one thread)"
    );
    if let Some(h) = health {
        println!(
            "server /health: {} calls, by outcome {} (not_granted: the refused calls; tool_error: \
             pkg_info's not_found)",
            h["calls"]["total"], h["calls"]["by_outcome"]
        );
    }
    println!(
        "the packages API stand-in on loopback answered {} requests",
        standin.served.load(std::sync::atomic::Ordering::Relaxed)
    );
    for r in &rows {
        let slow: Vec<String> = r
            .tally
            .slowest
            .iter()
            .map(|(d, what)| format!("{} ms ({what})", ms(*d)))
            .collect();
        println!("{}: slowest calls: {}", r.name, slow.join(", "));
    }
    let mut bad = 0;
    for r in &rows {
        for n in &r.tally.notes {
            println!("  {}: {n}", r.name);
        }
        bad += r.tally.errors + r.tally.misrouted;
    }
    ensure!(bad == 0, "{bad} errors or misrouted answers");
    Ok(())
}

pub fn names(tools: &Value) -> Vec<String> {
    let mut n: Vec<String> = tools
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    n.sort();
    n
}

async fn measure<F, Fut>(server: &Server, name: &str, f: F) -> Row
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Tally>,
{
    let cpu0 = cpu_seconds(Some(server.pid()));
    let start = Instant::now();
    let tally = f().await;
    Row {
        name: name.to_owned(),
        wall: start.elapsed(),
        server_cpu: cpu_seconds(Some(server.pid())) - cpu0,
        tally,
    }
}
