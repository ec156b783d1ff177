#!/usr/bin/env bash
# Stops the manager user-manager.sh started in WORK (by its pid) and removes its cgroup.
set -uo pipefail
work=${1:?WORK}
pid=$(cat "$work/manager.pid" 2>/dev/null) || exit 0
cg=$(cat "$work/cgroup" 2>/dev/null || true)
# The manager's own process is the child of the unshare wrapper, in the same session (setsid).
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if [ -n "$cg" ] && [ -d "$cg" ]; then
  for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
  sleep 0.2
  find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
fi
