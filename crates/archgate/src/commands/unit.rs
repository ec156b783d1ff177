//! The systemd user unit archgate runs as for people without the Omarchy plugin: its text,
//! rendered for the binary that will run, and where it goes.
//!
//! The sandboxing is chosen for a desktop agent: it protects the system and the kernel, and
//! leaves alone what the desktop needs (the Wayland, D-Bus and PipeWire sockets, the GPU, the
//! person's home, namespaces for browsers). Each choice is explained in the unit itself, since
//! that is where a person reading `systemctl --user cat archgate` looks.

use std::path::{Path, PathBuf};

/// The unit's file name.
pub const UNIT_NAME: &str = "archgate.service";

/// The socket unit beside it: stdio clients' bridge socket, held by systemd so the first client
/// starts the daemon (socket activation) and a restarting daemon loses no connection attempt.
pub const SOCKET_UNIT_NAME: &str = "archgate.socket";

/// The socket unit's text: the daemon's `bridge.sock` in `%t/archgate` (0700), mode 0600; the
/// daemon takes it from systemd (`LISTEN_FDS`) and checks every peer's uid as well.
pub const SOCKET_UNIT: &str = r#"# archgate: the socket stdio clients (`archgate serve`) reach the daemon through.
# Written by `archgate service install` beside archgate.service; the first connection starts the
# service (socket activation), which takes this socket over from systemd.

[Unit]
Description=archgate bridge socket for stdio MCP clients
Documentation=man:archgate(1)
PartOf=graphical-session.target

[Socket]
ListenStream=%t/archgate/bridge.sock
SocketMode=0600
DirectoryMode=0700
RemoveOnStop=yes

[Install]
WantedBy=graphical-session.target
"#;

/// Where the Arch package installs its copy.
pub const PACKAGED_UNIT: &str = "/usr/lib/systemd/user/archgate.service";

/// The session variables imported into the user manager so a service started now reaches the
/// desktop this command runs in.
pub const SESSION_VARS: &[&str] = &[
    "WAYLAND_DISPLAY",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "SWAYSOCK",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_CURRENT_DESKTOP",
    "DISPLAY",
    "OMARCHY_PATH",
];

const TEMPLATE: &str = r#"# archgate: the MCP server for this desktop, as a systemd user service.
# Written by `archgate service install`; `archgate service uninstall` removes it.
# Use this or the Omarchy plugin (which starts archgate as a child of the shell), not both: they
# would serve on the same port.

[Unit]
Description=archgate MCP server (streamable HTTP on 127.0.0.1)
Documentation=man:archgate(1)
# Desktop tools need the live session's WAYLAND_DISPLAY, HYPRLAND_INSTANCE_SIGNATURE or SWAYSOCK,
# and DBUS_SESSION_BUS_ADDRESS. A compositor session imports them into the user manager before it
# reaches graphical-session.target (uwsm does this on Omarchy); starting after that target and
# stopping with it keeps archgate on the session whose variables it holds. Sessions that never
# reach the target: run `archgate service install` from inside the session (it imports them), or
# `systemctl --user import-environment WAYLAND_DISPLAY SWAYSOCK DBUS_SESSION_BUS_ADDRESS` then
# `systemctl --user start archgate` from the compositor's startup.
After=graphical-session.target
PartOf=graphical-session.target
# Five failed starts within a minute stop the retries; `archgate service status` shows why.
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
Type=exec
ExecStart=@EXEC@ serve --http
# SIGHUP re-reads config.toml without dropping sessions (the same as `archgate reload`).
ExecReload=/usr/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=3
# SIGTERM ends it within seconds: open event streams are cut after 1.5 s.
TimeoutStopSec=10

# Sandboxing. Each directive below is one a desktop agent survives; the list after it says what
# was left out and why. On user services these need unprivileged user namespaces (systemd sets
# PrivateUsers= implicitly; root stays root inside, so archgate's root-ownership check of the
# programs it runs still holds).
#
# archgate never elevates privilege, and nothing it starts may gain any: set-user-ID programs
# (sudo, pkexec, su) and file capabilities do nothing under this service.
NoNewPrivileges=yes
# The whole file system is read-only (/usr, /etc, /boot, /var, /opt, ...) except the paths below.
ProtectSystem=strict
# Writable: the home directory, because archgate's own state and cache live there and the
# desktop commands it runs write there too (Omarchy's theme and background switches under
# ~/.config and ~/.local/share; applications it launches inherit this sandbox and keep their
# profiles there); the runtime directory %t, which holds archgate's control socket and
# state.json, screenshots, and the Wayland, PipeWire and D-Bus sockets; /tmp and /var/tmp, shared
# with the session rather than private, because X11 applications find Xwayland's socket in
# /tmp/.X11-unix. Removable media are writable when mounted (a leading "-" skips a missing path).
ReadWritePaths=%h %t /tmp /var/tmp
ReadWritePaths=-/run/media/%u
# Kernel surfaces no desktop tool uses: loading modules, reading the kernel log, changing cgroup
# settings (systemd-run --user still works, over D-Bus), changing the host name.
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectHostname=yes
# No new set-user-ID or set-group-ID files, and no switching of the execution domain.
RestrictSUIDSGID=yes
LockPersonality=yes
# Left out on purpose, because the desktop needs what they take away:
#   ProtectHome=            agents work on the person's files; Omarchy writes under ~/.config.
#   PrivateTmp=             X11 applications find Xwayland at /tmp/.X11-unix.
#   PrivateDevices=, ProtectClock=
#                           launched applications need the GPU (/dev/dri) and sound devices;
#                           ProtectClock= would restrict device access as well.
#   ProtectKernelTunables=  brightness is set by writing /sys/class/backlight.
#   RestrictNamespaces=     browsers and Electron applications sandbox themselves in namespaces.
#   MemoryDenyWriteExecute= JIT compilers (browsers, JavaScript runtimes) need it.
#   PrivateNetwork=, IPAddressDeny=
#                           clients reach archgate on 127.0.0.1; AUR, ArchWiki and news are
#                           fetched over the network.
#   RestrictAddressFamilies=, SystemCallArchitectures=
#                           launched applications may need netlink or Bluetooth sockets, or be
#                           32-bit (Steam).

[Install]
WantedBy=graphical-session.target
"#;

/// The unit for `exec`, the archgate binary that will run.
pub fn render(exec: &Path) -> String {
    TEMPLATE.replace("@EXEC@", &exec_word(exec))
}

/// One `ExecStart=` word: `%` and `$` escaped for systemd, quoted when it holds whitespace,
/// quotes or backslashes.
fn exec_word(path: &Path) -> String {
    let raw = path.to_string_lossy();
    let escaped = raw.replace('%', "%%").replace('$', "$$");
    if escaped
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'))
    {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        escaped
    }
}

/// `$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`): where systemd looks for
/// the person's own units.
pub fn user_unit_dir(env: &archgate_core::paths::PathEnv) -> anyhow::Result<PathBuf> {
    match (&env.xdg_config_home, &env.home) {
        (Some(c), _) => Ok(c.join("systemd/user")),
        (None, Some(h)) => Ok(h.join(".config/systemd/user")),
        (None, None) => anyhow::bail!("neither XDG_CONFIG_HOME nor HOME is set"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_path_is_written_as_is() {
        assert_eq!(
            exec_word(Path::new("/usr/bin/archgate")),
            "/usr/bin/archgate"
        );
    }

    #[test]
    fn specifiers_variables_and_spaces_are_escaped() {
        assert_eq!(
            exec_word(Path::new("/home/a b/100%/$x/archgate")),
            "\"/home/a b/100%%/$$x/archgate\""
        );
    }

    #[test]
    fn the_socket_unit_is_the_daemons_bridge_socket() {
        assert!(SOCKET_UNIT.contains(&format!(
            "ListenStream=%t/archgate/{}\n",
            crate::server::bridge::SOCKET
        )));
        assert!(SOCKET_UNIT.contains("SocketMode=0600\n"));
        assert!(SOCKET_UNIT.contains("DirectoryMode=0700\n"));
        // Activates the service of the same name.
        assert_eq!(
            SOCKET_UNIT_NAME.strip_suffix(".socket"),
            UNIT_NAME.strip_suffix(".service")
        );
    }

    #[test]
    fn the_unit_names_the_binary_once() {
        let u = render(Path::new("/opt/x/archgate"));
        assert_eq!(u.matches("/opt/x/archgate").count(), 1);
        assert!(u.contains("ExecStart=/opt/x/archgate serve --http\n"));
        assert!(!u.contains("@EXEC@"));
    }
}
