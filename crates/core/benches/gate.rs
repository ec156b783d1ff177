//! The gate's own overhead per call (admission, policy, resolution of a cached kind, permit, audit
//! enqueue — no program run) and the audit writer's sustained rate to disk. Prints figures; not a
//! test. Run: `cargo bench -p archgate-core --bench gate`.

// A benchmark prints its figures on stdout.
#![allow(clippy::print_stdout)]

// The gate as it runs in archgate: on the binary's allocator (crates/archgate/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use archgate_core::audit::{AuditLog, AuditSettings, Outcome, Record, args_digest};
use archgate_core::config::{Config, ConfigHandle};
use archgate_core::exec::Permit;
use archgate_core::gate::{Catalogue, Client, Gate};
use archgate_core::paths::{PathEnv, PathOverrides, Paths};
use archgate_core::person::PersonState;
use archgate_core::policy::{Grant, Tier};
use archgate_core::tool::{CallCx, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A read tool whose resolution is a cached-kind lookup (a name against a list) and whose
/// execution returns at once: what remains is the gate.
struct Noop;
#[derive(Deserialize, JsonSchema)]
struct NoopArgs {
    /// A theme name.
    name: String,
}
static SPEC: ToolSpec = ToolSpec {
    long_running: false,
    name: "noop",
    title: "noop",
    description: "does nothing",
    tier: Tier::Read,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
const THEMES: [&str; 6] = [
    "tokyo-night",
    "catppuccin",
    "gruvbox",
    "nord",
    "everforest",
    "kanagawa",
];
impl Tool for Noop {
    type Args = NoopArgs;
    type Run = NoopArgs;
    fn spec(&self) -> &'static ToolSpec {
        &SPEC
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: NoopArgs,
    ) -> BoxFuture<'a, Result<Resolved<NoopArgs>, ToolError>> {
        Box::pin(async move {
            let t = archgate_core::resolve::match_name(
                "theme",
                &a.name,
                THEMES.iter().copied(),
                archgate_core::resolve::omarchy_name,
            )?;
            let mut r = Resolved::planned(plan, a);
            r.action.target = Some(t.human);
            Ok(r)
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        _a: NoopArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::default()) })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p) as usize]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test` builds benches too; only `cargo bench` runs this.
    }
    let dir = tempfile::tempdir().unwrap();
    let env = PathEnv {
        home: Some(dir.path().to_owned()),
        uid: nix::unistd::getuid().as_raw(),
        ..Default::default()
    };
    let paths = Paths::resolve(&env, None, &PathOverrides::default()).unwrap();
    paths.prepare(env.uid).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    // 1. Gate overhead per call.
    let audit = AuditLog::start(AuditSettings {
        path: paths.audit_log(),
        queue: 4096,
        max_bytes: 1 << 34,
        keep: 2,
    });
    let person = Arc::new(PersonState::load(
        paths.standing_rules_file(),
        paths.acknowledged_file(),
    ));
    let mut cat = Catalogue::default();
    cat.add(Noop);
    let mut cfg = Config::default();
    cfg.budgets.per_minute = u32::MAX / 2;
    cfg.budgets.per_day = u32::MAX / 2;
    let gate = Gate::new(ConfigHandle::fixed(cfg), paths.clone(), audit, person, cat);
    let client = Client {
        name: "bench".into(),
        grant: Grant::full(),
        agent: None,
        transport: archgate_core::gate::Transport::Http,
        token: None,
    };
    let n = 50_000;
    let mut times = Vec::with_capacity(n);
    rt.block_on(async {
        for i in 0..n {
            let args = serde_json::json!({ "name": THEMES[i % THEMES.len()] });
            let t = Instant::now();
            let r = gate.call(&client, "noop", args).await;
            times.push(t.elapsed());
            assert_eq!(r.outcome, Outcome::Ok);
            if i % 2000 == 0 {
                // Let the writer drain so drops do not flatter the figure.
                gate.audit().flush(Duration::from_secs(5));
            }
        }
    });
    times.sort();
    println!("gate overhead per call ({n} calls, no program run, on mimalloc as the binary):");
    println!(
        "  p50 {:>8.1?}   p99 {:>8.1?}   max {:>8.1?}   target p99 < 20 µs",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[n - 1]
    );
    // The figure must not come from a log left behind: every call's record is in the file.
    let stats = gate.audit().stats();
    let until = Instant::now() + Duration::from_secs(5);
    while stats.written.load(Ordering::Relaxed) < n as u64 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    let held = std::fs::read_to_string(paths.audit_log())
        .unwrap_or_default()
        .matches("\"args_sha256\":")
        .count();
    let dropped = stats.dropped_total.load(Ordering::Relaxed);
    println!("  the log holds {held} of {n} records ({dropped} dropped)");
    assert!(held == n && dropped == 0, "the log lost records");

    // How long a record takes to reach the file (the log's lag behind its call), paced calls.
    let mut lag = Vec::with_capacity(500);
    rt.block_on(async {
        for i in 0..500u64 {
            let before = stats.written.load(Ordering::Relaxed);
            let t = Instant::now();
            let r = gate
                .call(&client, "noop", serde_json::json!({"name": "nord"}))
                .await;
            assert_eq!(r.outcome, Outcome::Ok);
            while stats.written.load(Ordering::Relaxed) == before {
                if t.elapsed() > Duration::from_secs(5) {
                    panic!("call {i}'s record was not written within 5 s");
                }
                std::hint::spin_loop();
            }
            lag.push(t.elapsed());
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    lag.sort();
    println!(
        "  call start to its record in the file (500 paced calls): p50 {:>8.1?}   p99 {:>8.1?}",
        percentile(&lag, 0.5),
        percentile(&lag, 0.99)
    );

    // 1b. Sixteen callers at once (threads on the machine's cores): what a call costs when all
    // of them share the gate — its budgets, counters, caches and the audit writer — and how many
    // records each `write` carried (issue 34: a caller never waits for another's write).
    let callers = 16;
    let per = 3_000;
    let batches_before = stats.batches.load(Ordering::Relaxed);
    let written_before = stats.written.load(Ordering::Relaxed);
    let t = Instant::now();
    let mut times: Vec<Duration> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..callers)
            .map(|c| {
                let (gate, client) = (&gate, &client);
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    rt.block_on(async {
                        let mut times = Vec::with_capacity(per);
                        for i in 0..per {
                            let args =
                                serde_json::json!({ "name": THEMES[(c + i) % THEMES.len()] });
                            let t = Instant::now();
                            let r = gate.call(client, "noop", args).await;
                            times.push(t.elapsed());
                            assert_eq!(r.outcome, Outcome::Ok);
                        }
                        times
                    })
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let wall = t.elapsed();
    assert!(gate.audit().flush(Duration::from_secs(10)));
    times.sort();
    let records = stats.written.load(Ordering::Relaxed) - written_before;
    let writes = stats.batches.load(Ordering::Relaxed) - batches_before;
    println!(
        "  {callers} callers at once ({} calls): p50 {:>8.1?}   p99 {:>8.1?}   {:.0} calls/s; {records} records in {writes} writes ({:.1} a write), {} dropped",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.len() as f64 / wall.as_secs_f64(),
        records as f64 / writes.max(1) as f64,
        stats.dropped_total.load(Ordering::Relaxed)
    );

    // 2. The audit writer's sustained rate.
    let path = dir.path().join("writer.jsonl");
    let total = 400_000;
    let log = AuditLog::start(AuditSettings {
        path: path.clone(),
        queue: total,
        max_bytes: 1 << 34,
        keep: 2,
    });
    let rec = Record {
        time: archgate_core::audit::now_rfc3339(),
        id: "x".into(),
        client: "bench".into(),
        agent: None,
        transport: "http".into(),
        tool: "pkg_search".into(),
        route: Some("pkg_search".into()),
        target: Some("pkg_search".into()),
        tier: Some("read".into()),
        decision: Some("allow".into()),
        reason: Some("This route only reads, and no rule restricts it.".into()),
        rule: None,
        approval: None,
        outcome: Outcome::Ok,
        error_kind: None,
        exit_code: None,
        duration_ms: 1,
        args_sha256: args_digest(&serde_json::json!({"query": "vim"})),
        args: serde_json::json!({"query": "vim"}),
        dev_mode: false,
        task: None,
        provenance: None,
    };
    let t = Instant::now();
    for _ in 0..total {
        log.record(&rec);
    }
    assert!(log.flush(Duration::from_secs(120)));
    let secs = t.elapsed().as_secs_f64();
    let written = log.stats().written.load(Ordering::Relaxed);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "audit writer: {written} records ({:.1} MiB) in {secs:.2} s = {:.0} records/s   target ≥ 100,000/s",
        bytes as f64 / 1048576.0,
        written as f64 / secs
    );
}
