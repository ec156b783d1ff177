#!/usr/bin/env bash
# Person presence (approval.presence) against the real polkitd and pkttyagent.
#
# Needs root: everything happens in a private mount namespace, so the machine's own system bus,
# polkit actions and users are never touched (safe on a developer desktop):
#   /run/dbus                    ← a private dir with a private dbus-daemon's socket (the setuid
#                                  polkit-agent-helper-1 clears its environment, so
#                                  DBUS_SYSTEM_BUS_ADDRESS cannot point it elsewhere: the bus
#                                  must be at the well-known path, and archgate uses only that)
#   /usr/share/polkit-1/actions  ← a copy of it plus packaging/polkit/org.archgate.policy
#   /etc/passwd, shadow, group   ← copies plus the test user archgate-presence-test (known password)
# then polkitd, and tests/polkit/test_presence.py (pytest, as root; it runs archgate, the CLI and
# pkttyagent as the test user). Follows /work/shared/RECIPES.md "polkit, for person presence".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"

if [ "$(id -u)" -ne 0 ]; then
  echo "run-polkit: SKIPPED: needs root (a private mount namespace with its own system bus, polkitd and a test user); CI runs it as root"
  exit 0
fi

if [ -z "${ARCHGATE_POLKIT_NS:-}" ]; then
  for p in dbus-daemon pkttyagent busctl unshare setpriv openssl; do
    command -v "$p" >/dev/null 2>&1 || { bash "$top/scripts/test-deps.sh"; break; }
  done
  [ -x /usr/lib/polkit-1/polkitd ] || bash "$top/scripts/test-deps.sh"
  venv="${ARCHGATE_TEST_VENV:-$top/target/test-venv}"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    ARCHGATE_TEST_VENV="$venv" bash "$top/scripts/test-deps.sh"
  fi
  export ARCHGATE_POLKIT_NS=1 ARCHGATE_TEST_VENV="$venv"
  exec unshare --mount --propagation private bash "$0" "$@"
fi

# ---- inside the private mount namespace ----
work=$(mktemp -d /tmp/archgate-polkit.XXXXXX)
chmod 755 "$work"
bus_pid="" polkitd_pid=""
cleanup() {
  [ -n "$polkitd_pid" ] && kill "$polkitd_pid" 2>/dev/null || true
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/run-dbus" "$work/actions" "$work/etc"
mount --bind "$work/run-dbus" /run/dbus
cp -a /usr/share/polkit-1/actions/. "$work/actions/"
install -m644 "$top/packaging/polkit/org.archgate.policy" "$work/actions/org.archgate.policy"
mount --bind "$work/actions" /usr/share/polkit-1/actions

user=archgate-presence-test
password="presence-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
uid=61234
while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid + 1)); done
for f in passwd shadow group; do cp -a "/etc/$f" "$work/etc/$f"; done
echo "$user:x:$uid:$uid:archgate presence test:$work:/bin/sh" >>"$work/etc/passwd"
echo "$user:$(openssl passwd -6 "$password"):19000:0:99999:7:::" >>"$work/etc/shadow"
echo "$user:x:$uid:" >>"$work/etc/group"
for f in passwd shadow group; do mount --bind "$work/etc/$f" "/etc/$f"; done

cat >"$work/bus.conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$work/bus.conf" --fork --print-pid >"$work/bus.pid"
bus_pid=$(cat "$work/bus.pid")
/usr/lib/polkit-1/polkitd --no-debug >"$work/polkitd.log" 2>&1 &
polkitd_pid=$!
echo "$polkitd_pid" >"$work/polkitd.pid"
for _ in $(seq 50); do
  busctl --system status org.freedesktop.PolicyKit1 >/dev/null 2>&1 && break
  sleep 0.2
done
busctl --system status org.freedesktop.PolicyKit1 >/dev/null || { cat "$work/polkitd.log" >&2; echo "run-polkit: polkitd did not start" >&2; exit 1; }

# The test user runs archgate: a copy in the work dir (0755 under /tmp), since the build may sit
# where that user cannot reach (a clone or target dir in a 0700 home).
install -m755 "$ARCHGATE_BIN" "$work/archgate"
ARCHGATE_BIN="$work/archgate"
export PRESENCE_UID=$uid PRESENCE_GID=$uid PRESENCE_PASSWORD=$password PRESENCE_WORK=$work ARCHGATE_BIN
# Run from the work dir too: the test user's processes inherit the working directory.
install -m644 "$top/tests/polkit/test_presence.py" "$work/test_presence.py"
cd "$work"
status=0
"$ARCHGATE_TEST_VENV/bin/python" -m pytest -q -p no:cacheprovider test_presence.py "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "run-polkit: pytest ran no test" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  for f in "$work"/*/serve.log; do echo "== $f" >&2; tail -20 "$f" >&2; done
fi
exit "$status"
