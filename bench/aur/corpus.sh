#!/usr/bin/env bash
# Rebuilds the real-package corpus for the PKGBUILD audit's evaluation from the commits in
# bench/aur/split.tsv, outside the repository (packages are never committed):
#
#   bash bench/aur/corpus.sh [ROOT]     # ROOT defaults to /var/cache/archgate-corpus
#
# Each repository is cloned at its commit into ROOT/repos/OWNER+NAME (from a local mirror in
# $CORPUS_MIRRORS/OWNER+NAME/repo when present, else from github.com). Then ROOT/sets/SET/OWNER+NAME/
# holds one symlink per package directory (a directory with a PKGBUILD) under the repository's
# package root. A test-set package whose directory name, or any part of its path under the root, is
# also a development-set package's name is left out, so the test set holds only packages the rules
# were never tuned on. A test repository with a cap (split.tsv's optional fifth column, N) then
# keeps only N of its packages left: those whose path under the repository has the smallest
# SHA-256, in byte order of the hex (bench/aur/README.md, "Ninth landing").
#
# A repository kept as one branch per package (a mirror like the AUR's) has `-` for its commit:
# its packages are pinned one per line in bench/aur/branches/OWNER+NAME.tsv (name, branch, commit),
# and each is checked out from its own commit into ROOT/repos/OWNER+NAME.pkgs/NAME.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-/var/cache/archgate-corpus}
mirrors=${CORPUS_MIRRORS:-/work/.mirror}
split="$top/bench/aur/split.tsv"
mkdir -p "$root/repos"
rm -rf "$root/sets"
mkdir -p "$root/sets/dev" "$root/sets/test"

while IFS=$'\t' read -r set repo commit under _cap; do
  [[ -z $set || $set == \#* ]] && continue
  key=${repo/\//+}
  dest="$root/repos/$key"
  if [[ ! -d $dest/.git ]]; then
    src="https://github.com/$repo.git"
    [[ -d $mirrors/$key/repo ]] && src="$mirrors/$key/repo"
    git clone -q --no-checkout "$src" "$dest"
  fi
  out="$root/sets/$set/$key"
  mkdir -p "$out"
  if [[ $commit == - ]]; then
    # One branch per package: each pinned commit's tree into its own directory, without the
    # blobs the snapshot lacks.
    while IFS=$'\t' read -r name _branch pin; do
      [[ -z $name || $name == \#* ]] && continue
      pkg="$dest.pkgs/$name"
      if [[ ! -f $pkg/PKGBUILD ]]; then
        rm -rf "$pkg"
        mkdir -p "$pkg"
        index=$(mktemp -u)
        GIT_INDEX_FILE=$index git -C "$dest" read-tree "$pin"
        GIT_INDEX_FILE=$index git -C "$dest" ls-files -s | awk '{print $2}' |
          git -C "$dest" cat-file --batch-check='%(objectname) %(objecttype)' 2>/dev/null |
          awk '$2 == "missing" {print $1}' >"$index.missing"
        GIT_INDEX_FILE=$index git -C "$dest" ls-files -s | grep -F -f "$index.missing" | cut -f2- |
          while read -r f; do GIT_INDEX_FILE=$index git -C "$dest" update-index --force-remove -- "$f"; done || true
        GIT_INDEX_FILE=$index git -C "$dest" checkout-index -a -f --prefix="$pkg/"
        rm -f "$index" "$index.missing"
      fi
      ln -sfn "$pkg" "$out/$name"
    done <"$top/bench/aur/branches/$key.tsv"
    echo "$set $repo (pinned per package): $(find "$out" -mindepth 1 -maxdepth 1 | wc -l) packages" >&2
    continue
  fi
  # A snapshot may lack its largest blobs (tarballs, images): check out everything else.
  git -C "$dest" ls-tree -r "$commit" | awk -F'\t' '{split($1, a, " "); if (a[2] == "blob") print a[3] "\t" $2}' >"$root/blobs.$key"
  cut -f1 "$root/blobs.$key" | git -C "$dest" cat-file --batch-check='%(objectname) %(objecttype)' |
    awk '$2 == "missing" {print $1}' >"$root/missing.$key"
  git -C "$dest" config core.sparseCheckout true
  {
    echo '/*'
    grep -F -f "$root/missing.$key" "$root/blobs.$key" | cut -f2- | sed 's|^|!/|' || true
  } >"$dest/.git/info/sparse-checkout"
  rm -f "$root/blobs.$key" "$root/missing.$key"
  git -C "$dest" -c advice.detachedHead=false checkout -q -f "$commit"
  IFS=, read -r -a roots <<<"$under"
  for root_dir in "${roots[@]}"; do
    (cd "$dest/$root_dir" && find . -name PKGBUILD -type f -not -path '*/.*' -printf '%h\n') |
      sort | while read -r d; do
        rel=${d#./}
        [[ $rel == . ]] && rel=$(basename "$dest")
        name=${rel//\//+}
        ln -sfn "$dest/$root_dir/${d#./}" "$out/$name"
      done
  done
  echo "$set $repo $commit: $(find "$out" -mindepth 1 -maxdepth 1 | wc -l) packages" >&2
done <"$split"

# Leave out of the test set every package any part of whose path (under its root) is a dev-set
# package's name: `qt6-svg+mingw-w64` as well as `world+qt6-svg`.
find "$root/sets/dev" -mindepth 2 -maxdepth 2 -printf '%f\n' | sed 's/.*+//' | sort -u >"$root/dev-names"
removed=0
for link in "$root"/sets/test/*/*; do
  IFS=+ read -r -a parts <<<"$(basename "$link")"
  for n in "${parts[@]}"; do
    if grep -qxF -- "$n" "$root/dev-names"; then rm "$link"; removed=$((removed + 1)); break; fi
  done
done
echo "test set: $removed packages also named in the dev set left out" >&2
capped=0
while IFS=$'\t' read -r set repo _commit _under cap; do
  [[ $set == test && -n ${cap:-} ]] || continue
  key=${repo/\//+}
  dest="$root/repos/$key"
  for link in "$root/sets/test/$key"/*; do
    [[ -e $link || -L $link ]] || continue
    rel=$(readlink "$link")
    rel=${rel#"$dest.pkgs/"}
    rel=${rel#"$dest/"}
    rel=${rel#./}
    printf '%s\t%s\n' "$(printf '%s' "$rel" | sha256sum | cut -c1-64)" "$link"
  done | LC_ALL=C sort | tail -n +$((cap + 1)) | cut -f2- >"$root/capped.$key"
  n=$(wc -l <"$root/capped.$key")
  [[ $n -gt 0 ]] && xargs -r -d '\n' rm -- <"$root/capped.$key"
  capped=$((capped + n))
  rm -f "$root/capped.$key"
  echo "test $repo: capped at $cap ($n left out)" >&2
done <"$split"
echo "test set: $capped packages left out by a repository's cap" >&2
for s in dev test; do
  echo "$s: $(find "$root/sets/$s" -mindepth 2 -maxdepth 2 | wc -l) packages" >&2
done
