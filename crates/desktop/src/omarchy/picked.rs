//! A route's picks resolved at judge time, as the picking script would resolve them: the same
//! files in the same order (`crate::omarchy::picks` says which scripts pick and from what).
//!
//! The rule: a pick decided by a file of the person's — one under their home or XDG
//! directories (any program of theirs, the agent's shell included, may write it), or one outside
//! that is not root's all the way — is a [`Picked`]: the route then runs a program archgate
//! cannot judge, so the call is never automatic, and the question says the file and what it
//! starts. A pick decided by root's files (a root-owned browser entry that declares the web's
//! schemes, no hook, no defaults file) is no [`Picked`], and the route is judged as before. The
//! file is identified by its path, where a link leads and its content's digest: the run
//! resolves again and refuses when that changed since the person was asked.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::env::DesktopEnv;
use crate::error::{DesktopError, Result};
use crate::omarchy::picks::{PickKind, PickSite};
use crate::url_handler::{MimeDirs, entry_key, root_owned, text_declares_mime, valid_id};

/// A program a route's script will start, picked by a file of the person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    /// The file that decides it (as the script names it).
    pub file: PathBuf,
    /// What it starts, in words: `Exec=…` of an entry, an editor's name, a hook's first line.
    pub starts: String,
    /// The program's name as the script will run it (`bash` for a hook), when one is named.
    pub program: Option<String>,
    /// Where the file leads and a digest of its content: what the person approved.
    pub identity: String,
    /// The file is itself the code that runs (a hook, a sourced file), not a name of a program.
    pub is_code: bool,
}

impl Picked {
    /// One line for the person's question: the file and what it starts.
    pub fn describe(&self) -> String {
        // A file named only as the script runs is no file archgate found, nor one it can say is
        // the person's (attack 36 L2: "your" of a file another user had put there).
        let unnamed = !self.file.is_absolute() && !self.file.starts_with("~");
        if self.is_code && unnamed {
            return format!("runs, as code, a {}: {}", self.file.display(), self.starts);
        }
        if self.is_code {
            return format!("runs your {} as code: {}", self.file.display(), self.starts);
        }
        format!(
            "starts the program your {} names: {}",
            self.file.display(),
            self.starts
        )
    }
}

/// Most bytes of a deciding file read to show and digest; a larger one is refused.
const MAX_BYTES: u64 = 64 * 1024;

/// The file's identity (where it leads, its content's SHA-256) and its text.
fn identify(file: &Path) -> Result<(String, String)> {
    let io = |source| DesktopError::Io {
        what: "reading a file a route's script picks its program from",
        path: file.to_owned(),
        source,
    };
    let real = std::fs::canonicalize(file).map_err(io)?;
    // A file that decides what runs must be the person's or root's all the way (attack 37 F6:
    // another user's file a route sources was shown as "your … as code" and run after the yes).
    let me = std::fs::metadata("/proc/self").map_err(io)?.uid();
    if let Err(why) = archgate_exec::trusted_path(Some(me), file) {
        return Err(DesktopError::Blocked {
            command: format!("{} ({why})", file.display()),
            reason: "a route's script runs this file as code or picks its program from it, and \
                     another user could have written it; archgate runs no code another user \
                     could have changed",
        });
    }
    let meta = std::fs::metadata(&real).map_err(io)?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(DesktopError::Blocked {
            command: file.display().to_string(),
            reason: "a route's script picks its program from this file, and it is not a regular \
                     file archgate can read whole to show you",
        });
    }
    let pin = archgate_exec::FilePin::open(&real).map_err(io)?;
    let text = std::fs::read_to_string(&real).map_err(io)?;
    let digest = pin.sha256().unwrap_or_default();
    Ok((format!("{} sha256:{digest}", real.display()), text))
}

/// Whether `path` is the person's: under their home or XDG directories, or not root's all the
/// way.
fn persons(env: &DesktopEnv, path: &Path) -> bool {
    let mine = [env.home.as_ref(), env.xdg_config_home.as_ref()]
        .into_iter()
        .flatten()
        .any(|d| path.starts_with(d));
    mine || root_owned(path).is_err()
}

fn first_code_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("")
        .chars()
        .take(100)
        .collect()
}

/// Every pick of `sites` that a file of the person's decides, for a route whose script is
/// `binary` called with `args`. An error when a deciding file cannot be read whole.
pub fn resolve(
    env: &DesktopEnv,
    sites: &[PickSite],
    binary: &str,
    args: &[String],
) -> Result<Vec<Picked>> {
    let mut out: Vec<Picked> = Vec::new();
    for site in sites {
        let mut found = resolve_one(env, site, binary, args)?;
        if found.is_empty() {
            found.push(absent(site));
        }
        for p in found {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// A pick no file of the person's decides *now*: every picker reads the person's directories
/// first, where any program of theirs may put a file after archgate looks and before the script
/// reads it (attack 24 F4: a browser entry written once the script ran, or a FIFO that fed
/// archgate one entry and `sed` another, started the agent's program under developer mode). So
/// the pick is still the person's: never automatic, and the question says what decides it. The
/// run refuses when a file has appeared since the question (its identity is no longer
/// `absent`); after the run starts, whatever the file then names is what the person approved.
fn absent(site: &PickSite) -> Picked {
    if site.kind == PickKind::Computed {
        return Picked {
            file: PathBuf::from("programs and files the script names when it runs"),
            starts: format!(
                "{} runs a command whose name it computes — any program, one a file of yours picks included (line {}: {})",
                site.seen.script, site.seen.line, site.seen.what
            ),
            program: None,
            identity: "absent".to_owned(),
            is_code: true,
        };
    }
    if site.kind == PickKind::Sourced {
        // The file a start-up read or a `source` names (attack 26 F9: the generic text named
        // `user-dirs.dirs` and `.bashrc` for a login shell), or, when the script names it only
        // as it runs (`sourced.rs`), that: whichever it is, it is the person's to approve.
        let (file, starts) = match &site.word {
            Some(rel) => (
                format!("~/{rel}"),
                format!(
                    "{} runs it as code when it is there (none there now; line {}: {})",
                    site.seen.script, site.seen.line, site.seen.what
                ),
            ),
            // Named only as the script runs (a variable, a loop, a command's output): archgate
            // cannot show or pin it, and says so (attack 27 F5).
            None => (
                "file the script names when it runs".to_owned(),
                format!(
                    "{} runs code it finds only as it runs, which archgate cannot show you or hold \
                     to what you approve — whatever it is then runs (line {}: {})",
                    site.seen.script, site.seen.line, site.seen.what
                ),
            ),
        };
        return Picked {
            file: PathBuf::from(file),
            starts,
            program: None,
            identity: "absent".to_owned(),
            is_code: true,
        };
    }
    let reads = crate::omarchy::picks::picker(site.picker).map_or("its files", |p| p.reads);
    Picked {
        file: PathBuf::from(reads),
        starts: format!(
            "{} starts whatever a file of yours there names when it runs (none there now)",
            site.picker
        ),
        program: None,
        identity: "absent".to_owned(),
        is_code: matches!(site.kind, PickKind::Hook | PickKind::Sourced),
    }
}

/// Whether `path` is a regular file (through links): a FIFO or a device is never opened to read
/// (a FIFO would hold archgate, or feed it one text and the script another).
fn regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// How deep a chain of sourced files is followed (`~/.bash_profile` → `~/.bashrc` → …); a
/// deeper one refuses the call (attack 27 F5: a fifth file was neither shown nor pinned).
const MAX_SOURCED_DEPTH: usize = 8;

/// `rel` under the home, sourced by `by`, when it is there — and every file of the person's it
/// runs as code in turn, read as a route's script is (`sourced.rs`), so the yes pins each
/// (attack 26 F12: Omarchy's own `~/.bash_profile` is `[[ -f ~/.bashrc ]] && . ~/.bashrc`; only
/// the first was pinned, and a `~/.bashrc` changed after the yes ran). One the file names only
/// when it runs is a pick no file decides now ([`absent`]): never automatic, said so.
fn sourced(home: &Path, rel: &str, by: &str, depth: usize, out: &mut Vec<Picked>) -> Result<()> {
    let file = home.join(rel);
    if !file.is_file() || out.iter().any(|p| p.file == file) {
        return Ok(());
    }
    let (identity, text) = identify(&file)?;
    out.push(Picked {
        starts: format!("{by} sources it (first line: {})", first_code_line(&text)),
        program: None,
        file: file.clone(),
        identity,
        is_code: true,
    });
    let name = file.display().to_string();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        for site in crate::omarchy::picks::sites_in(&name, n + 1, line)
            .into_iter()
            .filter(|s| s.kind == PickKind::Sourced)
        {
            match &site.word {
                Some(next) if depth + 1 < MAX_SOURCED_DEPTH => {
                    sourced(home, next, &name, depth + 1, out)?;
                }
                Some(_) => {
                    return Err(DesktopError::Blocked {
                        command: name.clone(),
                        reason: "a route's script runs files of yours that source others more \
                                 than eight deep, which archgate cannot show you whole",
                    });
                }
                None => {
                    let p = absent(&site);
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    }
    Ok(())
}

fn resolve_one(
    env: &DesktopEnv,
    site: &PickSite,
    binary: &str,
    args: &[String],
) -> Result<Vec<Picked>> {
    let Some(home) = env.home.clone() else {
        return Ok(Vec::new());
    };
    match site.kind {
        PickKind::WebAppBrowser | PickKind::DefaultBrowser => browser(env, &home, site.kind),
        PickKind::DefaultEditor => {
            let file = home.join(".local/state/omarchy/defaults/editor");
            if !file.is_file() {
                return Ok(Vec::new());
            }
            let (identity, text) = identify(&file)?;
            let editor = text.lines().next().unwrap_or("").trim().to_owned();
            Ok(vec![Picked {
                file,
                starts: if editor.is_empty() {
                    "(nothing: Omarchy's script falls back to nvim)".to_owned()
                } else {
                    editor.clone()
                },
                program: (!editor.is_empty()).then_some(editor),
                identity,
                is_code: false,
            }])
        }
        PickKind::Hook => {
            let hooks = home.join(".config/omarchy/hooks");
            let own = (site.seen.script == binary && site.seen.line == 0)
                .then(|| args.first().cloned())
                .flatten();
            let name = site
                .word
                .clone()
                .or(own)
                .filter(|n| crate::omarchy::stays_in_place(n));
            let mut files: Vec<PathBuf> = Vec::new();
            let mut dirs: Vec<PathBuf> = Vec::new();
            match &name {
                Some(n) => {
                    files.push(hooks.join(n));
                    dirs.push(hooks.join(format!("{n}.d")));
                }
                // A name the script computes: any hook may be the one.
                None => dirs.push(hooks.clone()),
            }
            let mut found: Vec<PathBuf> = files.into_iter().filter(|f| f.is_file()).collect();
            for d in dirs {
                found.extend(files_under(&d, 2));
            }
            found.sort();
            found
                .into_iter()
                .filter(|f| !f.to_string_lossy().ends_with(".sample"))
                .map(|file| {
                    let (identity, text) = identify(&file)?;
                    Ok(Picked {
                        starts: format!(
                            "omarchy-hook runs it with bash (first line: {})",
                            first_code_line(&text)
                        ),
                        program: Some("bash".to_owned()),
                        file,
                        identity,
                        is_code: true,
                    })
                })
                .collect()
        }
        PickKind::Terminal => terminal(env, &home),
        // A command run by a literal path under the home (`"$HOME/.local/share/omarchy/bin/x"`)
        // is a file there now: judged like any file that decides what runs (attack 38 F9: a
        // 0777 one, rewritten by another user, ran as "a command named at run time"). Anything
        // else is named only as it runs: [`absent`] says so.
        PickKind::Computed => {
            let text = site.seen.what.trim_matches(|c| c == '"' || c == '\'');
            let rest = text
                .strip_prefix("$HOME/")
                .or_else(|| text.strip_prefix("${HOME}/"))
                .or_else(|| text.strip_prefix("~/"));
            let Some(rest) = rest.filter(|r| !r.contains(['$', '`', '*', '?', '['])) else {
                return Ok(Vec::new());
            };
            let file = home.join(rest);
            if std::fs::symlink_metadata(&file).is_err() {
                return Ok(Vec::new());
            }
            let (identity, _) = identify(&file)?;
            Ok(vec![Picked {
                starts: format!("{} runs it by its path", site.seen.script),
                program: Some(file.display().to_string()),
                file,
                identity,
                is_code: true,
            }])
        }
        PickKind::Sourced => {
            let Some(rel) = &site.word else {
                return Ok(Vec::new());
            };
            let mut out = Vec::new();
            sourced(&home, rel, &site.seen.script, 0, &mut out)?;
            Ok(out)
        }
        PickKind::DesktopEntry => {
            let dirs = MimeDirs::for_env(env);
            let Some(word) = &site.word else {
                // The entry is chosen at run time: any of the person's entries may be it.
                return person_entries(&dirs, |_| true);
            };
            let id = if word.ends_with(".desktop") {
                word.clone()
            } else {
                format!("{word}.desktop")
            };
            match dirs.find_entry(&id) {
                Some((file, system)) if !system || persons(env, &file) => {
                    Ok(vec![entry_pick(&file)?])
                }
                _ => Ok(Vec::new()),
            }
        }
        PickKind::UrlHandler => {
            let dirs = MimeDirs::for_env(env);
            match dirs.resolve("https://example.org/", &root_owned) {
                Ok(_) => Ok(Vec::new()),
                Err(e) => {
                    let file = dirs
                        .config_home
                        .clone()
                        .unwrap_or_else(|| home.join(".config"))
                        .join("mimeapps.list");
                    let identity = identify(&file).map(|(i, _)| i).unwrap_or_default();
                    Ok(vec![Picked {
                        file,
                        starts: format!("the handler it names ({e})"),
                        program: None,
                        identity,
                        is_code: false,
                    }])
                }
            }
        }
    }
}

/// The regular files under `dir`, `depth` levels down at most (links are not followed).
fn files_under(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in read.flatten() {
        let Ok(kind) = e.file_type() else {
            continue;
        };
        if kind.is_dir() && depth > 1 {
            out.extend(files_under(&e.path(), depth - 1));
        } else if !kind.is_dir() {
            out.push(e.path());
        }
    }
    out
}

/// A desktop entry as a pick: its `Exec=` line.
fn entry_pick(file: &Path) -> Result<Picked> {
    let (identity, text) = identify(file)?;
    let exec = first_exec(&text).unwrap_or_default();
    Ok(Picked {
        file: file.to_owned(),
        starts: format!("Exec={exec}"),
        program: exec.split_whitespace().next().map(str::to_owned),
        identity,
        is_code: false,
    })
}

/// The first `Exec=` line of an entry, as Omarchy's `sed -n 's/^Exec=…/p' | head -1` finds it
/// (in any group).
fn first_exec(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("Exec="))
        .map(|v| v.trim().to_owned())
}

/// The person's entries (data home's `applications/`) that `keep` accepts, as picks.
fn person_entries(dirs: &MimeDirs, keep: impl Fn(&str) -> bool) -> Result<Vec<Picked>> {
    let Some(apps) = dirs.data_home.as_ref().map(|d| d.join("applications")) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = files_under(&apps, 2)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|x| x == "desktop"))
        .filter(|f| regular(f) && std::fs::read_to_string(f).is_ok_and(|t| keep(&t)))
        .collect();
    files.sort();
    files.iter().map(|f| entry_pick(f)).collect()
}

/// Browsers Omarchy's `launch webapp` keeps as the default (its `case`); any other id is
/// replaced by `chromium.desktop`.
const WEBAPP_BROWSERS: &[&str] = &[
    "google-chrome",
    "brave",
    "microsoft-edge",
    "opera",
    "vivaldi",
    "helium",
];

/// `launch webapp` / `launch browser`: the default browser's id as `xdg-settings` answers on a
/// desktop it has no special case for (`xdg-mime query default x-scheme-handler/http`, the
/// `mimeapps.list` files in the spec's order), then the first `Exec=` of the id's file in the
/// script's three directories, in its order. Root's when that file is root's all the way,
/// outside the person's directories, and declares the web's schemes in its `MimeType=`. When no
/// list names a default, `xdg-settings` answers from what archgate does not read (`$BROWSER`, a
/// distribution's `x-www-browser`), so every entry of the person's the script could then read is
/// a candidate (for `launch webapp`, those of the browsers it keeps, and `chromium.desktop`).
fn browser(env: &DesktopEnv, home: &Path, kind: PickKind) -> Result<Vec<Picked>> {
    let dirs = MimeDirs::for_env(env);
    let chosen = dirs.default_for("x-scheme-handler/http");
    let person_dirs = [
        home.join(".local/share/applications"),
        home.join(".nix-profile/share/applications"),
    ];
    let kept = |id: &str| WEBAPP_BROWSERS.iter().any(|b| id.starts_with(b));
    let mut ids: Vec<String> = Vec::new();
    match &chosen {
        Some((_, id)) if kind == PickKind::WebAppBrowser && !kept(id) => {
            ids.push("chromium.desktop".to_owned());
        }
        Some((list, id)) => {
            if !valid_id(id) {
                // An id no spec allows: the list that set it decides.
                let (identity, _) = identify(list)?;
                return Ok(vec![Picked {
                    file: list.clone(),
                    starts: format!("the default browser {id:?}"),
                    program: None,
                    identity,
                    is_code: false,
                }]);
            }
            ids.push(id.clone());
        }
        None => {
            if kind == PickKind::WebAppBrowser {
                ids.push("chromium.desktop".to_owned());
            }
            for d in &person_dirs {
                let Ok(read) = std::fs::read_dir(d) else {
                    continue;
                };
                for e in read.flatten() {
                    let id = e.file_name().to_string_lossy().into_owned();
                    if valid_id(&id)
                        && (kind == PickKind::DefaultBrowser || kept(&id))
                        && !ids.contains(&id)
                    {
                        ids.push(id);
                    }
                }
            }
            ids.sort();
        }
    }
    let mut out = Vec::new();
    for id in ids {
        let candidates = [
            person_dirs[0].join(&id),
            person_dirs[1].join(&id),
            PathBuf::from("/usr/share/applications").join(&id),
        ];
        for file in candidates {
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            if !regular(&file) {
                identify(&file)?; // refuses: not a regular file archgate can show
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if first_exec(&text).is_none() {
                continue;
            }
            let declares = text_declares_mime(&text, "x-scheme-handler/https")
                || text_declares_mime(&text, "x-scheme-handler/http");
            if !persons(env, &file) && declares {
                break;
            }
            let mut p = entry_pick(&file)?;
            if let Some((list, _)) = chosen.as_ref().filter(|(l, _)| persons(env, l)) {
                p.starts = format!(
                    "{} (the default browser set in {})",
                    p.starts,
                    list.display()
                );
            }
            out.push(p);
            break;
        }
    }
    Ok(out)
}

/// `xdg-terminal-exec`: its lists in the config home (`xdg-terminals.list`,
/// `<desktop>-xdg-terminals.list`) and the entries in the data home's `xdg-terminals/` and —
/// those declaring a terminal emulator — `applications/`. Any of them present is the person's
/// pick (the lists name an id the person's entries may shadow): resolved conservatively.
fn terminal(env: &DesktopEnv, home: &Path) -> Result<Vec<Picked>> {
    let config = env
        .xdg_config_home
        .clone()
        .unwrap_or_else(|| home.join(".config"));
    let mut out = Vec::new();
    let mut lists: Vec<PathBuf> = std::fs::read_dir(&config)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().ends_with("xdg-terminals.list"))
                })
                .collect()
        })
        .unwrap_or_default();
    lists.sort();
    for list in lists.into_iter().filter(|l| l.is_file()) {
        let (identity, text) = identify(&list)?;
        out.push(Picked {
            starts: format!("the terminal it names first: {}", first_code_line(&text)),
            program: None,
            file: list,
            identity,
            is_code: false,
        });
    }
    let dirs = MimeDirs::for_env(env);
    if let Some(data) = &dirs.data_home {
        let mut own: Vec<PathBuf> = files_under(&data.join("xdg-terminals"), 1);
        own.sort();
        for f in own {
            out.push(entry_pick(&f)?);
        }
    }
    out.extend(person_entries(&dirs, |t| {
        entry_key(t, "Categories").is_some_and(|c| c.split(';').any(|c| c == "TerminalEmulator"))
    })?);
    Ok(out)
}

#[cfg(test)]
mod tests;
