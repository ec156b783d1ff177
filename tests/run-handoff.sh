#!/usr/bin/env bash
# Hand-offs for real: a headless Sway session with foot (scripts/desktop-session.sh), a test user
# whose sudoers rule needs a password, and real pacman installing into a test root from a local
# repository built with makepkg. tests/handoff/test_handoff.py plays the person by typing into
# the hand-off's terminal with wtype (the compositor's virtual keyboard) and the agent over MCP
# stdio. Follows /work/shared/RECIPES.md "A terminal the person types into".
#
# Needs root: everything happens in a private mount namespace, so the machine's own users and
# sudo rules are never touched (safe on a developer desktop):
#   /etc                        ← an overlay whose upper layer holds copies of passwd, shadow and
#                                 group plus this run's test user archgate-ho-XXXXXX (known
#                                 password), and of pam.d/sudo
#   /etc/sudoers.d              ← a private directory holding only the test user's rule
#   /usr/lib                    ← an overlay adding archgate's asking sudo (as its package does)
# The packages are built as nobody (makepkg refuses root), the repository and the test root are
# root's, like a real system's; sudo runs pacman as root on the person's password.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
: "${ARCHGATE_BIN:?set ARCHGATE_BIN to the archgate binary under test}"

if [ "$(id -u)" -ne 0 ]; then
  echo "run-handoff: SKIPPED: needs root (a private mount namespace with a test user and a sudoers rule, pacman into a test root); CI runs it as root"
  exit 0
fi

if [ -z "${ARCHGATE_HANDOFF_NS:-}" ]; then
  for p in sudo wtype foot sway makepkg pacman repo-add setpriv openssl unshare; do
    command -v "$p" >/dev/null 2>&1 || { bash "$top/scripts/test-deps.sh"; break; }
  done
  venv="${ARCHGATE_TEST_VENV:-$top/target/test-venv}"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    ARCHGATE_TEST_VENV="$venv" bash "$top/scripts/test-deps.sh"
  fi
  export ARCHGATE_HANDOFF_NS=1 ARCHGATE_TEST_VENV="$venv"
  exec unshare --mount --propagation private bash "$0" "$@"
fi

# ---- inside the private mount namespace ----
work=$(mktemp -d /tmp/archgate-handoff.XXXXXX)
chmod 755 "$work"
cleanup() {
  mountpoint -q /usr/lib && { umount /usr/lib 2>/dev/null || umount -l /usr/lib; }
  mountpoint -q /etc/sudoers.d && { umount /etc/sudoers.d 2>/dev/null || umount -l /etc/sudoers.d; }
  mountpoint -q /etc && { umount /etc 2>/dev/null || umount -l /etc; }
  rm -rf "$work"
}
trap cleanup EXIT

# A user and uid of this run's own: two runs at once (CI and a developer's, or two clones) each
# have a private /etc/passwd and would otherwise both make the same user, and sudo's timestamps
# and lecture marks, outside the namespace, are per name and uid.
user="archgate-ho-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
password="handoff-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
uid=$((61334 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' \n') % 20000))
while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid + 1)); done
# An overlay, not a bind mount of each file: a file bound over /etc/passwd is left behind when
# the machine replaces /etc/passwd by a rename (useradd, userdel, passwd on a developer's machine
# during the run), and sudo then said "you do not exist in the passwd database". The machine's
# /etc is the lower layer and is never written.
etc="$work/etc"
mkdir -p "$etc/upper/pam.d" "$etc/work" "$work/sudoers.d"
for f in passwd shadow group; do cp -a "/etc/$f" "$etc/upper/$f"; done
echo "$user:x:$uid:$uid:archgate hand-off test:$work/userhome:/bin/sh" >>"$etc/upper/passwd"
echo "$user:$(openssl passwd -6 "$password"):19000:0:99999:7:::" >>"$etc/upper/shadow"
echo "$user:x:$uid:" >>"$etc/upper/group"
# sudo's PAM file: a private copy (root's, 0644) the PAM test rewrites and restores; the
# machine's stays as it is.
install -m 644 /etc/pam.d/sudo "$etc/upper/pam.d/sudo"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$etc/upper,workdir=$etc/work" /etc
chmod 750 "$work/sudoers.d"
mount --bind "$work/sudoers.d" /etc/sudoers.d
install -d -o "$uid" -g "$uid" -m 700 "$work/userhome"

# archgate's asking sudo as its package installs it (/usr/lib/archgate/sudo-asks/sudo, a link to
# the archgate that runs: tools/handoff/asking_sudo.rs): in this namespace's /usr/lib only, an
# overlay whose upper layer holds the link (the machine's /usr/lib is not touched; a package's
# own link there, on a developer's desktop, is hidden by this run's). Mounted before anything
# else in /usr/lib (the locale below), which the overlay would hide; the link's target is
# installed further down.
upper="$work/usrlib/upper"
install -d -m755 "$work/usrlib" "$upper" "$upper/archgate" "$upper/archgate/sudo-asks" "$work/usrlib/work"
ln -s "$work/archgate" "$upper/archgate/sudo-asks/sudo"
# And the hand-off terminal's fonts.conf, where the package puts it (tools/handoff/terminal.rs).
install -m644 "$top/packaging/handoff/fonts.conf" "$upper/archgate/fonts.conf"
mount -t overlay overlay -o "lowerdir=/usr/lib,upperdir=$upper,workdir=$work/usrlib/work" /usr/lib

# A German locale, for the test that sudo's words are judged in the C locale whatever the
# person's language: compiled into a copy of the locale directory mounted in this namespace only
# (sudo is setuid, so LOCPATH would not reach it).
loc="$work/locale"
mkdir -p "$loc"
cp -a /usr/lib/locale/. "$loc/" 2>/dev/null || true
if localedef -i de_DE -f UTF-8 "$loc/de_DE.utf8" >/dev/null 2>&1; then
  mount --bind "$loc" /usr/lib/locale
  export HANDOFF_DE_LOCALE=de_DE.UTF-8
fi

# A local repository: the packages the tests install (handoff-route through an Omarchy route;
# handoff-conflict conflicts with handoff-hello: pacman would ask to remove it).
build="$work/build"
install -d -o nobody -g nogroup "$build" "$build/home"
for name in handoff-hello handoff-other handoff-route handoff-conflict; do
  install -d -o nobody -g nogroup "$build/$name"
  conflicts=""
  [ "$name" = handoff-conflict ] && conflicts="conflicts=(handoff-hello)"
  cat >"$build/$name/PKGBUILD" <<PKG
pkgname=$name
pkgver=1.0
pkgrel=1
pkgdesc="archgate hand-off test package $name"
arch=(any)
license=(MIT)
$conflicts
package() {
  install -d "\$pkgdir/usr/share/$name"
  echo "$name" > "\$pkgdir/usr/share/$name/marker"
}
PKG
  chown nobody:nogroup "$build/$name/PKGBUILD"
  (cd "$build/$name" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env -i HOME="$build/home" PATH=/usr/bin:/bin PKGEXT=.pkg.tar.zst \
    makepkg --nodeps --noconfirm >/dev/null 2>&1) || { echo "run-handoff: makepkg failed for $name" >&2; exit 1; }
done
repo="$work/repo"
mkdir -p "$repo"
cp "$build"/*/*.pkg.tar.zst "$repo/"
repo-add -q "$repo/testrepo.db.tar.gz" "$repo"/*.pkg.tar.zst

# The test root: the system the person's pacman changes (root's, as a real one).
root="$work/sys"
mkdir -p "$root/root" "$root/db/sync" "$root/db/local" "$root/cache" "$root/gnupg" "$root/hooks"
cat >"$root/pacman.conf" <<CONF
[options]
RootDir = $root/root
DBPath = $root/db
CacheDir = $root/cache
LogFile = $root/pacman.log
GPGDir = $root/gnupg
HookDir = $root/hooks
Architecture = auto
SigLevel = Never

[testrepo]
Server = file://$repo
CONF
cp "$repo/testrepo.db" "$root/db/sync/testrepo.db"
chmod -R a+rX "$work"

# A stand-in Omarchy where a package would install it, root's alone (a hand-off runs a route's
# script only then: it runs sudo with the person's password; a git install in the person's home
# is refused — test_handoff.py checks both):
# its dispatcher answers `version` and `commands --all --json` in Omarchy 4's shape (see
# crates/desktop/src/omarchy/registry.rs); `omarchy-pkg-add` is in the shape of Omarchy 4's
# bin/omarchy-pkg-add (its header lines, then `sudo pacman -S --noconfirm --needed "$@"`),
# pointed at the test root; `omarchy-launch-terminal` in the shape of Omarchy 4's (`exec setsid
# uwsm-app -- xdg-terminal-exec --dir=… "$@"`) opens foot directly, as neither uwsm nor
# xdg-terminal-exec is in the harness. Our own text.
om="$work/omarchy"
mkdir -p "$om/bin"
echo "4.0.0" >"$om/version"
cat >"$om/commands.json" <<'JSON'
{"ok": true, "commands": [{"route": "omarchy pkg add", "binary": "omarchy-pkg-add", "group": "pkg", "name": "add", "summary": "Install Arch packages if they are missing", "requires_sudo": true, "hidden": false, "args": "<packages...>", "examples": ["omarchy pkg add handoff-route"], "aliases": [], "filename_route": "omarchy pkg add", "routes": ["omarchy pkg add"]}, {"route": "omarchy refresh marker", "binary": "omarchy-refresh-marker", "group": "refresh", "name": "marker", "summary": "Write a marker file as root, then run the person's hook", "requires_sudo": true, "hidden": false, "args": "", "examples": ["omarchy refresh marker"], "aliases": [], "filename_route": "omarchy refresh marker", "routes": ["omarchy refresh marker"]}]}
JSON
cat >"$om/bin/omarchy" <<SH
#!/bin/bash
case "\$1" in
version) cat "$om/version" ;;
commands) cat "$om/commands.json" ;;
*) exit 1 ;;
esac
SH
cat >"$om/bin/omarchy-pkg-add" <<SH
#!/bin/bash

# omarchy:summary=Install Arch packages if they are missing
# omarchy:args=<packages...>
# omarchy:requires-sudo=true

# The account the script acts for, as Omarchy's scripts name it in root's commands (\$USER).
echo "route-env USER=\$USER LOGNAME=\$LOGNAME HOME=\$HOME"
sudo pacman --config "$root/pacman.conf" -S --noconfirm --needed "\$@" || exit 1
SH
# `omarchy-refresh-marker` in the shape of Omarchy 4's bin/omarchy-refresh-pacman: root's file
# written with `sudo tee` (a program other than pacman), then the person's hook through
# `omarchy-hook`, in the shape of Omarchy 4's bin/omarchy-hook (`bash
# "\$HOME/.config/omarchy/hooks/NAME"`) — a file of the person's uid, the agent's to write.
cat >"$om/bin/omarchy-refresh-marker" <<SH
#!/bin/bash

# omarchy:summary=Write a marker file as root, then run the person's hook
# omarchy:requires-sudo=true

echo "written by the route" | sudo tee "$root/marker" >/dev/null
omarchy-hook post-refresh-marker
SH
cat >"$om/bin/omarchy-hook" <<'SH'
#!/bin/bash

# omarchy:summary=Run a named hook from ~/.config/omarchy/hooks/<name>
# omarchy:args=[name] [args...]

HOOK_PATH="$HOME/.config/omarchy/hooks/$1"
shift
if [[ -f $HOOK_PATH ]]; then
  bash "$HOOK_PATH" "$@" || echo "Hook failed: $HOOK_PATH"
fi
SH
cat >"$om/bin/omarchy-launch-terminal" <<'SH'
#!/bin/bash

# omarchy:summary=Launch a terminal
# omarchy:args=[command...]

exec setsid foot "$@"
SH
chmod 755 "$om/bin"/*

# The test user runs these: copied where it can reach them, whatever the clone's place (a 0700
# mktemp clone, a home only root enters).
install -m755 "$ARCHGATE_BIN" "$work/archgate"
install -m755 "$top/scripts/desktop-session.sh" "$work/desktop-session.sh"
install -m644 "$top/tests/handoff/test_handoff.py" "$work/test_handoff.py"
export HANDOFF_UID=$uid HANDOFF_GID=$uid HANDOFF_PASSWORD=$password HANDOFF_WORK=$work \
  HANDOFF_USER=$user HANDOFF_PACMAN_CONF="$root/pacman.conf" HANDOFF_DB="$root/db" \
  HANDOFF_SESSION_SCRIPT="$work/desktop-session.sh" ARCHGATE_BIN="$work/archgate" \
  HANDOFF_OMARCHY="$om" HANDOFF_MARKER="$root/marker"
cd "$work"
status=0
# -vv: a failure prints the whole answer, the output tail included (a rare exit 1 of sudo or
# its command in full runs, seen this landing, was cut to "…" by the short form).
"$ARCHGATE_TEST_VENV/bin/python" -m pytest -vv -p no:cacheprovider test_handoff.py "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "run-handoff: pytest ran no test" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  for f in "$work"/*.log "$work"/session/log/*; do [ -f "$f" ] && { echo "== $f" >&2; tail -30 "$f" >&2; }; done
fi
exit "$status"
