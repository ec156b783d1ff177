//! Omarchy's commands: the registry, search, usages, and how a route is judged (by its words,
//! its script, its arguments). Pure: reading them from this desktop and running a route through
//! a `Permit` is `routes.rs`'s.

pub mod arg_files;
pub mod argcode;
pub mod as_person;
pub mod asks;
pub mod classify;
pub mod computed;
pub mod guard;
pub mod literal_paths;
pub mod past_sudo;
pub mod picked;
pub mod picks;
pub mod registry;
pub mod script;
pub mod search;
pub mod sourced;
pub mod steer;
pub mod tree;
pub mod usage;
mod words;

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::error::{DesktopError, Result};

pub use arg_files::files_still_the_persons;
pub use classify::{RouteTier, classify};
pub use guard::{Invocation, forwarded_ipc, ipc_runs_code, targets_archgate};
pub use registry::{Registry, Route, spelling};
pub use script::{ScriptFacts, Seen};
pub use search::SearchHit;
pub use usage::{Flag, Slot, Usage};

/// How a program run by a route or call ended, as the agent sees it.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOutcome {
    /// The command that ran, shell-quoted for reading.
    pub command: String,
    /// Whether it exited 0.
    pub success: bool,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// Its stdout (lossy UTF-8).
    pub stdout: String,
    /// Its stderr (lossy UTF-8).
    pub stderr: String,
    /// Whether output was cut to the executor's cap (head and tail kept).
    pub truncated: bool,
}

impl CommandOutcome {
    pub(crate) fn from_output(command: String, out: &archgate_exec::Output) -> Self {
        CommandOutcome {
            command,
            success: out.success(),
            exit_code: out.status.code,
            stdout: out.stdout_lossy(),
            stderr: out.stderr_lossy(),
            truncated: out.truncated,
        }
    }
}

/// The command that runs `route` with `args`: the route's own script (found in the trusted
/// program directories) with the arguments as given, after checking them against the route's
/// usage. Pure: the gate shows and judges exactly this before anything runs. No `--` is added:
/// Omarchy's scripts do not parse it (the dispatcher hands it to them as an argument).
pub fn route_command(route: &Route, args: &[String]) -> Result<CommandSpec> {
    Registry::check_args(route, args)?;
    Ok(CommandSpec::new(route.binary.clone()).args(args.iter().cloned()))
}

/// The route's tier and `requires_sudo` from what its script was read doing: a script that
/// elevates (itself or through a script it calls) needs root whatever its comment says; one that
/// runs its values as code is destructive (never automatic); one that changes files or uses the
/// network, or that could not be read, is not a read whatever its name says.
pub fn judge_by_script(route: &mut Route, facts: &ScriptFacts) {
    if facts.elevates.is_some() {
        route.requires_sudo = true;
    }
    if facts.runs_values.is_some() {
        route.tier = RouteTier::Destructive;
    }
    if route.tier == RouteTier::Read && (facts.unread || facts.changes.is_some()) {
        route.tier = RouteTier::Act;
    }
}

/// Whether a value cannot climb out of the directory a script builds a path in: not empty (an
/// empty name is the directory itself), not `.` or `..`, no `/`, no control character.
pub fn stays_in_place(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && !value.contains('/')
        && !value.chars().any(char::is_control)
}

/// Whether a usage slot's name says its value is a path or an address (a value that is meant to
/// hold `/`): `path-to-game`, `file`, `git-repo-url`.
fn slot_names_a_path(name: &str) -> bool {
    ["path", "file", "image", "dir", "url", "repo"]
        .iter()
        .any(|w| name.contains(w))
}

/// The call judged with its values, by what the route's own script does with them — for a
/// dispatcher, the `case` arm its first argument chooses ([`ScriptFacts::steering_for`])
/// (issue 33; attack 5a F5, F7, F8; attack 5b F5):
/// - a script that installs code named by a value (clones a repository, makes a file
///   executable) is destructive, whatever the value, and a file it would install must be the
///   person's own;
/// - a script that deletes or overwrites a path built from a value: a value that could climb
///   ([`stays_in_place`] fails) in a slot whose name is a *name* (`<flag-name>`, `<type>`) is
///   refused; in a slot meant for a path or an address, or where the usage says nothing, it
///   makes the call destructive;
/// - a value naming a key the desktop later runs as a command (`exec`, `onClick`) is never
///   automatic ([`guard::stores_command`]).
pub fn judge_call(route: &mut Route, facts: &ScriptFacts, args: &[String]) -> Result<()> {
    if let Some(seen) = &facts.untrusted {
        return Err(DesktopError::Blocked {
            command: format!("{} (it runs {}: {})", route.binary, seen.script, seen.what),
            reason: "it runs a script or file of Omarchy's that another user could have \
                     written; archgate runs no code another user could have changed (fix the \
                     file's owner and mode, replacing the file, then call again)",
        });
    }
    let steering = facts.steering_for(args);
    if steering.installs_code.is_some() || guard::stores_command(args) {
        route.tier = RouteTier::Destructive;
    }
    if let Some((line, program)) = &steering.destroys {
        let slots = route.usage.values(args);
        for (i, a) in args.iter().enumerate() {
            let reaches = steering.positions.iter().any(|p| p.covers(i));
            if stays_in_place(a) {
                continue;
            }
            let slot = slots
                .iter()
                .find(|(_, j)| *j == i)
                .map(|(s, _)| s.name.to_ascii_lowercase());
            if reaches && slot.as_deref().is_some_and(|n| !slot_names_a_path(n)) {
                return Err(DesktopError::invalid(
                    "args",
                    format!(
                        "`{}`: {a:?} would climb out of the directory the script builds a path \
                         in ({} line {line}: {program}); a name here may not be empty, `.`, `..` \
                         or hold `/`",
                        route.route, route.binary
                    ),
                ));
            }
            route.tier = RouteTier::Destructive;
        }
    }
    // Then every value is judged as a file the route may read, copy or install — whatever the
    // script is seen to do with it (attack 35 F6, attack 36 F1: the words that say "installs"
    // were never complete) — and one it reads after changing directory must be absolute
    // (attack 36 F4).
    arg_files::judge(route, steering, facts, args)
}

/// A route whose scripts start a program a file of the person's picks (`picked`) runs code
/// archgate cannot judge: destructive, so never automatic (attack 23 F5), like a route that runs
/// its values. A picked program that is one of Omarchy's own scripts (the script of a route, or
/// any `omarchy…` program) is refused: a browser, an editor or a terminal that is a route's
/// script would carry that route past its own judgement, so it runs only as itself, through
/// `omarchy_run`. (A power or session command is refused too, by `routes.rs`, which knows
/// `launch_door`'s list.) A hook is run by `bash` and is judged by the first rule alone.
pub fn judge_picks(route: &mut Route, reg: &Registry, picked: &[picked::Picked]) -> Result<()> {
    if picked.is_empty() {
        return Ok(());
    }
    route.tier = RouteTier::Destructive;
    for p in picked {
        let Some(program) = &p.program else {
            continue;
        };
        let base = program.rsplit('/').next().unwrap_or(program);
        if base.starts_with("omarchy") || reg.routes.iter().any(|r| r.binary == base) {
            return Err(DesktopError::Blocked {
                command: format!("{}: {}", route.route, p.describe()),
                reason: "the program it picks is one of Omarchy's own scripts; run that route \
                         itself with omarchy_run, where it is judged as what it is",
            });
        }
    }
    Ok(())
}

/// A route resolved with its arguments: the command and the exact spec that will run.
#[derive(Debug, Clone)]
pub struct RouteCall {
    /// The registry entry.
    pub route: Route,
    /// Exactly what runs (the environment of the person's session applied).
    pub spec: CommandSpec,
    /// The call would stop, restart, reconfigure or remove archgate or its supervisor (by the
    /// route or by its arguments).
    pub targets_archgate: bool,
    /// What the route's script (and the scripts it calls) was read doing; the route's tier and
    /// `requires_sudo` above already include it.
    pub script: ScriptFacts,
    /// The routes its script forwards these arguments to (`bar plugin …` → `bar plugin`), each
    /// judged with the arguments it receives; the tier, `requires_sudo` and `targets_archgate`
    /// above already include theirs, and their names are the call's names too.
    pub forwarded: Vec<Route>,
    /// The programs the script (or a script it calls) will start that a file of the person's
    /// picks (`picked`): with any, the tier above is destructive (never automatic), the
    /// question names each file and what it starts, and the run resolves them again and
    /// refuses when one changed (attack 23 F5).
    pub picked: Vec<picked::Picked>,
}

/// Most forwarding hops followed (`a` → `b` → `c` …).
const MAX_HOPS: usize = 4;

/// The routes a call's script forwards its arguments to, as the dispatcher does: a `case` arm
/// whose word is the first argument hands the rest on; a script that is `exec omarchy-X "$@"`
/// hands them all. Each hop is judged like a route of its own with the arguments it receives
/// (usage, script, values, the archgate guard); a script the registry does not list is judged
/// by its name's words.
pub(crate) fn forwarded_routes(
    permit: &Permit,
    reg: &Registry,
    facts: &ScriptFacts,
    args: &[String],
) -> Result<Vec<Route>> {
    let mut out: Vec<Route> = Vec::new();
    let mut facts = facts.clone();
    let mut rest: Vec<String> = args.to_vec();
    for _ in 0..MAX_HOPS {
        let Some(f) = facts.forwards.iter().find(|f| match &f.words {
            None => true,
            Some(ws) => rest.first().is_some_and(|a| ws.iter().any(|w| w == a)),
        }) else {
            break;
        };
        if f.words.is_some() {
            rest.remove(0);
        }
        let mut next = match reg.routes.iter().find(|r| r.binary == f.script) {
            Some(r) => {
                let r = r.clone();
                Registry::check_args(&r, &rest)?;
                r
            }
            None => {
                let words: Vec<String> = f
                    .script
                    .trim_start_matches("omarchy-")
                    .split('-')
                    .map(str::to_owned)
                    .collect();
                Route {
                    route: words.join(" "),
                    tier: classify(&words),
                    binary: f.script.clone(),
                    group: String::new(),
                    summary: String::new(),
                    requires_sudo: false,
                    hidden: true,
                    args: String::new(),
                    usage: Usage::Unreadable {
                        text: String::new(),
                    },
                    examples: Vec::new(),
                    aliases: Vec::new(),
                    targets_archgate: false,
                    words,
                }
            }
        };
        // The tree was judged with the first route's script.
        let next_facts = script::scan(permit.executor(), None, &next.binary);
        judge_by_script(&mut next, &next_facts);
        judge_call(&mut next, &next_facts, &rest)?;
        next.targets_archgate |= targets_archgate(Invocation::Route {
            words: &next.words,
            args: &rest,
        });
        if out.iter().any(|r| r.binary == next.binary) {
            break;
        }
        out.push(next);
        facts = next_facts;
    }
    Ok(out)
}
