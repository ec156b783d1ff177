//! Recognising calls that would stop, restart, reconfigure or remove archgate itself or Omarchy's
//! plugin machinery (the shell that supervises archgate), so policy can block them.
//!
//! An agent must not be able to switch off the thing that watches it. archgate runs under
//! Omarchy's shell (Quickshell, `omarchy-shell`) as a plugin service; restarting or quitting that
//! shell, or adding, removing or disabling plugins, ends or changes archgate's supervision.
//!
//! Every plugin route is guarded, by rule rather than by a list of the verbs seen so far: a
//! route whose words name plugins (`plugin …`, `bar plugin …`) is guarded unless its verb — the
//! word after `plugin`, in the route or as its first argument — is one of the few that only read
//! ([`PLUGIN_READS`]). A new or unlisted verb (`clone`, `edit`, `rescan`, `move`, `set`, …) is
//! guarded the day it appears. With no verb yet (the bare `omarchy plugin` route, judged again
//! with its arguments when it is called) the route is not guarded: alone it prints its usage.

/// A route or a shell call about to run.
#[derive(Debug, Clone, Copy)]
pub enum Invocation<'a> {
    /// `omarchy <words…> <args…>`.
    Route {
        /// The route words.
        words: &'a [String],
        /// Its arguments.
        args: &'a [String],
    },
    /// `qs ipc call <target> <method> <args…>`.
    ShellCall {
        /// The IPC target.
        target: &'a str,
        /// The method.
        method: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
}

/// Names of archgate and of the processes that supervise it.
const SELF_NAMES: &[&str] = &["archgate"];
/// The supervising shell, by the names it goes by in routes and IPC targets.
const SHELL_NAMES: &[&str] = &[
    "shell",
    "omarchy-shell",
    "quickshell",
    "qs",
    "plugin",
    "plugins",
    "omarchy",
];
/// Verbs that stop, restart, reconfigure or remove.
const LIFECYCLE_VERBS: &[&str] = &[
    "restart",
    "reload",
    "quit",
    "exit",
    "stop",
    "kill",
    "disable",
    "remove",
    "uninstall",
    "unload",
    "refresh",
    "reset",
    "add",
    "install",
    "update",
    "enable",
    "reconfigure",
    "reloadconfig",
    "rebuild",
    "toggle",
];

/// The verbs of a plugin route that only read (list the plugins, print their manifests, check a
/// folder's manifest). Every other verb of a plugin route is guarded.
pub const PLUGIN_READS: &[&str] = &["list", "catalog", "validate", "help", "--help", "-h"];

fn is_plugin_word(w: &str) -> bool {
    w == "plugin" || w == "plugins"
}

/// A plugin route whose verb is not a read: every word naming plugins — among the route's words
/// *and its arguments*, since a route's script may dispatch on its first argument (Omarchy 4's
/// `omarchy-bar` runs `omarchy-bar-plugin "$@"` for `bar plugin …`: attack 10 F6) — is followed by
/// its verb, and each such verb must be a read; a plugin word with nothing after it (the bare
/// group) is not guarded here. Every occurrence counts: `plugin set … plugin list` changes.
fn changes_plugins(words: &[String], args: &[String]) -> bool {
    let seq: Vec<&String> = words.iter().chain(args).collect();
    seq.iter().enumerate().any(|(i, w)| {
        parts(w).iter().any(|p| is_plugin_word(p))
            && seq
                .get(i + 1)
                .is_some_and(|v| !PLUGIN_READS.contains(&v.to_lowercase().as_str()))
    })
}

fn parts(s: &str) -> Vec<String> {
    // camelCase and kebab-case both split into words: `reloadConfig` → reload, config.
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn names_self(s: &str) -> bool {
    let lower = s.to_lowercase();
    SELF_NAMES.iter().any(|n| lower.contains(n))
}

/// The IPC call the `shell` route forwards: its target, method and arguments (after `-q`).
pub fn forwarded_ipc<'a>(
    words: &'a [String],
    args: &'a [String],
) -> Option<(&'a str, &'a str, &'a [String])> {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| *w == "omarchy")
        .collect();
    if words != ["shell"] {
        return None;
    }
    let args = match args.first().map(String::as_str) {
        Some("-q") => &args[1..],
        _ => args,
    };
    match args {
        [target, method, rest @ ..] => Some((target, method, rest)),
        _ => None,
    }
}

/// Method words of IPC calls that run what they are given: a command line, an action, a
/// program. `shell call <plugin> <method> …` is the shell's generic dispatcher: any method of any
/// plugin (the menu's `runAction` runs a command line), so it counts too.
const RUNNING_METHODS: &[&str] = &[
    "run", "exec", "execute", "spawn", "launch", "command", "cmd", "action", "eval", "shell",
];

/// Whether an IPC call runs code it is given (attack 3, F9: `shell call omarchy.menu runAction
/// "systemctl reboot"` was `act`): what runs is its argument's, so the call is never automatic.
pub fn ipc_runs_code(target: &str, method: &str, args: &[String]) -> bool {
    let t = parts(target);
    let dispatcher =
        method.eq_ignore_ascii_case("call") && t.iter().any(|w| SHELL_NAMES.contains(&w.as_str()));
    let names_runner = |s: &str| {
        parts(s)
            .iter()
            .any(|w| RUNNING_METHODS.contains(&w.as_str()))
    };
    // The shell's `summon`/`toggle` of the menu with a payload opens it at an item, and runs the
    // item's action when it is one (Omarchy 4's `Menu.qml`, `openRoute`), as `omarchy menu
    // summon <item>` does (`classify::runs_route`).
    let opens_menu_item = t.iter().any(|w| SHELL_NAMES.contains(&w.as_str()))
        && ["summon", "toggle", "open"]
            .iter()
            .any(|m| method.eq_ignore_ascii_case(m))
        && args
            .first()
            .is_some_and(|a| parts(a).iter().any(|w| w == "menu"))
        && args.len() >= 2;
    dispatcher
        || opens_menu_item
        || names_runner(method)
        || (method == "call" && args.iter().any(|a| names_runner(a)))
}

/// Keys whose value the desktop later runs as a command: Omarchy's bar runs an entry's `exec`
/// on a timer, and `onClick`/`onRightClick`/`onMiddleClick`/`onScroll…` when clicked.
const COMMAND_KEYS: &[&str] = &["exec", "command", "cmd", "script"];

/// The events whose handler (`onClick`, `on-scroll-up`, `onclick`) the desktop runs.
const EVENTS: &[&str] = &["click", "scroll", "press", "release", "wheel"];

/// Whether a route's arguments name a key whose value is stored and later run as a command
/// (`bar plugin set <id> exec <cmd>`): what runs is the value's, so the call is never automatic
/// (attack 5a F6: Omarchy's shell ran the stored command every 5 s). A key is found wherever it
/// stands in an argument, by its words — alone (`exec`), in a path (`settings.exec`,
/// `widgets/0/exec`), inside a JSON value (`{"exec": …}`), as an event handler in any spelling
/// (`onClick`, `on-right-click`, `onclick`) — not by the argument as a whole equalling a key.
pub fn stores_command(args: &[String]) -> bool {
    args.iter().any(|a| {
        let p = parts(a);
        p.iter().any(|w| {
            COMMAND_KEYS.contains(&w.as_str())
                || w.strip_prefix("on")
                    .is_some_and(|rest| EVENTS.iter().any(|e| rest.ends_with(e)))
        }) || p
            .iter()
            .enumerate()
            .any(|(i, w)| w == "on" && p[i + 1..].iter().any(|x| EVENTS.contains(&x.as_str())))
    })
}

/// Whether running this route or call would stop, restart, reconfigure or remove archgate or
/// Omarchy's plugin machinery. Errs on the side of `true` for anything naming archgate.
pub fn targets_archgate(inv: Invocation<'_>) -> bool {
    match inv {
        Invocation::Route { words, args } => {
            if words.iter().chain(args).any(|w| names_self(w)) {
                return true;
            }
            // `omarchy shell [-q] <target> <method> [args...]` forwards an IPC call: judged as
            // that call, whichever door carries it (attack 3, F2: one capability, two doors).
            if let Some((target, method, rest)) = forwarded_ipc(words, args)
                && targets_archgate(Invocation::ShellCall {
                    target,
                    method,
                    args: rest,
                })
            {
                return true;
            }
            // Every plugin route that is not a read.
            if changes_plugins(words, args) {
                return true;
            }
            // The verb may be the route's word or its first arguments (`omarchy plugin disable X`).
            let ws: Vec<String> = words.iter().chain(args).flat_map(|w| parts(w)).collect();
            let has_verb = ws.iter().any(|w| LIFECYCLE_VERBS.contains(&w.as_str()));
            let plugin = ws.iter().any(|w| w == "plugin" || w == "plugins");
            let shell = ws
                .iter()
                .any(|w| matches!(w.as_str(), "shell" | "quickshell" | "qs"));
            // Any change to plugins, and any lifecycle verb aimed at the shell.
            has_verb && (plugin || shell)
        }
        Invocation::ShellCall {
            target,
            method,
            args,
        } => {
            if names_self(target) || names_self(method) || args.iter().any(|a| names_self(a)) {
                return true;
            }
            let t = parts(target);
            let m = parts(method);
            let verb = m.iter().any(|w| LIFECYCLE_VERBS.contains(&w.as_str()));
            let shell_target = t.iter().any(|w| SHELL_NAMES.contains(&w.as_str()));
            let plugin_word = t.iter().chain(&m).any(|w| is_plugin_word(w));
            // Every plugin method that is not a read, as for routes.
            let reads = m
                .first()
                .is_some_and(|w| PLUGIN_READS.contains(&w.as_str()));
            (verb && (shell_target || plugin_word)) || (plugin_word && !reads)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(words: &[&str], args: &[&str]) -> bool {
        let w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        targets_archgate(Invocation::Route {
            words: &w,
            args: &a,
        })
    }

    fn call(target: &str, method: &str, args: &[&str]) -> bool {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        targets_archgate(Invocation::ShellCall {
            target,
            method,
            args: &a,
        })
    }

    #[test]
    fn routes() {
        // (words, args, targets archgate?)
        let cases: &[(&[&str], &[&str], bool)] = &[
            (&["plugin", "remove"], &["io.example.archgate"], true),
            (&["plugin", "disable"], &["weather"], true),
            (&["plugin", "add"], &["https://example.invalid/x"], true),
            (&["restart", "shell"], &[], true),
            (&["refresh", "quickshell"], &[], true),
            (&["restart", "app"], &["archgate"], true),
            (&["plugin", "list"], &[], false),
            // The plugin word as an argument of a route that dispatches on it (attack 10 F6:
            // `bar ["plugin", "move", …]` is `omarchy bar plugin move …`), at any occurrence.
            (&["bar"], &["plugin", "move", "omarchy.clock"], true),
            (
                &["bar"],
                &["plugin", "replace", "omarchy.clock", "local.evil"],
                true,
            ),
            (
                &["bar"],
                &["plugin", "set", "omarchy.clock", "format", "x"],
                true,
            ),
            (&["bar"], &["Plugin", "move", "x"], true),
            (&["bar"], &["plugin", "set", "x", "plugin", "list"], true),
            (&["bar"], &["plugin", "list"], false),
            (&["bar"], &["plugin"], false),
            // Every plugin route, whatever its verb (issue 33: `plugin clone` was not guarded).
            (&["plugin", "clone"], &[], true),
            (
                &["plugin", "clone"],
                &["omarchy.clock", "local.clock"],
                true,
            ),
            (
                &["plugin"],
                &["clone", "omarchy.clock", "local.clock"],
                true,
            ),
            (&["plugin"], &["edit", "local.clock"], true),
            (&["plugin"], &["rescan"], true),
            (&["plugin"], &["--json", "list"], true),
            (&["plugin"], &["list", "--json"], false),
            (&["plugin"], &["List"], false),
            (&["plugin"], &[], false),
            (&["plugin", "catalog"], &[], false),
            (&["plugin", "validate"], &["./my-plugin"], false),
            (&["plugin", "frobnicate"], &[], true),
            (&["bar", "plugin"], &["move", "omarchy.clock"], true),
            (
                &["bar", "plugin"],
                &["set", "omarchy.clock", "format", "HH:mm"],
                true,
            ),
            (&["bar", "plugin"], &["replace", "a", "b"], true),
            (&["bar", "plugin"], &[], false),
            (&["theme", "set"], &["my-plugin"], false),
            (&["theme", "set"], &["tokyo-night"], false),
            (&["restart", "waybar"], &[], false),
            (&["toggle", "nightlight"], &[], false),
            // The `shell` route forwards an IPC call: judged as that call (attack 3, F2).
            (&["shell"], &["shell", "rescanPlugins"], true),
            (
                &["shell"],
                &["-q", "plugins", "setPluginEnabled", "bar", "false"],
                true,
            ),
            (
                &["shell"],
                &["shell", "setPluginEnabled", "bar", "false"],
                true,
            ),
            (&["shell"], &["volume", "setVolume", "50"], false),
        ];
        for (w, a, want) in cases {
            assert_eq!(route(w, a), *want, "{w:?} {a:?}");
        }
    }

    #[test]
    fn shell_calls() {
        let cases: &[(&str, &str, &[&str], bool)] = &[
            ("io.github.person.archgate", "status", &[], true),
            ("shell", "restart", &[], true),
            ("omarchy-shell", "quit", &[], true),
            ("plugins", "disable", &["weather"], true),
            ("plugins", "clone", &["omarchy.clock", "local.clock"], true),
            ("plugins", "setOption", &["x", "y"], true),
            ("plugins", "list", &[], false),
            ("plugins", "listAll", &[], false),
            ("shell", "reloadConfig", &[], true),
            ("menu", "open", &["archgate"], true),
            ("bar", "toggle", &[], false),
            ("volume", "setVolume", &["50"], false),
            ("launcher", "open", &[], false),
        ];
        for (t, m, a, want) in cases {
            assert_eq!(call(t, m, a), *want, "{t} {m} {a:?}");
        }
    }

    #[test]
    fn ipc_calls_that_run_what_they_are_given() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The shell's generic dispatcher reaches any method of any plugin (attack 3, F9).
        assert!(ipc_runs_code(
            "shell",
            "call",
            &a(&["omarchy.menu", "runAction", "systemctl reboot"])
        ));
        assert!(ipc_runs_code("menu", "runAction", &a(&["x"])));
        assert!(ipc_runs_code("launcher", "exec", &a(&["x"])));
        assert!(!ipc_runs_code("volume", "setVolume", &a(&["50"])));
        assert!(!ipc_runs_code("bar", "toggle", &[]));
        assert!(!ipc_runs_code("launcher", "open", &[]));
        // The menu opened at an item runs the item's action (Omarchy 4's Menu.qml).
        assert!(ipc_runs_code(
            "shell",
            "summon",
            &a(&["omarchy.menu", r#"{"menu":"system.reboot"}"#])
        ));
        assert!(!ipc_runs_code("shell", "hide", &a(&["omarchy.menu"])));
        assert!(!ipc_runs_code("shell", "summon", &a(&["omarchy.menu"])));
    }
}
