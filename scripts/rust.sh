# Sourced by scripts/install.sh and scripts/test.sh: find or install a Rust toolchain new enough
# for this workspace, for this user only (rustup into ~/.cargo; never root, never the system).

# A cargo new enough for this workspace (edition 2024, rustc ≥ 1.95).
cargo_ok() {
  local v
  v=$("${1:-cargo}" --version 2>/dev/null | sed -n 's/^cargo \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$v" ] && set -- $v && { [ "$1" -gt 1 ] || [ "$2" -ge 95 ]; }
}

# need_rust [COMPONENTS]: a cargo ≥ 1.95 on PATH, else rustup's stable (with COMPONENTS, a
# comma-separated list such as "rustfmt,clippy"), installing rustup for this user when missing.
need_rust() {
  cargo_ok && return 0
  [ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
  if ! command -v rustup >/dev/null 2>&1; then
    if ! command -v curl >/dev/null 2>&1; then
      echo "archgate needs Rust ≥ 1.95 and neither cargo nor rustup nor curl is here." >&2
      echo "  Arch: sudo pacman -S --needed rustup base-devel    Debian: sudo apt-get install curl build-essential" >&2
      echo "  then run the script again" >&2
      exit 1
    fi
    echo "rust: installing rustup for $(id -un) into ~/.cargo (https://rustup.rs)" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
      sh -s -- -y --profile minimal --default-toolchain stable --no-modify-path >&2
    PATH="$HOME/.cargo/bin:$PATH"
  fi
  rustup toolchain install stable --profile minimal ${1:+--component "$1"} >/dev/null
  cargo_ok "$(rustup which --toolchain stable cargo)" || {
    echo "archgate needs Rust ≥ 1.95; rustup's stable is older: run \`rustup update stable\`" >&2
    exit 1
  }
  export RUSTUP_TOOLCHAIN=stable
}


# need_lints: rustfmt and clippy for the toolchain need_rust chose (the test command checks both).
need_lints() {
  cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 && return 0
  if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null
  else
    echo "the tests need rustfmt and clippy for $(cargo --version):" >&2
    echo "  Arch: sudo pacman -S --needed rust (it includes both), or use rustup" >&2
    exit 1
  fi
}
