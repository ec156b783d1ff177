#!/usr/bin/env bash
# The soak, short: 100 concurrent HTTP clients for 60 s of mixed calls against the real daemon on
# loopback (stress/soak.py: zero failed calls, audit records == calls, RSS growth < 10% after
# warm-up, no leaked descriptors). SOAK_SECONDS / SOAK_CLIENTS change the size.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"
exec timeout --kill-after=30 $(( ${SOAK_SECONDS:-60} + 300 )) \
  python3 "$top/stress/soak.py" --bin "$ARCHGATE_BIN" \
  --clients "${SOAK_CLIENTS:-100}" --duration "${SOAK_SECONDS:-60}"
