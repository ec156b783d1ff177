//! The one way archgate runs `git`: an environment and configuration under which nothing a
//! repository or the person's setup holds can make git run a program, ask on a terminal or
//! reach a transport other than the AUR's; and git's failures as typed AUR errors.

use std::path::Path;
use std::time::Duration;

use archgate_exec::CommandSpec;

use super::super::error::AurError;

/// `-c` settings given to every git command. Configuration is the only way a repository or a
/// setup could make git run something; archgate's is the only configuration git reads:
/// `GIT_CONFIG_NOSYSTEM` drops /etc/gitconfig, `HOME` is an empty directory of archgate's (no
/// ~/.gitconfig, no ~/.config/git), the repository's own config is what `git init` wrote, and
/// a fetch never transfers config. These settings close what is left, for the reader's sake.
const SETTINGS: &[&str] = &[
    // No hook runs (a fetch into a bare repository has none; this holds if one appears).
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    // Nothing asks for a password: no helper, no askpass program, no terminal prompt.
    "credential.helper=",
    "core.askPass=",
    "core.pager=cat",
    // Every received object is checked: `..`, `.git`, malformed trees, hostile .gitmodules.
    "transfer.fsckObjects=true",
    "fetch.fsckObjects=true",
    // Received objects stay in one pack written as tmp_pack_* until complete: a fetch cut short
    // leaves only a temporary file, never loose objects a later read could trip on.
    "fetch.unpackLimit=1",
    "transfer.unpackLimit=1",
    "fetch.recurseSubmodules=false",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "fetch.writeCommitGraph=false",
    // The AUR answers at the URL asked; a redirect elsewhere is not followed.
    "http.followRedirects=false",
    // A stalled transfer ends (below 1 KiB/s for 20 s), besides the executor's timeout.
    "http.lowSpeedLimit=1024",
    "http.lowSpeedTime=20",
    // Author names are read as committed: a repository's .mailmap does not rename them (the
    // "new author" trust signal compares names).
    "log.mailmap=false",
    "mailmap.file=",
    "mailmap.blob=",
    "log.showSignature=false",
    "protocol.allow=never",
];

/// A `git` command on the repository `dir`, reading no configuration but archgate's, allowed
/// to use only `scheme` (`https`, or `http` when the configured AUR is plain HTTP, as in tests).
pub(crate) fn git(dir: &Path, home: &Path, scheme: &str, timeout: Duration) -> CommandSpec {
    let mut spec = CommandSpec::new("git")
        .clear_env()
        .env("HOME", home.to_string_lossy())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .timeout(timeout)
        .arg("--no-pager")
        .arg("--no-replace-objects")
        .arg(format!("--git-dir={}", dir.display()));
    for s in SETTINGS {
        spec = spec.arg("-c").arg(*s);
    }
    spec.arg("-c")
        .arg(format!("protocol.{scheme}.allow=always"))
}

/// The scheme of the AUR's base URL, when git may use it.
pub(crate) fn scheme(base_url: &str) -> Result<&'static str, AurError> {
    if base_url.starts_with("https://") {
        Ok("https")
    } else if base_url.starts_with("http://") {
        Ok("http")
    } else {
        Err(AurError::InvalidArgument {
            reason: format!("the AUR base URL {base_url} is neither https:// nor http://"),
        })
    }
}

/// A failed fetch as a typed error, from git's messages (`LC_ALL=C`: English, stable).
pub(crate) fn fetch_error(url: &str, pkgbase: &str, stderr: &str, timeout: Duration) -> AurError {
    let s = stderr;
    let status = s
        .split("The requested URL returned error: ")
        .nth(1)
        .and_then(|r| r.get(..3))
        .and_then(|n| n.parse::<u16>().ok());
    let not_found = || AurError::NotFound {
        what: format!("AUR package base {pkgbase}"),
    };
    match status {
        Some(404) => return not_found(),
        Some(429) => {
            return AurError::RateLimited {
                url: url.to_owned(),
                retry_after: None,
            };
        }
        Some(st) => {
            return AurError::Status {
                url: url.to_owned(),
                status: st,
                retry_after: None,
            };
        }
        None => {}
    }
    if s.contains("couldn't find remote ref") || s.contains("' not found") {
        // The AUR answers an unknown name with an empty repository: no branch.
        return not_found();
    }
    if s.contains("Operation timed out")
        || s.contains("Timeout was reached")
        || s.contains("Operation too slow")
    {
        return AurError::TimedOut {
            url: url.to_owned(),
            after: timeout,
        };
    }
    if [
        "Could not resolve",
        "Failed to connect",
        "Couldn't connect",
        "Connection refused",
    ]
    .iter()
    .any(|m| s.contains(m))
        || s.contains("unable to access")
    {
        return AurError::CouldNotReach {
            url: url.to_owned(),
            reason: last_line(s),
        };
    }
    AurError::Malformed {
        url: url.to_owned(),
        reason: format!("git refused the repository: {}", last_lines(s)),
    }
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// git's last few messages (the first error is usually the one that says why).
fn last_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(3);
    let mut out = lines[from..].join("; ");
    if out.len() > 400 {
        let mut end = 400;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    out
}
