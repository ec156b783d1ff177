//! `source=()` entries and URLs in commands: insecure or throwaway hosts, `SKIP` checksums on
//! downloads, sources from someone other than the upstream in `url=` that the build then runs,
//! and downloaded binaries run during the build.

use super::{Ctx, Sink};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Pos, join_path};
use crate::audit::urls::{self, ParsedUrl};

pub(super) use super::inert::inert;

/// One `source=()` entry.
pub(crate) struct Source {
    pub raw: String,
    /// The name it gets in `$srcdir`.
    pub local: String,
    pub renamed: bool,
    pub vcs: bool,
    pub url: Option<ParsedUrl>,
    pub array: String,
    pub index: usize,
    /// The first entry of its array, with no later entry named like the package: the code
    /// the package declares it builds (set by `check`).
    pub first: bool,
}

pub(crate) fn parse_source(raw: &str, array: &str, index: usize) -> Source {
    let (renamed_to, rest) = match raw.split_once("::") {
        Some((n, r)) if !n.contains('/') && !n.contains("://") => (Some(n.to_owned()), r),
        _ => (None, raw),
    };
    let no_frag = rest.split('#').next().unwrap_or(rest);
    let (vcs, url_part) = match no_frag.split_once('+') {
        Some((v, u))
            if matches!(v, "git" | "hg" | "svn" | "bzr" | "fossil") && u.contains("://") =>
        {
            (true, u)
        }
        _ => (
            no_frag.starts_with("git://") || no_frag.starts_with("svn://"),
            no_frag,
        ),
    };
    let url = if url_part.contains("://") {
        urls::parse(url_part)
    } else {
        None
    };
    let derived = {
        let b = basename(url_part.trim_end_matches('/'));
        let b = b.split('?').next().unwrap_or(b);
        if vcs {
            b.trim_end_matches(".git").to_owned()
        } else {
            b.to_owned()
        }
    };
    Source {
        raw: raw.to_owned(),
        local: renamed_to.clone().unwrap_or(derived),
        renamed: renamed_to.is_some(),
        vcs,
        url,
        array: array.to_owned(),
        index,
        first: false,
    }
}

pub(crate) fn sources(ctx: &Ctx) -> Vec<Source> {
    let mut out = Vec::new();
    let mut arrays: Vec<String> = ctx
        .an
        .global
        .keys()
        .filter(|k| *k == "source" || k.starts_with("source_"))
        .cloned()
        .collect();
    arrays.sort();
    for a in arrays {
        for (i, s) in ctx.an.global_list(&a).into_iter().enumerate() {
            if !s.dynamic {
                out.push(parse_source(&s.text, &a, i));
            }
        }
    }
    out
}

fn checksum(ctx: &Ctx, src: &Source) -> Option<String> {
    let suffix = src.array.strip_prefix("source").unwrap_or("");
    for algo in [
        "sha256sums",
        "sha512sums",
        "b2sums",
        "sha1sums",
        "md5sums",
        "sha224sums",
        "sha384sums",
        "cksums",
    ] {
        let list = ctx.an.global_list(&format!("{algo}{suffix}"));
        if let Some(v) = list.get(src.index) {
            return Some(v.text.clone());
        }
    }
    None
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let mut srcs = sources(ctx);
    // When a later download is named like the package, that one is its code and the first
    // is not (an upstream tarball after a helper repository).
    // (A download: a local file named like the package, its install script or .desktop
    // file, is not the code it builds.)
    let named_later = srcs
        .iter()
        .any(|s| s.index > 0 && s.url.is_some() && named_own(ctx, s));
    for s in &mut srcs {
        s.first = s.index == 0 && !named_later;
    }
    let url_var = ctx.an.global_str("url").and_then(|u| urls::parse(&u.text));
    let home = home(ctx, &srcs, url_var.as_ref());
    for s in &srcs {
        let (pos, snippet) = ctx
            .value_pos(&[s.array.as_str()], &s.raw)
            .or_else(|| ctx.assign_pos(&s.array))
            .unwrap_or_default();
        let Some(u) = &s.url else { continue };
        if let Some((id, sev, why)) = urls::classify(u) {
            sink.at(
                id,
                sev,
                0,
                pos,
                &snippet,
                format!("source {}: {why}", s.raw),
            );
        }
        let sum = checksum(ctx, s);
        let skip = sum.as_deref() == Some("SKIP");
        let sig = [".sig", ".asc", ".sign", ".minisig"]
            .iter()
            .any(|e| s.local.ends_with(e));
        if matches!(u.scheme.as_str(), "http" | "ftp") && !s.vcs {
            // A detached signature needs no checksum or secure transport: makepkg checks it
            // against validpgpkeys, and a forged one only fails that check.
            sink.at(
                "AUR-SOURCE-INSECURE",
                if skip && !sig && !signed(ctx, &srcs, s) {
                    Severity::Medium
                } else {
                    Severity::Low
                },
                0,
                pos,
                &snippet,
                format!("{} is fetched over unencrypted {}", s.raw, u.scheme),
            );
        }
        // A file:// source is a file on the builder's own machine, not a download. A download
        // whose detached signature is also a source, with the signers' keys named, is pinned
        // by the key instead of a hash: makepkg checks it against that signature.
        if skip && !s.vcs && !sig && u.scheme != "file" && !signed(ctx, &srcs, s) {
            let fetched = s.raw.rsplit("::").next().unwrap_or(&s.raw);
            let fetched = basename(fetched.split(['?', '#']).next().unwrap_or(fetched));
            let named_inert = inert(&s.local) || inert(fetched);
            let used = super::inert::use_of(ctx, &s.local);
            if named_inert && (used == super::inert::Use::Runs || executed(ctx, &s.local).is_some())
            {
                // Attack 31 F12: named as a document or data table, run as code — and the
                // server may change it after anyone looked.
                sink.at(
                    "AUR-SOURCE-SKIP",
                    Severity::High,
                    0,
                    pos,
                    &snippet,
                    format!("the download {} is named as a document or data table, but the build runs it as code (as a program's script, fed to a shell, its rows run as commands, or copied and then run), and its checksum is SKIP: whatever the server hands out at build time runs, and no one has read it", s.local),
                );
            } else if named_inert && used == super::inert::Use::Read {
                sink.at(
                    "AUR-SOURCE-SKIP",
                    Severity::Info,
                    0,
                    pos,
                    &snippet,
                    format!("the download {} has its checksum set to SKIP, but it is a document, image or data table that nothing runs; check the package only installs it", s.local),
                );
            } else {
                sink.at(
                    "AUR-SOURCE-SKIP",
                    Severity::Medium,
                    0,
                    pos,
                    &snippet,
                    format!("the download {} has its checksum set to SKIP: any file the server hands out is accepted and built or installed; check why it cannot be pinned (a moving \"latest\" URL) and whether a signature is checked instead", s.local),
                );
            }
        }
        foreign_exec(ctx, s, skip, &home, pos, &snippet, sink);
    }
    bundled(ctx, &srcs, sink);
    command_urls(ctx, sink);
}

/// Is `s` checked by a detached signature: another source named like it plus `.sig`, `.asc`
/// or `.sign` (or like it without its compression suffix, `x.tar.sign` for `x.tar.xz`, which
/// makepkg checks against the decompressed file), with `validpgpkeys` naming the keys it must
/// be signed by? Without named keys any key the builder's keyring trusts would do.
fn signed(ctx: &Ctx, srcs: &[Source], s: &Source) -> bool {
    // A key is named by its fingerprint (or long ID): hex digits, 16 or more.
    let keyed = ctx.an.all_values("validpgpkeys").iter().any(|k| {
        let k = k.text.trim();
        k.len() >= 16 && k.chars().all(|c| c.is_ascii_hexdigit())
    });
    if !keyed {
        return false;
    }
    let mut names = vec![s.local.as_str()];
    if let Some(bare) = [
        ".gz", ".bz2", ".xz", ".lrz", ".lzo", ".Z", ".zst", ".lz", ".lz4",
    ]
    .iter()
    .find_map(|c| s.local.strip_suffix(c))
    {
        names.push(bare);
    }
    srcs.iter().any(|o| {
        (o.array != s.array || o.index != s.index)
            && names.iter().any(|n| {
                [".sig", ".asc", ".sign"]
                    .iter()
                    .any(|e| o.local.strip_suffix(e) == Some(*n))
            })
    })
}

pub(super) fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Package name without -git/-bin/… suffixes, normalised.
pub(super) fn stem(name: &str) -> String {
    let mut n = name.to_owned();
    for suf in [
        "-git",
        "-bin",
        "-appimage",
        "-nightly",
        "-beta",
        "-svn",
        "-hg",
        "-latest",
        "-stable",
    ] {
        if let Some(s) = n.strip_suffix(suf) {
            n = s.to_owned();
        }
    }
    norm(&n)
}

/// The first label of a host's registrable name: `dart.dev` → `dart`, `neovim.io` → `neovim`.
fn site_label(host: &str) -> String {
    let r = urls::registrable(host);
    norm(r.split('.').next().unwrap_or(&r))
}

/// Do two normalised names name the same project (one contains the other, 3+ characters)?
fn related(a: &str, b: &str) -> bool {
    let (a, b) = (norm(a), norm(b));
    (!a.is_empty() && a == b)
        || (a.len() >= 3 && b.len() >= 3 && (a.contains(&b) || b.contains(&a)))
}

/// Is `s` the package's own source: a repository (or file) named like the package, or the
/// first entry of its `source` array (the code the package declares it builds, whatever url=
/// names: a website, an old homepage, a former project name, and whatever it is renamed to)?
fn own_source(ctx: &Ctx, s: &Source) -> bool {
    s.first || named_own(ctx, s)
}

/// Is `s`'s repository (or file) named like the package?
fn named_own(ctx: &Ctx, s: &Source) -> bool {
    let forge = s.url.as_ref().and_then(urls::forge_owner);
    // A forge account or organisation named exactly like the package is the project's own
    // (`konform-browser/konform-next` for konform-browser).
    let owner = forge.as_ref().map(|(_, o, _)| norm(o)).unwrap_or_default();
    let repo = forge
        .map(|(_, _, r)| r)
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| s.local.clone());
    let mut names: Vec<String> = ctx.pkgnames.iter().map(|p| stem(p)).collect();
    for v in [
        "pkgbase",
        "_pkgname",
        "_name",
        "_pkgbase",
        "_gitname",
        "_repo",
        "_reponame",
    ] {
        if let Some(x) = ctx.an.global_str(v)
            && !x.dynamic
        {
            names.push(stem(&x.text));
        }
    }
    names
        .iter()
        .any(|n| related(n, &repo) || (owner.len() >= 3 && owner == *n))
}

/// Hosts and forge owners that are the package's own: url= and the package's own sources.
struct Home {
    owners: Vec<(String, String)>,
    hosts: Vec<String>,
    labels: Vec<String>,
}

fn home(ctx: &Ctx, srcs: &[Source], url_var: Option<&ParsedUrl>) -> Home {
    let mut h = Home {
        owners: Vec::new(),
        hosts: Vec::new(),
        labels: Vec::new(),
    };
    let add = |u: &ParsedUrl, h: &mut Home| match urls::forge_owner(u) {
        Some((host, owner, _)) => h.owners.push((host, owner)),
        None => {
            h.hosts.push(urls::registrable(&u.host));
            h.labels.push(site_label(&u.host));
        }
    };
    if let Some(u) = url_var {
        add(u, &mut h);
    }
    for s in srcs.iter().filter(|s| own_source(ctx, s)) {
        if let Some(u) = &s.url {
            add(u, &mut h);
        }
    }
    h
}

/// Neither the package's url= host or owner, nor its own sources' repository or owner.
fn is_foreign(ctx: &Ctx, s: &Source, home: &Home) -> bool {
    let Some(u) = &s.url else { return false };
    if own_source(ctx, s) {
        return false;
    }
    match urls::forge_owner(u) {
        Some((host, owner, repo)) => {
            let same_owner = home.owners.iter().any(|(h, o)| *h == host && *o == owner);
            // A forge repository of a project whose url= is its own website: owner or repo
            // named like the site (`dart.dev` → `dart-lang/sdk`).
            let site_named = home
                .labels
                .iter()
                .any(|l| related(l, &owner) || related(l, &repo));
            !(same_owner || site_named)
        }
        None => {
            let reg = urls::registrable(&u.host);
            !home.hosts.contains(&reg)
                && !home
                    .owners
                    .iter()
                    .any(|(_, o)| related(o, &site_label(&u.host)))
        }
    }
}

fn foreign_exec(
    ctx: &Ctx,
    s: &Source,
    skip: bool,
    home: &Home,
    pos: Pos,
    snippet: &str,
    sink: &mut Sink,
) {
    if s.url.is_none() || !is_foreign(ctx, s, home) {
        return;
    }
    let (owner, repo) = s
        .url
        .as_ref()
        .and_then(urls::forge_owner)
        .map(|(_, o, r)| (o, r))
        .unwrap_or_else(|| (String::new(), s.local.clone()));
    let runner = executed(ctx, &s.local);
    // Renamed to hide what it is: a name that says neither the repository nor its owner
    // (`patches::` for someone's `zenbrowser-patch`; not `tdlib::` for `tdlib/td`).
    let deceptive = s.renamed && !related(&s.local, &repo) && !related(&s.local, &owner);
    // A prebuilt package (`-bin`) has nothing of its own to compile: code from a second
    // party's repository run in its build runs for its own sake (the 2025 "-patch"/"-fix"
    // browser packages). In a package built from source, a further repository the build
    // compiles is a component it declares (a vendor's firmware, a bundled library).
    let prebuilt = ctx.pkgnames.iter().any(|p| p.ends_with("-bin"));
    match runner {
        Some(cmd) if s.vcs && pinned(&s.raw) && !deceptive => sink.cmd(
            "AUR-SOURCE-FOREIGN-EXEC",
            if prebuilt { Severity::Medium } else { Severity::Low },
            cmd,
            format!(
                "runs code from the source `{}` ({}), a git repository of someone other than the upstream in url= and the package's first source; it is pinned to one commit, so that code is fixed and can be reviewed",
                s.local, s.raw
            ),
        ),
        Some(cmd) if s.vcs && !deceptive && !prebuilt => sink.cmd(
            "AUR-SOURCE-FOREIGN-EXEC",
            Severity::Medium,
            cmd,
            format!(
                "the build runs code from `{}` ({}), a git repository of someone other than the upstream, declared in source=() beside the package's own code; it can change at any time, so check whose it is and that the package needs it",
                s.local, s.raw
            ),
        ),
        Some(cmd) if s.vcs => sink.cmd(
            "AUR-SOURCE-FOREIGN-EXEC",
            if deceptive { Severity::Critical } else { Severity::High },
            cmd,
            format!(
                "runs code from the source `{}` ({}), a git repository of someone other than the upstream in url= and the package's first source{}; it can change at any time",
                s.local,
                s.raw,
                if deceptive {
                    ", renamed to a name that is not its repository's"
                } else {
                    ", in a prebuilt package that has nothing to compile"
                }
            ),
        ),
        Some(cmd) if skip => sink.cmd(
            "AUR-SOURCE-FOREIGN-EXEC",
            Severity::High,
            cmd,
            format!("runs `{}`, downloaded from a host other than url= with no checksum", s.local),
        ),
        None if s.vcs && s.renamed => sink.at(
            "AUR-SOURCE-FOREIGN",
            Severity::Low,
            0,
            pos,
            snippet,
            format!("the git source `{}` comes from someone other than the upstream in url=", s.local),
        ),
        _ => {}
    }
}

/// A git source fixed to a full commit id (`#commit=<40 hex>`): its code cannot change.
fn pinned(raw: &str) -> bool {
    raw.split_once("#commit=")
        .map(|(_, c)| c.split(['&', '?']).next().unwrap_or(c))
        .is_some_and(|c| c.len() >= 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Does `path` name something inside the source directory `local`?
fn under(path: &str, local: &str) -> bool {
    let p = path.trim_start_matches("$srcdir/").trim_start_matches("./");
    p == local
        || p.starts_with(&format!("{local}/"))
        || p.contains(&format!("/{local}/"))
        || p.ends_with(&format!("/{local}"))
}

/// Arguments that only ask a tool about itself (`go version`, `cargo --version`): nothing
/// from any source runs.
fn asks_only(args: &[crate::audit::shell::Word]) -> bool {
    args.iter().all(|a| {
        matches!(
            a.text.as_str(),
            "version"
                | "--version"
                | "-v"
                | "-V"
                | "-version"
                | "--help"
                | "-h"
                | "help"
                | "env"
                | "-dumpversion"
                | "--print"
                | "config"
                | "list"
                | "ls"
                | "info"
        )
    })
}

/// Subcommands that fetch or describe dependencies and compile or run none of the source's
/// code: `cargo fetch` (downloads crates; build scripts run at `cargo build`), `cargo vendor`,
/// `cargo metadata`, `go mod download|vendor|edit|tidy`.
fn fetch_only(name: &str, args: &[crate::audit::shell::Word]) -> bool {
    let mut ops = args
        .iter()
        .map(|a| a.text.as_str())
        .filter(|a| !a.starts_with('-') && !a.starts_with('+'));
    match (name, ops.next()) {
        ("cargo", Some(sub)) => matches!(
            sub,
            "fetch" | "vendor" | "metadata" | "tree" | "generate-lockfile" | "update"
        ),
        ("go", Some("mod")) => matches!(
            ops.next(),
            Some("download" | "vendor" | "edit" | "tidy" | "verify" | "graph" | "why")
        ),
        _ => false,
    }
}

/// A build or package command that runs code from the source named `local`.
fn executed<'a>(ctx: &'a Ctx, local: &str) -> Option<&'a Cmd> {
    if local.is_empty() {
        return None;
    }
    ctx.an.cmds.iter().find(|c| {
        if !(c.phase.is_build() || c.phase == Phase::Package) || c.argv.is_empty() {
            return false;
        }
        let i = names::effective(&c.argv);
        let prog = &c.argv[i].text;
        let name = basename(prog);
        let args = &c.argv[i + 1..];
        let resolve = |p: &str| join_path(c.cwd.as_deref(), p);
        if prog.contains('/') && under(&resolve(prog), local) {
            return true;
        }
        if asks_only(args) || fetch_only(name, args) {
            return false;
        }
        if names::is_interpreter(name) || matches!(name, "source" | ".") {
            // The script it runs decides, resolved from the directory it runs in.
            return match args.iter().find(|a| !a.text.starts_with('-')) {
                Some(script) => under(&resolve(&script.text), local),
                None => c.cwd.as_deref().is_some_and(|d| under(d, local)),
            };
        }
        let builds = matches!(
            name,
            "make"
                | "cmake"
                | "meson"
                | "ninja"
                | "npm"
                | "yarn"
                | "pnpm"
                | "bun"
                | "cargo"
                | "go"
                | "scons"
                | "gradle"
                | "mvn"
                | "autoreconf"
                | "qmake"
                | "qmake6"
        );
        if builds
            && args
                .iter()
                .any(|a| under(&resolve(&a.text), local) && a.text != ".")
        {
            return true;
        }
        let in_dir = c.cwd.as_deref().is_some_and(|d| under(d, local));
        in_dir && (prog.starts_with("./") || builds)
    })
}

fn bundled(ctx: &Ctx, srcs: &[Source], sink: &mut Sink) {
    for s in srcs.iter().filter(|s| !s.vcs && s.url.is_some()) {
        let l = s.local.to_ascii_lowercase();
        let binaryish = l.ends_with(".appimage")
            || l.ends_with(".run")
            || l.ends_with(".bin")
            || l.ends_with(".exe")
            || !l.contains('.');
        if !binaryish {
            continue;
        }
        let run = ctx.an.cmds.iter().find(|c| {
            (c.phase.is_build() || c.phase == Phase::Package) && !c.argv.is_empty() && {
                let p = &c.argv[names::effective(&c.argv)].text;
                p.contains('/') && basename(p) == s.local
            }
        });
        if let Some(cmd) = run {
            sink.cmd(
                "AUR-EXEC-BUNDLED",
                Severity::Medium,
                cmd,
                format!(
                    "runs the downloaded binary `{}` during the build, with the builder's rights",
                    s.local
                ),
            );
        }
    }
}

/// URLs to throwaway or exfiltration hosts anywhere in commands.
fn command_urls(ctx: &Ctx, sink: &mut Sink) {
    for cmd in ctx.acting().filter(|c| !names::only_prints(c)) {
        let (name, args) = names::program(cmd);
        let mut found: Vec<ParsedUrl> = Vec::new();
        for w in cmd.argv.iter().chain(cmd.stdin.iter()) {
            for u in urls::find_urls(&w.text) {
                found.extend(urls::parse(u));
            }
        }
        if names::DOWNLOADERS.contains(&name) {
            for a in args
                .iter()
                .filter(|a| !a.text.starts_with('-') && !a.text.contains("://"))
            {
                if a.text.contains('.') && a.text.contains('/') {
                    found.extend(urls::parse(&a.text));
                }
            }
        }
        for u in found {
            if let Some((id, sev, why)) = urls::classify(&u) {
                sink.cmd(id, sev, cmd, why);
            }
        }
    }
}
