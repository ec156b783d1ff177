#!/usr/bin/env bash
# The official TypeScript SDK v2 client (tests/clients/ts-client.mjs) against the real archgate
# binary over streamable HTTP, and MCP tasks through the SDK's tasks package
# (tests/clients/ts-tasks.mjs) against a second one. Each daemon is `archgate serve --http
# --port 0` with its own private XDG dirs; the port comes from its listening frame, the token
# from its state dir. ts-tasks waits minutes for the person (a task's question), so it runs
# beside ts-client, on its own daemon: the suite takes the longer of the two, not their sum.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
clients="$top/tests/clients"
if [ ! -d "$clients/node_modules/@modelcontextprotocol/client" ] || [ ! -d "$clients/node_modules/@anthropic-ai/tokenizer" ]; then
  (cd "$clients" && npm ci --no-audit --no-fund --silent)
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# One read tool asks the person (nobody answers here), for the approval-wait checks; the wait is
# longer than the 7 s request timeout those checks give the SDK.
asked_tool=pacman_conf approval_s=12
# A question inside an MCP task (ts-tasks.mjs) waits task_timeout_s instead: the person there
# answers after task_wait_s, past two minutes.
task_timeout_s=180 task_wait_s=130

# Sets `xdg` to the XDG variables of daemon $1 (a directory under $tmp), for `env`.
xdg_of() {
  local d="$tmp/$1"
  xdg=("XDG_CONFIG_HOME=$d/config" "XDG_STATE_HOME=$d/state" "XDG_RUNTIME_DIR=$d/runtime" "XDG_CACHE_HOME=$d/cache")
}

# Starts daemon $1 with its own directories and config; sets `port`.
start() {
  local d="$tmp/$1"
  mkdir -p "$d"
  mkdir -m 0700 "$d/config" "$d/state" "$d/runtime" "$d/cache"
  mkdir -p "$d/config/archgate"
  printf '[policy]\nask = ["%s"]\n[approval]\ntimeout_s = %s\ntask_timeout_s = %s\npage_port = 0\nnotifications = false\n[clients.local]\npreset = "full"\n' \
    "$asked_tool" "$approval_s" "$task_timeout_s" >"$d/config/archgate/config.toml"
  xdg_of "$1"
  env "${xdg[@]}" "$ARCHGATE_BIN" serve --http --port 0 >"$d/frames" 2>"$d/stderr" &
  local pid=$!
  pids+=("$pid")
  port=""
  for _ in $(seq 1 300); do
    port=$(sed -n 's/.*"event":"listening","port":\([0-9][0-9]*\).*/\1/p' "$d/frames" | head -n1)
    [ -n "$port" ] && break
    if ! kill -0 "$pid" 2>/dev/null || grep -q '"event":"failed"' "$d/frames"; then break; fi
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "archgate ($1) did not start listening" >&2
    cat "$d/frames" "$d/stderr" >&2
    exit 1
  fi
}

start client
client_port=$port
start tasks
tasks_port=$port

# MCP tasks through the SDK's tasks package, in the background; the person answers through
# archgate's own CLI (with that daemon's directories).
xdg_of tasks
env "${xdg[@]}" \
  ARCHGATE_URL="http://127.0.0.1:$tasks_port/mcp" ARCHGATE_TOKEN="$(cat "$tmp/tasks/state/archgate/token")" \
  ARCHGATE_ASKED_TOOL="$asked_tool" ARCHGATE_BIN="$ARCHGATE_BIN" \
  ARCHGATE_TASK_WAIT_S="$task_wait_s" ARCHGATE_TASK_TIMEOUT_S="$task_timeout_s" \
  node "$clients/ts-tasks.mjs" >"$tmp/ts-tasks.out" 2>&1 &
tasks_pid=$!

status=0
xdg_of client
env "${xdg[@]}" \
  ARCHGATE_URL="http://127.0.0.1:$client_port/mcp" ARCHGATE_TOKEN="$(cat "$tmp/client/state/archgate/token")" \
  ARCHGATE_ASKED_TOOL="$asked_tool" ARCHGATE_APPROVAL_TIMEOUT_S="$approval_s" \
  node "$clients/ts-client.mjs" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- archgate stderr (ts-client)" >&2
  cat "$tmp/client/stderr" >&2
fi

tasks_status=0
wait "$tasks_pid" || tasks_status=$?
echo "--- ts-tasks.mjs"
cat "$tmp/ts-tasks.out"
if [ "$tasks_status" -ne 0 ]; then
  echo "--- archgate stderr (ts-tasks)" >&2
  cat "$tmp/tasks/stderr" >&2
  status=$tasks_status
fi
exit "$status"
