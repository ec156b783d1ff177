#!/usr/bin/env bash
# Builds tests/world/no-polkit.c (see its header) and prints the path of the shared object to put
# in LD_PRELOAD: the tests' world with no polkit and no system bus, whatever the machine runs.
# The same file the cargo harness builds (crates/archgate/tests/archgate/support/world.rs); here
# for the suites scripts/test.sh runs. Named by the source's hash under $CARGO_TARGET_DIR/tmp/world
# and renamed into place, so runs at once never meet a half-written file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${CARGO_TARGET_DIR:?set CARGO_TARGET_DIR}"
dir="$CARGO_TARGET_DIR/tmp/world"
mkdir -p "$dir"
lib="$dir/no-polkit-sh-$(sha256sum "$here/no-polkit.c" | cut -c1-16).so"
if [ ! -f "$lib" ]; then
  work=$(mktemp -d "$dir/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  "${CC:-cc}" -shared -fPIC -O2 -o "$work/no-polkit.so" "$here/no-polkit.c" -ldl
  mv -f "$work/no-polkit.so" "$lib"
fi
printf '%s\n' "$lib"
