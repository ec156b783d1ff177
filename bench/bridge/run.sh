#!/usr/bin/env bash
# Bridged stdio (`archgate serve` through the daemon) against in-process stdio, side by side:
# p50/p99 of `tools/call system_status` and their ratio. Figures, not a test.
#   bash bench/bridge/run.sh               # builds archgate in release first
#   ARCHGATE_BIN=path bash bench/bridge/run.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${ARCHGATE_BIN:-}" ]; then
  target="${CARGO_TARGET_DIR:-$top/target}"
  (cd "$top" && cargo build --release -p archgate >&2)
  ARCHGATE_BIN="$target/release/archgate"
fi
export ARCHGATE_BIN
exec python3 "$top/bench/bridge/bench.py"
