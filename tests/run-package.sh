#!/usr/bin/env bash
# The Arch package, for real: builds packaging/arch/PKGBUILD from this checkout with makepkg
# (Debian's makepkg, as nobody: makepkg refuses root), installs the package with pacman into a
# temporary root (its own --root and --dbpath, SigLevel = Never), and runs the installed archgate.
#
# The PKGBUILD is used as written except `source`, which points at a tarball of the working tree
# (tracked and new files, not ignored ones). Cargo's home and target directory persist in
# $CARGO_TARGET_DIR/archgate-pkg, so a second run rebuilds only archgate's own crates. The crate
# registry is seeded from the caller's cargo home, so prepare()'s `cargo fetch --locked` runs
# offline when the crates are already here (online otherwise). The release profile is made cheap
# for this test (ARCHGATE_PKG_OPT_LEVEL, default 0; no debug info): the packaging is under test
# here, not the optimiser.
#
# Needs root (makepkg as nobody, pacman into a temporary root): for anyone else it prints a
# SKIPPED line and succeeds. When nobody cannot reach $CARGO_TARGET_DIR (a clone or target dir in
# a 0700 home such as /root), the work directory moves to /var/cache/archgate-pkg/<hash of the
# target dir>, which nobody can reach; two runs on one work directory take turns (a lock).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
if [ -n "${ARCHGATE_PKG_WORK:-}" ]; then
  work=$ARCHGATE_PKG_WORK
elif setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$CARGO_TARGET_DIR" 2>/dev/null; then
  work="$CARGO_TARGET_DIR/archgate-pkg"
else
  work="/var/cache/archgate-pkg/$(realpath -m "$CARGO_TARGET_DIR" | sha256sum | cut -c1-16)"
  if [ "$(id -u)" -eq 0 ] && [ -z "${ARCHGATE_PKG_STAGE:-}" ]; then
    install -d -m 0755 /var/cache/archgate-pkg "$work"
  fi
fi
export ARCHGATE_PKG_WORK=$work
build="$work/build"

# Stage 2 (as root, in its own mount namespace when the toolchain had to be bind-mounted):
# makepkg as nobody.
if [ "${ARCHGATE_PKG_STAGE:-}" = build ]; then
  if [ -n "${ARCHGATE_PKG_BIND:-}" ]; then
    mount --bind "$ARCHGATE_PKG_BIND" "$ARCHGATE_PKG_TC"
  fi
  nobody() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
      env -i HOME="$work/home" PATH="$ARCHGATE_PKG_TC/bin:/usr/bin:/bin" LANG=C.UTF-8 \
      CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/target" CARGO_BUILD_JOBS=2 \
      CARGO_TERM_COLOR=never PKGEXT=.pkg.tar.zst \
      CARGO_PROFILE_RELEASE_OPT_LEVEL="${ARCHGATE_PKG_OPT_LEVEL:-0}" \
      CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
      "$@"
  }
  cd "$build"
  # prepare(): cargo fetch --locked — offline from the seeded registry, else online.
  if ! nobody CARGO_NET_OFFLINE=true makepkg --nobuild --nodeps --noconfirm; then
    echo "run-package: the crates are not all here; prepare() fetches them online" >&2
    nobody makepkg --nobuild --nodeps --noconfirm --cleanbuild
  fi
  # build() and package(): cargo build --frozen (no network), then fakeroot packaging.
  nobody CARGO_NET_OFFLINE=true makepkg --noextract --nodeps --noconfirm --force
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "run-package: SKIPPED: needs root (makepkg as nobody, pacman into a temporary root); CI runs it as root"
  exit 0
fi
for tool in makepkg pacman setpriv fakeroot zstd bsdtar git; do
  command -v "$tool" >/dev/null || { echo "run-package: $tool is missing (scripts/test-deps.sh installs it)" >&2; exit 1; }
done

started=$(date +%s)
mkdir -p "$work"
exec 8>"$work.lock"
flock 8
pkgver=$(sed -n 's/^pkgver=//p' "$top/packaging/arch/PKGBUILD")
mkdir -p "$work/home" "$work/cargo-home" "$work/target"
rm -rf "$build"
mkdir -p "$build"

# The working tree as a release-like tarball.
tarball="$build/archgate-$pkgver.tar.gz"
(cd "$top" && git ls-files -z --cached --others --exclude-standard) |
  while IFS= read -r -d '' f; do [ -f "$top/$f" ] && printf '%s\0' "$f"; done >"$work/files"
tar -C "$top" --null -T "$work/files" --transform "s,^,archgate-$pkgver/," -czf "$tarball"
sum=$(sha256sum "$tarball" | cut -d' ' -f1)

cp "$top/packaging/arch/PKGBUILD" "$build/PKGBUILD"
cat >>"$build/PKGBUILD" <<EOF

# tests/run-package.sh: this checkout instead of the release tarball.
source=("archgate-$pkgver.tar.gz")
sha256sums=('$sum')
EOF

# Seed the registry once (index and .crate files; cargo unpacks them itself).
caller_cargo="${CARGO_HOME:-$HOME/.cargo}"
if [ ! -d "$work/cargo-home/registry" ] && [ -d "$caller_cargo/registry/cache" ]; then
  mkdir -p "$work/cargo-home/registry"
  cp -a "$caller_cargo/registry/index" "$caller_cargo/registry/cache" "$work/cargo-home/registry/"
fi
chown -R nobody:nogroup "$work/home" "$work/cargo-home" "$work/target" "$build"

# The Rust toolchain, readable by nobody: as it is, bind-mounted, or (last resort) copied.
sysroot=$(rustc --print sysroot)
# (Through sh: setpriv itself still holds root's capabilities when it looks the program up.)
if setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c '"$0" --version' "$sysroot/bin/cargo" >/dev/null 2>&1; then
  ARCHGATE_PKG_STAGE=build ARCHGATE_PKG_TC="$sysroot" bash "$0"
elif unshare --mount --propagation private true 2>/dev/null; then
  mkdir -p "$work/toolchain"
  ARCHGATE_PKG_STAGE=build ARCHGATE_PKG_TC="$work/toolchain" ARCHGATE_PKG_BIND="$sysroot" \
    unshare --mount --propagation private bash "$0"
else
  copy="$work/toolchain-copy"
  if [ "$(cat "$copy/.sysroot" 2>/dev/null)" != "$(rustc -vV | sha256sum)" ]; then
    rm -rf "$copy" && mkdir -p "$copy"
    cp -a "$sysroot/bin" "$sysroot/lib" "$copy/"
    [ -d "$sysroot/libexec" ] && cp -a "$sysroot/libexec" "$copy/"
    rustc -vV | sha256sum >"$copy/.sysroot"
  fi
  ARCHGATE_PKG_STAGE=build ARCHGATE_PKG_TC="$copy" bash "$0"
fi

pkg=$(ls "$build"/archgate-"$pkgver"-*-x86_64.pkg.tar.zst | grep -v -- '-debug-' | head -n1)

# build() relinked the binary with scripts/link-order.sh: the functions its order file names lie in
# that order at the start of the code (issue 34's idle RSS). The packaged binary is stripped, so
# this reads the one cargo left, before makepkg stripped its copy.
built="$work/target/release/archgate"
order=$(ls "$built".link-order.* 2>/dev/null | head -n1)
[ -s "$order" ] || { echo "run-package: FAIL: build() wrote no link order next to $built" >&2; exit 1; }
nm --defined-only "$built" | awk 'NR == FNR { rank[$0] = FNR; next } ($3 in rank) { print rank[$3], $1 }' "$order" - |
  sort -n | awk '{ a = $2 "" } NR > 1 && a < last { bad++ } { last = a } END {
    if (NR < 1000 || bad > NR / 100) { printf "run-package: FAIL: %d ordered functions, %d out of order\n", NR, bad > "/dev/stderr"; exit 1 }
    printf "run-package: %d functions laid out in the link order (%d out of it)\n", NR, bad }'
echo "run-package: built $(basename "$pkg") in $(( $(date +%s) - started )) s"

# Install it with pacman into a temporary root.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/root" "$root/db" "$root/cache" "$root/gnupg" "$root/hooks"
cat >"$root/pacman.conf" <<EOF
[options]
RootDir = $root/root
DBPath = $root/db
CacheDir = $root/cache
LogFile = $root/pacman.log
GPGDir = $root/gnupg
HookDir = $root/hooks
Architecture = x86_64
SigLevel = Never
EOF
# -dd: the temporary root has no glibc or gcc-libs package to satisfy `depends`.
pacman --config "$root/pacman.conf" --root "$root/root" --dbpath "$root/db" -U -dd --noconfirm "$pkg" >/dev/null

fail() { echo "run-package: FAIL: $*" >&2; exit 1; }
r="$root/root"
version=$("$r/usr/bin/archgate" --version)
[ "$version" = "archgate $pkgver" ] || fail "archgate --version said '$version'"
echo "run-package: installed archgate runs: $version"

for f in usr/bin/archgate \
  usr/share/bash-completion/completions/archgate \
  usr/share/zsh/site-functions/_archgate \
  usr/share/fish/vendor_completions.d/archgate.fish \
  usr/share/man/man1/archgate.1.gz \
  usr/lib/systemd/user/archgate.service \
  usr/lib/systemd/user/archgate.socket \
  usr/share/polkit-1/actions/org.archgate.policy \
  usr/share/archgate/plugin/manifest.json \
  usr/share/licenses/archgate/LICENSE-MIT \
  usr/share/licenses/archgate/LICENSE-APACHE; do
  [ -s "$r/$f" ] || fail "/$f is not in the installed package"
  pacman --config "$root/pacman.conf" --root "$r" --dbpath "$root/db" -Qo "$r/$f" >/dev/null ||
    fail "pacman does not know /$f as the package's"
done
# archgate's asking sudo: a link to the packaged archgate, which answers by that name as root's
# `sudo -k` after naming the command (tools/handoff/asking_sudo.rs).
asking="usr/lib/archgate/sudo-asks/sudo"
[ "$(readlink "$r/$asking")" = /usr/bin/archgate ] || fail "/$asking is not a link to /usr/bin/archgate"
pacman --config "$root/pacman.conf" --root "$r" --dbpath "$root/db" -Qo "$r/$asking" >/dev/null ||
  fail "pacman does not know /$asking as the package's"
said=$( (exec -a sudo "$r/usr/bin/archgate" -V) 2>&1) || fail "the packaged archgate as sudo failed: $said"
case "$said" in *"archgate: sudo is asked to run, as root: -V"*"Sudo version"*) ;;
  *) fail "the packaged archgate as sudo did not name the command and run sudo: $said" ;; esac
echo "run-package: the asking sudo is packaged and answers as sudo -k"
# Every file the plugin's manifest names, as in the checkout (a missing one gives Omarchy a plugin
# without its panel or widget).
plugin_files=$(python3 -c 'import json, sys; print("\n".join(sorted(set(json.load(open(sys.argv[1]))["entryPoints"].values()))))' \
  "$top/plugin/manifest.json") || fail "plugin/manifest.json does not parse"
[ -n "$plugin_files" ] || fail "plugin/manifest.json names no file"
for f in $plugin_files; do
  [ -s "$r/usr/share/archgate/plugin/$f" ] ||
    fail "/usr/share/archgate/plugin/$f, which plugin/manifest.json names, is not in the installed package"
  cmp -s "$r/usr/share/archgate/plugin/$f" "$top/plugin/$f" || fail "the packaged plugin/$f differs from the checkout's"
done
echo "run-package: the plugin has every file its manifest names: $(echo $plugin_files)"
# The conformance suite's binary (crates/conformance) is never packaged.
files=$(pacman --config "$root/pacman.conf" --root "$r" --dbpath "$root/db" -Qlq archgate)
case "$files" in *conformance*) fail "the package holds the conformance binary" ;; esac
cmp -s "$r/usr/lib/systemd/user/archgate.service" "$top/packaging/systemd/archgate.service" ||
  fail "the packaged unit differs from packaging/systemd/archgate.service"
cmp -s "$r/usr/lib/systemd/user/archgate.socket" "$top/packaging/systemd/archgate.socket" ||
  fail "the packaged socket unit differs from packaging/systemd/archgate.socket"
cmp -s "$r/usr/share/polkit-1/actions/org.archgate.policy" "$top/packaging/polkit/org.archgate.policy" ||
  fail "the packaged polkit actions differ from packaging/polkit/org.archgate.policy"
cmp -s "$r/usr/lib/archgate/fonts.conf" "$top/packaging/handoff/fonts.conf" ||
  fail "the packaged hand-off fonts.conf differs from packaging/handoff/fonts.conf"
grep -q 'complete -F' "$r/usr/share/bash-completion/completions/archgate" || fail "bash completion looks wrong"
grep -q '#compdef archgate' "$r/usr/share/zsh/site-functions/_archgate" || fail "zsh completion looks wrong"
zcat "$r/usr/share/man/man1/archgate.1.gz" | grep -q '^\.TH archgate' || fail "the man page looks wrong"
pacman --config "$root/pacman.conf" --root "$r" --dbpath "$root/db" -Qi archgate | grep -q "^Version *: $pkgver-1" ||
  fail "pacman -Qi archgate does not show $pkgver-1"
echo "run-package: ok ($(( $(date +%s) - started )) s)"
