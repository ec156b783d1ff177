#!/usr/bin/env bash
# Relinks a release build of archgate with its code laid out in the order packaging/link-order.txt
# names: the functions the daemon runs from `exec` until it listens first, then those a call runs.
#
# Why (issue 34: idle RSS <= 16 MiB): a page-cache fault maps the 64 KiB around the page, so the
# ~1,800 functions a start-up runs, scattered over 27 MB of code, kept ~10 MiB of it resident; laid
# out together they are ~1.2 MB, and the calls' functions beside them touch fewer pages and TLB
# entries. Only the layout changes: the same code, position-independent, ASLR as before.
#
# The list holds demangled names without the hashes rustc derives from the compiler's version and
# the build's metadata, so it keeps matching across toolchains (a generic function's name shared by
# many instances is listed as the symbol itself, which only the same toolchain's build has); this
# script maps it to this build's symbols (`nm`), writes lld's `--symbol-ordering-file`, and relinks the binary target only (the
# library is not rebuilt: about a second). Needs lld (rustc's default linker on x86_64 Linux since
# 1.90) and binutils' `nm`; without either the build is left as it is, and this says so. A name the
# build no longer has is skipped: a stale list costs memory, never correctness.
#
#   bash scripts/link-order.sh [CARGO ARGS...]    # after `cargo build --release -p archgate ...`
#   bash scripts/link-order.sh --map BINARY LIST  # only print BINARY's symbols LIST names, in order
#
# CARGO ARGS are passed to `cargo rustc` (e.g. --frozen, --locked); CARGO_TARGET_DIR is honoured.
# Regenerate the list after large changes with scripts/link-order-profile.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

# map BINARY LIST: BINARY's code symbols that LIST names (a listed symbol itself, or its
# demangled name), in LIST's order, one per line; how many names matched, on stderr.
map() {
  local bin=$1 list=$2
  symbols() { nm "$@" --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { sub(/^[^ ]* [^ ]* /, ""); print }'; }
  paste -d '\t' <(symbols) <(symbols -C) |
    awk -F '\t' -v list="$list" '
      BEGIN { while ((getline line < list) > 0) if (line !~ /^#/ && line != "") if (!(line in rank)) rank[line] = ++n }
      ($1 in rank) { print rank[$1] "\t" $1; found[$1] = 1; next }
      ($2 in rank) { print rank[$2] "\t" $1; found[$2] = 1 }
      END { for (k in found) m++; printf "link-order: %d of %d listed functions found in this build\n", m, n > "/dev/stderr" }
    ' | sort -n -s -k1,1 | cut -f2
}
if [ "${1:-}" = --map ]; then
  map "$2" "$3"
  exit 0
fi

target="${CARGO_TARGET_DIR:-$top/target}"
bin="$target/release/archgate"
[ -x "$bin" ] || { echo "link-order: $bin is not built (cargo build --release -p archgate first)" >&2; exit 1; }
if ! command -v nm >/dev/null 2>&1; then
  echo "link-order: no nm (binutils) here; archgate keeps the linker's layout" >&2
  exit 0
fi
if ! readelf -p .comment "$bin" 2>/dev/null | grep -q 'Linker: LLD'; then
  echo "link-order: $bin was not linked by lld; archgate keeps the linker's layout" >&2
  exit 0
fi

tmp_order="$target/release/archgate.link-order.new"
map "$bin" "$top/packaging/link-order.txt" > "$tmp_order"
# Named by its content: cargo relinks when its arguments change, not when a file they name does.
order="$target/release/archgate.link-order.$(sha256sum "$tmp_order" | cut -c1-16)"
rm -f "$target/release/archgate.link-order."[0-9a-f]*
mv "$tmp_order" "$order"

# From the clone: cargo reads `.cargo/config.toml` from the directory it runs in and every
# parent, so not from wherever this was started (attack 31 lead); the target made absolute first.
target=$(realpath -m "$target")
(cd "$top" && CARGO_TARGET_DIR="$target" cargo rustc --release -p archgate --bin archgate \
  --manifest-path "$top/Cargo.toml" "$@" -- \
  -C "link-arg=-Wl,--symbol-ordering-file=$order" -C link-arg=-Wl,--no-warn-symbol-ordering) >&2
echo "link-order: relinked $bin" >&2
