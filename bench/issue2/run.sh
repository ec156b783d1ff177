#!/usr/bin/env bash
# Issue 2's benchmark: archgate against a reference server on the official Python SDK (mcp 2.x
# MCPServer), side by side in one run. Builds archgate in release, makes a venv with the SDK,
# installs `hey` (Debian or Arch) when missing, prints machine facts and the table.
#   bash bench/issue2/run.sh               # print
#   bash bench/issue2/run.sh --results F   # also write F (bench/RESULTS.md is made this way)
# Knobs: BENCH_STARTS (cold starts per server, default 10), BENCH_REQUESTS (per load run, 2000).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
results=""
[ "${1:-}" = "--results" ] && results="${2:?--results needs a file}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"

cargo build --release --locked -p archgate --manifest-path "$top/Cargo.toml" >&2
export ARCHGATE_BIN="$CARGO_TARGET_DIR/release/archgate"

venv="${ARCHGATE_BENCH_VENV:-$CARGO_TARGET_DIR/bench-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp.server.mcpserver' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'mcp>=2,<3' >&2
fi
. "$(dirname "$0")/../hey.sh"

facts() {
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) cores online"
  echo "- memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "- kernel: $(uname -sr); OS: $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- archgate $("$ARCHGATE_BIN" --version | awk '{print $2}') (release build, $(rustc --version | awk '{print $1, $2}'))"
  echo "- reference: Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'), mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))') MCPServer with its defaults (streamable HTTP on uvicorn)"
  echo "- load generator: hey $(hey_version) on the same machine, loopback"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
{ facts; echo; "$venv/bin/python" "$top/bench/issue2/bench.py"; } | tee "$out"
if [ -n "$results" ]; then
  { echo "# Benchmark results"
    echo
    echo "## Issue 2: archgate against the official Python SDK's MCPServer"
    echo
    echo "Written by \`bash bench/issue2/run.sh --results bench/RESULTS.md\` (see bench/README.md)."
    echo "One run on one machine: figures move with the machine's load; the ratios are what matter."
    echo
    cat "$out"; } >"$results"
fi
