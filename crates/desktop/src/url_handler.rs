//! Which program opens a URL: archgate reads the default handler itself instead of delegating
//! to `xdg-open` (attack 18 F5; class: *a dispatcher configured by files the agent writes*).
//!
//! `xdg-open`, `gio open` and `handlr` pick the handler for `x-scheme-handler/SCHEME` from the
//! `mimeapps.list` files and run the chosen desktop entry's `Exec=` at run time — after archgate
//! judged only the dispatcher. Both the list (`~/.config/mimeapps.list`) and the entry
//! (`~/.local/share/applications`) are files the agent's shell may write. So here:
//!
//! - the default is read in the XDG MIME Applications order ([`MimeDirs::lists`]): for each
//!   directory the desktop-specific `$desktop-mimeapps.list` before `mimeapps.list`; the config
//!   home, the config dirs, the data home's `applications`, the data dirs' `applications`; the
//!   first `[Default Applications]` value naming an installed entry wins (the person's choice is
//!   honoured);
//! - the entry id is found the way the desktop-entry spec finds ids (data home first, then the
//!   data dirs; `a-b.desktop` may be `a/b.desktop`), so a person's copy shadows the system one
//!   exactly as it would for `xdg-open`;
//! - that entry must be root's all the way ([`archgate_exec::trusted_path`] with no person) and
//!   found in a system data directory; a handler in the person's own files is refused, naming
//!   the entry and why. With no default at all, the first (by id) root-owned entry declaring the
//!   scheme in `MimeType=` is used, and said;
//! - its `Exec=` is run directly (no shell), the URL put in place of `%u`/`%U`/`%f`/`%F`
//!   ([`handler_argv`]);
//! - a `mailto:` URL may carry only `to`, `cc`, `bcc`, `subject` and `body` ([`check_mailto`]):
//!   `attach=` (a file of the person's handed to the mail client) and unknown fields are refused.

use std::path::{Path, PathBuf};

use crate::error::{DesktopError, Result};
use crate::exec_line::split_words;
use crate::url_check::percent_decode;

/// Where the `mimeapps.list` files and desktop entries are looked for.
#[derive(Debug, Clone)]
pub struct MimeDirs {
    /// `$XDG_CONFIG_HOME`.
    pub config_home: Option<PathBuf>,
    /// `$XDG_CONFIG_DIRS`.
    pub config_dirs: Vec<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub data_home: Option<PathBuf>,
    /// `$XDG_DATA_DIRS`, then the system flatpak exports.
    pub data_dirs: Vec<PathBuf>,
    /// The current desktop names, lowercased (`hyprland`, `sway`).
    pub desktops: Vec<String>,
}

/// The handler chosen for a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlHandler {
    /// The desktop-entry id (`firefox.desktop`).
    pub id: String,
    /// The entry file run.
    pub entry: PathBuf,
    /// The `mimeapps.list` that chose it, or `None` when no default was set and the entry was
    /// picked among those declaring the scheme.
    pub chosen_in: Option<PathBuf>,
    /// Its `Exec=` with the URL substituted.
    pub argv: Vec<String>,
}

impl MimeDirs {
    /// The defaults of the XDG base-directory spec for this home, the system flatpak exports
    /// after the data dirs, and the desktop named by the compositor found.
    pub fn for_env(env: &crate::env::DesktopEnv) -> Self {
        let config_home = env
            .xdg_config_home
            .clone()
            .or_else(|| env.home.as_ref().map(|h| h.join(".config")));
        let mut desktops = Vec::new();
        if env.hyprland_instance_signature.is_some() {
            desktops.push("hyprland".to_owned());
        }
        if env.swaysock.is_some() {
            desktops.push("sway".to_owned());
        }
        MimeDirs {
            config_home,
            config_dirs: vec![PathBuf::from("/etc/xdg")],
            data_home: env.home.as_ref().map(|h| h.join(".local/share")),
            data_dirs: vec![
                PathBuf::from("/usr/local/share"),
                PathBuf::from("/usr/share"),
                PathBuf::from("/var/lib/flatpak/exports/share"),
            ],
            desktops,
        }
    }

    /// The `mimeapps.list` files in the order the XDG MIME Applications spec reads them.
    pub fn lists(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        dirs.extend(self.config_home.iter().cloned());
        dirs.extend(self.config_dirs.iter().cloned());
        dirs.extend(self.data_home.iter().map(|d| d.join("applications")));
        dirs.extend(self.data_dirs.iter().map(|d| d.join("applications")));
        let mut out = Vec::new();
        for dir in dirs {
            for desktop in &self.desktops {
                out.push(dir.join(format!("{desktop}-mimeapps.list")));
            }
            out.push(dir.join("mimeapps.list"));
        }
        out
    }

    /// The `applications` directories, the person's first; `true` marks a system one.
    fn app_dirs(&self) -> Vec<(PathBuf, bool)> {
        let mut out: Vec<(PathBuf, bool)> = Vec::new();
        out.extend(
            self.data_home
                .iter()
                .map(|d| (d.join("applications"), false)),
        );
        out.extend(
            self.data_dirs
                .iter()
                .map(|d| (d.join("applications"), true)),
        );
        out
    }

    /// The file a desktop-entry id names, as the spec finds it: the first directory holding it
    /// (`a-b.desktop` also as `a/b.desktop`), and whether that directory is a system one.
    pub fn find_entry(&self, id: &str) -> Option<(PathBuf, bool)> {
        if !valid_id(id) {
            return None;
        }
        for (dir, system) in self.app_dirs() {
            for candidate in id_paths(id) {
                let file = dir.join(&candidate);
                if file.is_file() {
                    return Some((file, system));
                }
            }
        }
        None
    }

    /// The handler for `url`: the default for its scheme, which must be a root-owned entry in a
    /// system directory, its `Exec=` with the URL substituted. `trusted` says whether a path is
    /// root's all the way (the real check is [`root_owned`]).
    pub fn resolve(
        &self,
        url: &str,
        trusted: &dyn Fn(&Path) -> std::result::Result<(), String>,
    ) -> Result<UrlHandler> {
        let scheme = scheme_of(url)?;
        let mime = format!("x-scheme-handler/{scheme}");
        if let Some((list, id)) = self.default_for(&mime) {
            let (entry, system) = self
                .find_entry(&id)
                .ok_or_else(|| blocked(&id, "vanished"))?;
            let shown = format!(
                "{} (the {mime} handler set in {})",
                entry.display(),
                list.display()
            );
            if !system {
                return Err(blocked(
                    &shown,
                    "the person's own desktop entry, which any program of theirs may rewrite; \
                     only a root-owned entry in a system applications directory opens a URL",
                ));
            }
            if let Err(why) = trusted(&entry) {
                return Err(DesktopError::Blocked {
                    command: format!("{shown}: {why}"),
                    reason: "the entry is not root's all the way",
                });
            }
            // The list is the person's to write, so it may name any root-owned entry (attack 20
            // F2: `vim.desktop` as the https handler ran `vim URL`): only an entry that declares
            // the scheme in its own `MimeType=` — what its package says it opens — is a handler.
            if !declares_mime(&entry, &mime) {
                return Err(blocked(
                    &shown,
                    "the entry does not declare this kind of address in its MimeType=: it is \
                     not a handler for it, whatever mimeapps.list says",
                ));
            }
            let argv = self.entry_argv(&entry, url)?;
            return Ok(UrlHandler {
                id,
                entry,
                chosen_in: Some(list),
                argv,
            });
        }
        // No default: the first root-owned system entry (by id) declaring the scheme.
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        for (dir, system) in self.app_dirs() {
            if !system {
                continue;
            }
            let Ok(read) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in read.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.ends_with(".desktop") || found.iter().any(|(id, _)| *id == name) {
                    continue;
                }
                let path = e.path();
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if text_declares_mime(&text, &mime)
                    && entry_key(&text, "Hidden").as_deref() != Some("true")
                {
                    found.push((name, path));
                }
            }
        }
        found.sort();
        for (id, entry) in found {
            // The id must resolve to this very file (nothing of the person's shadows it).
            if self.find_entry(&id).map(|(p, _)| p) != Some(entry.clone()) {
                continue;
            }
            if trusted(&entry).is_err() {
                continue;
            }
            let argv = self.entry_argv(&entry, url)?;
            return Ok(UrlHandler {
                id,
                entry,
                chosen_in: None,
                argv,
            });
        }
        Err(DesktopError::NotFound {
            what: "root-owned handler for",
            name: mime,
            near: Vec::new(),
        })
    }

    /// The first `[Default Applications]` value for `mime` naming an installed entry, and the
    /// list that set it.
    pub(crate) fn default_for(&self, mime: &str) -> Option<(PathBuf, String)> {
        for list in self.lists() {
            let Ok(text) = std::fs::read_to_string(&list) else {
                continue;
            };
            let mut in_defaults = false;
            for line in text.lines() {
                let line = line.trim();
                if line.starts_with('[') {
                    in_defaults = line == "[Default Applications]";
                    continue;
                }
                if !in_defaults {
                    continue;
                }
                let Some((key, value)) = line.split_once('=') else {
                    continue;
                };
                if !key.trim().eq_ignore_ascii_case(mime) {
                    continue;
                }
                for id in value.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                    if self.find_entry(id).is_some() {
                        return Some((list.clone(), id.to_owned()));
                    }
                }
            }
        }
        None
    }

    fn entry_argv(&self, entry: &Path, url: &str) -> Result<Vec<String>> {
        let text = std::fs::read_to_string(entry).map_err(|source| DesktopError::Io {
            what: "reading the URL handler's desktop entry",
            path: entry.to_owned(),
            source,
        })?;
        let exec = entry_key(&text, "Exec")
            .ok_or_else(|| DesktopError::malformed(entry.display().to_string(), "no Exec line"))?;
        handler_argv(&exec, url).ok_or_else(|| {
            DesktopError::malformed(entry.display().to_string(), "an empty Exec line")
        })
    }
}

/// Root's all the way, as [`archgate_exec::trusted_path`] walks it with no person.
pub fn root_owned(path: &Path) -> std::result::Result<(), String> {
    archgate_exec::trusted_path(None, path)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Whether the desktop entry at `entry` lists `mime` in its `MimeType=`.
fn declares_mime(entry: &Path, mime: &str) -> bool {
    std::fs::read_to_string(entry).is_ok_and(|t| text_declares_mime(&t, mime))
}

/// Whether an entry's text lists `mime` in its `MimeType=`.
pub(crate) fn text_declares_mime(text: &str, mime: &str) -> bool {
    entry_key(text, "MimeType")
        .is_some_and(|m| m.split(';').any(|t| t.trim().eq_ignore_ascii_case(mime)))
}

fn blocked(what: &str, reason: &'static str) -> DesktopError {
    DesktopError::Blocked {
        command: what.to_owned(),
        reason,
    }
}

/// `http`, `https` or `mailto`, lowercased; a `mailto:` URL is also checked by [`check_mailto`].
pub fn scheme_of(url: &str) -> Result<&'static str> {
    crate::url_check::check_url(url)?;
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        Ok("https")
    } else if lower.starts_with("http://") {
        Ok("http")
    } else {
        check_mailto(url)?;
        Ok("mailto")
    }
}

/// The fields a `mailto:` URL may carry to the mail client (RFC 6068 headers shown to the
/// person); `attach`/`attachment` (a file handed to the client) and anything else are refused.
pub fn check_mailto(url: &str) -> Result<()> {
    let Some((_, query)) = url.split_once('?') else {
        return Ok(());
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let key = percent_decode(pair.split_once('=').map_or(pair, |(k, _)| k)).to_lowercase();
        if !["to", "cc", "bcc", "subject", "body"].contains(&key.as_str()) {
            return Err(DesktopError::invalid(
                "url",
                format!(
                    "a mailto: address may carry only to, cc, bcc, subject and body, not `{key}`"
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) fn valid_id(id: &str) -> bool {
    id.ends_with(".desktop")
        && !id.starts_with(['.', '-'])
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
}

/// `a-b-c.desktop` as `a-b-c.desktop`, `a/b-c.desktop`, `a/b/c.desktop`…: every split of the
/// id's dashes into subdirectories.
fn id_paths(id: &str) -> Vec<PathBuf> {
    let parts: Vec<&str> = id.split('-').collect();
    let mut out = vec![PathBuf::from(id)];
    let n = parts.len().saturating_sub(1).min(4);
    for mask in 1u32..(1 << n) {
        let mut s = String::from(parts[0]);
        for (i, p) in parts[1..].iter().enumerate() {
            s.push(if mask & (1 << i) != 0 { '/' } else { '-' });
            s.push_str(p);
        }
        out.push(PathBuf::from(s));
    }
    out
}

/// A key of the `[Desktop Entry]` group, string escapes (`\s \n \t \r \\`) undone.
pub(crate) fn entry_key(text: &str, key: &str) -> Option<String> {
    let mut in_main = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_main = line == "[Desktop Entry]";
            continue;
        }
        if !in_main {
            continue;
        }
        if let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            let mut out = String::new();
            let mut chars = v.trim_start().chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('s') => out.push(' '),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some(o) => {
                        // Left for the Exec quoting rules (`\"`, `\$`, `` \` ``, `\\`).
                        out.push('\\');
                        out.push(o);
                    }
                    None => out.push('\\'),
                }
            }
            return Some(out);
        }
    }
    None
}

/// An `Exec=` value as argv with the URL in place of `%u`/`%f` (also inside an argument) and of
/// a lone `%U`/`%F`; other field codes dropped (`%i`, `%c`, `%k` and the deprecated ones), `%%`
/// kept as `%`. With no URL field code the URL is appended, as `gio` does. No shell: the words
/// are split by the spec's quoting (double quotes; `\"`, `` \` ``, `\$`, `\\` inside them).
pub fn handler_argv(exec: &str, url: &str) -> Option<Vec<String>> {
    let mut argv: Vec<String> = Vec::new();
    let mut used = false;
    for (word, quoted) in split_words(exec) {
        if quoted {
            argv.push(word);
            continue;
        }
        if matches!(word.as_str(), "%U" | "%F") {
            argv.push(url.to_owned());
            used = true;
            continue;
        }
        let mut out = String::new();
        let mut chars = word.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('u' | 'f') => {
                    out.push_str(url);
                    used = true;
                }
                _ => {}
            }
        }
        if !out.is_empty() || !word.starts_with('%') {
            argv.push(out);
        }
    }
    if argv.is_empty() {
        return None;
    }
    if !used {
        argv.push(url.to_owned());
    }
    Some(argv)
}

#[cfg(test)]
#[path = "url_handler_tests.rs"]
mod tests;
