#!/usr/bin/env bash
# The official MCP Python SDK client against the real archgate binary ($ARCHGATE_BIN), over stdio
# and streamable HTTP, in the SDK's legacy and auto modes. Uses the venv scripts/test-deps.sh makes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
export ARCHGATE_BIN
venv="${ARCHGATE_TEST_VENV:-$top/target/test-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp, pytest, httpx2' 2>/dev/null; then
  ARCHGATE_TEST_VENV="$venv" bash "$top/scripts/test-deps.sh"
fi
cd "$top/tests/python"
status=0
# -rs: each skipped test with its reason, repeated below as a SKIPPED line scripts/test.sh counts.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider test_clients.py test_live.py test_relay.py test_session.py test_daemon.py test_untrusted.py "$@" |
  tee "$out" || status=$?
sed -n 's/^SKIPPED \[[0-9]*\] \([^ ]*\): \(.*\)$/run-python: SKIPPED: \2 [\1]/p' "$out"
# pytest exits 5 when it collected no test: that is a failure here, not a pass.
if [ "$status" -eq 5 ]; then
  echo "run-python: pytest ran no test" >&2
  exit 1
fi
exit "$status"
