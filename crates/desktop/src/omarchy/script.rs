//! What a route's script does, read from its text, not from what it says about itself.
//!
//! Class (attack 3, F1 and F8): *a safety property taken from the guarded party's own metadata*
//! — the tier from the last word of a route's name, "needs root" from a `requires-sudo` comment
//! in the script. A script whose name reads like looking may write files (`omarchy state set`
//! touches, `clear` deletes); a script without the comment may run `sudo` or `pkexec` itself
//! (`omarchy dns`, `menu timezone`, `restart audio`). So before a route is judged, archgate reads
//! its script (found in the trusted program directories, the file that will run) and the
//! Omarchy scripts it calls, bounded, and looks for what they do:
//!
//! - **elevation**: a line that runs an elevating program (the same check as every argv,
//!   [`archgate_policy::elevates_privilege`]), or a called script marked `requires-sudo`, in the
//!   script or any script it calls — the route is then blocked like a marked one;
//! - **changes**: a command that changes files or reaches the network (`touch`, `rm`, `mkdir`,
//!   `git fetch`, `curl`, a hand-over with `exec`, …) in the script or the scripts it calls — a
//!   route that does one is never `read`;
//! - **asks**: a line that asks the person something (`gum confirm`, a picker, `read`;
//!   [`crate::omarchy::asks`]) — such a route is not handed off;
//! - **runs its values**: the script passes one of its arguments to a shell (`bash -c`, `eval`),
//!   runs it as a program (`exec "$@"`, `-e "$1"`, `uwsm-app -- "$@"`) or runs a file it names
//!   (`bash "$…/$1"`, `source "$1"`) — the route then runs code archgate cannot judge, so it is
//!   never automatic (see [`crate::omarchy::classify`]).
//!
//! The script is trusted text (it lives where only root and the person can write), so reading
//! its words is sound in a way reading an agent's words is not. What cannot be read (no such
//! file, too large, not UTF-8) is not known to be harmless: a route whose script cannot be read
//! is never `read` ([`ScriptFacts::unread`]).

use std::collections::{BTreeSet, VecDeque};

use archgate_exec::Executor;

use crate::omarchy::argcode;
use crate::omarchy::steer::{self, Forward, Steering};
use crate::omarchy::words::words;

/// Largest script read, in bytes; a larger one counts as unread.
const MAX_BYTES: u64 = 256 * 1024;
/// Most scripts read for one route (its own and those it calls, breadth first).
const MAX_SCRIPTS: usize = 32;

/// Where something was seen: the script's file name, the line number and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The script (a file name in Omarchy's `bin/`).
    pub script: String,
    /// The line number (1-based).
    pub line: usize,
    /// What was found there (the program, or the line cut to 120 characters).
    pub what: String,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.script, self.line, self.what)
    }
}

/// What a route's script and the scripts it calls do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptFacts {
    /// The route's own script could not be read: nothing below is known.
    pub unread: bool,
    /// The first elevation seen.
    pub elevates: Option<Seen>,
    /// The first change to files, or network use, seen.
    pub changes: Option<Seen>,
    /// The first place the route's own script runs one of its arguments as code.
    pub runs_values: Option<Seen>,
    /// What the route's own script does with its arguments as paths and as code to keep
    /// (deletes or overwrites a path built from one, installs code named by one).
    pub steering: Steering,
    /// Where the route's own script hands its arguments to another Omarchy script.
    pub forwards: Vec<Forward>,
    /// For a dispatcher, the same per verb (the `case` arm the first argument chooses).
    pub arms: Vec<(Vec<String>, Steering)>,
    /// The first question the script or a script it calls asks the person (a `gum confirm`, a
    /// picker, a `read`; `crate::omarchy::asks`).
    pub asks: Option<Seen>,
    /// Every program the script or a script it calls gives `sudo`, as written (`pacman`, `tee`,
    /// `/usr/bin/usermod`, `env`): a hand-off asks sudo about each (attack 7 F6).
    pub sudo_programs: BTreeSet<String>,
    /// The first place the script or a script it calls reaches root other than by running
    /// `sudo` found by name (`/usr/bin/sudo`, `pkexec`, a search path of its own;
    /// `crate::omarchy::past_sudo`): a hand-off's asking sudo would not stand in the way.
    pub elevates_past_sudo: Option<Seen>,
    /// The first place the script or a script it calls reaches the person's home other than
    /// through `$HOME` (`crate::omarchy::past_sudo::reaches_home`): a handed-off route's script
    /// gets a home that is no one's, and this would find theirs.
    pub reaches_home: Option<Seen>,
    /// The first place the script or a script it calls creates or changes a file as the
    /// person, not through `sudo` (`crate::omarchy::as_person`): its `sudo` steps could take
    /// what any program of the person's put there as root's input.
    pub changes_as_person: Option<Seen>,
    /// Every place the script or a script it calls runs a program that picks what it starts
    /// from the person's files (`crate::omarchy::picks`), the route's own script first when it
    /// is one: resolved at judge time (`crate::omarchy::picked`).
    pub picks: Vec<crate::omarchy::picks::PickSite>,
    /// The first script the route's script calls by name, or Omarchy file it `source`s, that
    /// another user could have written (its owner or mode fails the trust rule program lookup
    /// uses): the route runs none of it (attack 34 F4).
    pub untrusted: Option<Seen>,
    /// Every directory the script or a script it calls names literally (`cd /tmp`, `"/tmp/$1"`,
    /// `"$HOME/x/$1"`): where a bare or relative value may be read as a file
    /// (`crate::omarchy::arg_files`).
    pub dirs: BTreeSet<std::path::PathBuf>,
    /// Every file name the scripts build from one expansion with literal text around it, in a
    /// literal directory (`"/tmp/theme-$1.sh"`): where a value may be read as part of a name.
    pub names: BTreeSet<crate::omarchy::literal_paths::NameTemplate>,
}

impl ScriptFacts {
    /// What the script does with these arguments as paths and code: the arm the first argument
    /// chooses, when the script is a dispatcher and one does; else the whole script.
    pub fn steering_for(&self, args: &[String]) -> &Steering {
        args.first()
            .and_then(|a| self.arms.iter().find(|(words, _)| words.contains(a)))
            .map_or(&self.steering, |(_, s)| s)
    }
}

/// Programs whose running changes files, state or reaches the network. A script that runs one is
/// not a read, whatever its name says.
const CHANGERS: &[&str] = &[
    "touch",
    "rm",
    "rmdir",
    "mv",
    "cp",
    "mkdir",
    "ln",
    "tee",
    "truncate",
    "shred",
    "chmod",
    "chown",
    "install",
    "dd",
    "curl",
    "wget",
    "exec",
    "setsid",
    "systemctl",
    "pkill",
    "kill",
    "killall",
    "notify-send",
];
/// `git` verbs that change a repository or use the network.
const GIT_CHANGERS: &[&str] = &[
    "fetch", "pull", "push", "clone", "commit", "reset", "checkout", "switch", "merge", "rebase",
    "config", "gc", "remote",
];

/// The lines of `text` that are code: comment lines dropped, a trailing ` #` comment cut.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            return None;
        }
        let t = t.split(" #").next().unwrap_or(t).trim();
        Some((i + 1, t))
    })
}

/// Code line `k` of `lines` with the lines it continues onto (each ending in `\`), joined.
fn continued(lines: &[(usize, &str)], k: usize) -> String {
    let mut out = String::new();
    for (_, l) in &lines[k..] {
        match l.strip_suffix('\\') {
            Some(head) => {
                out.push_str(head);
                out.push(' ');
            }
            None => {
                out.push_str(l);
                break;
            }
        }
    }
    out
}

fn cut(line: &str) -> String {
    line.chars().take(120).collect()
}

/// A change (file or network) on this line: the program that makes it.
fn changes_in(line: &str) -> Option<String> {
    let ws = words(line);
    for (i, w) in ws.iter().enumerate() {
        let base = w.rsplit('/').next().unwrap_or(w);
        if CHANGERS.contains(&base) {
            return Some(base.to_owned());
        }
        if base == "git" && ws[i + 1..].iter().any(|v| GIT_CHANGERS.contains(v)) {
            return Some("git".to_owned());
        }
        if base == "sed" && ws[i + 1..].iter().any(|v| v.starts_with("-i")) {
            return Some("sed -i".to_owned());
        }
        if base == "find" && ws[i + 1..].iter().any(|v| *v == "-delete" || *v == "-exec") {
            return Some("find -delete".to_owned());
        }
        if base == "omarchy-state" {
            return Some("omarchy-state".to_owned());
        }
    }
    None
}

/// sudo's options that take a value (sudo(8)): the word after one is no program.
const SUDO_VALUE_OPTIONS: &[&str] = &[
    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
];

/// The programs `sudo` is given on `line`: after each `sudo`, the first word that is neither an
/// option nor an option's value (a variable's name stands as written: no such program is found,
/// so sudo cannot be asked about it).
fn sudo_programs_in(line: &str) -> Vec<String> {
    let ws = words(line);
    let mut out = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        if w.rsplit('/').next() != Some("sudo") {
            continue;
        }
        let mut j = i + 1;
        while let Some(a) = ws.get(j) {
            if *a == "--" {
                j += 1;
                break;
            }
            if !a.starts_with('-') {
                break;
            }
            j += if SUDO_VALUE_OPTIONS.contains(a) { 2 } else { 1 };
        }
        if let Some(p) = ws.get(j) {
            out.push((*p).to_owned());
        }
    }
    out
}

/// A script's text, found as it will run — or why a script of that name found in the search
/// directories may not be trusted (`Err`), or nothing (`Ok(None)`: not installed, not text).
fn read(executor: &Executor, name: &str) -> Result<Option<String>, String> {
    let path = match executor.resolve_program(name) {
        Ok(p) => p,
        Err(e @ archgate_exec::ExecError::Untrusted { .. }) => return Err(e.to_string()),
        Err(_) => return Ok(None),
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Ok(None);
    }
    Ok(std::fs::read(&path)
        .ok()
        .and_then(|b| String::from_utf8(b).ok()))
}

/// Names of Omarchy scripts a line calls.
fn called(line: &str) -> impl Iterator<Item = &str> {
    words(line).into_iter().filter(|w| {
        w.starts_with("omarchy-")
            && w.len() > "omarchy-".len()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Reads `binary` (a script name, found through `executor` exactly as it will run) and the
/// Omarchy scripts it calls, breadth first, at most [`MAX_SCRIPTS`], and says what they do.
/// `tree`: the Omarchy install the route runs from — the one its scripts are found in and given
/// as `OMARCHY_PATH` — judged whole first (`None`: judged already, or no install).
pub fn scan(executor: &Executor, tree: Option<&std::path::Path>, binary: &str) -> ScriptFacts {
    let mut facts = ScriptFacts::default();
    // Omarchy's tree judged whole: whatever spelling a script uses to run or source a file of
    // it, the file is one of these (`tree.rs`). The install archgate runs, not the daemon's own
    // `OMARCHY_PATH` (attack 36 F5: an install found without it, or named by the config, was
    // never judged).
    if let Some((path, why)) = tree.and_then(|t| crate::omarchy::tree::judge(executor, t)) {
        facts.untrusted = Some(Seen {
            script: path.display().to_string(),
            line: 0,
            what: cut(&why),
        });
    }
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<String> = VecDeque::from([binary.to_owned()]);
    seen.insert(binary.to_owned());
    facts.picks.extend(crate::omarchy::picks::own_site(binary));
    while let Some(name) = queue.pop_front() {
        let own = name == binary;
        let text = match read(executor, &name) {
            Ok(Some(text)) => text,
            Err(why) if !own => {
                // A helper another user could have rewritten runs under the person's yes to
                // the route, which names only the route's script (attack 34 F4).
                if facts.untrusted.is_none() {
                    facts.untrusted = Some(Seen {
                        script: name.clone(),
                        line: 0,
                        what: cut(&why),
                    });
                }
                continue;
            }
            _ if own => {
                facts.unread = true;
                return facts;
            }
            _ => continue,
        };
        facts
            .dirs
            .extend(crate::omarchy::literal_paths::dirs(&text));
        facts
            .names
            .extend(crate::omarchy::literal_paths::names(&text));
        if own {
            facts.runs_values = argcode::runs_values(&text).map(|(line, what)| Seen {
                script: name.clone(),
                line,
                what: cut(&what),
            });
            facts.steering = steer::steering(&text);
            facts.forwards = steer::forwards(&text);
            facts.arms = steer::steering_by_arm(&text);
        }
        if !own && facts.elevates.is_none() && text.contains("omarchy:requires-sudo=true") {
            facts.elevates = Some(Seen {
                script: name.clone(),
                line: 0,
                what: "marked requires-sudo".to_owned(),
            });
        }
        // A command whose name is computed may be any picker (attack 26 F8: `computed.rs`).
        for (line, name_text) in crate::omarchy::computed::commands(&text) {
            let site = crate::omarchy::picks::PickSite {
                picker: "a command named at run time",
                kind: crate::omarchy::picks::PickKind::Computed,
                seen: Seen {
                    script: name.clone(),
                    line,
                    what: cut(&name_text),
                },
                word: None,
            };
            if !facts.picks.contains(&site) {
                facts.picks.push(site);
            }
        }
        let lines: Vec<(usize, &str)> = code_lines(&text).collect();
        for (k, &(n, line)) in lines.iter().enumerate() {
            let at = |what: String| Seen {
                script: name.clone(),
                line: n,
                what,
            };
            if facts.elevates.is_none()
                && let Some(p) = archgate_policy::elevates_privilege(&[line])
            {
                facts.elevates = Some(at(p.to_owned()));
            }
            if facts.changes.is_none()
                && let Some(p) = changes_in(line)
            {
                facts.changes = Some(at(p));
            }
            if facts.asks.is_none()
                && let Some(p) = crate::omarchy::asks::asks_in(line, &words(line))
            {
                facts.asks = Some(at(p));
            }
            if facts.elevates_past_sudo.is_none()
                && let Some(p) = crate::omarchy::past_sudo::past_sudo(line)
            {
                facts.elevates_past_sudo = Some(at(p));
            }
            if facts.changes_as_person.is_none()
                && let Some(p) = crate::omarchy::as_person::changes_as_person(line)
            {
                facts.changes_as_person = Some(at(p));
            }
            if facts.reaches_home.is_none()
                && let Some(p) = crate::omarchy::past_sudo::reaches_home(line)
            {
                facts.reaches_home = Some(at(p));
            }
            facts.sudo_programs.extend(sudo_programs_in(line));
            // A command continued over lines (`bash \` then `-lc …`) is read whole for picks
            // (attack 26 F2).
            let sites = crate::omarchy::picks::sites_in(&name, n, &continued(&lines, k));
            for c in called(line) {
                // A picker reached by any spelling this reader finds — inside a string, a
                // variable later `eval`ed (`LAUNCH_COMMAND="omarchy-launch-webapp $@"`) — is a
                // pick site too, when `sites_in` did not already see it on this line (attack 25
                // F3: two readers of one line disagreed, and the pick went unseen).
                if let Some(p) = crate::omarchy::picks::picker(c)
                    && !sites.iter().any(|s| s.picker == p.name)
                {
                    let site = crate::omarchy::picks::PickSite {
                        picker: p.name,
                        kind: p.kind,
                        seen: Seen {
                            script: name.clone(),
                            line: n,
                            what: cut(line),
                        },
                        word: None,
                    };
                    if !facts.picks.contains(&site) {
                        facts.picks.push(site);
                    }
                }
            }
            for site in sites {
                if !facts.picks.contains(&site) {
                    facts.picks.push(site);
                }
            }
            for c in called(line) {
                if seen.len() < MAX_SCRIPTS && seen.insert(c.to_owned()) {
                    queue.push_back(c.to_owned());
                }
            }
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_by_program() {
        assert_eq!(
            changes_in(r#"set) touch "$STATE_DIR/$STATE_NAME" ;;"#).as_deref(),
            Some("touch")
        );
        assert_eq!(
            changes_in(r#"clear) find "$D" -maxdepth 1 -type f -name "$N" -delete ;;"#).as_deref(),
            Some("find -delete")
        );
        assert_eq!(
            changes_in(r#"timeout 10 git -C "$OMARCHY_PATH" fetch --quiet"#).as_deref(),
            Some("git")
        );
        assert_eq!(changes_in(r#"git -C "$OMARCHY_PATH" rev-parse HEAD"#), None);
        assert_eq!(changes_in(r#"find "$dir" -name '*.conf'"#), None);
        assert_eq!(changes_in(r#"echo "$current""#), None);
    }

    #[test]
    fn the_programs_sudo_is_given_are_found_past_its_options() {
        // Shapes of Omarchy 4's lines (bin/omarchy-install-gaming-xbox-controllers,
        // bin/omarchy-update-system-pkgs): our own text.
        for (line, want) in [
            (r#"sudo usermod -aG input "$USER""#, vec!["usermod"]),
            (
                r#"echo x | sudo tee /etc/modules-load.d/x.conf >/dev/null"#,
                vec!["tee"],
            ),
            (
                r#"sudo env OMARCHY_UPDATE_PACMAN=1 pacman -Syu --noconfirm"#,
                vec!["env"],
            ),
            (
                r#"sudo -u root -- /usr/bin/systemctl restart x"#,
                vec!["/usr/bin/systemctl"],
            ),
            (r#"sudo -E true && sudo reboot now"#, vec!["true", "reboot"]),
        ] {
            assert_eq!(sudo_programs_in(line), want, "{line}");
        }
        assert!(sudo_programs_in("pacman -Q sudo").is_empty());
    }
}
