#!/usr/bin/env bash
# The approval page in real headless Chromium (Debian's /usr/bin/chromium), driven by
# playwright-core: tests/page/page.test.mjs starts the real archgate binary ($ARCHGATE_BIN) with
# private XDG dirs, parks calls over stdio MCP and answers them on the page; clients.test.mjs
# starts it over HTTP and manages clients (add, rename, revoke) from the page; view.test.mjs
# shows what the person sees (issue 32) on a headless Sway (scripts/desktop-session.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
dir="$top/tests/page"
if [ ! -d "$dir/node_modules/playwright-core" ]; then
  (cd "$dir" && npm ci --no-audit --no-fund --silent)
fi
export ARCHGATE_BIN
exec node --test --test-concurrency=1 "$dir/page.test.mjs" "$dir/clients.test.mjs" "$dir/ui.test.mjs" "$dir/view.test.mjs"
