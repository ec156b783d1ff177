#!/usr/bin/env bash
# Every test archgate has. Installs what the tests need first (idempotent), then runs:
# formatting, clippy, the workspace tests, and the tests that use independent clients.
#
# Runs from any clone location and any CARGO_TARGET_DIR, as root or as a normal user. A suite that
# needs root prints `NAME: SKIPPED: needs root (…)` and succeeds for anyone else; the skipped ones
# are listed at the end. Under CI (CI=true) a skipped suite fails the run: CI runs as root and
# must run everything.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
export CARGO_TERM_COLOR=never
# CI builds once from whatever cache it has; incremental state would only grow the cache.
export CARGO_INCREMENTAL=0

# shellcheck source=scripts/rust.sh
. scripts/rust.sh
need_rust rustfmt,clippy
need_lints
bash scripts/test-deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$CARGO_TARGET_DIR/test-output.txt"

# The binary under test for the client suites below.
cargo build --locked -p archgate
export ARCHGATE_BIN="$CARGO_TARGET_DIR/debug/archgate"
# The suites' world: no polkit and no system bus for what they start, whatever this machine runs
# (tests/world/no-polkit.c; the cargo harness loads the same). The root-only suites make their own
# worlds in mount namespaces (run-polkit.sh tests presence against a real polkitd there) and run
# programs as other users, who may not reach this build's directory: they run without it.
world=$(bash tests/world/build.sh)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
for suite in tests/run-*.sh; do
  [ -e "$suite" ] || continue
  echo "== $suite"
  case "$suite" in
    tests/run-polkit.sh | tests/run-handoff.sh | tests/run-units.sh | tests/run-package.sh) bash "$suite" ;;
    *) LD_PRELOAD="$world" bash "$suite" ;;
  esac 2>&1 | tee "$logs/$(basename "$suite").log"
done
skipped=$(cat "$logs"/*.log | grep -E '^[A-Za-z0-9_-]+: SKIPPED: ' || true)
if [ -n "$skipped" ]; then
  echo "== skipped (as $(id -un)):"
  printf '%s\n' "$skipped"
  if [ "${CI:-}" = true ]; then
    echo "test.sh: FAIL: under CI nothing may be skipped (CI runs as root)" >&2
    exit 1
  fi
fi
echo "all tests passed"
