#!/usr/bin/env bash
# Writes packaging/link-order.txt: the functions archgate's daemon runs from `exec` until it
# listens (first), then those calls run (pacman_conf, system_status, tools/list), as callgrind
# sees them in a release build. scripts/link-order.sh lays the binary out in this order.
#
# A maintainer's tool (needs valgrind and a release build); run it after changes that move start-up
# or a call's path (a new dependency, a new server stage) and commit the list. Nothing depends on
# the list being fresh: names a build lacks are skipped.
#   cargo build --release -p archgate && bash scripts/link-order-profile.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
target="${CARGO_TARGET_DIR:-$top/target}"
bin="$target/release/archgate"
[ -x "$bin" ] || { echo "link-order-profile: build first: cargo build --release -p archgate" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "link-order-profile: needs valgrind" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One profiled run: the daemon in a sandbox of its own, port 0; `calls` a call count made once it
# listens (0: start-up only); the names of the functions it ran in the binary, mangled.
profile() {
  local calls=$1 root="$work/run$1"
  mkdir -p "$root"/{config/archgate,state,cache,runtime,data}
  chmod 700 "$root"/runtime
  printf '[budgets]\nper_minute = 100000\nper_day = 10000000\n[arch]\npacman_conf = "%s/pacman.conf"\n' "$root" \
    > "$root/config/archgate/config.toml"
  printf '[options]\nArchitecture = x86_64\nSigLevel = Required DatabaseOptional\n\n[core]\nServer = https://geo.mirror.pkgbuild.com/$repo/os/$arch\n' \
    > "$root/pacman.conf"
  env XDG_CONFIG_HOME="$root/config" XDG_STATE_HOME="$root/state" XDG_CACHE_HOME="$root/cache" \
    XDG_RUNTIME_DIR="$root/runtime" XDG_DATA_HOME="$root/data" \
    valgrind --tool=callgrind --demangle=no --compress-strings=no --compress-pos=no \
    --callgrind-out-file="$root/callgrind.out" "$bin" serve --http --port 0 \
    > "$root/stdout" 2> "$root/stderr" &
  local pid=$!
  for _ in $(seq 1 600); do grep -q '"listening"' "$root/stdout" 2>/dev/null && break; sleep 0.2; done
  grep -q '"listening"' "$root/stdout" || { cat "$root/stderr" >&2; exit 1; }
  if [ "$calls" -gt 0 ]; then
    python3 - "$root" "$calls" <<'PY'
import http.client, json, re, sys
from pathlib import Path
root, n = Path(sys.argv[1]), int(sys.argv[2])
port = int(re.search(r'"port":(\d+)', (root / "stdout").read_text()).group(1))
token = (root / "state/archgate/token").read_text().strip()
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
c = http.client.HTTPConnection("127.0.0.1", port)
for i in range(n):
    method, name = [("tools/call", "pacman_conf"), ("tools/call", "system_status"), ("tools/list", None)][i % 3]
    params = {"_meta": meta} | ({"name": name, "arguments": {}} if name else {})
    h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
         "Mcp-Method": method} | ({"Mcp-Name": name} if name else {})
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params}), h)
    r = c.getresponse(); r.read()
    if r.status != 200:
        sys.exit(f"call {i}: HTTP {r.status}")
PY
  fi
  kill -TERM "$pid"; wait "$pid" || true
  # The functions of the binary itself (ob= the binary), as callee or caller.
  awk -v bin="$bin" '
    /^ob=/ { ob = substr($0, 4) } /^cob=/ { cob = substr($0, 5) }
    /^fn=/ { if (ob == bin) print substr($0, 4) }
    /^cfn=/ { o = (cob != "" ? cob : ob); if (o == bin) print substr($0, 5); cob = "" }
  ' "$root/callgrind.out" | awk '!seen[$0]++'
}
# Mangled to demangled, as nm pairs them (the list holds demangled names: see link-order.sh).
symbols() { nm "$@" --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { sub(/^[^ ]* [^ ]* /, ""); print }'; }
paste -d '\t' <(symbols) <(symbols -C) > "$work/names"
profile 0 > "$work/startup"
profile 300 > "$work/calls"
{
  echo "# archgate's code layout (scripts/link-order.sh): start-up first, then a call's path."
  echo "# Written by scripts/link-order-profile.sh on $(date -u +%Y-%m-%d), $(rustc --version | awk '{print $1, $2}'), $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')."
  # A name shared by more than three symbols (a generic function's instances: `<&T as Debug>::fmt`
  # names 1,500) is written as the symbol itself, which matches only a build by the same toolchain.
  awk -F '\t' 'FILENAME == ARGV[1] { name[$1] = $2; count[$2]++; next }
    ($1 in name) { n = name[$1]; w = (count[n] <= 3 ? n : $1); if (!seen[w]++) print w }' \
    "$work/names" "$work/startup" "$work/calls"
} > "$top/packaging/link-order.txt"
echo "link-order-profile: $(grep -vc '^#' "$top/packaging/link-order.txt") functions in packaging/link-order.txt" >&2
