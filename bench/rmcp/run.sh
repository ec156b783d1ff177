#!/usr/bin/env bash
# Issue 23's speed check: archgate against a bare rmcp server (crates/archgate/benches/bare_rmcp.rs:
# tools answering constant JSON — archgate's own answers — on the same rmcp, axum and TCP
# settings), side by side in one run with `hey`, then the gate's own overhead
# (crates/core/benches/gate.rs). Builds both in release; installs `hey` (Debian or Arch) when missing.
# Prints the table: archgate / bare at 1, 16 and 64 clients for `pacman_conf` (the headline: the
# pipeline's cost; target >= 90% at 1 and 16) and `system_status` (the pipeline plus the tool's
# /proc and /sys reads), the machine's load, archgate's idle RSS, that the log holds one record
# per call, system calls and context switches a call (bench/rmcp/percall.py), idle RSS as a person
# installs the binary (bench/rmcp/idle_rss.py: `install -m755` to a fresh path, several samples,
# where the memory goes), and the gate's p99.
#   bash bench/rmcp/run.sh
#   ARCHGATE_BEFORE_BIN=/path/to/an/earlier/archgate bash bench/rmcp/run.sh   # before / after, same rounds
# Knobs: BENCH_REQUESTS (per round, 3000), BENCH_ROUNDS (3), BENCH_WARMUP (1000), BENCH_CLIENTS
# (1,16,64), BENCH_TOOLS (pacman_conf,system_status); CARGO_TARGET_DIR.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"

cargo build --release --locked -p archgate --manifest-path "$top/Cargo.toml" >&2
# The bare server is a bench target of the archgate crate: the same rmcp, axum, hyper and tokio,
# with the same features, compiled the same way — twice: on the system allocator (as the SDK
# comes) and on mimalloc (archgate's allocator).
bare_of() {
  cargo bench --locked -p archgate --manifest-path "$top/Cargo.toml" --bench "$1" --no-run \
    --message-format=json |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1"
}
bare=$(bare_of bare_rmcp)
bare_mimalloc=$(bare_of bare_rmcp_mimalloc)
[ -x "$bare" ] && [ -x "$bare_mimalloc" ] || { echo "bench/rmcp: building the bare servers failed" >&2; exit 1; }
lock_version() { awk -v n="$1" '$0 == "name = \"" n "\"" {getline; print $3; exit}' "$top/Cargo.lock" | tr -d '"'; }
# After the bare servers: a bench target's build relinks the binary as cargo lays it out.
bash "$top/scripts/link-order.sh" --locked
export ARCHGATE_BIN="$CARGO_TARGET_DIR/release/archgate"
export BARE_BIN="$bare" BARE_MIMALLOC_BIN="$bare_mimalloc"

. "$(dirname "$0")/../hey.sh"

echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- archgate $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?') and the bare server on rmcp $(lock_version rmcp), axum $(lock_version axum), hyper $(lock_version hyper), tokio $(lock_version tokio), release builds, $(rustc --version | awk '{print $1, $2}'); hey $(hey_version), loopback"
echo
python3 "$top/bench/rmcp/bench.py"
echo
# What a call costs the kernel, which the machine's load does not move as it moves calls/s:
# system calls and context switches a call, each server's every thread (needs `perf`).
if command -v perf >/dev/null; then
  python3 "$top/bench/rmcp/percall.py"
  echo
fi
# Idle RSS as installed (the target: <= 16 MiB), and where it goes.
python3 "$top/bench/rmcp/idle_rss.py"
echo
# The gate alone: admission to record, the tool's work excluded (a tool that returns at once).
cargo bench --locked -p archgate-core --manifest-path "$top/Cargo.toml" --bench gate |
  grep -E 'gate overhead|p50|log holds|audit writer'
