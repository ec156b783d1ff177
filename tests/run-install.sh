#!/usr/bin/env bash
# The README's first command, exactly as the README writes it, on a machine whose PATH lacks
# ~/.local/bin (a fresh Debian 12 or Arch account): taken from README.md's first code block, run
# from the repository root with a temporary HOME, it must install archgate and serve MCP over
# HTTP. install.sh takes the binary under test (ARCHGATE_BIN) instead of building it again.
# The second line of that block must be the test command.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
fail() { echo "run-install: FAIL: $*" >&2; exit 1; }

block=$(awk '/^```bash$/ { on = 1; next } on && /^```$/ { exit } on { print }' "$top/README.md")
first=$(printf '%s\n' "$block" | sed -n 1p | sed 's/[[:space:]]*#.*$//')
second=$(printf '%s\n' "$block" | sed -n 2p | sed 's/[[:space:]]*#.*$//')
[ "$(printf '%s\n' "$block" | wc -l)" -eq 2 ] || fail "the README's first block is not two commands: $block"
[ "$second" = "scripts/test.sh" ] || fail "the README's second command is '$second', not scripts/test.sh"
case "$first" in
  *"scripts/install.sh"*"serve --http"*) ;;
  *) fail "the README's first command does not install and serve: '$first'" ;;
esac

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    pkill -TERM -P "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
home="$tmp/home"
mkdir -p "$home/.config/archgate" "$tmp/runtime"
chmod 0700 "$tmp/runtime"
# Its own port (the machine may serve archgate on 8765 already) and no page or notifications.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[server]\nport = %s\n[approval]\npage_port = 0\nnotifications = false\n' "$port" >"$home/.config/archgate/config.toml"

# A fresh account's PATH: system directories only, no ~/.local/bin. (An archgate there, from the
# Arch package on a developer's desktop, must not be what serves: checked below.)
path=/usr/local/bin:/usr/bin:/bin

(cd "$top" && exec env -i HOME="$home" PATH="$path" LANG=C.UTF-8 XDG_RUNTIME_DIR="$tmp/runtime" \
  ARCHGATE_BIN="$ARCHGATE_BIN" bash -c "$first") >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 300); do
  grep -q '"event":"listening"' "$tmp/out" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q "\"event\":\"listening\",\"port\":$port" "$tmp/out"; then
  echo "--- stdout" >&2; cat "$tmp/out" >&2; echo "--- stderr" >&2; cat "$tmp/err" >&2
  fail "'$first' did not serve on 127.0.0.1:$port"
fi
[ -x "$home/.local/bin/archgate" ] || fail "nothing installed at ~/.local/bin/archgate"
# The conformance suite's binary (crates/conformance) is never installed.
[ -z "$(find "$home/.local" -name '*conformance*' -print -quit)" ] || fail "the conformance binary was installed"
served=""
for f in "$tmp/runtime/archgate/instances/"*; do
  [ -e "$f" ] && served=$(readlink "/proc/$(basename "$f")/exe" || true)
done
[ "$served" = "$home/.local/bin/archgate" ] || fail "what serves is '$served', not the installed ~/.local/bin/archgate"
[ -s "$home/.local/share/man/man1/archgate.1" ] || fail "no man page installed"
health=$(curl -sf "http://127.0.0.1:$port/health") || fail "/health did not answer"
case "$health" in *'"name":"archgate"'*) ;; *) fail "/health said $health" ;; esac
grep -q "is not on PATH" "$tmp/err" || fail "install.sh did not say that ~/.local/bin is not on PATH"
echo "run-install: ok: '$first' installed into a fresh HOME and served on 127.0.0.1:$port"
