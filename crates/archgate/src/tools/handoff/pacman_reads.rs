//! Everything pacman reads, writes or runs as root because its configuration says so — judged
//! root's alone, all of it, before a pacman hand-off.
//!
//! Class (attack 12 F1, attack 13 F3): *the check enumerates some of the options pacman reads
//! instead of all that name a path or a program*. A repository of the person's, a log file in
//! their directory, a downloader (`XferCommand`) or a hook's program they can write: each ran the
//! agent's code (or wrote the agent's file) as root on the person's password. So the check is an
//! allowlist, from pacman.conf(5) and alpm-hooks(5) (pacman 6.0 here; pacman 7's `CacheServer`,
//! `DownloadUser` and sandbox switches too):
//!
//! - the file and every `Include` root's alone; `RootDir`, `DBPath`, the log's directory, every
//!   `CacheDir`, every `HookDir` (default `/etc/pacman.d/hooks/`) and the system hook directory
//!   (`RootDir/usr/share/libalpm/hooks/`), `GPGDir` (default `/etc/pacman.d/gnupg/`) and every
//!   repository on this machine (`Server`/`CacheServer = file://DIR`, in every spelling
//!   libcurl takes) root's alone, and a repository on a loopback address only when its packages
//!   must be signed (`pacman_reads/servers.rs`);
//! - `XferCommand`: its program an absolute path, root's all the way, and every absolute path in
//!   its words root's (pacman runs it as root for every download);
//! - every hook in those directories: the file root's, its `Exec` program root's all the way
//!   under `RootDir` (pacman runs hooks chrooted there) and every absolute path in its words
//!   (a shell's `-c` text included) root's;
//! - what is in `GPGDir` root's alone (`gpg.conf`, `gpg-agent.conf` name programs gpg runs);
//! - `DownloadUser` never the person (the downloads would be theirs, and the agent's, to change);
//! - any other option, or any directive of a repository archgate does not know, refuses: a
//!   future option fails closed.

use std::path::{Path, PathBuf};

use archgate_core::tool::{ErrorKind, ToolError};
use archgate_pacman::conf::PacmanConf;

use super::pinned;

mod servers;

/// The file pacman reads when nothing names another (its compiled-in default), the one an
/// Omarchy script's `sudo pacman …` reads.
pub const DEFAULT_CONF: &str = "/etc/pacman.conf";

/// pacman's defaults when the configuration names none (`pacman-conf` prints them; not under
/// `RootDir`).
const DEFAULT_HOOK_DIR: &str = "/etc/pacman.d/hooks/";
const DEFAULT_GPG_DIR: &str = "/etc/pacman.d/gnupg/";
/// libalpm's own hook directory, under `RootDir`.
const SYSTEM_HOOK_DIR: &str = "usr/share/libalpm/hooks/";

/// `[options]` directives that name no path, program or user, so nothing of the person's can
/// enter through them (pacman.conf(5); pacman 7's sandbox switches; `ILoveCandy`, undocumented).
/// The path- and program-valued ones are parsed into their own fields and judged below.
const HARMLESS_OPTIONS: &[&str] = &[
    "UseSyslog",
    "Color",
    "NoProgressBar",
    "CheckSpace",
    "VerbosePkgLists",
    "DisableDownloadTimeout",
    "ParallelDownloads",
    "CleanMethod",
    "LocalFileSigLevel",
    "RemoteFileSigLevel",
    "ILoveCandy",
    "DisableSandbox",
    "DisableSandboxFilesystem",
    "DisableSandboxSyscalls",
];

/// Judges `c` as the module documentation says; the refusal names what is not root's.
pub(crate) fn check_conf(c: &PacmanConf) -> Result<(), ToolError> {
    judge(c, nix::unistd::getuid().as_raw()).map_err(|why| {
        ToolError::new(
            ErrorKind::Refused,
            format!(
                "pacman's configuration is not root's alone, so a hand-off would let whoever can write it run code as root: {why}"
            ),
        )
        .next("tell the person: a hand-off uses only a pacman.conf (and includes, directories, hooks and downloader) that root alone can write; they can run the step themselves")
    })
}

/// The judgement itself, for the person `person` (their uid).
pub(crate) fn judge(c: &PacmanConf, person: u32) -> Result<(), String> {
    for f in std::iter::once(&c.path).chain(&c.files) {
        pinned::root_file(f)?;
    }
    judge_settings(c, person)
}

/// What the files say, once they are known root's: every option, directory, downloader and hook.
fn judge_settings(c: &PacmanConf, person: u32) -> Result<(), String> {
    // pacman reports a repository named twice as an error and goes on with the first section
    // (attack 26 F5: archgate merged the second's `SigLevel = Required` into the first's `Never`).
    if let Some(name) = c.duplicate_repos.first() {
        return Err(format!(
            "{}: the repository [{name}] is named by more than one section (pacman uses the first and reports an error for the others)",
            c.path.display()
        ));
    }
    for (key, values) in &c.options {
        match key.as_str() {
            "DownloadUser" => download_user(values, person)?,
            k if HARMLESS_OPTIONS.contains(&k) => {}
            k => {
                return Err(format!(
                    "{}: the option `{k}` is one archgate does not judge",
                    c.path.display()
                ));
            }
        }
    }
    if let Some(r) = c.repos.iter().find(|r| !r.unknown.is_empty()) {
        return Err(format!(
            "{}: the directive `{}` of [{}] is one archgate does not judge",
            c.path.display(),
            r.unknown[0],
            r.name
        ));
    }
    for d in directories(c) {
        existing_root_dir(&d)?;
    }
    database_tree(&c.db_path, 0, person)?;
    for d in servers::on_this_machine(c)? {
        existing_root_dir(&d)?;
        repository_files(&d)?;
    }
    gnupg_files(c)?;
    if let Some(x) = &c.xfer_command {
        judge_command(x, None).map_err(|e| format!("XferCommand `{x}`: {e}"))?;
    }
    for hook in hooks(c)? {
        let text =
            std::fs::read_to_string(&hook).map_err(|e| format!("{}: {e}", hook.display()))?;
        for exec in hook_execs(&text) {
            judge_command(&exec, Some(&c.root_dir))
                .map_err(|e| format!("the hook {} runs `{exec}`: {e}", hook.display()))?;
        }
    }
    Ok(())
}

/// Every directory pacman reads or writes as root by this configuration (see the module
/// documentation).
fn directories(c: &PacmanConf) -> Vec<PathBuf> {
    let mut v = vec![c.root_dir.clone(), c.db_path.clone()];
    v.extend(c.log_file.parent().map(Path::to_path_buf));
    v.extend(c.cache_dirs.iter().cloned());
    v.extend(hook_dirs(c));
    v.push(
        c.gpg_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_GPG_DIR)),
    );
    v
}

/// The hook directories pacman reads: libalpm's own under `RootDir`, then `HookDir`'s (or its
/// default).
fn hook_dirs(c: &PacmanConf) -> Vec<PathBuf> {
    let mut v = vec![under(&c.root_dir, SYSTEM_HOOK_DIR)];
    if c.hook_dirs.is_empty() {
        v.push(PathBuf::from(DEFAULT_HOOK_DIR));
    } else {
        v.extend(c.hook_dirs.iter().cloned());
    }
    v
}

/// `path` (absolute or not) under `root`, as a chroot there sees it.
fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// A directory that may not exist yet, judged by the nearest one that does. A relative one
/// refuses: pacman would take it from whatever directory it is started in — the terminal's, the
/// person's (`HookDir = hooks/`, or the words after an inline `#`, which pacman reads as more
/// hook directories: attack 22 F5).
fn existing_root_dir(d: &Path) -> Result<(), String> {
    if d.is_relative() {
        return Err(format!(
            "`{}` is a relative path: pacman would read it from the directory it is started in",
            d.display()
        ));
    }
    let existing = d.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"));
    pinned::root_dir(existing).map(|_| ())
}

/// Every file of a repository on this machine root's alone, links followed (attack 29 F8; class:
/// *the check reads a different object than the privileged command uses*): pacman reads the
/// database (`REPO.db`, `REPO.files`, their `.sig`) and the package files from the directory, and
/// a person's file in root's directory — what `sudo mv` leaves — was the agent's to rewrite: root
/// installed its package. Every entry but a directory is judged, whatever its name: the database
/// names the package files.
fn repository_files(d: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(d) else {
        return Ok(()); // none there (its nearest directory is judged root's)
    };
    for e in entries {
        let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {}
            _ => {
                pinned::root_file(&p).map_err(|e| {
                    format!(
                        "the repository {} holds a file not root's alone: {e}",
                        d.display()
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// [`database_tree`] for a database directory a pacman line names itself (`--dbpath`, in a
/// route's script), for the person running this process.
pub(crate) fn database_roots_alone(d: &Path) -> Result<(), String> {
    database_tree(d, 0, nix::unistd::getuid().as_raw())
}

/// Everything under `DBPath` root's alone (attack 29 F8's class, its other member here): pacman
/// reads the sync databases there for `-S` (which packages, from where) and runs an installed
/// package's `install` file from the local database when it removes it, as root — a person's file
/// or directory there (a `sudo mv`, a `chown` gone wrong) would be the agent's to rewrite. The
/// directory itself is judged root's all the way; each entry below is judged by its own owner and
/// mode, a link by the whole way to its target, down to the depth pacman reads
/// (`local/NAME-VER/install`).
fn database_tree(d: &Path, depth: usize, person: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    const DEPTH: usize = 3;
    let Ok(entries) = std::fs::read_dir(d) else {
        return Ok(()); // none there yet (its nearest directory is judged root's)
    };
    for e in entries {
        let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
        let m = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let not_roots = |why: &str| {
            format!(
                "{} in pacman's database is {why}: pacman reads it as root",
                p.display()
            )
        };
        // pacman 7 downloads as `DownloadUser` into a fresh `download-XXXXXX` directory of its
        // own each time (one left from a killed run is not read again); never the person's.
        let download = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("download-"));
        if download && m.is_dir() && m.uid() != person {
            continue;
        }
        if m.file_type().is_symlink() {
            pinned::root_file(&p)
                .map_err(|e| not_roots(&format!("a link not root's alone ({e})")))?;
            continue;
        }
        if m.uid() != 0 {
            return Err(not_roots(&format!("owned by uid {}", m.uid())));
        }
        if m.mode() & 0o022 != 0 {
            return Err(not_roots("writable by its group or others"));
        }
        if m.is_dir() && depth + 1 < DEPTH {
            database_tree(&p, depth + 1, person)?;
        }
    }
    Ok(())
}

/// `DownloadUser` (pacman 7): pacman downloads as that user; never the person.
fn download_user(values: &[String], person: u32) -> Result<(), String> {
    let name = values.first().map(String::as_str).unwrap_or("");
    match nix::unistd::User::from_name(name) {
        Ok(Some(u)) if u.uid.as_raw() == person => Err(format!(
            "DownloadUser is {name}, you: what pacman downloads would be any program of yours to change"
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("DownloadUser {name}: {e}")),
    }
}

/// What is in pacman's GnuPG directory, root's alone: root alone can add to a directory root's
/// alone, but a file there root handed to the person would be the agent's to write — and
/// `gpg.conf` or `gpg-agent.conf` name programs gpg runs as root (`pinentry-program`, …). Its
/// sockets are no code.
fn gnupg_files(c: &PacmanConf) -> Result<(), String> {
    let dir = c
        .gpg_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_GPG_DIR));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(()); // none there (its nearest directory is judged root's)
    };
    for e in entries.flatten() {
        let p = e.path();
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => pinned::root_dir(&p).map(|_| ())?,
            Ok(m) if m.is_file() || m.file_type().is_symlink() => {
                pinned::root_file(&p).map(|_| ())?
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every hook file pacman would read: `*.hook` in each hook directory, root's all the way. A
/// hook masked by a link to `/dev/null` (alpm-hooks(5)) is none.
fn hooks(c: &PacmanConf) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    for dir in hook_dirs(c) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue; // none there (its nearest directory is judged root's)
        };
        let mut names: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "hook"))
            .collect();
        names.sort();
        for p in names {
            if std::fs::canonicalize(&p).is_ok_and(|r| r == Path::new("/dev/null")) {
                continue;
            }
            found.push(pinned::root_file(&p)?);
        }
    }
    Ok(found)
}

/// The `Exec` values of a hook's `[Action]` section (alpm-hooks(5)).
fn hook_execs(text: &str) -> Vec<String> {
    let mut in_action = false;
    let mut v = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        if let Some(section) = t.strip_prefix('[') {
            in_action = section.trim_end_matches(']').trim() == "Action";
            continue;
        }
        if let Some((k, val)) = t.split_once('=')
            && in_action
            && k.trim() == "Exec"
        {
            v.push(val.trim().to_owned());
        }
    }
    v
}

/// A command pacman runs as root (`XferCommand`, a hook's `Exec`): its program an absolute path
/// root's all the way, and every absolute path in its words — a shell's `-c` text split too —
/// root's, under `chroot` when pacman runs it there. Quoting as pacman splits it (whitespace,
/// single and double quotes); a word that does not close refuses.
pub(crate) fn judge_command(cmd: &str, chroot: Option<&Path>) -> Result<(), String> {
    let words = split_words(cmd).ok_or("its quoting does not close")?;
    let at = |p: &str| match chroot {
        Some(root) => under(root, p),
        None => PathBuf::from(p),
    };
    let program = words.first().ok_or("it is empty")?;
    if !program.starts_with('/') {
        return Err("its program is not named by an absolute path".into());
    }
    pinned::root_file(&at(program))?;
    for w in &words {
        for token in w.split(|ch: char| ch.is_whitespace() || "'\";|&()<>`=,".contains(ch)) {
            judge_token(token, chroot.is_some())?;
            if token.starts_with('/') {
                judge_path(&at(token))?;
            } else if token.contains('/') && chroot.is_some() {
                // A hook runs chrooted with `/` as its directory: a relative path is from there.
                judge_path(&at(&format!("/{token}")))?;
            }
        }
    }
    Ok(())
}

/// A word of a command pacman runs as root that archgate cannot place: the paths judged are
/// the ones written, so a word that makes the shell look somewhere else refuses (attack 22 F2;
/// class: *a check of the paths written while the shell resolves others*: `cd DIR && sh
/// rel/x.sh`, and `/home/userhom?/x.sh`, ran the person's script as root) — a change of
/// directory, a path with a glob or an expansion (`$HOME/x`, `~/x`), and in `XferCommand`
/// (pacman runs it in its cache directory) any relative path.
fn judge_token(token: &str, chrooted: bool) -> Result<(), String> {
    if matches!(token, "cd" | "pushd" | "popd" | "chdir" | "chroot") {
        return Err(format!(
            "`{token}` changes the directory its paths are read from, which archgate cannot judge"
        ));
    }
    let path_like = token.contains('/') || token.starts_with('~');
    if path_like && token.contains(['*', '?', '[', '$', '~', '{']) {
        return Err(format!(
            "`{token}` is a path the shell expands, which archgate cannot judge"
        ));
    }
    if path_like && !token.starts_with('/') && !chrooted {
        return Err(format!(
            "`{token}` is a relative path, read from wherever pacman runs the command"
        ));
    }
    Ok(())
}

/// A path a root command names: a file or directory root's all the way; one that does not exist
/// by its nearest existing ancestor; a device or socket (`/dev/null`) is no code.
fn judge_path(p: &Path) -> Result<(), String> {
    let existing = p.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"));
    match std::fs::metadata(existing) {
        Ok(m) if m.is_dir() => pinned::root_dir(existing).map(|_| ()),
        Ok(m) if m.is_file() => pinned::root_file(existing).map(|_| ()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{}: {e}", existing.display())),
    }
}

/// Words split on whitespace, with single and double quotes grouping and a backslash escaping
/// the next character (pacman's own splitting of `XferCommand` and `Exec`). `None` when a quote
/// does not close.
fn split_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                cur.push(chars.next()?);
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

#[cfg(test)]
mod tests;
