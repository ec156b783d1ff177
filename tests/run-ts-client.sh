#!/usr/bin/env bash
# The official TypeScript SDK v2 client (tests/clients/ts-client.mjs) against the real archgate
# binary over streamable HTTP. Starts `archgate serve --http --port 0` with private XDG dirs,
# reads the port from its listening frame and the token from its state dir.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
clients="$top/tests/clients"
if [ ! -d "$clients/node_modules/@modelcontextprotocol/client" ] || [ ! -d "$clients/node_modules/@anthropic-ai/tokenizer" ]; then
  (cd "$clients" && npm ci --no-audit --no-fund --silent)
fi

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
# One read tool asks the person (nobody answers here), for the approval-wait checks; the wait is
# longer than the 7 s request timeout those checks give the SDK.
asked_tool=pacman_conf approval_s=12
mkdir -p "$tmp/config/archgate"
# A question inside an MCP task (ts-tasks.mjs) waits task_timeout_s instead.
printf '[policy]\nask = ["%s"]\n[approval]\ntimeout_s = %s\ntask_timeout_s = 180\npage_port = 0\nnotifications = false\n[clients.local]\npreset = "full"\n' \
  "$asked_tool" "$approval_s" >"$tmp/config/archgate/config.toml"
export XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" \
       XDG_RUNTIME_DIR="$tmp/runtime" XDG_CACHE_HOME="$tmp/cache"

"$ARCHGATE_BIN" serve --http --port 0 >"$tmp/frames" 2>"$tmp/stderr" &
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

status=0
ARCHGATE_URL="http://127.0.0.1:$port/mcp" ARCHGATE_TOKEN="$(cat "$tmp/state/archgate/token")" \
  ARCHGATE_ASKED_TOOL="$asked_tool" ARCHGATE_APPROVAL_TIMEOUT_S="$approval_s" \
  node "$clients/ts-client.mjs" || status=$?
# MCP tasks through the SDK's tasks package; the person answers through archgate's own CLI.
ARCHGATE_URL="http://127.0.0.1:$port/mcp" ARCHGATE_TOKEN="$(cat "$tmp/state/archgate/token")" \
  ARCHGATE_ASKED_TOOL="$asked_tool" ARCHGATE_BIN="$ARCHGATE_BIN" \
  node "$clients/ts-tasks.mjs" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- archgate stderr" >&2
  cat "$tmp/stderr" >&2
fi
exit "$status"
