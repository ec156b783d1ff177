//! The path a deletion reaches, as the kernel resolves it and as the shell expands it (attack
//! 29 F1: AUR-DELETE-SYSTEM read paths by their spelling): magic links of `/proc`, the
//! system's own links before a `..`, links the same file made, a build directory climbed out
//! of, and globs matched against what they name.

use super::super::{Ctx, argv};
use crate::audit::names::{self, basename};
use crate::audit::shell::{Cmd, Phase};

/// Links every Arch system has, as the kernel follows them before a `..` (`/var/run/../home`
/// is `/home`, not `/var/home`).
const SYSTEM_LINKS: &[(&str, &str)] = &[
    ("/var/run", "/run"),
    ("/var/lock", "/run/lock"),
    ("/bin", "/usr/bin"),
    ("/sbin", "/usr/bin"),
    ("/usr/sbin", "/usr/bin"),
    ("/lib", "/usr/lib"),
    ("/lib64", "/usr/lib"),
    ("/usr/lib64", "/usr/lib"),
];

/// An absolute path as the kernel resolves it (attack 29 F1; attack 28 F3 folded `//`, `/./`
/// and `..` by spelling only): `/proc/self/root`, `/proc/thread-self/root` and `/proc/PID/root`
/// are `/`; `/proc/…/cwd` is the command's directory (`/` for a scriptlet that did not `cd`);
/// the system's own links are followed before a `..`. A path through a file descriptor
/// (`/dev/fd/3/`, `/proc/self/fd/3/`, `/dev/stdin/`) or a `cwd` the audit does not know
/// names a directory only known when it runs: given as `<descriptor>`.
pub(crate) fn as_kernel_resolves(cmd: &Cmd, p: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let segs: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let mut i = 0;
    while i < segs.len() {
        let seg = segs[i];
        let here = format!("/{}", out.join("/"));
        let proc_entry = here == "/proc"
            && (matches!(seg, "self" | "thread-self") || seg.chars().all(|c| c.is_ascii_digit()));
        if proc_entry {
            match segs.get(i + 1).copied() {
                Some("root") => {
                    out.clear();
                    i += 2;
                    continue;
                }
                Some("cwd") => {
                    let cwd = match &cmd.cwd {
                        Some(c) if c.starts_with('/') => c.clone(),
                        None if matches!(cmd.phase, Phase::Install | Phase::Hook) => "/".into(),
                        _ => return "<descriptor>".into(),
                    };
                    out = cwd
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect();
                    i += 2;
                    continue;
                }
                Some("fd") if i + 2 < segs.len() => return "<descriptor>".into(),
                _ => {}
            }
        }
        if here == "/dev"
            && (matches!(seg, "stdin" | "stdout" | "stderr") || (seg == "fd" && i + 1 < segs.len()))
            && i + 1 < segs.len()
        {
            return "<descriptor>".into();
        }
        if seg == ".." {
            out.pop();
        } else {
            out.push(seg.to_owned());
            let now = format!("/{}", out.join("/"));
            if let Some((_, to)) = SYSTEM_LINKS.iter().find(|(from, _)| *from == now) {
                out = to
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
        }
        i += 1;
    }
    format!("/{}", out.join("/"))
}

/// A deletion's path with the links the same file made (`ln -s TARGET LINK`) followed where the
/// path goes through one (`ln -sfn /home /tmp/h && rm -rf /tmp/h/`: `rm` follows a link named
/// with a trailing slash; attack 29 F1 d04), and a build variable's directory climbed out of
/// by `..` (`$srcdir/../../../../home`, `$HOME/../../home`: enough of them reach `/`, which
/// the kernel never climbs above; attack 29 F1 b07) read as `/` then the rest.
pub(crate) fn through_links(ctx: &Ctx, cmd: &Cmd, p: &str) -> String {
    // A link the deletion can meet: made before it runs, in the walk of its own function or at
    // the top level (a split package's `package_A` links into its own `$pkgdir`, which
    // `package_B`'s is not). "Before" is the order the code runs in — the walk inlines a called
    // function where it is called — not the order of the lines: a helper defined above that
    // makes a link and is called after the deletion (Jovian's linux-lts: `_steamos` links
    // `$pkgdir/usr/lib/modules/$kernver` to `/var/lib/modules/…`, called at the end of the
    // headers package) is not met by it. A link outside `$pkgdir` (in `$srcdir`, which every
    // function shares) made by an earlier function is met too: the walk goes through the
    // PKGBUILD's functions in makepkg's order (attack 31 F5: `build()` links, `package()`
    // deletes).
    let at = ctx.an.cmds.iter().position(|c| std::ptr::eq(c, cmd));
    let before = |i: usize, c: &Cmd| match at {
        Some(a) => i < a,
        None => (c.pos.line, c.pos.col) < (cmd.pos.line, cmd.pos.col),
    };
    let mut met: Option<String> = None;
    for (_, c) in
        ctx.an.cmds.iter().enumerate().filter(|(i, c)| {
            c.file == cmd.file && before(*i, c) && !matches!(c.phase, Phase::Runtime)
        })
    {
        let (name, args) = names::program(c);
        let symbolic = args.iter().any(|a| {
            a.text == "--symbolic"
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('s'))
        });
        if name != "ln" || !symbolic {
            continue;
        }
        for (target, link) in links_made(ctx, c, args) {
            let shared = !link.starts_with("$pkgdir");
            if !(c.func.is_none() || c.func == cmd.func || (shared && cmd.file == 0)) {
                continue;
            }
            let Some(rest) = p.strip_prefix(link.trim_end_matches('/')) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with('/')) || link.trim_end_matches('/').is_empty()
            {
                continue;
            }
            // A deletion of the link itself (`rm r`, not `rm -rf r/`) removes only the link.
            if rest.is_empty() {
                continue;
            }
            met = Some(match link_target(c, &link, target) {
                Some(t) => format!("{}{rest}", t.trim_end_matches('/')),
                None => "<descriptor>".into(),
            });
        }
    }
    if let Some(m) = met {
        return m;
    }
    climbed_out(p).unwrap_or_else(|| p.to_owned())
}

/// The (target, link path) pairs one `ln -s` makes, its link paths resolved against the
/// directory it runs in (after `cd`): `ln -s TARGET LINK`, `ln -s TARGET DIR/` (inside DIR,
/// named as TARGET's last part; development set: `ln -svf /usr/bin/xzcat
/// "$pkgdir/opt/…/tool/x86_64/"`), `ln -s -t DIR TARGET…` and `ln -s TARGET` (in the current
/// directory).
fn links_made<'a>(
    ctx: &Ctx,
    c: &Cmd,
    args: &'a [crate::audit::shell::Word],
) -> Vec<(&'a crate::audit::shell::Word, String)> {
    let parsed = argv::copy_like(args);
    let named = |dir: &str, t: &crate::audit::shell::Word| {
        format!(
            "{}/{}",
            dir.trim_end_matches('/'),
            basename(t.text.trim_end_matches('/'))
        )
    };
    let at = |l: &str| super::absolute(c, l);
    if let Some(dir) = parsed.value_word(&["-t", "--target-directory"]) {
        let dir = at(&dir.text);
        return parsed
            .operands
            .iter()
            .map(|t| (*t, named(&dir, t)))
            .collect();
    }
    match parsed.operands.as_slice() {
        // Into a directory: named with a trailing slash, `.`/`..`, or one the build made
        // (`install -d "$tmp"; ln -sf "$f" "$tmp"`).
        [target, link]
            if link.text.ends_with('/')
                || matches!(basename(&link.text), "." | "..")
                || link.text == "."
                || link.text == ".."
                || made_dir(ctx, c, &at(&link.text)) =>
        {
            vec![(*target, named(&at(&link.text), target))]
        }
        [target, link] => vec![(*target, at(&link.text))],
        [target] => match &c.cwd {
            Some(d) => vec![(*target, named(d, target))],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// An earlier command made `dir` as a directory (`mkdir`, `install -d`).
fn made_dir(ctx: &Ctx, before: &Cmd, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    ctx.an
        .cmds
        .iter()
        .take_while(|c| !std::ptr::eq(*c, before))
        .any(|c| {
            let (prog, args) = names::program(c);
            let dirs = match prog {
                "mkdir" => argv::parse(args, "m", "", &["--mode"]).operands,
                "install"
                    if argv::install(args).has("-d") || argv::install(args).has("--directory") =>
                {
                    argv::install(args).operands
                }
                _ => return false,
            };
            dirs.iter()
                .any(|w| super::absolute(c, &w.text).trim_end_matches('/') == dir)
        })
}

/// Where a symbolic link points, as a path the rules can judge, or `None` when that place is
/// only known when the build runs (attack 31 F5: only a literal absolute target was followed;
/// `"$HOME"`, `~`, `../../..` and `$srcdir/../…` were read as places inside `$srcdir`). An
/// absolute target is itself; the home is `$HOME`; a relative target is read from the link's
/// directory, and a target under a build folder stays there when it does not climb out of it.
/// Anything else — a climb out of the build folders short of `/`, a computed target — is a
/// place no one can name before the build.
fn link_target(c: &Cmd, link: &str, target: &crate::audit::shell::Word) -> Option<String> {
    // `$PWD` is the directory the command runs in.
    let with_cwd;
    let pwd = target
        .text
        .strip_prefix("$PWD")
        .or_else(|| target.text.strip_prefix("${PWD}"));
    let t = match (pwd, &c.cwd) {
        (Some(r), Some(d)) if r.is_empty() || r.starts_with('/') => {
            with_cwd = format!("{d}{r}");
            with_cwd.as_str()
        }
        _ => target.text.as_str(),
    };
    if t.starts_with('/') {
        return Some(t.to_owned());
    }
    if t == "~" || t.starts_with("~/") {
        return Some(format!("$HOME{}", &t[1..]));
    }
    if t == "$HOME" || t.starts_with("$HOME/") || t.starts_with("${HOME}") {
        return climbed_out(t).or_else(|| Some(t.replace("${HOME}", "$HOME")));
    }
    let joined = if t.starts_with('$') {
        t.to_owned()
    } else {
        let dir = link
            .trim_end_matches('/')
            .rsplit_once('/')
            .map_or("", |(d, _)| d);
        if dir.is_empty() {
            return None;
        }
        format!("{dir}/{t}")
    };
    if let Some(out) = climbed_out(&joined) {
        return Some(out);
    }
    let inside = ["$srcdir", "$pkgdir", "$startdir"].iter().any(|d| {
        joined
            .strip_prefix(d)
            .is_some_and(|r| r.is_empty() || r.starts_with('/'))
    });
    let folded = crate::audit::shell::join_path(None, &joined);
    (inside && (!target.dynamic || pwd.is_some()) && !folded.split('/').any(|s| s == ".."))
        .then(|| folded.replacen("$startdir/src", "$srcdir", 1))
}

fn climbed_out(p: &str) -> Option<String> {
    let mut segs = p.split('/').filter(|s| !s.is_empty() && *s != ".");
    let root = segs.next()?;
    let var = root.trim_start_matches("${").trim_start_matches('$');
    let var = var.trim_end_matches('}');
    if !root.starts_with('$')
        || !matches!(
            var,
            "srcdir" | "startdir" | "pkgdir" | "HOME" | "PWD" | "BUILDDIR"
        )
    {
        return None;
    }
    let rest: Vec<&str> = segs.collect();
    let ups = rest.iter().take_while(|s| **s == "..").count();
    let enough = if var == "HOME" { 2 } else { 4 };
    (ups >= enough).then(|| format!("/{}", rest[ups..].join("/")))
}

/// Whether the shell pattern `pat` matches `path` (`*` and `?` never match `/`; `[…]` classes
/// with `!`/`^` and ranges) — a glob judged by what it matches (`/h?me`, `/[h]ome`).
pub(crate) fn glob_match(pat: &str, path: &str) -> bool {
    fn class(p: &[char], c: char) -> Option<(bool, usize)> {
        let mut i = 1;
        let neg = matches!(p.get(1), Some('!' | '^'));
        if neg {
            i += 1;
        }
        let mut hit = false;
        let mut first = true;
        while i < p.len() && (p[i] != ']' || first) {
            first = false;
            if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
                hit |= p[i] <= c && c <= p[i + 2];
                i += 3;
            } else {
                hit |= p[i] == c;
                i += 1;
            }
        }
        (i < p.len()).then_some((hit != neg, i + 1))
    }
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len())
                .take_while(|&k| k == 0 || s[k - 1] != '/')
                .any(|k| go(&p[1..], &s[k..])),
            Some('?') => s.first().is_some_and(|c| *c != '/') && go(&p[1..], &s[1..]),
            Some('[') => match (s.first(), class(p, *s.first().unwrap_or(&'/'))) {
                (Some(c), Some((hit, n))) if *c != '/' => hit && go(&p[n..], &s[1..]),
                (Some(c), None) => *c == '[' && go(&p[1..], &s[1..]),
                _ => false,
            },
            Some('\\') if p.len() > 1 => s.first() == Some(&p[1]) && go(&p[2..], &s[1..]),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = path.chars().collect();
    go(&p, &s)
}
