#!/usr/bin/env bash
# Installs what archgate's tests use, skipping what is already there. Debian 12 (CI) or Arch.
set -euo pipefail

DEBS=(pacman-package-manager makepkg libarchive-tools fakeroot zstd patch
      sway grim wl-clipboard tesseract-ocr tesseract-ocr-eng libnotify-bin mako-notifier dbus
      pipewire pipewire-bin wireplumber chromium swaybg foot curl python3-venv
      qt6-declarative-dev-tools qml6-module-qtquick qml6-module-qtqml systemd git
      polkitd pkexec openssl tmux gnupg
      pciutils usbutils smartmontools python3-dbusmock iproute2
      systemd-journal-remote systemd-coredump sudo wtype)

if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${DEBS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "test-deps: installing ${missing[*]}" >&2
    sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
elif command -v pacman >/dev/null 2>&1; then
  pkgs=(sway grim wl-clipboard tesseract tesseract-data-eng libnotify mako dbus pipewire wireplumber chromium foot python
        qt6-declarative systemd git tmux pciutils usbutils smartmontools python-dbusmock iproute2 patch
        sudo wtype)
  missing=()
  for p in "${pkgs[@]}"; do pacman -Qq "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd pacman -S --needed --noconfirm "${missing[@]}"
  fi
fi

# Independent MCP clients: the official Python SDK (in a venv), the TypeScript SDK client, the
# conformance suite and Node 22 (from npm) under tests/clients/.
top=$(cd "$(dirname "$0")/.." && pwd)
venv="${ARCHGATE_TEST_VENV:-$top/target/test-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp, pytest' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'mcp>=2,<3' 'pytest>=8' 'httpx' 'anyio'
fi
# Reinstalled whenever package-lock.json changed since the last install (a stale node_modules
# would test other versions than the committed ones).
clients="$top/tests/clients"
if [ -f "$clients/package.json" ]; then
  want=$(sha256sum "$clients/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$clients/node_modules/.archgate-lock-sha256" 2>/dev/null)" != "$want" ]; then
    (cd "$clients" && npm ci --no-audit --no-fund --silent)
    echo "$want" >"$clients/node_modules/.archgate-lock-sha256"
  fi
fi
