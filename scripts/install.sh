#!/usr/bin/env bash
# Builds archgate and installs it to ~/.local/bin (or $PREFIX/bin). Needs Rust ≥ 1.95 (rustup).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prefix="${PREFIX:-$HOME/.local}"
if ! command -v cargo >/dev/null 2>&1; then
  if command -v rustup >/dev/null 2>&1; then rustup toolchain install stable >/dev/null; else
    echo "archgate needs Rust ≥ 1.95: install rustup (Arch: pacman -S rustup; Debian: see https://rustup.rs), then run this again" >&2
    exit 1
  fi
fi
cargo install --locked --path "$top/crates/archgate" --root "$prefix" --quiet
mkdir -p "$prefix/share/man/man1" "$prefix/share/bash-completion/completions"
"$prefix/bin/archgate" man > "$prefix/share/man/man1/archgate.1"
"$prefix/bin/archgate" completions bash > "$prefix/share/bash-completion/completions/archgate"
echo "installed $prefix/bin/archgate" >&2
# Person presence (approval.presence) needs archgate's polkit actions in root's directory.
actions=/usr/share/polkit-1/actions
if ! cmp -s "$top/packaging/polkit/org.archgate.policy" "$actions/org.archgate.policy" 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ] && [ -d "$actions" ]; then
    install -m644 "$top/packaging/polkit/org.archgate.policy" "$actions/org.archgate.policy"
    echo "installed $actions/org.archgate.policy" >&2
  else
    echo "for person presence, install archgate's polkit actions as root:" >&2
    echo "  sudo install -m644 $top/packaging/polkit/org.archgate.policy $actions/org.archgate.policy" >&2
  fi
fi
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to PATH" >&2 ;; esac
