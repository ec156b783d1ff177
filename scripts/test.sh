#!/usr/bin/env bash
# Every test archgate has. Installs what the tests need first (idempotent), then runs:
# formatting, clippy, the workspace tests, and the tests that use independent clients.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
export CARGO_TERM_COLOR=never
# CI builds once from whatever cache it has; incremental state would only grow the cache.
export CARGO_INCREMENTAL=0

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
for suite in tests/run-*.sh; do
  [ -e "$suite" ] || continue
  echo "== $suite"
  bash "$suite"
done
echo "all tests passed"
