#!/usr/bin/env bash
# Builds archgate and installs it to ~/.local/bin (or $PREFIX/bin), with its man page and bash
# completion. Needs Rust ≥ 1.95 and a C compiler: when cargo is missing (or older), rustup's
# stable toolchain is used, and rustup itself is installed for this user (into ~/.cargo, no root)
# when it is missing too. ARCHGATE_BIN=/path/to/archgate installs that binary instead of building
# (the tests use it). Works whether or not ~/.local/bin is on PATH: the README runs the installed
# binary by its full path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prefix="${PREFIX:-$HOME/.local}"
# cargo reads `.cargo/config.toml` from the directory it runs in and every parent: the clone's,
# not whatever directory this was started from (attack 31 lead). Paths given relative to where
# this was started are made absolute first.
prefix=$(realpath -m "$prefix")
[ -z "${ARCHGATE_BIN:-}" ] || ARCHGATE_BIN=$(realpath -m "$ARCHGATE_BIN")
[ -z "${CARGO_TARGET_DIR:-}" ] || { CARGO_TARGET_DIR=$(realpath -m "$CARGO_TARGET_DIR"); export CARGO_TARGET_DIR; }
cd "$top"

# shellcheck source=scripts/rust.sh
. "$top/scripts/rust.sh"

mkdir -p "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions"
if [ -n "${ARCHGATE_BIN:-}" ]; then
  [ -x "$ARCHGATE_BIN" ] || { echo "install: ARCHGATE_BIN=$ARCHGATE_BIN is not an executable" >&2; exit 1; }
  install -m 0755 "$ARCHGATE_BIN" "$prefix/bin/archgate"
else
  need_rust
  if ! command -v cc >/dev/null 2>&1; then
    echo "archgate's build needs a C compiler (cc):" >&2
    echo "  Arch: sudo pacman -S --needed base-devel    Debian: sudo apt-get install build-essential" >&2
    exit 1
  fi
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
  cargo build --locked --release -p archgate --manifest-path "$top/Cargo.toml" --quiet
  # Start-up's and a call's code laid out together (issue 34: idle RSS); relinks the binary only.
  bash "$top/scripts/link-order.sh" --locked --quiet
  install -m 0755 "$CARGO_TARGET_DIR/release/archgate" "$prefix/bin/archgate"
fi
"$prefix/bin/archgate" man > "$prefix/share/man/man1/archgate.1"
"$prefix/bin/archgate" completions bash > "$prefix/share/bash-completion/completions/archgate"
echo "installed $prefix/bin/archgate" >&2
# Person presence (approval.presence) needs archgate's polkit actions in root's directory. This
# script installs for the person only; it says what to run as root instead of doing it.
actions=/usr/share/polkit-1/actions
if ! cmp -s "$top/packaging/polkit/org.archgate.policy" "$actions/org.archgate.policy" 2>/dev/null; then
  echo "for person presence, install archgate's polkit actions as root:" >&2
  echo "  sudo install -m644 $top/packaging/polkit/org.archgate.policy $actions/org.archgate.policy" >&2
fi
# A hand-off's terminal draws the command the person approves with root's fonts only
# (tools/handoff/terminal.rs): it opens only when archgate's fonts.conf is root's.
fonts=/usr/lib/archgate/fonts.conf
if ! cmp -s "$top/packaging/handoff/fonts.conf" "$fonts" 2>/dev/null; then
  echo "for hand-offs in a terminal archgate opens, install its fonts.conf as root:" >&2
  echo "  sudo install -Dm644 $top/packaging/handoff/fonts.conf $fonts" >&2
fi
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; run it as $prefix/bin/archgate, or add $prefix/bin to PATH" >&2 ;;
esac
