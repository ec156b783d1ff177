//! The closed set of privileged operations a hand-off can carry, built from typed inputs.
//!
//! An agent never writes a command: it names an operation and its values (package names, a
//! unit), each checked the way the package tools check them, and archgate builds the argv. The
//! argv always starts `/usr/bin/sudo -k --`: `-k` makes sudo ignore any credentials cached for
//! the terminal, so the person's password is asked for every hand-off and none is cached after
//! it. `sudo` and the program after it are absolute paths archgate resolved in root's
//! directories alone (`pinned.rs`), so the command shown is the command run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// At most this many packages in one operation.
pub const MAX_PACKAGES: usize = 64;

/// The operation as the agent names it (the tool's `op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    SystemUpdate,
    Install,
    Remove,
    CleanCache,
    UnitRestart,
    UnitEnable,
    UnitDisable,
    InstallFile,
    PacnewAdopt,
    PacnewDiscard,
    SnapshotSnapper,
    SnapshotTimeshift,
    // An Omarchy route that needs root (`route.rs`), not an `Operation`. (A doc comment here
    // would turn the schema's enum into a `oneOf`, words every client reads.)
    Omarchy,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::SystemUpdate => "system_update",
            Op::Install => "install",
            Op::Remove => "remove",
            Op::CleanCache => "clean_cache",
            Op::UnitRestart => "unit_restart",
            Op::UnitEnable => "unit_enable",
            Op::UnitDisable => "unit_disable",
            Op::InstallFile => "install_file",
            Op::PacnewAdopt => "pacnew_adopt",
            Op::PacnewDiscard => "pacnew_discard",
            Op::SnapshotSnapper => "snapshot_snapper",
            Op::SnapshotTimeshift => "snapshot_timeshift",
            Op::Omarchy => "omarchy",
        }
    }

    /// The one value the operation takes, if any.
    fn wants(self) -> Option<&'static str> {
        match self {
            Op::Install | Op::Remove => Some("packages"),
            Op::UnitRestart | Op::UnitEnable | Op::UnitDisable => Some("unit"),
            Op::InstallFile | Op::PacnewAdopt | Op::PacnewDiscard => Some("path"),
            Op::SystemUpdate | Op::CleanCache | Op::SnapshotSnapper | Op::SnapshotTimeshift => None,
            Op::Omarchy => Some("route"),
        }
    }
}

/// The values an operation may take, as the agent gave them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Values {
    pub packages: Option<Vec<String>>,
    pub unit: Option<String>,
    pub path: Option<String>,
}

/// Which snapshot tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotTool {
    Snapper,
    Timeshift,
}

/// What a unit operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitVerb {
    Restart,
    Enable,
    Disable,
}

impl UnitVerb {
    pub fn as_str(self) -> &'static str {
        match self {
            UnitVerb::Restart => "restart",
            UnitVerb::Enable => "enable",
            UnitVerb::Disable => "disable",
        }
    }
}

/// One privileged operation, built from the agent's typed values ([`Operation::from_args`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `pacman -Syu`: the whole system update.
    SystemUpdate,
    /// `pacman -S NAMES`: install (or reinstall) official packages.
    Install { packages: Vec<String> },
    /// `pacman -R NAMES`: remove installed packages.
    Remove { packages: Vec<String> },
    /// `paccache -rk3`: keep the three newest versions of each package in the cache.
    CleanCache,
    /// `systemctl restart|enable|disable UNIT` of a system unit.
    Unit { action: UnitVerb, unit: String },
    /// `pacman -U FILE` of a package file in pacman's cache (a downgrade `pkg_cache` found).
    InstallFile { path: String },
    /// `mv -f -T FILE.pacnew FILE`: the new file replaces the live one (after the person merged).
    PacnewAdopt { path: String, live: String },
    /// `rm -f FILE.pacnew`: the live file stays.
    PacnewDiscard { path: String },
    /// A snapshot before changes: `snapper create …` or `timeshift --create …`.
    Snapshot(SnapshotTool),
}

/// What a snapshot is called.
pub const SNAPSHOT_DESCRIPTION: &str = "archgate hand-off";

/// Package file endings pacman installs.
const PACKAGE_ENDINGS: &[&str] = &[
    ".pkg.tar.zst",
    ".pkg.tar.xz",
    ".pkg.tar.gz",
    ".pkg.tar.bz2",
    ".pkg.tar.lz4",
    ".pkg.tar",
];

/// Why a value cannot be part of a hand-off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    #[error("{0:?} is not a package name (a-z 0-9 @ . _ + -, not starting with - or .)")]
    PackageName(String),
    #[error("no packages named")]
    NoPackages,
    #[error("at most {MAX_PACKAGES} packages in one hand-off")]
    TooManyPackages,
    #[error("{0:?} is named twice")]
    Duplicate(String),
    #[error("{0:?} is not a systemd unit name (NAME.service, .timer, .socket …)")]
    UnitName(String),
    #[error("{0:?} is not an absolute path of a {1} file (no `..`, no control characters)")]
    Path(String, &'static str),
    #[error("{op} takes {wants}")]
    Needs {
        op: &'static str,
        wants: &'static str,
    },
    #[error("{op} takes no {field}")]
    Extra {
        op: &'static str,
        field: &'static str,
    },
}

/// A package name as pacman allows it: lowercase letters, digits and `@._+-`, not starting with
/// `-` or `.` (the rule `pkg_cache`'s archive look-up checks, `archgate_pacman::ala::check_name`).
pub fn check_package(name: &str) -> Result<(), OpError> {
    archgate_pacman::ala::check_name(name).map_err(|_| OpError::PackageName(name.to_owned()))
}

fn check_packages(names: &[String]) -> Result<(), OpError> {
    if names.is_empty() {
        return Err(OpError::NoPackages);
    }
    if names.len() > MAX_PACKAGES {
        return Err(OpError::TooManyPackages);
    }
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        check_package(n)?;
        if !seen.insert(n.as_str()) {
            return Err(OpError::Duplicate(n.clone()));
        }
    }
    Ok(())
}

/// Unit suffixes systemd knows.
const UNIT_SUFFIXES: &[&str] = &[
    ".service",
    ".socket",
    ".timer",
    ".target",
    ".path",
    ".mount",
    ".automount",
    ".swap",
    ".slice",
    ".scope",
    ".device",
];

/// A unit name as systemd spells one: `[A-Za-z0-9:_.\\@-]`, at most 255 bytes, with a known
/// suffix, not starting with `-`.
pub fn check_unit(unit: &str) -> Result<(), OpError> {
    let ok = !unit.is_empty()
        && unit.len() <= 255
        && !unit.starts_with(['-', '.'])
        && unit
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":_.\\@-".contains(&b))
        && UNIT_SUFFIXES
            .iter()
            .any(|s| unit.len() > s.len() && unit.ends_with(s));
    if ok {
        Ok(())
    } else {
        Err(OpError::UnitName(unit.to_owned()))
    }
}

impl Operation {
    /// The operation `op` names, with its one value (`packages` for install and remove, `unit`
    /// for the unit operations, `path` for a cache file or a `.pacnew`), nothing else. Every
    /// value is checked ([`Operation::check`]).
    pub fn from_args(op: Op, v: Values) -> Result<Operation, OpError> {
        let o = op.as_str();
        let given = [
            ("packages", v.packages.is_some()),
            ("unit", v.unit.is_some()),
            ("path", v.path.is_some()),
        ];
        for (field, is) in given {
            if is && op.wants() != Some(field) {
                return Err(OpError::Extra { op: o, field });
            }
        }
        let need = |wants: &'static str| OpError::Needs { op: o, wants };
        let packages = || v.packages.clone().ok_or(need("packages"));
        let unit = || v.unit.clone().ok_or(need("unit"));
        let path = || v.path.clone().ok_or(need("path"));
        let operation = match op {
            Op::SystemUpdate => Operation::SystemUpdate,
            Op::CleanCache => Operation::CleanCache,
            Op::Install => Operation::Install {
                packages: packages()?,
            },
            Op::Remove => Operation::Remove {
                packages: packages()?,
            },
            Op::UnitRestart => Operation::Unit {
                action: UnitVerb::Restart,
                unit: unit()?,
            },
            Op::UnitEnable => Operation::Unit {
                action: UnitVerb::Enable,
                unit: unit()?,
            },
            Op::UnitDisable => Operation::Unit {
                action: UnitVerb::Disable,
                unit: unit()?,
            },
            Op::InstallFile => Operation::InstallFile { path: path()? },
            Op::PacnewAdopt => {
                let path = path()?;
                let live = live_of(&path)
                    .ok_or_else(|| OpError::Path(path.clone(), ".pacnew or .pacsave"))?;
                Operation::PacnewAdopt { path, live }
            }
            Op::PacnewDiscard => Operation::PacnewDiscard { path: path()? },
            Op::SnapshotSnapper => Operation::Snapshot(SnapshotTool::Snapper),
            Op::SnapshotTimeshift => Operation::Snapshot(SnapshotTool::Timeshift),
            // Resolved against Omarchy's registry by the tool (`route.rs`).
            Op::Omarchy => return Err(need("route")),
        };
        operation.check()?;
        Ok(operation)
    }

    /// Checks every value the agent gave.
    pub fn check(&self) -> Result<(), OpError> {
        match self {
            Operation::SystemUpdate | Operation::CleanCache => Ok(()),
            Operation::Install { packages } | Operation::Remove { packages } => {
                check_packages(packages)
            }
            Operation::Unit { unit, .. } => check_unit(unit),
            Operation::InstallFile { path } => check_path(path, PACKAGE_ENDINGS, "package"),
            Operation::PacnewAdopt { path, .. } | Operation::PacnewDiscard { path } => {
                check_path(path, &[".pacnew", ".pacsave"], ".pacnew or .pacsave")
            }
            Operation::Snapshot(_) => Ok(()),
        }
    }

    /// The program the operation runs under sudo, by name (resolved to a path by archgate).
    pub fn program(&self) -> &'static str {
        match self {
            Operation::SystemUpdate | Operation::Install { .. } | Operation::Remove { .. } => {
                "pacman"
            }
            Operation::CleanCache => "paccache",
            Operation::Unit { .. } => "systemctl",
            Operation::InstallFile { .. } => "pacman",
            Operation::PacnewAdopt { .. } => "mv",
            Operation::PacnewDiscard { .. } => "rm",
            Operation::Snapshot(SnapshotTool::Snapper) => "snapper",
            Operation::Snapshot(SnapshotTool::Timeshift) => "timeshift",
        }
    }

    /// Whether the operation takes pacman's lock (a lock held refuses it before Enter).
    pub fn takes_pacman_lock(&self) -> bool {
        matches!(
            self,
            Operation::SystemUpdate
                | Operation::Install { .. }
                | Operation::Remove { .. }
                | Operation::InstallFile { .. }
        )
    }

    /// Whether what it acts on comes from pacman's configuration (the transaction, its root and
    /// database, or the `.pacnew` files found under its `RootDir`): that configuration must then
    /// be root's alone (`pacman::check_conf`; attack 7 F3).
    pub fn reads_pacman_conf(&self) -> bool {
        self.takes_pacman_lock()
            || matches!(
                self,
                Operation::PacnewAdopt { .. } | Operation::PacnewDiscard { .. }
            )
    }

    /// Whether its program reads pacman's default configuration itself, whatever archgate's
    /// `[arch] pacman_conf` says: paccache finds the cache directories it deletes from through
    /// `pacman-conf`, which reads `/etc/pacman.conf` (its argv names no other). That file, not
    /// the setting, is then judged root's alone (attack 13 F2's class: *the check reads a
    /// different object than the privileged command uses*).
    pub fn reads_default_pacman_conf(&self) -> bool {
        matches!(self, Operation::CleanCache)
    }

    /// What it will change, in words for the person.
    pub fn changes(&self) -> String {
        match self {
            Operation::SystemUpdate => {
                "updates every installed package to the repositories' versions".into()
            }
            Operation::Install { packages } => format!(
                "installs {} and the dependencies pacman pulls in",
                packages.join(", ")
            ),
            Operation::Remove { packages } => format!("removes {}", packages.join(", ")),
            Operation::CleanCache => {
                "deletes cached package files but the three newest versions of each".into()
            }
            Operation::Unit { action, unit } => {
                format!("{}s the system unit {unit}", action.as_str())
            }
            Operation::InstallFile { path } => {
                format!(
                    "installs the package file {path} from pacman's cache (a downgrade or reinstall)"
                )
            }
            Operation::PacnewAdopt { path, live } => {
                format!(
                    "replaces {live} with {path} (what you changed in {live} is gone unless you merged it)"
                )
            }
            Operation::PacnewDiscard { path } => {
                format!("deletes {path}; the live file stays as it is")
            }
            Operation::Snapshot(t) => format!(
                "takes a {} snapshot named \"{SNAPSHOT_DESCRIPTION}\"",
                match t {
                    SnapshotTool::Snapper => "snapper",
                    SnapshotTool::Timeshift => "Timeshift",
                }
            ),
        }
    }
}

/// Builds the argv: `SUDO -k -- PROGRAM [--config F] [--noconfirm] ARGS…`. `sudo` and
/// `program` are the absolute paths archgate resolved (`pinned.rs`); `pacman_conf` is passed
/// only when it is not the default file (and only a root-owned one reaches here).
///
/// pacman runs with `--noconfirm` (attack 5b, F13: *the person's one confirmation followed by
/// further questions on the same typeable terminal*): after the password nothing more can be
/// answered by typing. Every default is then taken, which for a conflict is *no* (pacman stops,
/// nothing changes); the install's transaction was computed and shown beforehand, and one that
/// removes or replaces anything is refused before the terminal opens (`mod.rs`).
pub fn argv(op: &Operation, sudo: &Path, program: &Path, pacman_conf: &Path) -> Vec<String> {
    let mut v: Vec<String> = vec![
        sudo.to_string_lossy().into_owned(),
        "-k".into(),
        "--".into(),
    ];
    v.push(program.to_string_lossy().into_owned());
    let conf = || -> Vec<String> {
        let mut c = if pacman_conf == Path::new("/etc/pacman.conf") {
            Vec::new()
        } else {
            vec![
                "--config".into(),
                pacman_conf.to_string_lossy().into_owned(),
            ]
        };
        c.push("--noconfirm".into());
        c
    };
    match op {
        Operation::SystemUpdate => {
            v.extend(conf());
            v.push("-Syu".into());
        }
        Operation::Install { packages } => {
            v.extend(conf());
            v.push("-S".into());
            v.push("--".into());
            v.extend(packages.iter().cloned());
        }
        Operation::Remove { packages } => {
            v.extend(conf());
            v.push("-R".into());
            v.push("--".into());
            v.extend(packages.iter().cloned());
        }
        Operation::CleanCache => {
            v.push("-rk3".into());
        }
        Operation::Unit { action, unit } => {
            v.push(action.as_str().into());
            v.push("--".into());
            v.push(unit.clone());
        }
        Operation::InstallFile { path } => {
            v.extend(conf());
            v.extend(["-U".into(), "--".into(), path.clone()]);
        }
        Operation::PacnewAdopt { path, live } => {
            // `-T`: the live path is the file replaced, never a directory to move into.
            v.extend([
                "-f".into(),
                "-T".into(),
                "--".into(),
                path.clone(),
                live.clone(),
            ]);
        }
        Operation::PacnewDiscard { path } => {
            v.extend(["-f".into(), "--".into(), path.clone()]);
        }
        Operation::Snapshot(SnapshotTool::Snapper) => {
            v.extend([
                "create".into(),
                "--description".into(),
                SNAPSHOT_DESCRIPTION.into(),
            ]);
        }
        Operation::Snapshot(SnapshotTool::Timeshift) => {
            v.extend([
                "--create".into(),
                "--comments".into(),
                SNAPSHOT_DESCRIPTION.into(),
            ]);
        }
    }
    v
}

/// An absolute path, every component normal (no `.`, `..`, empty), no control or invisible
/// character, ending in one of `endings`.
fn check_path(path: &str, endings: &[&str], what: &'static str) -> Result<(), OpError> {
    let ok = path.starts_with('/')
        && path
            .split('/')
            .skip(1)
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && !path.chars().any(archgate_core::text::needs_escape)
        && endings.iter().any(|e| {
            let name = path.rsplit('/').next().unwrap_or("");
            name.len() > e.len() && name.ends_with(e)
        });
    if ok {
        Ok(())
    } else {
        Err(OpError::Path(path.to_owned(), what))
    }
}

/// The live file a `.pacnew`/`.pacsave` belongs to.
fn live_of(path: &str) -> Option<String> {
    path.strip_suffix(".pacnew")
        .or_else(|| path.strip_suffix(".pacsave"))
        .filter(|l| !l.is_empty() && !l.ends_with('/'))
        .map(str::to_owned)
}

/// pacman's lock file under a database directory.
pub fn pacman_lock(db_path: &Path) -> PathBuf {
    db_path.join("db.lck")
}

#[cfg(test)]
mod tests;
