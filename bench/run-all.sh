#!/usr/bin/env bash
# Every benchmark side by side in one run, written to bench/RESULTS.md with the machine and date.
#
#   bash bench/run-all.sh                  # all of them, then write bench/RESULTS.md
#   bash bench/run-all.sh issue2 aur       # only these (the others are listed as not run)
#   BENCH_BUDGET_S=600 bash bench/run-all.sh   # stop starting new benches after 600 s
#
# Benches (bench/README.md says what each measures):
#   issue2   archgate vs the official Python SDK's MCPServer (bench/issue2/run.sh)
#   pacman   archgate-pacman vs real pacman -Ss/-Qo on a generated world (bench/pacman)
#   wiki     offline ArchWiki index vs online queries to a local server (bench/wiki)
#   aur      PKGBUILD audit timings (crates/aur/examples/bench.rs)
#   gate     the gate's own overhead and the audit writer (crates/core/benches/gate.rs)
#   context  the tool list's size in an agent's context per preset (bench/context/run.py)
#   approvals  read latency with 100 calls parked on approval (crates/archgate/benches/approvals.rs)
#   clients  50 concurrent clients with their own tokens and grants (crates/archgate/benches/clients/)
#   rmcp     archgate vs a bare rmcp server on the same stack, and the gate's p99 (bench/rmcp/run.sh)
# Each runs with a timeout (BENCH_TIMEOUT_S, default 1200 s); one that fails or times out is
# recorded as such and the others still run. Loopback only.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
results="${BENCH_RESULTS:-$top/bench/RESULTS.md}"
per_bench="${BENCH_TIMEOUT_S:-1200}"
budget="${BENCH_BUDGET_S:-0}"
all=(issue2 pacman wiki aur gate context approvals clients rmcp)
want=("$@")
[ ${#want[@]} -gt 0 ] || want=("${all[@]}")
work=$(mktemp -d)
export work
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

run_issue2() { bash bench/issue2/run.sh; }
run_pacman() {
  python3 bench/pacman/generate.py "$work/pacman-world" >&2 &&
    cargo bench --locked -p archgate-pacman --bench pacman_vs -- "$work/pacman-world"
}
run_wiki() { cargo bench --locked -p archgate-wiki --bench wiki; }
run_aur() { cargo run --locked --release -p archgate-aur --example bench; }
run_gate() { cargo bench --locked -p archgate-core --bench gate; }
run_context() {
  cargo build --locked --release -p archgate >&2 &&
    python3 bench/context/run.py "$CARGO_TARGET_DIR/release/archgate"
}
run_approvals() { cargo bench --locked -p archgate --bench approvals; }
run_clients() { cargo bench --locked -p archgate --bench clients; }
run_rmcp() { bash bench/rmcp/run.sh; }

declare -A status took
for b in "${all[@]}"; do status[$b]="not run"; took[$b]="-"; done
for b in "${want[@]}"; do
  if ! declare -F "run_$b" >/dev/null; then
    echo "run-all: no bench named $b (have: ${all[*]})" >&2
    exit 2
  fi
  if [ "$budget" -gt 0 ] && [ $(($(date +%s) - started)) -ge "$budget" ]; then
    status[$b]="not run (over the ${budget} s budget)"
    continue
  fi
  echo "== $b" >&2
  t0=$(date +%s)
  # Tables go to stdout or stderr depending on the bench: keep both, in order.
  timeout --kill-after=30 "$per_bench" bash -c "$(declare -f "run_$b"); run_$b" \
    >"$work/$b.out" 2>&1
  rc=$?
  took[$b]="$(($(date +%s) - t0)) s"
  case $rc in
    0) status[$b]="ok" ;;
    124 | 137) status[$b]="timed out after ${per_bench} s" ;;
    *) status[$b]="failed (exit $rc)" ;;
  esac
  tail -40 "$work/$b.out" >&2
done

# Lines worth keeping from a bench's output: tables, figure lines and its own headings, not the
# compiler's progress.
keep() {
  grep -vE '^\s*(Compiling|Finished|Running|Downloaded|Downloading|Updating|Locking|Adding|Blocking|warning: unused manifest)' "$1" |
    grep -vE '^\s*$|^test result|^running [0-9]+ tests?' || true
}

# Sections of the previous results for benches not run now (kept, marked as earlier).
previous="$work/previous.md"
cp "$results" "$previous" 2>/dev/null || : >"$previous"
section() { awk -v h="## $1" '$0 == h {on = 1; next} /^## / {on = 0} on' "$previous"; }

{
  echo "# Benchmark results"
  echo
  echo "Written by \`bash bench/run-all.sh\` (see bench/README.md): every bench side by side in one run."
  echo "One run on one machine: figures move with the machine's load; the ratios are what matter."
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) cores online"
  echo "- memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "- kernel: $(uname -sr); OS: $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "- $(rustc --version); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo
  echo "| bench | status | took |"
  echo "| --- | --- | ---: |"
  for b in "${all[@]}"; do echo "| $b | ${status[$b]} | ${took[$b]} |"; done
  for b in "${all[@]}"; do
    if [ ! -f "$work/$b.out" ]; then
      if [ -n "$(section "$b")" ]; then
        echo
        echo "## $b"
        echo
        echo "_Not run this time; kept from the previous bench/RESULTS.md._"
        section "$b" | grep -v '^_Not run this time'
      fi
      continue
    fi
    echo
    echo "## $b"
    echo
    keep "$work/$b.out" | tail -80 >"$work/$b.kept"
    # Markdown tables stay tables; other output is shown as it was printed.
    if grep -q '^| *---' "$work/$b.kept"; then
      cat "$work/$b.kept"
    else
      echo '```'
      cat "$work/$b.kept"
      echo '```'
    fi
  done
  # Results written before run-all.sh existed (one bench per file), kept whole.
  if [ -s "$previous" ] && ! grep -q 'bench/run-all.sh' "$previous"; then
    echo
    echo "## Earlier results (written before run-all.sh)"
    echo
    sed -e '1{/^# /d}' -e 's/^## /### /' "$previous"
  fi
} >"$results.new"
mv "$results.new" "$results"
echo "wrote $results" >&2
for b in "${want[@]}"; do [ "${status[$b]}" = ok ] || exit 1; done
