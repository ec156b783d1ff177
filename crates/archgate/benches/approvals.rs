//! Issue 4's benchmark: with calls parked on the person's approval, unrelated read calls keep
//! their latency (target: p99 within 2x of idle).
//!
//! Starts the release binary (`archgate serve --http --port 0`) in private XDG directories with
//! `notify` on `ask`, the approval page on (a channel, so questions park instead of being refused
//! `unsupported`), no desktop notifications, `approval.timeout_s = 600` and the nag guard's cap
//! (`approval.max_questions`) and the question budget raised. `notify` has no resolution step, so
//! it parks headless, and nothing runs: every parked call is denied at the end.
//!
//! Phases, one run, one server: BENCH_READS (2000) sequential `system_status` calls from a
//! read-only client (after 200 warm-up calls) while idle; then BENCH_ROUNDS (2) rounds of:
//! BENCH_PARKED (100) `notify` calls from another client (a new one each round: a declined
//! route backs off), each in its own session and connection, held open until `/health` and `archgate approvals --json` both show them all
//! pending; the same reads; every parked call denied with `archgate deny ID` (each answer must be
//! `declined`); the reads again, idle. Idle and parked phases alternate, so a change in the
//! machine's load during the run hits both; the verdict compares all parked phases' reads, pooled,
//! with all idle phases' reads. The load generator is one thread (tokio current-thread runtime), so it takes at most one of
//! the machine's cores. BENCH_ERA=stateless speaks 2026-07-28 instead of sessions.
//!
//!     cargo bench -p archgate --bench approvals

// A benchmark prints its figures on stdout.
#![allow(clippy::print_stdout)]

mod support;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::mcp::{Mcp, http_client, result_text};
use support::{Home, Server, Summary, cpu_seconds, knob, loadavg, ms};

const TARGET: f64 = 2.0;

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

fn config(standin: &str) -> String {
    "[policy]\nask = [\"notify\"]\n\
     [approval]\ntimeout_s = 600\npage = true\npage_port = 0\nnotifications = false\nmax_questions = 1000\n\
     [budgets]\nper_minute = 100000\nper_day = 10000000\nquestions_per_hour = 10000\n"
        .to_owned()
        + &support::offline_services(standin, None)
}

struct Phase {
    name: String,
    pending: u64,
    samples: Vec<Duration>,
    lat: Summary,
    errors: usize,
    server_cpu: f64,
    rss_kib: u64,
}

async fn run() -> anyhow::Result<()> {
    let reads = knob("BENCH_READS", 2000);
    let parked_n = knob("BENCH_PARKED", 100);
    let rounds = knob("BENCH_ROUNDS", 2);
    let era = support::era()?;
    let standin = support::standin::StandIn::start()?;
    let home = Home::new(&config(&standin.url))?;
    let reader_token = home.add_client("reader", "read-only", &[])?;
    // One asking client per round: a declined (client, route) backs off before it may ask again.
    let mut asker_tokens = Vec::new();
    for round in 1..=rounds {
        asker_tokens.push(home.add_client(&format!("asker-{round}"), "desktop", &[])?);
    }
    let server = Server::start(&home)?;
    let probe = http_client();
    let load_before = loadavg();

    let reader = Mcp::connect(server.port, &reader_token, era).await?;
    // One checked answer: real content, this machine's CPU count.
    let first = reader
        .request(
            1,
            "tools/call",
            json!({"name": "system_status", "arguments": {}}),
        )
        .await?;
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get() as u64);
    ensure!(
        first["result"]["structuredContent"]["cpus"] == cpus,
        "system_status did not answer with this machine's {cpus} CPUs: {first}"
    );
    let mut next_id = 2;
    read_phase(&reader, &mut next_id, 200).await?; // warm-up, not counted

    // Idle, then rounds of parked / released, so drift in the machine's load hits both sides.
    let mut phases = Vec::new();
    phases.push(measured("idle", &server, &probe, &reader, &mut next_id, reads).await?);
    let mut rounds_seen = Vec::new();
    for round in 1..=rounds {
        let parked = park(
            &home,
            &server,
            &probe,
            &asker_tokens[round - 1],
            era,
            parked_n,
            round,
        )
        .await?;
        phases.push(
            measured(
                &format!("round {round}: {parked_n} parked"),
                &server,
                &probe,
                &reader,
                &mut next_id,
                reads,
            )
            .await?,
        );
        let still = server.health(&probe).await?["pending_approvals"]
            .as_u64()
            .unwrap_or(0);
        ensure!(
            still as usize == parked_n,
            "only {still} of {parked_n} calls were still pending after the parked phase"
        );
        rounds_seen.push(release(&home, parked).await?);
        phases.push(
            measured(
                &format!("round {round}: after release"),
                &server,
                &probe,
                &reader,
                &mut next_id,
                reads,
            )
            .await?,
        );
    }
    let bench_cpu = cpu_seconds(None);
    let server_cpu = cpu_seconds(Some(server.pid()));
    server.stop();

    println!(
        "issue 4: read latency with calls parked on approval ({})",
        era.describe()
    );
    println!(
        "{reads} sequential system_status calls per phase from a read-only client (after 200 \
         warm-up); {rounds} rounds of {parked_n} notify calls parked by another client (a new one each round), one \
         session and connection each; load average {load_before} before, {} after",
        loadavg()
    );
    println!();
    println!(
        "| phase | pending | p50 ms | p90 ms | p99 ms | max ms | mean ms | errors | server CPU s | server RSS MiB |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for p in &phases {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.1} |",
            p.name,
            p.pending,
            ms(p.lat.p50),
            ms(p.lat.p90),
            ms(p.lat.p99),
            ms(p.lat.max),
            ms(p.lat.mean),
            p.errors,
            p.server_cpu,
            p.rss_kib as f64 / 1024.0
        );
    }
    let pool = |parked: bool| -> Summary {
        let all: Vec<Duration> = phases
            .iter()
            .filter(|p| (p.pending > 0) == parked)
            .flat_map(|p| p.samples.iter().copied())
            .collect();
        Summary::of(&all)
    };
    let (idle, loaded) = (pool(false), pool(true));
    println!(
        "| **all idle phases** | 0 | {} | {} | {} | {} | {} | | | |",
        ms(idle.p50),
        ms(idle.p90),
        ms(idle.p99),
        ms(idle.max),
        ms(idle.mean)
    );
    println!(
        "| **all parked phases** | {parked_n} | {} | {} | {} | {} | {} | | | |",
        ms(loaded.p50),
        ms(loaded.p90),
        ms(loaded.p99),
        ms(loaded.max),
        ms(loaded.mean)
    );
    let ratio = loaded.p99.as_secs_f64() / idle.p99.as_secs_f64();
    let first = phases[1].lat.p99.as_secs_f64() / phases[0].lat.p99.as_secs_f64();
    println!();
    println!(
        "p99 parked / idle (all phases pooled): {ratio:.2}x (target <= {TARGET}x): {}; \
         first parked phase / first idle phase: {first:.2}x; p50 pooled: {:.2}x",
        if ratio <= TARGET { "met" } else { "NOT met" },
        loaded.p50.as_secs_f64() / idle.p50.as_secs_f64()
    );
    let mut other = Vec::new();
    for (i, r) in rounds_seen.iter().enumerate() {
        println!(
            "round {}: parking {parked_n} calls took {:.2} s (until /health showed them all); \
             releasing them ({parked_n} x `archgate deny`) {:.2} s: {} declined, {} otherwise",
            i + 1,
            r.park_took.as_secs_f64(),
            r.release_took.as_secs_f64(),
            r.declined,
            r.other.len()
        );
        other.extend(r.other.iter().cloned());
    }
    for o in other.iter().take(5) {
        println!("  unexpected answer of a parked call: {o}");
    }
    println!(
        "CPU time in total: server {server_cpu:.2} s, load generator {bench_cpu:.2} s (one thread)"
    );
    let errors: usize = phases.iter().map(|p| p.errors).sum();
    let declined: usize = rounds_seen.iter().map(|r| r.declined).sum();
    ensure!(
        declined == rounds * parked_n,
        "{declined} of {} parked calls came back declined",
        rounds * parked_n
    );
    ensure!(
        errors == 0 && other.is_empty(),
        "{errors} read errors, {} unexpected parked answers",
        other.len()
    );
    Ok(())
}

/// Calls parked in one round, each in its own task, and how long parking took.
struct Parked {
    tasks: tokio::task::JoinSet<anyhow::Result<Value>>,
    ids: Vec<String>,
    took: Duration,
}

/// How one round's parked calls ended.
struct Released {
    park_took: Duration,
    release_took: Duration,
    declined: usize,
    other: Vec<String>,
}

/// Parks `n` `notify` calls, each in its own session on its own connection, and waits until
/// `/health` and `archgate approvals` both show all of them pending.
async fn park(
    home: &Home,
    server: &Server,
    probe: &reqwest::Client,
    token: &str,
    era: support::mcp::Era,
    n: usize,
    round: usize,
) -> anyhow::Result<Parked> {
    let mut askers = Vec::with_capacity(n);
    for _ in 0..n {
        askers.push(Mcp::connect(server.port, token, era).await?);
    }
    let mut tasks = tokio::task::JoinSet::new();
    let since = Instant::now();
    for (i, c) in askers.into_iter().enumerate() {
        tasks.spawn(async move {
            let args = json!({"title": format!("bench round {round} parked {i}"),
                "body": "archgate bench: deny me"});
            c.request(
                1,
                "tools/call",
                json!({"name": "notify", "arguments": args}),
            )
            .await
        });
    }
    loop {
        let h = server.health(probe).await?;
        let pending = h["pending_approvals"].as_u64().unwrap_or(0);
        if pending as usize == n {
            break;
        }
        if let Some(done) = tasks.try_join_next() {
            bail!("a call meant to park answered at once: {:?}", done?);
        }
        if since.elapsed() > support::PATIENCE {
            bail!(
                "{pending} of {n} calls pending after {:?}; server log:\n{}",
                since.elapsed(),
                home.server_log()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = since.elapsed();
    let ids = pending_ids(home)?;
    ensure!(
        ids.len() == n,
        "archgate approvals lists {} calls, /health {n}",
        ids.len()
    );
    Ok(Parked { tasks, ids, took })
}

/// Denies every parked call by id; each must come back `declined`.
async fn release(home: &Home, mut p: Parked) -> anyhow::Result<Released> {
    let since = Instant::now();
    for id in &p.ids {
        home.run(&["deny", id])?;
    }
    let mut declined = 0;
    let mut other = Vec::new();
    while let Some(done) = p.tasks.join_next().await {
        match done.context("parked task")? {
            Ok(answer) => {
                let (is_error, text) = result_text(&answer);
                if is_error && text.starts_with("declined") {
                    declined += 1;
                } else {
                    other.push(answer.to_string());
                }
            }
            Err(e) => other.push(format!("{e:#}")),
        }
    }
    Ok(Released {
        park_took: p.took,
        release_took: since.elapsed(),
        declined,
        other,
    })
}

/// `archgate approvals --json`: the ids of every pending call.
fn pending_ids(home: &Home) -> anyhow::Result<Vec<String>> {
    let out = home.run(&["approvals", "--json"])?;
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).context("approvals --json")?;
    list.iter()
        .map(|q| {
            ensure!(
                q["tool"] == "notify"
                    && q["client"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("asker-")),
                "unexpected pending call: {q}"
            );
            q["id"].as_str().map(str::to_owned).context("id")
        })
        .collect()
}

async fn measured(
    name: &str,
    server: &Server,
    probe: &reqwest::Client,
    reader: &Mcp,
    next_id: &mut u64,
    n: usize,
) -> anyhow::Result<Phase> {
    let pending = server.health(probe).await?["pending_approvals"]
        .as_u64()
        .unwrap_or(0);
    let cpu0 = cpu_seconds(Some(server.pid()));
    let (lat, errors) = read_phase(reader, next_id, n).await?;
    Ok(Phase {
        name: name.to_owned(),
        pending,
        lat: Summary::of(&lat),
        samples: lat,
        errors,
        server_cpu: cpu_seconds(Some(server.pid())) - cpu0,
        rss_kib: rss_kib(server.pid()),
    })
}

/// `n` sequential `system_status` calls: their latencies and how many failed.
async fn read_phase(
    reader: &Mcp,
    next_id: &mut u64,
    n: usize,
) -> anyhow::Result<(Vec<Duration>, usize)> {
    let mut lat = Vec::with_capacity(n);
    let mut errors = 0;
    for _ in 0..n {
        let id = *next_id;
        *next_id += 1;
        let t = Instant::now();
        let r = reader
            .request(
                id,
                "tools/call",
                json!({"name": "system_status", "arguments": {}}),
            )
            .await;
        lat.push(t.elapsed());
        match r {
            Ok(a) if !result_text(&a).0 && a["result"]["structuredContent"].is_object() => {}
            Ok(a) => {
                errors += 1;
                eprintln!("read call {id} failed: {a}");
            }
            Err(e) => {
                errors += 1;
                eprintln!("read call {id} failed: {e:#}");
            }
        }
    }
    Ok((lat, errors))
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
