#!/usr/bin/env bash
# fuzz/run.sh SECONDS [TARGET...]: coverage-guided fuzzing of each target for SECONDS (default 60)
# with cargo-fuzz (libFuzzer, AddressSanitizer), seeded from the corpora in fuzz/seeds.conf.
# Prints a table of executions, corpus size and crashes per target; exit 1 when any target
# crashed (the input is kept under $FUZZ_WORK/artifacts/TARGET/ and replays on stable with
# `cargo run --manifest-path fuzz/Cargo.toml --bin TARGET -- FILE`).
#
# Needs a nightly toolchain (`cargo +nightly`). Without one it says so and runs the stable smoke
# instead (fuzz/tests/smoke.rs: the seeds plus proptest mutations), which is not coverage-guided.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift || true
work=${FUZZ_WORK:-${CARGO_TARGET_DIR:-$top/target}/fuzz-work}
mkdir -p "$work"

mapfile -t all < <(grep -v '^\s*#' "$top/fuzz/seeds.conf" | awk 'NF {print $1}')
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if ! cargo +nightly --version >/dev/null 2>&1; then
  cat >&2 <<'EOF'
fuzz/run.sh: coverage-guided fuzzing needs a nightly Rust toolchain (cargo-fuzz builds with
-Zsanitizer and libFuzzer's coverage instrumentation), and `cargo +nightly` does not work here.
Running the stable smoke instead: every seed plus proptest-made mutations through each target
(FUZZ_SMOKE_CASES per target, default 10,000). This finds shallow crashes only.
EOF
  cd "$top/fuzz"
  exec cargo test -- --nocapture
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz/run.sh: installing cargo-fuzz from crates.io (cargo install cargo-fuzz --locked)" >&2
  cargo install cargo-fuzz --locked
fi

cd "$top/fuzz"
build_dir="$work/target"
echo "building the fuzz targets (nightly, release, ASan) in $build_dir" >&2
cargo +nightly fuzz build --target-dir "$build_dir" >/dev/null 2>"$work/build.log" || {
    tail -30 "$work/build.log" >&2
    exit 2
  }

rows=()
crashed=0
for t in "${targets[@]}"; do
  seeds=$(grep -E "^$t\s" "$top/fuzz/seeds.conf" | cut -d' ' -f2- | xargs -n1 | sed "s|^|$top/|" | xargs)
  corpus="$work/corpus/$t"
  artifacts="$work/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  before=$(find "$artifacts" -type f | wc -l)
  log="$work/$t.log"
  # The working corpus comes first (new inputs go there); the seed directories are read only.
  set +e
  # shellcheck disable=SC2086
  cargo +nightly fuzz run --target-dir "$build_dir" "$t" "$corpus" $seeds -- \
    -max_total_time="$secs" -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1
  status=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -oE '#[0-9]+\s+(DONE|pulse|NEW|REDUCE)\s+cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
  units=$(find "$corpus" -type f | wc -l)
  after=$(find "$artifacts" -type f | wc -l)
  new=$((after - before))
  if [ "$status" -ne 0 ] || [ "$new" -gt 0 ]; then
    crashed=1
    what=$(grep -m1 -E 'ERROR: libFuzzer|panicked at|SUMMARY' "$log" || echo "exit $status")
    rows+=("| $t | ${execs:-?} | ${speed:-?} | ${cov:-?} | $units | **$new** ($what) |")
  else
    rows+=("| $t | ${execs:-?} | ${speed:-?} | ${cov:-?} | $units | 0 |")
  fi
done

echo
echo "fuzzing: $secs s per target, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(cargo +nightly --version)"
echo
echo "| target | executions | exec/s | coverage (edges) | corpus | crashes |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
printf '%s\n' "${rows[@]}"
if [ "$crashed" -ne 0 ]; then
  echo
  echo "crash inputs are in $work/artifacts/; logs in $work/*.log"
  exit 1
fi
