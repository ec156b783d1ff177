#!/bin/bash
# desktop-session.sh — a private, headless Wayland desktop for archgate's desktop tests.
#
# Usage: desktop-session.sh start|stop|env|status DIR
#
#   start   idempotently starts, as user `nobody` with its own 0700 runtime dir under DIR:
#           a private D-Bus session bus, headless Sway (HEADLESS-1 at 1280x720, pixman renderer),
#           mako (notifications), PipeWire + WirePlumber with a null sink set as the default.
#           Concurrent starts on one DIR are serialised by a lock file; a second start finds the
#           session alive and returns at once.
#   env     prints the `export` lines a client needs (XDG_RUNTIME_DIR, WAYLAND_DISPLAY, SWAYSOCK,
#           DBUS_SESSION_BUS_ADDRESS). Exits 1 if no session is running in DIR.
#   status  exits 0 if every process started is alive, 1 otherwise.
#   stop    kills exactly the processes `start` recorded (by pid), then removes the runtime dir.
#
# SESSION_OWNER_PID, or a third argument (with start): the session belongs to that process (a test binary). A watcher
# started with it stops the session and removes DIR once that process is gone (its pid and start
# time no longer match), so a run leaves no sway, mako or dbus-daemon behind, even when it was
# killed. A test gives every run a DIR of its own (mktemp), never a fixed path.
#
# Optional: SESSION_RESOLUTION (default 1280x720) sets HEADLESS-1's mode, and SESSION_BACKGROUND
# (an image file readable by the session user) is drawn as the wallpaper (swaybg, `fill`).
#
# Why `nobody`: Sway refuses to run as root, so when started by root everything runs as nobody.
# Clients running as root (the tests) can still reach every socket in the nobody-owned runtime
# dir; the D-Bus config written here admits them. Started by another user, it runs as that user.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

usage() {
    echo "usage: $0 start DIR [OWNER_PID] | stop|env|status DIR" >&2
    exit 2
}

cmd=${1:-}
DIR=${2:-}
# `start DIR OWNER_PID` names the owner as an argument (a caller whose environment is an
# allowlist cannot pass SESSION_OWNER_PID); the variable still works.
if [ "$cmd" = start ] && [ -n "${3:-}" ]; then SESSION_OWNER_PID=$3; fi
case "$cmd" in
    start) [ $# -eq 2 ] || [ $# -eq 3 ] || usage ;;
    stop | env | status) [ $# -eq 2 ] || usage ;;
    watch) [ $# -eq 4 ] || usage ;;
    *) usage ;;
esac

# As root the session runs as nobody (Sway refuses root); as anyone else, as that user.
if [ "$(id -u)" -eq 0 ]; then
    RUN_USER=nobody
else
    RUN_USER=$(id -un)
fi
RUN_GROUP=$(id -gn "$RUN_USER")
RUN_UID=$(id -u "$RUN_USER")

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# Everything the session starts runs in `/`: the caller's directory may be one the session user
# cannot enter (a 0700 clone), and a program Sway starts there (foot) would not start.
cd /
RUNDIR=$DIR/run
HOMEDIR=$DIR/home
LOGDIR=$DIR/log
PIDS=$DIR/pids
ENVFILE=$DIR/env
LOCK=$DIR/session.lock
WATCH=$DIR/watch.pid

user_prefix() {
    # The argv prefix that runs a command as the session user with the session's environment.
    USER_PREFIX=()
    if [ "$(id -u)" -eq 0 ]; then
        USER_PREFIX=(setpriv --reuid="$RUN_USER" --regid="$RUN_GROUP" --clear-groups)
    fi
    USER_PREFIX+=(env -i PATH="$PATH" HOME="$HOMEDIR" USER="$RUN_USER" LOGNAME="$RUN_USER" \
        XDG_RUNTIME_DIR="$RUNDIR" XDG_CONFIG_HOME="$HOMEDIR/.config" \
        XDG_STATE_HOME="$HOMEDIR/.local/state" XDG_DATA_HOME="$HOMEDIR/.local/share" \
        DBUS_SESSION_BUS_ADDRESS="unix:path=$RUNDIR/bus" \
        ${WAYLAND_DISPLAY:+WAYLAND_DISPLAY="$WAYLAND_DISPLAY"} \
        ${SWAYSOCK:+SWAYSOCK="$SWAYSOCK"})
}

as_user() {
    user_prefix
    "${USER_PREFIX[@]}" "$@"
}

# Starts a long-running program as the session user in its own session (so no caller's
# process-group cleanup reaches it) and records its pid.
start_daemon() {
    local name=$1
    shift
    user_prefix
    # 9>&- : the daemon must not inherit the lock, or it would hold it for its whole life.
    setsid "${USER_PREFIX[@]}" "$@" >"$LOGDIR/$name.log" 2>&1 </dev/null 9>&- &
    local pid=$!
    echo "$name $pid" >>"$PIDS"
}

alive() {
    local pid=$1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

all_alive() {
    [ -s "$PIDS" ] || return 1
    [ -s "$ENVFILE" ] || return 1
    local name pid
    while read -r name pid; do
        alive "$pid" || return 1
    done <"$PIDS"
    return 0
}

wait_for() {
    # wait_for DESCRIPTION TENTHS COMMAND... : polls until COMMAND succeeds.
    local what=$1 tenths=$2
    shift 2
    local i
    for ((i = 0; i < tenths; i++)); do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    echo "desktop-session: timed out waiting for $what (logs in $LOGDIR)" >&2
    return 1
}

# Field 22 of /proc/PID/stat (start time in clock ticks), or nothing when PID is gone.
proc_start() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    # shellcheck disable=SC2086
    set -- $stat
    echo "${20}"
}

# The watcher: waits for the owner to end, then stops the session and removes DIR.
do_watch() {
    local owner=$1 started=$2
    while [ "$(proc_start "$owner")" = "$started" ]; do
        sleep 1
    done
    bash "$0" stop "$DIR" || true
    rm -rf "$DIR"
}

start_watch() {
    local owner=${SESSION_OWNER_PID:-}
    [ -n "$owner" ] || return 0
    local started
    started=$(proc_start "$owner")
    if [ -z "$started" ]; then
        echo "desktop-session: SESSION_OWNER_PID $owner is not a running process" >&2
        return 1
    fi
    if [ -s "$WATCH" ] && [ -n "$(proc_start "$(cat "$WATCH")")" ]; then
        return 0
    fi
    setsid bash "$0" watch "$DIR" "$owner" "$started" >"$LOGDIR/watch.log" 2>&1 </dev/null 9>&- &
    echo $! >"$WATCH"
}

do_stop() {
    # The watcher, unless it is what asked for this stop.
    if [ -s "$WATCH" ]; then
        local watcher
        watcher=$(cat "$WATCH")
        if [ "$watcher" != "$PPID" ] && alive "$watcher"; then
            kill -TERM "$watcher" 2>/dev/null || true
        fi
        rm -f "$WATCH"
    fi
    if [ -s "$PIDS" ]; then
        local name pid
        # Reverse order: clients before the servers they talk to.
        tac "$PIDS" | while read -r name pid; do
            if alive "$pid"; then
                kill -TERM "$pid" 2>/dev/null || true
            fi
        done
        local i
        for ((i = 0; i < 30; i++)); do
            local any=0
            while read -r name pid; do
                if alive "$pid"; then any=1; fi
            done <"$PIDS"
            [ $any -eq 0 ] && break
            sleep 0.1
        done
        while read -r name pid; do
            if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
        done <"$PIDS"
    fi
    rm -f "$PIDS" "$ENVFILE"
    rm -rf "$RUNDIR"
}

socket_exists() { [ -S "$1" ]; }

have_sink() {
    as_user wpctl status | grep -q "archgate-test-sink"
}

sway_answers() {
    as_user swaymsg -s "$1" -t get_outputs
}

do_start() {
    if all_alive; then
        start_watch
        return 0
    fi
    # A half-dead session (a crash, a reboot that kept /tmp) is cleaned up and started afresh.
    do_stop

    mkdir -p "$LOGDIR" "$HOMEDIR/.config/mako" "$HOMEDIR/.config/wireplumber"
    if [ "$(id -u)" -eq 0 ]; then
        install -d -m 0700 -o "$RUN_USER" -g "$RUN_GROUP" "$RUNDIR"
        chown -R "$RUN_USER:$RUN_GROUP" "$HOMEDIR"
    else
        install -d -m 0700 "$RUNDIR"
    fi
    chmod 0755 "$DIR"
    : >"$PIDS"

    # --- D-Bus: a private session bus. The default session policy admits only its own uid and
    # root; EXTERNAL auth over the unix socket is kept.
    cat >"$DIR/dbus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$RUNDIR/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow user="$RUN_USER"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
    start_daemon dbus dbus-daemon --nofork --nopidfile --config-file="$DIR/dbus.conf"
    wait_for "the D-Bus socket" 100 socket_exists "$RUNDIR/bus"

    # --- Sway, headless.
    local background="#202020 solid_color"
    if [ -n "${SESSION_BACKGROUND:-}" ]; then
        background="$SESSION_BACKGROUND fill"
    fi
    cat >"$DIR/sway.conf" <<EOF
output HEADLESS-1 resolution ${SESSION_RESOLUTION:-1280x720} position 0 0
# No bar; no wallpaper unless asked: the screen shows only what tests draw.
output * background $background
default_border normal
focus_follows_mouse no
# The terminal, named as Sway's own default config names it (a hand-off reads \$term).
set \$term foot
EOF
    chmod 0644 "$DIR/sway.conf" "$DIR/dbus.conf"
    start_daemon sway env WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 \
        WLR_RENDERER=pixman sway -c "$DIR/sway.conf"
    local sway_pid
    sway_pid=$(awk '$1 == "sway" { print $2 }' "$PIDS")
    local swaysock="$RUNDIR/sway-ipc.$RUN_UID.$sway_pid.sock"
    wait_for "the Sway IPC socket" 150 socket_exists "$swaysock"
    wait_for "Sway to answer" 100 sway_answers "$swaysock"
    local display=""
    local f
    for f in "$RUNDIR"/wayland-*; do
        case "$f" in *.lock) continue ;; esac
        [ -S "$f" ] && display=$(basename "$f") && break
    done
    if [ -z "$display" ]; then
        echo "desktop-session: Sway started but no Wayland socket appeared in $RUNDIR" >&2
        return 1
    fi
    export WAYLAND_DISPLAY=$display SWAYSOCK=$swaysock

    # --- mako: notifications on the private bus.
    start_daemon mako mako
    wait_for "mako on the bus" 100 as_user makoctl list

    # --- PipeWire + WirePlumber, and a null sink made the default.
    start_daemon pipewire pipewire
    wait_for "the PipeWire socket" 100 socket_exists "$RUNDIR/pipewire-0"
    start_daemon wireplumber wireplumber
    wait_for "WirePlumber" 100 as_user wpctl status
    as_user pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=archgate-test-sink node.description=archgate-test-sink media.class=Audio/Sink object.linger=true audio.position=[FL FR] }' \
        >"$LOGDIR/pw-cli.log" 2>&1
    wait_for "the null sink" 100 have_sink
    local sink_id
    sink_id=$(as_user wpctl status | sed -n 's/^[^0-9]*\([0-9][0-9]*\)\. archgate-test-sink.*/\1/p' | head -n1)
    if [ -n "$sink_id" ]; then
        as_user wpctl set-default "$sink_id" || true
    fi

    cat >"$ENVFILE" <<EOF
export XDG_RUNTIME_DIR='$RUNDIR'
export WAYLAND_DISPLAY='$display'
export SWAYSOCK='$swaysock'
export DBUS_SESSION_BUS_ADDRESS='unix:path=$RUNDIR/bus'
EOF
    start_watch
}

take_lock() {
    if ! flock -w 120 9; then
        echo "desktop-session: $LOCK is held by another start or stop for over 120 s" >&2
        exit 1
    fi
}

case "$cmd" in
start)
    exec 9>"$LOCK"
    take_lock
    do_start
    cat "$ENVFILE"
    ;;
stop)
    exec 9>"$LOCK"
    take_lock
    do_stop
    ;;
env)
    if all_alive; then
        cat "$ENVFILE"
    else
        echo "desktop-session: no session running in $DIR" >&2
        exit 1
    fi
    ;;
status)
    all_alive
    ;;
watch)
    do_watch "$3" "$4"
    ;;
esac
