#!/usr/bin/env bash
# The fuzz targets as a stable smoke run (fuzz/tests/smoke.rs): every seed of every target plus
# FUZZ_SMOKE_CASES proptest-made mutations each (default here 2,000; the file's own default is
# 10,000). fuzz/ is its own workspace, so `cargo test --workspace` does not build it.
# Coverage-guided fuzzing is `bash fuzz/run.sh SECONDS` (nightly).
# Not part of scripts/test.sh: building the fuzz workspace (libFuzzer included) takes too long on
# a loaded 2-core machine to keep the test command well under 30 minutes; run it by hand.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/fuzz"
cargo fmt -- --check
cargo clippy --locked --all-targets -- -D warnings
FUZZ_SMOKE_CASES="${FUZZ_SMOKE_CASES:-2000}" cargo test --locked
