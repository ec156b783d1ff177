#!/usr/bin/env bash
# Starts a real `systemd --user` for USER (default nobody) with its HOME and runtime directory in
# WORK, and the test's units in WORK/home/.config/systemd/user; prints nothing, returns when the
# manager answers. Needs root: the manager runs in a private mount namespace where
# /run/systemd/system exists (systemd --user refuses to start on a machine not booted with systemd;
# the rest of the machine never sees that directory), in a cgroup of its own the user may write.
# Stop it with user-manager-stop.sh WORK.
set -euo pipefail
work=${1:?WORK}
user=${2:-nobody}
group=$(id -gn "$user")
mkdir -p "$work/home/.config/systemd/user/ag-ok.service.d" "$work/run" "$work/fake-run-systemd/system"
units="$work/home/.config/systemd/user"
cat >"$units/ag-ok.service" <<'UNIT'
[Unit]
Description=archgate test: a service that keeps running
[Service]
ExecStart=/bin/sleep infinity
UNIT
cat >"$units/ag-ok.service.d/10-extra.conf" <<'UNIT'
[Service]
Environment=AG_TEST=1
UNIT
cat >"$units/ag-broken.service" <<'UNIT'
[Unit]
Description=archgate test: a service that fails
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'exit 3'
UNIT
cat >"$units/ag-tick.timer" <<'UNIT'
[Unit]
Description=archgate test: a timer
[Timer]
OnActiveSec=1h
UNIT
cat >"$units/ag-tick.service" <<'UNIT'
[Service]
Type=oneshot
ExecStart=/bin/true
UNIT
# The desktop's own user services (PipeWire, WirePlumber) restart on their own here: masked, so
# every state the test compares holds still.
for u in pipewire.service pipewire.socket pipewire-pulse.service pipewire-pulse.socket wireplumber.service; do
  ln -sf /dev/null "$units/$u"
done
chown -R "$user:$group" "$work"
chmod 700 "$work/run"
chmod 755 "$work"
cg=/sys/fs/cgroup/unified
[ -d "$cg" ] || cg=/sys/fs/cgroup
mkdir -p "$cg/archgate-test-$$"
chown -R "$user" "$cg/archgate-test-$$"
echo "$cg/archgate-test-$$" >"$work/cgroup"
setsid unshare --mount --propagation private bash -c '
  mount --bind "$1/fake-run-systemd" /run/systemd
  echo $$ >"$2/cgroup.procs" 2>/dev/null || true
  exec setpriv --reuid="$3" --regid="$4" --init-groups env -i HOME="$1/home" XDG_RUNTIME_DIR="$1/run" \
    PATH=/usr/bin:/bin /lib/systemd/systemd --user' _ "$work" "$cg/archgate-test-$$" "$user" "$group" \
  >"$work/manager.log" 2>&1 &
echo $! >"$work/manager.pid"
as_user() { setpriv --reuid="$user" --regid="$group" --init-groups env HOME="$work/home" XDG_RUNTIME_DIR="$work/run" PATH=/usr/bin:/bin "$@"; }
# The manager answers long before its default target settles (the desktop's own user units may
# wait for what this machine lacks): wait for an answer, not for "running".
for _ in $(seq 100); do
  as_user systemctl --user show --property=Version >/dev/null 2>&1 && break
  sleep 0.1
done
as_user systemctl --user start ag-ok.service ag-tick.timer
as_user systemctl --user start ag-broken.service 2>/dev/null || true
