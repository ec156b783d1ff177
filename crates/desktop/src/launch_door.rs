//! What `launch` would start, judged by what it is, not by the door it came through (issue 33,
//! attack 15 F4; class: *a route reached by another door skips the route's judgement*).
//!
//! `launch {"app": NAME}` starts a desktop entry's `Exec=` program or a program found in the
//! trusted directories, and Omarchy's `bin/` is one of them: every Omarchy route's script could be
//! started by its file name as an "application", judged `act`, past the route's tier (destructive:
//! never automatic), its blocks (sudo, archgate's supervisor) and its guards. So the program a
//! launch would start — after a wrapper such as `env` or `uwsm-app --`, and resolved through
//! links to the real file — is looked up:
//! - a file the registry maps a route to (its `binary`, resolved the same way) is that route,
//!   with the launch's arguments: the caller judges and runs it as `omarchy_run` would;
//! - any other file under Omarchy's `bin/` is refused, pointing to `omarchy_run`;
//! - a power or session command (systemd's and util-linux's: `reboot`, `systemctl`, `loginctl`…)
//!   is refused, by the name asked and by the real file's name (`reboot` is a link to
//!   `systemctl` on Arch): `launch` starts applications, and those are not.

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, Permit};

use crate::app_entries::{AppSource, LaunchPlan};
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};

/// Programs `launch` never starts, by any door (a bare name, a desktop entry's `Exec=`, a link):
/// systemd's and util-linux's power and session commands, the programs that end other programs,
/// and the multi-call binary that is all of them. None is an application; each acts on the whole
/// machine or session.
pub const NOT_APPLICATIONS: &[&str] = &[
    "systemctl",
    "reboot",
    "poweroff",
    "halt",
    "shutdown",
    "init",
    "telinit",
    "systemd",
    "loginctl",
    "systemd-run",
    "systemd-inhibit",
    "kexec",
    "rtcwake",
    "busybox",
    "kill",
    "pkill",
    "killall",
    "uwsm",
];

/// Interpreters (by name, a version suffix dropped: `python3.13` is `python`): given arguments
/// they run code — a command string or a script — that is judged as the interpreter only, so a
/// launch gives them none (`Exec=sh -c 'omarchy-system-reboot'` is refused).
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "python", "perl", "ruby",
    "node", "nodejs", "lua", "luajit", "php", "tclsh", "wish", "awk", "gawk", "mawk", "nawk",
    "deno", "bun",
];

/// Terminal emulators: they run the command their arguments name (`alacritty -e CMD`,
/// `xdg-terminal-exec -e CMD`, `foot CMD`). Their options differ, so every argument is looked at:
/// one that names a power or session command or an Omarchy script, or an interpreter given
/// arguments, refuses the launch (Omarchy's own TUI entries, `xdg-terminal-exec --app-id=TUI.tile
/// -e lazydocker`, pass).
const TERMINALS: &[&str] = &[
    "foot",
    "footclient",
    "alacritty",
    "kitty",
    "ghostty",
    "wezterm",
    "xterm",
    "uxterm",
    "urxvt",
    "konsole",
    "gnome-terminal",
    "xdg-terminal-exec",
];

/// A program's name without a version suffix (`python3.13` → `python`, `lua5.4` → `lua`).
fn unversioned(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&unversioned(name)) || INTERPRETERS.contains(&name)
}

/// Whether a terminal's arguments name a program `launch` does not start through it: a power or
/// session command, an Omarchy script (`omarchy-…`, or a route's binary), or an interpreter
/// given arguments after it.
fn terminal_runs_judged(args: &[String], binaries: &dyn Fn(&str) -> bool) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        // `--app-id=X`, `-e=CMD`: the value is a word too.
        let word = a.rsplit('=').next().unwrap_or(a);
        let name = file_name(word);
        NOT_APPLICATIONS.contains(&name)
            || WRAPPERS.contains(&name)
            || name.starts_with("omarchy")
            || binaries(name)
            || (is_interpreter(name) && i + 1 < args.len())
    })
}

/// Programs that start the program their arguments name (`env A=1 prog`, `setsid prog`,
/// `uwsm-app -- prog`): what they start is judged as if it were started directly.
const WRAPPERS: &[&str] = &["env", "setsid", "nohup", "uwsm-app"];

/// Most wrappers looked through (`env setsid uwsm-app -- prog`).
const MAX_WRAPPERS: usize = 4;

/// What a launch's command is, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchDoor {
    /// An application: started as asked, judged as `launch`.
    Application,
    /// An Omarchy route's script: the route (canonical spelling) and the arguments it gets,
    /// to be judged and run exactly as `omarchy_run` would.
    Route {
        /// The route, as the registry spells it.
        route: String,
        /// The arguments the launch would give its script.
        args: Vec<String>,
    },
}

fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The program a command really starts, looking through [`WRAPPERS`]: its index in `argv`, or
/// `None` when a wrapper's arguments cannot be read (an option of `env` that takes a value, a
/// wrapper with nothing to start).
fn started(argv: &[String]) -> Option<usize> {
    let mut i = 0;
    for _ in 0..=MAX_WRAPPERS {
        let name = file_name(argv.get(i)?);
        if !WRAPPERS.contains(&name) {
            return Some(i);
        }
        let wrapper = name;
        i += 1;
        loop {
            let a = argv.get(i)?;
            if a == "--" {
                i += 1;
                break;
            }
            if wrapper == "env" && a.contains('=') && !a.starts_with('-') {
                i += 1;
                continue;
            }
            if a.starts_with('-') {
                // `env -u NAME`, `env -C DIR`, `env -S STRING`: an option this reading does not
                // follow; `uwsm-app -s a`, `-t service`: options with a value. Not read: refused.
                if wrapper == "env" || wrapper == "uwsm-app" {
                    return None;
                }
                i += 1;
                continue;
            }
            break;
        }
    }
    None
}

/// Omarchy's web apps that focus an open window first (`omarchy-launch-or-focus-webapp PATTERN
/// URL`) hand the address to a script that `eval`s it (values run as code: destructive through
/// `omarchy_run`). Launched as an application, such an entry is the `launch webapp` route with
/// the address alone — what it starts when no window is open, the address an argument, never
/// code. An entry with more than the pattern and the address (browser flags) stays the route it
/// names.
fn web_app(
    reg: &crate::omarchy::Registry,
    route: &crate::omarchy::Route,
    args: &[String],
) -> Option<LaunchDoor> {
    if route.binary != "omarchy-launch-or-focus-webapp" || args.len() != 2 {
        return None;
    }
    let url = &args[1];
    crate::url_check::check_url(url).ok()?;
    let launch = reg
        .routes
        .iter()
        .find(|r| r.binary == "omarchy-launch-webapp")?;
    Some(LaunchDoor::Route {
        route: launch.route.clone(),
        args: vec![url.clone()],
    })
}

impl Desktop {
    /// Omarchy's `bin/`, as a real directory, when Omarchy is found.
    fn omarchy_bin(&self) -> Option<PathBuf> {
        self.env
            .omarchy_path
            .as_ref()
            .and_then(|p| p.join("bin").canonicalize().ok())
    }

    /// What `spec` (a launch's command, as [`Desktop::plan_launch`] built it) is: an application,
    /// an Omarchy route (to be judged as `omarchy_run` judges it), or refused (a power or
    /// session command, a script of Omarchy's no route maps, a wrapper that cannot be read).
    ///
    /// Then where it came from ([`AppSource`]; attack 18, class: *a denylist where only an
    /// allowlist can hold*): an entry that is not root's launches only as the web app route its
    /// shape names; a bare program name only when a desktop entry root owns declares that very
    /// file (an Omarchy route's script stays that route).
    pub async fn launch_door(&self, permit: &Permit, plan: &LaunchPlan) -> Result<LaunchDoor> {
        let spec = &plan.spec;
        let door = self.judge_launch_command(permit, spec).await?;
        match (&plan.source, &door) {
            (AppSource::PersonEntry(_), LaunchDoor::Application) => Err(DesktopError::Blocked {
                command: spec.display(),
                reason: "it is an Omarchy web app entry of your own, but no Omarchy route \
                         starts web apps here; start it from your launcher",
            }),
            (AppSource::Program, LaunchDoor::Application) => {
                let exec = permit.executor();
                match exec.resolve_program(spec.program()) {
                    // Not found or not trusted: the gate refuses it when it pins the command.
                    Err(_) => Ok(door),
                    Ok(real) if self.declared_by_system_entry(exec, &real) => Ok(door),
                    Ok(_) => Err(DesktopError::Blocked {
                        command: spec.display(),
                        reason: "no desktop entry root owns declares this program (launch \
                                 starts the applications system desktop entries declare, by \
                                 their entry id or their Exec= program); start it from your \
                                 launcher or a terminal yourself",
                    }),
                }
            }
            _ => Ok(door),
        }
    }

    /// What a launch's command is, judged by the program it starts (the rules above).
    async fn judge_launch_command(
        &self,
        permit: &Permit,
        spec: &CommandSpec,
    ) -> Result<LaunchDoor> {
        let argv: Vec<String> = std::iter::once(spec.program().to_owned())
            .chain(spec.arg_list().iter().cloned())
            .collect();
        let shown = spec.display();
        let Some(at) = started(&argv) else {
            return Err(DesktopError::Blocked {
                command: shown,
                reason: "it starts its program through a wrapper whose options archgate does not \
                         read (env -u/-C/-S, uwsm-app with options); launch the application \
                         itself",
            });
        };
        let program = &argv[at];
        let real = permit.executor().resolve_program(program).ok();
        let real_name: Option<String> = real
            .as_deref()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(str::to_owned);
        let real_name = real_name.as_deref();
        if NOT_APPLICATIONS.contains(&file_name(program))
            || real_name.is_some_and(|n| NOT_APPLICATIONS.contains(&n))
        {
            return Err(DesktopError::Blocked {
                command: shown,
                reason: "it is a power, session or process command (systemd, util-linux), not an \
                         application; launch starts applications (the person runs these \
                         themselves)",
            });
        }
        let named = |n: &str| [Some(file_name(program)), real_name].contains(&Some(n));
        let named_in = |list: &[&str]| list.iter().any(|n| named(n));
        if (is_interpreter(file_name(program)) || real_name.is_some_and(is_interpreter))
            && argv.len() > at + 1
        {
            return Err(DesktopError::Blocked {
                command: shown,
                reason: "it gives an interpreter code to run (a command string or a script), \
                         which would be judged as the interpreter only; launch starts \
                         applications, and Omarchy's commands run through omarchy_run",
            });
        }
        if named_in(TERMINALS) {
            let reg = self.cached_registry().await;
            let binaries = |n: &str| {
                reg.as_ref()
                    .is_some_and(|r| r.routes.iter().any(|route| route.binary == n))
            };
            if terminal_runs_judged(&argv[at + 1..], &binaries) {
                return Err(DesktopError::Blocked {
                    command: shown,
                    reason: "it runs, in a terminal, a command launch does not start (a power or \
                             session command, one of Omarchy's scripts, an interpreter given \
                             code); Omarchy's commands run through omarchy_run",
                });
            }
        }
        let Some(real) = real else {
            // Not found or not trusted: the gate refuses it when it pins the command.
            return Ok(LaunchDoor::Application);
        };
        // Omarchy's `bin/` as `OMARCHY_PATH` names it — and every directory that is not root's
        // all the way: a program a root entry names, found in a directory of the person's, is
        // the agent's to have put there (attack 33 F9: root's `Exec=foot` started a `foot`
        // dropped in Omarchy's `bin/` of a daemon without `OMARCHY_PATH`). It launches only as
        // the route whose script it is.
        let in_omarchy_bin = self.omarchy_bin().is_some_and(|bin| real.starts_with(bin));
        let persons = real
            .parent()
            .is_some_and(|d| !archgate_exec::roots_all_the_way(d));
        let in_bin = in_omarchy_bin || persons;
        let not_roots = || DesktopError::Blocked {
            command: shown.clone(),
            reason: "it is found in a directory of yours, not root's, and no route of Omarchy's \
                     registry names it: launch starts what root's desktop entries declare from \
                     root's directories (a file of that name in yours may be the agent's)",
        };
        let reg = match self.omarchy_registry(permit).await {
            Ok(reg) => reg,
            Err(_) if !in_bin => return Ok(LaunchDoor::Application),
            Err(e) if in_omarchy_bin => return Err(e),
            Err(_) => return Err(not_roots()),
        };
        let exec = permit.executor();
        // The route whose own script is the file asked for first, then any route whose script
        // resolves to the same real file (a link under another name).
        let named = reg
            .routes
            .iter()
            .filter(|r| r.binary == file_name(program) || Some(r.binary.as_str()) == real_name);
        let route = named
            .chain(reg.routes.iter())
            .find(|r| exec.resolve_program(&r.binary).ok().as_deref() == Some(real.as_path()));
        match route {
            Some(r) => {
                let args = argv[at + 1..].to_vec();
                Ok(web_app(&reg, r, &args).unwrap_or(LaunchDoor::Route {
                    route: r.route.clone(),
                    args,
                }))
            }
            None if in_omarchy_bin => Err(DesktopError::Blocked {
                command: shown,
                reason: "it is one of Omarchy's scripts that no route of its registry names; \
                         Omarchy's commands run through omarchy_run (omarchy_search finds them)",
            }),
            None if persons => Err(not_roots()),
            None => Ok(LaunchDoor::Application),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn terminals_running_judged_programs_are_seen() {
        let none = |_: &str| false;
        let runs = |a: &[&str]| terminal_runs_judged(&v(a), &none);
        // Omarchy's own TUI entry shape, a shell opened, an application in a terminal: pass.
        assert!(!runs(&["--app-id=TUI.tile", "-e", "lazydocker"]));
        assert!(!runs(&["-e", "bash"]));
        assert!(!runs(&[]));
        // A script of Omarchy's, a power command, a shell given code, a wrapper: seen.
        assert!(runs(&["-e", "omarchy-system-reboot"]));
        assert!(runs(&["/usr/bin/systemctl", "poweroff"]));
        assert!(runs(&["-e", "bash", "-c", "x"]));
        assert!(runs(&["-e=python3.13", "x.py"]));
        assert!(runs(&["env", "x"]));
        let listed = |n: &str| n == "my-route-script";
        assert!(terminal_runs_judged(&v(&["my-route-script"]), &listed));
    }

    #[test]
    fn interpreters_are_known_by_name_whatever_their_version() {
        for n in ["sh", "bash", "python3", "python3.13", "perl5.38", "lua5.4"] {
            assert!(is_interpreter(n), "{n}");
        }
        for n in ["foot", "firefox", "python-gobject-app"] {
            assert!(!is_interpreter(n), "{n}");
        }
    }

    #[test]
    fn wrappers_are_looked_through() {
        assert_eq!(started(&v(&["foot"])), Some(0));
        assert_eq!(
            started(&v(&["env", "A=1", "B=2", "omarchy-x", "y"])),
            Some(3)
        );
        assert_eq!(started(&v(&["/usr/bin/env", "--", "x"])), Some(2));
        assert_eq!(started(&v(&["uwsm-app", "--", "x"])), Some(2));
        assert_eq!(started(&v(&["setsid", "-f", "env", "A=1", "x"])), Some(4));
        assert_eq!(started(&v(&["nohup", "x"])), Some(1));
        // Unread options, nothing started, or too many wrappers: no answer (refused).
        assert_eq!(started(&v(&["env", "-u", "A", "x"])), None);
        assert_eq!(started(&v(&["env", "A=1"])), None);
        assert_eq!(
            started(&v(&["env", "env", "env", "env", "env", "env", "x"])),
            None
        );
    }
}
