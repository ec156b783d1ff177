//! The session environment the desktop operations work in, passed in explicitly.
//!
//! Nothing here reads the process environment implicitly except [`DesktopEnv::from_process`], so
//! tests (and a daemon serving a different session) say exactly which desktop they mean. Every
//! program started for the desktop receives these values on top of the executor's clean
//! environment.

use std::ffi::OsStr;
use std::path::PathBuf;

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
}

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
                _ => {}
            }
        }
        env
    }

    /// The environment of this process.
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars_os())
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
