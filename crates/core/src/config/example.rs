//! The commented example printed by `archgate config example`. A test keeps it parsing to
//! exactly the defaults, so it cannot drift from the code.

pub const EXAMPLE: &str = r#"# archgate configuration — every key, with its default.
# Location: $XDG_CONFIG_HOME/archgate/config.toml (see `archgate config path`).
# Changes apply without a restart (poll every 2 s, or `archgate reload`); `archgate config check`
# prints problems with line numbers. Keys marked (restart) are read only at start: a reload that
# changes one says so (log, /health, `archgate status`), and it applies at the next start.
# The file applies whole or not at all: any problem (an unknown key, a value out of range, an
# entry that cannot be read), another owner or a group/other-writable file or directory, or the
# file deleted after it applied — and the last good copy stays in force, said in `archgate
# status`, /health, the bar and a notification. For defaults on purpose, leave this file empty.

[paths]
# Override where archgate keeps its private files, absolute paths (restart). Defaults follow XDG:
# state_dir   = "~/.local/state/archgate"   (token, clients, audit log, standing rules, wiki index)
# runtime_dir = "$XDG_RUNTIME_DIR/archgate"  (control socket, state.json for bars)
# cache_dir   = "~/.cache/archgate"          (HTTP caches)

[server]
# Port of `archgate serve --http` on 127.0.0.1 (restart). The address is always loopback.
port = 8765
# Log level on stderr: error, warn, info, debug, trace (restart; --log / ARCHGATE_LOG win).
log = "info"
# Seconds a connection has to send a whole request header, and to start its next request on a
# kept-alive connection; then it is closed. Applies to /mcp, /health and the approval page
# (restart; the bridge and control sockets take a new value at once) (1..=300).
header_timeout_s = 10
# Seconds without a byte either way before a connection is closed; streams ping within it
# (restart) (20..=3600).
idle_timeout_s = 120
# Open connections per listener, and per peer address; past either the connection that has been
# quiet longest without a request in flight is closed, else the new one (lowered to fit
# RLIMIT_NOFILE) (restart: /mcp and the page; the bridge socket reads it at once).
max_connections = 512
max_connections_per_peer = 256   # (restart)
# Live MCP sessions per client; opening one more closes its least recently used one (1..=4096).
max_sessions_per_client = 32

[policy]
# Routes are a tool name, or for command families the words after it ("theme set"). An Omarchy
# route has one canonical name ("omarchy theme set"); a rule on any of its names — an alias
# ("omarchy background"), "omarchy_run theme set", "toggle nightlight" — applies to it, and a
# deny on any name wins. `archgate policy explain TOOL '{json}'` shows the names of a call.
# Entries are exact routes ("theme set"), "prefix *" (that route and every route under it,
# on word boundaries), or a word ending in * ("aur_*": every tool or word starting aur_).
# A * anywhere else cannot be read, and then nothing of this file applies (the last good copy
# stays; `archgate config check` names the entry). Read deny → ask → allow; the first match wins.
# Anything that elevates privilege (sudo, pkexec, doas, su, run0) is blocked whatever is here.
deny = []
ask = []
allow = []

[approval]
# Seconds a call waits for the person's answer; silence is no (5..=600). Keep it below the MCP
# client's own request timeout (60 s in most; see README "Approval waits and client timeouts").
timeout_s = 50
# Channels: the approval page (`archgate ui`) and desktop notifications with actions (restart).
page = true
notifications = true   # (restart)
# Port of the approval page on 127.0.0.1 (restart).
page_port = 8766
# The nag guard: at most this many questions to the person in any 10 minutes, all clients
# together; past it, calls that need a yes are refused `unsupported` (1..=1000).
max_questions = 12
# Person presence: which yeses you confirm by authenticating to your desktop's polkit agent, so
# that another program running as you (an agent's shell) cannot approve in your name.
# "auto": Allow of a destructive call, Always, developer mode on and client changes, wherever
# polkit and archgate's actions are installed; "polkit": every Allow and Always as well, and
# without polkit every yes is refused; "off": never. Deny never asks. See SECURITY.md.
presence = "auto"
# Seconds after a session read text archgate did not write (an AUR PKGBUILD, a wiki page, the
# clipboard, a journal line …) during which its act and destructive calls go to you even when a
# standing rule or developer mode would approve them (1..=86400; a rule made with
# `after_untrusted = true` still applies). See SECURITY.md "After untrusted text".
untrusted_window_s = 600
# For a client that speaks MCP tasks (the 2026-07-28 tasks extension), a call that waits for you
# is a task the client polls, not a request held open: its question waits this many seconds
# (5..=86400), and one client may have at most `max_tasks` open (1..=256).
task_timeout_s = 600
max_tasks = 8

[exec]
# Where programs are looked up (never the inherited PATH). Unset: $OMARCHY_PATH/bin,
# /usr/local/bin, /usr/bin, /usr/sbin.
# search_dirs = ["/usr/local/bin", "/usr/bin"]
# Whose programs run: "root-or-person" (files and every directory up to / owned by root or
# by you, writable by neither group nor others; a git install of Omarchy passes), "root"
# (root alone), or "off". The older `require_root_owned = true/false` still works.
trust = "root-or-person"
# Seconds before a program's process group is terminated (1..=3600).
timeout_s = 30
# Bytes of stdout+stderr kept (head and tail).
output_cap = 262144

[audit]
# activity.jsonl rotates past this many bytes, keeping `keep` old files (restart).
max_bytes = 16777216
keep = 5   # (restart)
# Records waiting for the writer; past this they are dropped and counted, never blocking a call
# (restart).
queue = 4096

[limits]
max_args_bytes = 65536
max_output_bytes = 262144

[tools]
# Tools to hide and refuse, by name or by a word ending in * ("aur_*").
disabled = []
# Per-tool timeouts in seconds, e.g. { screen_text = 60 }.
timeouts = {}

[resolve]
# Refuse paths under ~/.ssh, ~/.gnupg, ~/.password-store and browser profiles.
protect_sensitive = true
# More paths to refuse (absolute, or under ~/).
protected = []

[budgets]
# Per client.
per_minute = 120
per_day = 2000
questions_per_hour = 30

# Per-client grants. `local` is the stdio client; HTTP clients are added with `archgate clients add`.
# [clients.local]
# preset = "full"            # read-only | desktop | full (left out: the stored grant, else read-only)
# tools = ["pkg_search"]     # optional: only these tools (or "pkg_*")
# trusted_relay = false      # may this client relay the person's answer (elicitation)?

[arch]
pacman_conf = "/etc/pacman.conf"
# pacman_log = "/var/log/pacman.log"   (default: LogFile from pacman.conf, else this)
aur_url = "https://aur.archlinux.org"
packages_url = "https://archlinux.org"           # also the mirror status: {url}/mirrors/status/json/
news_url = "https://archlinux.org/feeds/news/"
# The Arch Linux Archive: older package versions pkg_cache offers to go back to.
archive_url = "https://archive.archlinux.org"
security_url = "https://security.archlinux.org"   # the advisories tool reads {url}/all.json
http_timeout_s = 15
# How long cached answers stay fresh, in seconds. A rolling release moves fast: AUR info and
# PKGBUILDs by branch 10 minutes (files read at a commit id never expire), the official package
# API 5 minutes; cache_ttl_s covers the rest (Arch news).
cache_ttl_s = 3600
aur_cache_ttl_s = 600
packages_cache_ttl_s = 300

[wiki]
url = "https://wiki.archlinux.org"
cache_ttl_s = 3600               # online ArchWiki pages
# offline_first | online_first | offline_only | online_only
prefer = "offline_first"
# Where `archgate wiki index` reads HTML from (the arch-wiki-docs package).
docs_dir = "/usr/share/doc/arch-wiki/html"

[desktop]
# Where Omarchy is (restart: read when archgate starts). Default: $OMARCHY_PATH, else
# ~/.local/share/omarchy, else /usr/share/omarchy, whichever has bin/omarchy.
# omarchy_path = "~/.local/share/omarchy"
# Long side of a screenshot in pixels (what vision models read well); the image is then made
# to fit [limits] max_output_bytes as JPEG, quality first, size only after (64..=8192).
screenshot_max_dim = 1568

[diagnostics]
# A directory of journal files the journal, units and boots tools read instead of this machine's
# journal (e.g. a rescue mount's /mnt/var/log/journal). Default: the machine's own.
# journal_dir = "/mnt/var/log/journal"
"#;
