#!/usr/bin/env bash
# The diagnostics tools end to end, through the real archgate binary run as an ordinary user:
# - `units` against a real `systemd --user` (tests/units/user-manager.sh: its own units, one of
#   them failed, one with a drop-in, a timer), compared with `systemctl --user`'s own answers,
#   and a `systemd-run --user` unit whose command line and --setenv reach no answer;
# - `journal` and `boots` against journal files the real systemd-journal-remote made, through
#   `[diagnostics] journal_dir`, and a journal this user may not read (not_readable, not empty);
# - hostile unit names and patterns reaching the programs literally or refused;
# - the activity log holding none of what the tools answered.
# Needs root (the user manager runs in a private mount namespace, see user-manager.sh); skipped
# with a line otherwise. tests/units/check_units.py holds the assertions.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"

if [ "$(id -u)" -ne 0 ]; then
  echo "run-units: SKIPPED: needs root (a systemd --user manager in a private mount namespace); CI runs it as root"
  exit 0
fi
[ -x /lib/systemd/systemd-journal-remote ] && command -v setpriv >/dev/null || bash "$top/scripts/test-deps.sh"

work=$(mktemp -d /tmp/archgate-units.XXXXXX)
cleanup() {
  bash "$top/tests/units/user-manager-stop.sh" "$work"
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
bash "$top/tests/units/user-manager.sh" "$work" nobody
install -m755 "$ARCHGATE_BIN" "$work/archgate"
install -m644 "$top/tests/units/check_units.py" "$work/check_units.py"

# Journal files: one readable by the test user, one it may not read.
mkdir -p "$work/journal" "$work/closed"
python3 "$top/tests/units/check_units.py" --export >"$work/export.txt"
/lib/systemd/systemd-journal-remote --output="$work/journal/test.journal" - <"$work/export.txt" 2>/dev/null
cp "$work/journal/test.journal" "$work/closed/test.journal"
chmod 644 "$work/journal/test.journal"
chmod 600 "$work/closed/test.journal"

setpriv --reuid=nobody --regid=nogroup --init-groups \
  env -i HOME="$work/home" XDG_RUNTIME_DIR="$work/run" PATH=/usr/bin:/bin LC_ALL=C.UTF-8 \
  python3 "$work/check_units.py" "$work"
echo "run-units: ok"
