#!/usr/bin/env bash
# The PKGBUILD audit on real packages, per repository (bench/aur/README.md).
#
#   bash bench/aur/run.sh            # rebuild the corpus if needed, audit the development set
#   bash bench/aur/run.sh test       # the frozen test set: look once per landing, after tuning
#   bash bench/aur/run.sh dev -v     # list every non-ok package with its findings
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
root=${CORPUS_ROOT:-/var/cache/archgate-corpus}
set_name=${1:-dev}
shift || true
[ -d "$root/sets/$set_name" ] || bash "$top/bench/aur/corpus.sh" "$root"
cd "$top"
cargo run --locked --release -q -p archgate-aur --example sets -- "$root/sets/$set_name" "$@"
