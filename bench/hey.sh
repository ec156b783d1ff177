# Sourced by the loopback benches (bench/issue2/run.sh, bench/rmcp/run.sh): installs `hey` when it
# is missing — Debian's package, or Arch's (extra/hey) — and defines `hey_version` for the facts.
if ! command -v hey >/dev/null 2>&1; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  if command -v apt-get >/dev/null 2>&1; then
    $sudo_cmd apt-get install -y -qq --no-install-recommends hey >&2 ||
      { $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq --no-install-recommends hey >&2; }
  elif command -v pacman >/dev/null 2>&1; then
    $sudo_cmd pacman -S --needed --noconfirm hey >&2
  fi
  command -v hey >/dev/null 2>&1 || { echo "bench: cannot install hey (apt-get or pacman); install it and run again" >&2; exit 1; }
fi

hey_version() {
  local v
  v=$(dpkg-query -W -f='${Version}' hey 2>/dev/null) || v=$(pacman -Q hey 2>/dev/null | awk '{print $2}')
  echo "${v:-?}"
}
