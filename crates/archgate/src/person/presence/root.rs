//! Whether presence applies, read from root's files alone: archgate's actions file (owned by
//! root, not writable by group or others) and polkitd's program. Never from whether a
//! connection succeeds now.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// Where the system bus listens; never taken from the environment.
pub(super) const SYSTEM_BUS: &str = "/run/dbus/system_bus_socket";
/// archgate's polkit actions, where the package installs them (root's directory).
pub(super) const ACTIONS_FILE: &str = "usr/share/polkit-1/actions/org.archgate.policy";
/// Where distributions install polkit's daemon (Arch and Debian: the first).
pub(super) const POLKITD: &[&str] = &[
    "usr/lib/polkit-1/polkitd",
    "usr/libexec/polkitd",
    "usr/libexec/polkit-1/polkitd",
];
/// Where presence is read from: root's files under `root`, the system bus at `bus`.
pub(super) struct Probe {
    /// `/` in production.
    pub(super) root: PathBuf,
    /// The owner root's files must have: 0 in production.
    pub(super) owner: u32,
    /// The system bus socket.
    pub(super) bus: PathBuf,
}

impl Probe {
    /// The machine's own: the fixed paths, root as the owner. The only probe outside tests.
    pub(super) fn system() -> Probe {
        Probe {
            root: PathBuf::from("/"),
            owner: 0,
            bus: PathBuf::from(SYSTEM_BUS),
        }
    }

    /// Whether presence applies here, from root's files alone.
    pub(super) fn installed(&self) -> Installed {
        let file = self.root.join(ACTIONS_FILE);
        let shown = format!("/{ACTIONS_FILE}");
        match std::fs::metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Installed::No(format!(
                    "archgate's polkit actions are not installed (no {shown})"
                ));
            }
            Err(e) => return Installed::Untrusted(format!("{shown} cannot be read ({e})")),
            Ok(m) if !m.is_file() => {
                return Installed::Untrusted(format!("{shown} is not a regular file"));
            }
            Ok(m) if m.uid() != self.owner => {
                return Installed::Untrusted(format!(
                    "{shown} belongs to uid {}, not root",
                    m.uid()
                ));
            }
            Ok(m) if m.mode() & 0o022 != 0 => {
                return Installed::Untrusted(format!(
                    "{shown} is writable by others (mode {:o})",
                    m.mode() & 0o7777
                ));
            }
            Ok(_) => {}
        }
        if POLKITD.iter().any(|p| self.root.join(p).is_file()) {
            Installed::Yes
        } else {
            Installed::No(format!(
                "polkit is not installed (no polkitd in {})",
                POLKITD
                    .iter()
                    .map(|p| format!("/{p}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    }
}

/// Whether presence applies, as root's files say.
pub enum Installed {
    /// archgate's actions file is root's and polkitd is there: every yes that needs presence
    /// is confirmed through polkit, or refused.
    Yes,
    /// Not installed (what is missing): under `auto` a yes goes through unconfirmed.
    No(String),
    /// Something is at the actions file's place that root does not vouch for (another owner,
    /// writable by others, unreadable): refused, never read as "not installed".
    Untrusted(String),
}

/// What root's files say about presence here (for `doctor`, and the decision itself).
pub fn installed() -> Installed {
    Probe::system().installed()
}
