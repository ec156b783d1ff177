//! The session environment the desktop operations work in, passed in explicitly.
//!
//! Nothing here reads the process environment implicitly except [`DesktopEnv::from_process`], so
//! tests (and a daemon serving a different session) say exactly which desktop they mean. Every
//! program started for the desktop receives these values on top of the executor's environment.
//!
//! A client may start archgate with only HOME, PATH, SHELL and TERM. Then
//! [`DesktopEnv::from_process`] falls back to `/run/user/UID` for the runtime directory (when the
//! person owns it, 0700) and [`DesktopEnv::discover`] finds the session in it: the newest
//! `wayland-N` socket, the newest Hyprland instance (`hypr/*/.socket.sock`), the newest
//! `sway-ipc.UID.*.sock`, and the session bus (`bus`). What was found so is listed in
//! [`DesktopEnv::discovered`], for `/health` and `doctor`.

use std::ffi::OsStr;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use archgate_exec::CommandSpec;

/// Where the person's desktop session is: sockets, bus, home and Omarchy's install.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DesktopEnv {
    /// `XDG_RUNTIME_DIR`: holds the Wayland, Hyprland, PipeWire and bus sockets.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// `WAYLAND_DISPLAY`: the Wayland socket name (or path).
    pub wayland_display: Option<String>,
    /// `SWAYSOCK`: Sway's IPC socket.
    pub swaysock: Option<PathBuf>,
    /// `HYPRLAND_INSTANCE_SIGNATURE`: names Hyprland's socket directory.
    pub hyprland_instance_signature: Option<String>,
    /// `DBUS_SESSION_BUS_ADDRESS`: the session bus (notifications, MPRIS).
    pub dbus_session_bus_address: Option<String>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (defaults to `$HOME/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// `OMARCHY_PATH`: where Omarchy is installed (`~/.local/share/omarchy`).
    pub omarchy_path: Option<PathBuf>,
    /// `XDG_DATA_DIRS`: where system desktop entries are (an entry there is an application
    /// only when root's all the way; see `app_entries`).
    pub xdg_data_dirs: Option<String>,
    /// The variables above that were not in the environment but found in the runtime directory
    /// (`XDG_RUNTIME_DIR` itself when it is `/run/user/UID` by fallback).
    pub discovered: Vec<&'static str>,
}

/// Where logind puts each user's runtime directory.
pub const RUN_USER: &str = "/run/user";

impl DesktopEnv {
    /// Builds the environment from `(key, value)` pairs; empty values count as unset.
    pub fn from_vars<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut env = DesktopEnv::default();
        for (k, v) in vars {
            let (Some(k), Some(v)) = (k.as_ref().to_str(), v.as_ref().to_str()) else {
                continue;
            };
            if v.is_empty() {
                continue;
            }
            match k {
                "XDG_RUNTIME_DIR" => env.xdg_runtime_dir = Some(v.into()),
                "WAYLAND_DISPLAY" => env.wayland_display = Some(v.into()),
                "SWAYSOCK" => env.swaysock = Some(v.into()),
                "HYPRLAND_INSTANCE_SIGNATURE" => env.hyprland_instance_signature = Some(v.into()),
                "DBUS_SESSION_BUS_ADDRESS" => env.dbus_session_bus_address = Some(v.into()),
                "HOME" => env.home = Some(v.into()),
                "XDG_CONFIG_HOME" => env.xdg_config_home = Some(v.into()),
                "OMARCHY_PATH" => env.omarchy_path = Some(v.into()),
                "XDG_DATA_DIRS" => env.xdg_data_dirs = Some(v.into()),
                _ => {}
            }
        }
        env
    }

    /// The environment of this process, completed from the runtime directory: `/run/user/UID`
    /// when `XDG_RUNTIME_DIR` is unset and that directory is the person's (0700), then
    /// [`Self::discover`].
    pub fn from_process() -> Self {
        let mut env = Self::from_vars(std::env::vars_os());
        if env.xdg_runtime_dir.is_none() {
            let uid = nix_uid();
            env.xdg_runtime_dir = runtime_dir_fallback(Path::new(RUN_USER), uid);
            if env.xdg_runtime_dir.is_some() {
                env.discovered.push("XDG_RUNTIME_DIR");
            }
        }
        env.discover(nix_uid());
        env
    }

    /// Fills what is unset from the runtime directory: `WAYLAND_DISPLAY` (the newest `wayland-N`
    /// socket), `HYPRLAND_INSTANCE_SIGNATURE` (the newest `hypr/SIG/.socket.sock`), `SWAYSOCK`
    /// (the newest `sway-ipc.UID.*.sock`) and `DBUS_SESSION_BUS_ADDRESS` (`unix:path=DIR/bus`).
    /// Each one found is added to [`Self::discovered`]. Variables already set are kept.
    pub fn discover(&mut self, uid: u32) {
        let Some(dir) = self.xdg_runtime_dir.clone() else {
            return;
        };
        if self.wayland_display.is_none() {
            let name = newest_socket(&dir, |n| {
                n.strip_prefix("wayland-").is_some_and(|rest| {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
                })
            });
            if let Some(name) = name {
                self.wayland_display = Some(name);
                self.discovered.push("WAYLAND_DISPLAY");
            }
        }
        if self.hyprland_instance_signature.is_none()
            && let Some(sig) = newest_hyprland(&dir.join("hypr"))
        {
            self.hyprland_instance_signature = Some(sig);
            self.discovered.push("HYPRLAND_INSTANCE_SIGNATURE");
        }
        if self.swaysock.is_none() {
            let prefix = format!("sway-ipc.{uid}.");
            if let Some(name) =
                newest_socket(&dir, |n| n.starts_with(&prefix) && n.ends_with(".sock"))
            {
                self.swaysock = Some(dir.join(name));
                self.discovered.push("SWAYSOCK");
            }
        }
        if self.dbus_session_bus_address.is_none() && is_socket(&dir.join("bus")) {
            self.dbus_session_bus_address =
                Some(format!("unix:path={}", dir.join("bus").display()));
            self.discovered.push("DBUS_SESSION_BUS_ADDRESS");
        }
    }

    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
    pub fn config_home(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
    }

    /// Adds the session variables to a command, so it reaches this session whatever archgate's
    /// own environment says.
    pub fn apply_to(&self, mut spec: CommandSpec) -> CommandSpec {
        let pairs: [(&str, Option<String>); 7] = [
            ("XDG_RUNTIME_DIR", path_str(&self.xdg_runtime_dir)),
            ("WAYLAND_DISPLAY", self.wayland_display.clone()),
            ("SWAYSOCK", path_str(&self.swaysock)),
            (
                "HYPRLAND_INSTANCE_SIGNATURE",
                self.hyprland_instance_signature.clone(),
            ),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                self.dbus_session_bus_address.clone(),
            ),
            ("HOME", path_str(&self.home)),
            ("OMARCHY_PATH", path_str(&self.omarchy_path)),
        ];
        for (k, v) in pairs {
            if let Some(v) = v {
                spec = spec.env(k, v);
            }
        }
        if let Some(dir) = path_str(&self.xdg_config_home) {
            spec = spec.env("XDG_CONFIG_HOME", dir);
        }
        spec
    }
}

fn nix_uid() -> u32 {
    // The uid this process runs as (the owner of /proc/self), which names its logind directory.
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// `BASE/UID` when it is a real directory (not a symlink) owned by `uid` with mode 0700.
pub fn runtime_dir_fallback(base: &Path, uid: u32) -> Option<PathBuf> {
    let dir = base.join(uid.to_string());
    let m = std::fs::symlink_metadata(&dir).ok()?;
    (m.is_dir() && m.uid() == uid && m.mode() & 0o777 == 0o700).then_some(dir)
}

fn is_socket(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
}

fn modified(p: &Path) -> SystemTime {
    std::fs::symlink_metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The name of the newest socket in `dir` whose name passes `wanted` (ties: the greater name).
fn newest_socket(dir: &Path, wanted: impl Fn(&str) -> bool) -> Option<String> {
    let mut best: Option<(SystemTime, String)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        if !wanted(&name) || !is_socket(&e.path()) {
            continue;
        }
        let key = (modified(&e.path()), name);
        if best.as_ref().is_none_or(|b| key > *b) {
            best = Some(key);
        }
    }
    best.map(|(_, n)| n)
}

/// The signature of the newest Hyprland instance in `hypr_dir` (a directory with `.socket.sock`).
fn newest_hyprland(hypr_dir: &Path) -> Option<String> {
    let mut best: Option<(SystemTime, String)> = None;
    for e in std::fs::read_dir(hypr_dir).ok()?.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let sock = e.path().join(".socket.sock");
        if !is_socket(&sock) {
            continue;
        }
        let key = (modified(&sock), name);
        if best.as_ref().is_none_or(|b| key > *b) {
            best = Some(key);
        }
    }
    best.map(|(_, n)| n)
}

fn path_str(p: &Option<PathBuf>) -> Option<String> {
    p.as_ref().and_then(|p| p.to_str()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_are_unset_and_unknown_keys_ignored() {
        let env = DesktopEnv::from_vars([
            ("SWAYSOCK", ""),
            ("HOME", "/home/p"),
            ("PATH", "/bin"),
            ("HYPRLAND_INSTANCE_SIGNATURE", "abc"),
        ]);
        assert_eq!(env.swaysock, None);
        assert_eq!(env.home, Some(PathBuf::from("/home/p")));
        assert_eq!(env.hyprland_instance_signature.as_deref(), Some("abc"));
        assert_eq!(env.config_home(), Some(PathBuf::from("/home/p/.config")));
    }

    fn listen(path: &Path) -> std::os::unix::net::UnixListener {
        std::os::unix::net::UnixListener::bind(path).unwrap()
    }

    #[test]
    fn the_session_is_discovered_from_the_runtime_dir() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let _old = listen(&r.join("wayland-0"));
        std::fs::write(r.join("wayland-7"), "").unwrap(); // not a socket
        std::fs::write(r.join("wayland-1.lock"), "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let _new = listen(&r.join("wayland-1"));
        for sig in ["old_sig", "new_sig"] {
            std::fs::create_dir_all(r.join("hypr").join(sig)).unwrap();
        }
        let _h1 = listen(&r.join("hypr/old_sig/.socket.sock"));
        std::fs::create_dir_all(r.join("hypr/no_socket")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let _h2 = listen(&r.join("hypr/new_sig/.socket.sock"));
        let _s_other = listen(&r.join("sway-ipc.4242.10.sock"));
        let _s = listen(&r.join("sway-ipc.1000.55.sock"));
        let _bus = listen(&r.join("bus"));

        let mut env = DesktopEnv::from_vars([("XDG_RUNTIME_DIR", r.to_str().unwrap())]);
        env.discover(1000);
        assert_eq!(env.wayland_display.as_deref(), Some("wayland-1"));
        assert_eq!(env.hyprland_instance_signature.as_deref(), Some("new_sig"));
        assert_eq!(env.swaysock, Some(r.join("sway-ipc.1000.55.sock")));
        assert_eq!(
            env.dbus_session_bus_address,
            Some(format!("unix:path={}", r.join("bus").display()))
        );
        assert_eq!(
            env.discovered,
            [
                "WAYLAND_DISPLAY",
                "HYPRLAND_INSTANCE_SIGNATURE",
                "SWAYSOCK",
                "DBUS_SESSION_BUS_ADDRESS"
            ]
        );

        // What the environment says is kept, and not reported as discovered.
        let mut env = DesktopEnv::from_vars([
            ("XDG_RUNTIME_DIR", r.to_str().unwrap()),
            ("WAYLAND_DISPLAY", "wayland-9"),
        ]);
        env.discover(4242);
        assert_eq!(env.wayland_display.as_deref(), Some("wayland-9"));
        assert_eq!(env.swaysock, Some(r.join("sway-ipc.4242.10.sock")));
        assert!(!env.discovered.contains(&"WAYLAND_DISPLAY"));

        // Nothing to find: nothing set.
        let empty = tempfile::tempdir().unwrap();
        let mut env = DesktopEnv::from_vars([("XDG_RUNTIME_DIR", empty.path().to_str().unwrap())]);
        env.discover(1000);
        assert!(env.discovered.is_empty() && env.wayland_display.is_none());
    }

    #[test]
    fn apply_passes_session_variables() {
        let env =
            DesktopEnv::from_vars([("WAYLAND_DISPLAY", "wayland-1"), ("XDG_RUNTIME_DIR", "/r")]);
        let spec = env.apply_to(CommandSpec::new("grim"));
        let list = spec.env_list();
        assert!(list.contains(&("WAYLAND_DISPLAY".into(), "wayland-1".into())));
        assert!(list.contains(&("XDG_RUNTIME_DIR".into(), "/r".into())));
        assert!(!list.iter().any(|(k, _)| k == "SWAYSOCK"));
    }
}
