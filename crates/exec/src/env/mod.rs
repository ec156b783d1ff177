//! The environment a program starts with: an allowlist of the session's variables, nothing else.
//!
//! **Class closed here:** *programs get an allowlisted environment*. A variable reaches a program
//! archgate starts only when it is named in [`TABLE`], with the reason a desktop program needs
//! it. Everything else is dropped, whatever its name: code-loading variables (`BASH_ENV`, `ENV`,
//! `BASH_FUNC_*%%`, `PERL5OPT`, `PYTHONPATH`, `NODE_OPTIONS`, the loader's `LD_*` …), credentials
//! under any name (`BW_SESSION`, `OP_SESSION_*`, `BORG_PASSPHRASE`, `*_SESSION_COOKIE`, tokens,
//! keys), archgate's own `ARCHGATE_*`, names that are not UTF-8. A denylist can only name the
//! attacks already seen; the table names what programs need, so the next loader variable is
//! dropped by construction.
//!
//! Two variables are set for every program at the spawn site (`run.rs`), whatever the session
//! has: `PYTHONNOUSERSITE=1` (no Python program archgate starts runs the person's user-site
//! `.pth` files: attack 25 F4) and `PULSE_CLIENTCONFIG=/dev/null` (no PulseAudio client reads
//! the person's `client.conf`, whose `daemon-binary` it starts: attack 26 F7).
//!
//! Variables that name directories programs load code or launchers from are checked with the
//! same trust rule the executor applies to the program itself ([`crate::Executor::check_directory`]:
//! every component up to `/` owned by root or the person, writable by neither group nor
//! others):
//!
//! - `PATH` is **rebuilt**: the search directories that pass the rule first, in their order
//!   (`[exec] search_dirs` or the defaults: what the person configured), then the inherited
//!   directories that pass it **owned by root all the way** (`/usr/sbin`, `/opt/x/bin`). A client
//!   runs as the person, so every directory it could make is the person's: none of them reaches
//!   a program through `PATH`, in front or behind (attack 2 F5: a person-owned directory at the
//!   front of a client's `PATH` was searched first by a trusted script's helper lookups). Relative
//!   and empty components (the working directory) are dropped too.
//! - `XDG_DATA_DIRS` and `XDG_CONFIG_DIRS` keep only their trusted directories (desktop entries
//!   there name programs to launch; `xdg-terminal-exec` reads its choice there).
//! - `OMARCHY_PATH` passes only when its directory passes (Omarchy's scripts `source` files from
//!   it); otherwise the scripts fall back to `~/.local/share/omarchy` themselves.
//!
//! `HOME` and the `XDG_*_HOME` base directories name where scripts source the person's files
//! and where desktop entries and the terminal choice are read: each passes only when the whole
//! path passes the trust rule — every component from `/`, links followed by hand (attack 2 F4: a
//! link in another user's directory passed when only the last directory was judged, and was
//! retargeted after the check).
//!
//! The session's sockets: `XDG_RUNTIME_DIR` passes when its parents pass the rule and it is a
//! directory writable by neither group nor others, owned by the person (any owner when the person
//! is root, who reaches every uid's files anyway: the tests drive a desktop run as `nobody`);
//! `WAYLAND_DISPLAY` only as a name (the socket is found in that checked directory, never at a
//! path the value names); `SWAYSOCK` only as a socket directly in that directory; `DISPLAY` only
//! as a local display (`:N` or `:N.S`, never a host to reach over TCP).
//!
//! Two values of the table could still load code and are checked too: a locale (`LANG`,
//! `LANGUAGE`, `LC_*`) or Hyprland signature with a `/` is dropped (glibc loads a locale named by an absolute
//! path from that directory), and `DBUS_SESSION_BUS_ADDRESS` passes only when every address in it
//! is a `unix:` one (`unixexec:path=PROGRAM` makes `busctl`, `systemd-run --user` and libdbus
//! clients run PROGRAM to reach the bus).
//!
//! Left out on purpose, with why: `TERM` (a program's output is captured or it is detached: there
//! is no terminal; a terminal Omarchy opens sets its own), `EDITOR`, `VISUAL`, `BROWSER`,
//! `TERMINAL` and `SHELL` (each names a program to run; Omarchy reads its choices from
//! `~/.local/state/omarchy/defaults`, `xdg-settings` and `xdg-terminal-exec`'s config, not from
//! these), `PULSE_SERVER` (would send audio elsewhere; the session's server is found in
//! `XDG_RUNTIME_DIR`), `SSH_AUTH_SOCK`, `GPG_AGENT_INFO` and `XAUTHORITY` (credentials), `TZ` and
//! `LOCPATH` (files a program parses, named by whoever set them; `/etc/localtime` is the system's).
//!
//! What a [`CommandSpec`](crate::CommandSpec) sets comes on top and obeys the same table: setting
//! a name outside it, or `PATH`, is refused before anything starts. A spec may also
//! [clear](crate::CommandSpec::clear_env) what is inherited, so the program's environment is
//! exactly what the spec names (the daemon a bridge starts gets the session manager's
//! environment this way, never the bridge's client's).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::config::ExecConfig;

/// How a variable of the table is carried to a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carries {
    /// The value as it is.
    Value,
    /// One absolute directory, passed only when it passes the trust rule.
    TrustedDir,
    /// The session's runtime directory: its parents pass the trust rule; it is a directory
    /// writable by neither group nor others and owned by the person (any owner for root).
    RuntimeDir,
    /// A socket directly in the runtime directory passed with it (`SWAYSOCK`).
    RuntimeSocket,
    /// A local X display, `:N` or `:N.S` (no host: X over TCP).
    LocalDisplay,
    /// A `:` list of directories, each kept only when it passes the trust rule.
    TrustedDirs,
    /// One absolute path to a regular file root owns all the way (every directory and link from
    /// `/`, the file writable by neither group nor others): a configuration that decides what a
    /// program shows, which no one but root may choose.
    RootFile,
    /// Never taken as given: rebuilt from trusted directories (`PATH`).
    Rebuilt,
    /// A name, never a path: passed only without `/` (glibc loads a locale named by an absolute
    /// path from that directory; a Hyprland signature is a directory name).
    Name,
    /// A D-Bus address: passed only when every address in it uses the `unix:` transport
    /// (`unixexec:path=PROGRAM` makes sd-bus and libdbus clients run PROGRAM to connect).
    BusAddress,
}

/// One row of the table: the names, how they are carried and why a desktop program needs them.
#[derive(Debug, Clone, Copy)]
pub struct Passed {
    pub names: &'static [&'static str],
    pub carries: Carries,
    pub why: &'static str,
}

/// Every variable a program archgate starts may receive, and why. Nothing else passes.
pub const TABLE: &[Passed] = &[
    Passed {
        names: &["PYTHONNOUSERSITE"],
        carries: Carries::Value,
        why: "set to 1 for every program at the spawn site (run.rs): no Python program archgate starts runs the person's user-site .pth files (attack 25 F4)",
    },
    Passed {
        names: &["PYTHONSAFEPATH"],
        carries: Carries::Value,
        why: "set to 1 for every program at the spawn site (run.rs): a Python script's own directory (Omarchy's bin/ in the person's home) is not first on its import path, so a module the agent drops beside it is never imported in place of the standard library's (attack 33 F6)",
    },
    Passed {
        names: &["PULSE_CLIENTCONFIG"],
        carries: Carries::Value,
        why: "set to /dev/null for every program at the spawn site (run.rs): no PulseAudio client archgate starts reads the person's client.conf, whose daemon-binary it would start when no server answers (attack 26 F7)",
    },
    Passed {
        names: &["HOME"],
        carries: Carries::TrustedDir,
        why: "every Omarchy script reads its state and config under $HOME (~/.config, ~/.local)",
    },
    Passed {
        names: &["USER", "LOGNAME"],
        carries: Carries::Value,
        why: "scripts name the person with $USER (group and service setup); logind and systemd tools read LOGNAME",
    },
    Passed {
        names: &[
            "LANG",
            "LANGUAGE",
            "LC_ALL",
            "LC_CTYPE",
            "LC_NUMERIC",
            "LC_TIME",
            "LC_COLLATE",
            "LC_MONETARY",
            "LC_MESSAGES",
            "LC_PAPER",
            "LC_NAME",
            "LC_ADDRESS",
            "LC_TELEPHONE",
            "LC_MEASUREMENT",
            "LC_IDENTIFICATION",
        ],
        carries: Carries::Name,
        why: "the person's language and formats: messages, dates and the character set a notification or menu shows",
    },
    Passed {
        names: &["XDG_RUNTIME_DIR"],
        carries: Carries::RuntimeDir,
        why: "holds the session's sockets: Wayland, Hyprland's, PipeWire, the session bus, the user manager (systemctl --user)",
    },
    Passed {
        names: &[
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
        ],
        carries: Carries::TrustedDir,
        why: "the person's base directories when moved from their ~/.config, ~/.local/share, ~/.local/state, ~/.cache defaults (desktop entries and the terminal choice are read there: the person's own directories only)",
    },
    Passed {
        names: &["XDG_DATA_DIRS", "XDG_CONFIG_DIRS"],
        carries: Carries::TrustedDirs,
        why: "where desktop entries, icons, MIME defaults and xdg-terminal-exec's choice are found (trusted directories only: an entry names a program to launch)",
    },
    Passed {
        names: &[
            "XDG_CURRENT_DESKTOP",
            "XDG_SESSION_TYPE",
            "XDG_SESSION_DESKTOP",
        ],
        carries: Carries::Value,
        why: "which desktop this is: xdg-open, portals and toolkits choose their behaviour by it",
    },
    Passed {
        names: &["WAYLAND_DISPLAY"],
        carries: Carries::Name,
        why: "the compositor's socket, by its name in XDG_RUNTIME_DIR: every Wayland client (notify windows, wl-copy, grim, launched apps)",
    },
    Passed {
        names: &["DISPLAY"],
        carries: Carries::LocalDisplay,
        why: "Xwayland, for the X11 applications a launch starts",
    },
    Passed {
        names: &["HYPRLAND_INSTANCE_SIGNATURE"],
        carries: Carries::Name,
        why: "names Hyprland's socket directory: hyprctl and Omarchy's window, monitor and restart scripts",
    },
    Passed {
        names: &["SWAYSOCK"],
        carries: Carries::RuntimeSocket,
        why: "Sway's IPC socket (in XDG_RUNTIME_DIR): swaymsg",
    },
    Passed {
        names: &["DBUS_SESSION_BUS_ADDRESS"],
        carries: Carries::BusAddress,
        why: "the session bus: notifications, MPRIS players, gsettings, portals (unix: addresses only)",
    },
    Passed {
        names: &["OMARCHY_PATH"],
        carries: Carries::TrustedDir,
        why: "where Omarchy is installed; its scripts source files from it (trusted directory only)",
    },
    Passed {
        names: &["GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT"],
        carries: Carries::Value,
        why: "the AUR reader sets them for git: read no /etc/gitconfig (no helper or hook it names runs) and never ask on a terminal; they only take configuration away",
    },
    Passed {
        names: &["FONTCONFIG_FILE"],
        carries: Carries::RootFile,
        why: "the hand-off's terminal draws the command the person approves with fonts from root's files only (archgate's fonts.conf, no ~/.config/fontconfig, ~/.local/share/fonts or per-user cache: attack 22 F3, an agent's font drew S as R); root's files only, so nothing else can be chosen through it",
    },
    Passed {
        names: &["PATH"],
        carries: Carries::Rebuilt,
        why: "scripts call their helper commands by name: rebuilt from trusted directories, never taken as given",
    },
];

/// The table's row for `name`, if any (names are case-sensitive, as the environment's are).
pub fn row(name: &str) -> Option<&'static Passed> {
    TABLE.iter().find(|r| r.names.contains(&name))
}

/// Whether a variable of archgate's environment may reach a program (possibly after its
/// directories are checked): named in [`TABLE`]. A name that is not UTF-8 never does.
pub fn is_allowed(key: &OsStr) -> bool {
    key.to_str().is_some_and(|k| row(k).is_some())
}

/// Whether a variable of archgate's environment is kept from the programs it runs: the
/// opposite of [`is_allowed`].
pub fn is_withheld(key: &OsStr) -> bool {
    !is_allowed(key)
}

/// Whether a [`CommandSpec`](crate::CommandSpec) may set `key`: a name of the table other than
/// `PATH` (which is always rebuilt).
pub fn may_set(key: &str) -> bool {
    row(key).is_some_and(|r| r.carries != Carries::Rebuilt)
}

/// The environment for a program: what of `inherited` the table names, then `extra` on top (a
/// later value for a key replaces an earlier one; names outside the table are dropped here and
/// refused earlier, see [`may_set`]), then every directory value checked and `PATH` rebuilt under
/// `cfg`'s trust rule (see the module documentation).
pub fn build(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    cfg: &ExecConfig,
    extra: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    build_with(inherited, cfg, extra, false)
}

/// [`build`], with `root_path`: `PATH` then holds only directories root's all the way, the
/// person's search directories left out (`CommandSpec::root_path_only`: the hand-off's terminal,
/// whose own children must be root's programs — attack 24 F3).
pub fn build_with(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    cfg: &ExecConfig,
    extra: &[(String, String)],
    root_path: bool,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (k, v) in inherited {
        if is_allowed(&k) {
            set(&mut env, k, v);
        }
    }
    for (k, v) in extra {
        if may_set(k) {
            set(&mut env, OsString::from(k), OsString::from(v));
        }
    }
    let trusted = |d: &Path| d.is_absolute() && crate::resolve::check_directory(cfg, d).is_ok();
    let mut out: Vec<(OsString, OsString)> = Vec::with_capacity(env.len() + 1);
    let mut inherited_path: Option<OsString> = None;
    let mut sway_socket: Option<(OsString, OsString)> = None;
    for (k, v) in env {
        let Some(r) = k.to_str().and_then(row) else {
            continue;
        };
        match r.carries {
            Carries::Value => out.push((k, v)),
            Carries::Name => {
                if v.to_str().is_some_and(|v| !v.contains('/')) {
                    out.push((k, v));
                }
            }
            Carries::BusAddress => {
                if v.to_str().is_some_and(unix_bus_only) {
                    out.push((k, v));
                }
            }
            Carries::RuntimeDir => {
                if runtime_dir(cfg, Path::new(&v)) {
                    out.push((k, v));
                }
            }
            Carries::RuntimeSocket => sway_socket = Some((k, v)),
            Carries::LocalDisplay => {
                if v.to_str().is_some_and(local_display) {
                    out.push((k, v));
                }
            }
            Carries::TrustedDir => {
                if trusted(Path::new(&v))
                    || (k == "HOME" && (is_own_home(Path::new(&v)) || is_no_home(Path::new(&v))))
                {
                    out.push((k, v));
                }
            }
            Carries::RootFile => {
                if crate::resolve::trusted_path(None, Path::new(&v)).is_ok_and(|f| f.is_file()) {
                    out.push((k, v));
                }
            }
            Carries::TrustedDirs => {
                let kept = kept_dirs(&v, &trusted);
                if let Some(joined) = join(&kept) {
                    out.push((k, joined));
                }
            }
            Carries::Rebuilt => inherited_path = Some(v),
        }
    }
    if let Some((k, v)) = sway_socket {
        let runtime = out
            .iter()
            .find(|(k, _)| k == "XDG_RUNTIME_DIR")
            .map(|(_, v)| Path::new(v));
        if runtime.is_some_and(|r| in_runtime_dir(r, Path::new(&v))) {
            out.push((k, v));
        }
    }
    // Root's directories only: whatever a client could have made is the person's.
    let root_only = ExecConfig {
        person_uid: None,
        ..cfg.clone()
    };
    let roots =
        |d: &Path| d.is_absolute() && crate::resolve::check_directory(&root_only, d).is_ok();
    // Root's directories first — the search directories that are root's, then the inherited
    // ones — and the person's search directories last: a name a root directory holds always
    // resolves there, so a file the agent drops in a directory of the person's (Omarchy's
    // `bin/` in the home) never stands in for a system command a script calls by name (attack
    // 33 F6: a planted `date` ran inside a read route). The person's directories supply only
    // names no root directory has: Omarchy's own `omarchy-*` commands.
    // Root's all the way whatever the trust setting says (with the rule off, `roots` passes any
    // directory): what decides the order is who could have put a file there.
    let strictly = crate::resolve::roots_all_the_way;
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(cfg.search_dirs.len() + 4);
    for d in &cfg.search_dirs {
        if !dirs.contains(d) && strictly(d) {
            dirs.push(d.clone());
        }
    }
    if let Some(p) = inherited_path {
        for d in kept_dirs(&p, &roots) {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    if !root_path {
        for d in &cfg.search_dirs {
            if !dirs.contains(d) && trusted(d) {
                dirs.push(d.clone());
            }
        }
    }
    // No trusted directory at all: no PATH rather than an empty one (an empty PATH element is
    // the working directory to a shell).
    if let Some(path) = join(&dirs) {
        out.push((OsString::from("PATH"), path));
    }
    out
}

/// Whether `dir` is this uid's home in the user database (`getpwuid`): a fact, not a value
/// someone chose, so it passes even where only root's directories are trusted (a hand-off's
/// route script, whose program search trusts root alone, still needs the person's `$HOME`).
fn is_own_home(dir: &Path) -> bool {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .is_some_and(|u| u.dir == dir)
}

/// The home a program gets that must read nothing of the person's: a hand-off's route script,
/// which runs the person's hooks and configuration from `$HOME` in the terminal where sudo asks
/// their password (attack 11 F2). No one but root can make it exist.
pub const NO_HOME: &str = "/nonexistent";

/// Whether `dir` is [`NO_HOME`] and still names nothing of anyone's but root's: absent (its
/// parent `/` is root's), or a directory root alone can write.
fn is_no_home(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if dir != Path::new(NO_HOME) {
        return false;
    }
    match std::fs::symlink_metadata(dir) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(m) => m.is_dir() && m.uid() == 0 && m.mode() & 0o022 == 0,
    }
}

/// Whether `dir` may be the session's runtime directory: absolute, its parent passes the trust
/// rule, and it is a directory (not a link) writable by neither group nor others, owned by the
/// person — by anyone when the person is root; any existing directory when the rule is off.
fn runtime_dir(cfg: &ExecConfig, dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if !dir.is_absolute() {
        return false;
    }
    if !cfg.require_root_owned {
        return dir.is_dir();
    }
    let (Some(parent), Some(_)) = (dir.parent(), dir.file_name()) else {
        return false;
    };
    if crate::resolve::check_directory(cfg, parent).is_err() {
        return false;
    }
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    let owner_ok = match cfg.person_uid {
        Some(0) | None => true,
        Some(person) => m.uid() == person,
    };
    m.is_dir() && m.mode() & 0o022 == 0 && owner_ok
}

/// Whether `socket` is a socket directly in `runtime` (by its path: no `..`, no link).
fn in_runtime_dir(runtime: &Path, socket: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    socket.parent() == Some(runtime)
        && socket.file_name().is_some_and(|n| n != ".." && n != ".")
        && std::fs::symlink_metadata(socket).is_ok_and(|m| m.file_type().is_socket())
}

/// Whether an X display names a local one: `:N` or `:N.S`, digits only.
fn local_display(v: &str) -> bool {
    let Some(rest) = v.strip_prefix(':') else {
        return false;
    };
    let (n, screen) = rest.split_once('.').unwrap_or((rest, "0"));
    [n, screen]
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether every address of a D-Bus address list (`;`-separated) uses the `unix:` transport.
fn unix_bus_only(v: &str) -> bool {
    let mut entries = v.split(';').filter(|e| !e.is_empty()).peekable();
    entries.peek().is_some() && entries.all(|e| e.starts_with("unix:"))
}

/// The directories of a `:` list that are absolute and trusted, each once, in order.
fn kept_dirs(list: &OsStr, trusted: &impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in std::env::split_paths(list) {
        if !kept.contains(&d) && trusted(&d) {
            kept.push(d);
        }
    }
    kept
}

/// The list joined with `:`; `None` when empty (a directory holding `:` was never kept: a
/// trusted directory is checked by its whole path, so it cannot be split into others).
fn join(dirs: &[PathBuf]) -> Option<OsString> {
    if dirs.is_empty() {
        return None;
    }
    std::env::join_paths(dirs).ok()
}

fn set(env: &mut Vec<(OsString, OsString)>, key: OsString, value: OsString) {
    env.retain(|(k, _)| *k != key);
    env.push((key, value));
}

/// Whether a key may be set at all: non-empty, without `=` or NUL.
pub(crate) fn valid_key(key: &str) -> bool {
    !key.is_empty() && !key.contains(['=', '\0'])
}

#[cfg(test)]
mod tests;
