//! Downloads that are only read, never run: documents, images, licences and data tables.
//!
//! A name says what a file is meant to be, not what the build does with it (attack 31 F12: a
//! SKIP'd `rules.csv` fed to `sed -f` — GNU sed's `e` runs a shell —, `data.json`'s field piped
//! to `sh` by `jq`, a CSV's rows run as commands, `cp data.csv x.sh; bash x.sh`, `sh <
//! notes.txt`). Class: *a lowering keyed on a name, where the effect is what the build does with
//! the file*. So the name only proposes; [`use_of`] decides, from every command that names the
//! file: info only when each copies it into the package or reads it as data (`sources.rs`), the
//! medium SKIP finding when a use is not known to be a read, and high when the build runs it as
//! code — a download disguised as data, which the server may change after anyone looked.

use crate::audit::names::{self, basename};
use crate::audit::shell::{Cmd, Phase};

use super::Ctx;

/// A file nothing executes: a document, a licence or an image (by its name).
pub(super) fn inert(local: &str) -> bool {
    let l = local.to_ascii_lowercase();
    let b = basename(&l);
    [
        ".html", ".htm", ".txt", ".md", ".rst", ".pdf", ".png", ".jpg", ".jpeg", ".svg", ".ico",
        ".gif", ".webp", ".xpm",
    ]
    .iter()
    .any(|e| b.ends_with(e))
        || data_table(b)
        || ["license", "licence", "copying", "eula"]
            .iter()
            .any(|n| b.starts_with(n))
}

/// A data table by its name (`emoji.json`, `.csv`, `.tsv`) — whether it is only read is
/// [`use_of`]'s to say — except the manifests a build tool obeys (`package.json`'s scripts run under npm, `composer.json`'s under composer).
fn data_table(b: &str) -> bool {
    const MANIFESTS: &[&str] = &[
        "package.json",
        "package-lock.json",
        "composer.json",
        "deno.json",
        "bower.json",
        "manifest.json",
    ];
    [".json", ".csv", ".tsv"].iter().any(|e| b.ends_with(e)) && !MANIFESTS.contains(&b)
}

/// Programs that read a file as data (or copy, convert, hash or list it) and run nothing of it
/// — given it as an input, not as their program (`-f`).
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "sed",
    "awk",
    "gawk",
    "mawk",
    "jq",
    "yq",
    "sort",
    "uniq",
    "wc",
    "cut",
    "tr",
    "column",
    "iconv",
    "dos2unix",
    "sha256sum",
    "sha512sum",
    "sha1sum",
    "md5sum",
    "b2sum",
    "cmp",
    "diff",
    "file",
    "stat",
    "ls",
    "touch",
    "chmod",
    "chown",
    "rm",
    "less",
    "xmllint",
    "gzip",
    "gunzip",
    "xz",
    "unxz",
    "zstd",
    "bsdtar",
    "tar",
    "unzip",
    "7z",
    "convert",
    "magick",
    "rsvg-convert",
    "inkscape",
    "optipng",
    "desktop-file-install",
    "desktop-file-validate",
    "desktop-file-edit",
    "pandoc",
    "asciidoctor",
    "markdown",
    "xdg-icon-resource",
    "msgfmt",
    "test",
    "[",
    "[[",
    "gendesk",
    "icotool",
    "zcat",
    "bzip2",
    "gpg",
    "cmark",
    "rst2man",
    "help2man",
    "a2x",
    "hxextract",
    "hxselect",
    "hxnormalize",
    "w3m",
    "html2text",
    "xmlstarlet",
    "lynx",
];

/// Programs that copy a file: the copy is as harmless as its destination.
const COPIERS: &[&str] = &["install", "cp", "mv", "ln", "rsync"];

/// What the build does with a download.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Use {
    /// Copied into the package, or read as data.
    Read,
    /// Named by a command the audit does not know to be a plain read.
    Unknown,
    /// Run as code: given to a program as its program (`sed -f`, `awk -f`), fed to a shell
    /// (`sh < FILE`, `jq … FILE | sh`), its rows run as commands, copied under a name that is
    /// then run.
    Runs,
}

/// What the build does with the download `local`, from every command that names it (as a word
/// or a redirection), the worst of them: each must copy it into the package (or under a name
/// that is itself a document) or read it as data — not as a program, not inside a substitution
/// whose text goes on, not into a pipe that reaches another program than a data reader, not into
/// a file the build could run, not in a command the audit found hidden in text. A file no
/// command names is left to [`inert`]'s name.
pub(super) fn use_of(ctx: &Ctx, local: &str) -> Use {
    let want = basename(local);
    if want.is_empty() {
        return Use::Read;
    }
    let names_it = |t: &str| basename(t.trim_end_matches('/')) == want;
    ctx.an
        .cmds
        .iter()
        .filter(|c| {
            c.file == 0
                && (c.phase.is_build() || matches!(c.phase, Phase::Package | Phase::Global))
                && (c.argv.iter().any(|w| names_it(&w.text))
                    || c.redirs.iter().any(|r| names_it(&r.target.text)))
        })
        .map(|c| use_in(ctx, c, &names_it))
        .max()
        .unwrap_or(Use::Read)
}

/// Is `name` run by a command of the build (as its program, a shell's or interpreter's script,
/// `source`d)?
fn run_by_name(ctx: &Ctx, name: &str) -> bool {
    ctx.an.cmds.iter().any(|c| {
        if c.argv.is_empty() {
            return false;
        }
        let i = names::effective(&c.argv);
        let prog = &c.argv[i].text;
        if basename(prog) == name && prog.contains('/') {
            return true;
        }
        let (n, args) = names::program(c);
        (names::is_interpreter(n) || matches!(n, "source" | "."))
            && args
                .iter()
                .find(|a| !a.text.starts_with('-'))
                .is_some_and(|a| basename(&a.text) == name)
    })
}

/// A copy of the download (or a reader's output) written under `name`: run when the build runs
/// that name; unknown when the name is a script or a file a build tool obeys (a `Makefile`, a
/// `.sh`, a `.py`); else data.
fn copy_use(ctx: &Ctx, name: &str) -> Use {
    let l = name.to_ascii_lowercase();
    if run_by_name(ctx, name) {
        Use::Runs
    } else if [
        ".sh", ".bash", ".zsh", ".py", ".pl", ".rb", ".js", ".lua", ".php", ".install", ".mk",
        ".cmake", ".build", ".service", ".desktop", ".conf",
    ]
    .iter()
    .any(|e| l.ends_with(e))
        || matches!(
            l.as_str(),
            "makefile"
                | "gnumakefile"
                | "cmakelists.txt"
                | "meson.build"
                | "pkgbuild"
                | "configure"
        )
        || !l.contains('.')
    {
        Use::Unknown
    } else {
        Use::Read
    }
}

fn use_in(ctx: &Ctx, c: &Cmd, names_it: &dyn Fn(&str) -> bool) -> Use {
    if let Some(id) = c.in_subst {
        // Its output is a word of another command: run when that word is code (`eval
        // "$(cat FILE)"`, `source <(cat FILE)`, `bash -c "$(jq -r .cmd FILE)"`).
        return if subst_is_code(ctx, id) {
            Use::Runs
        } else {
            Use::Unknown
        };
    }
    if c.embed.is_some() || c.argv.is_empty() {
        return Use::Unknown;
    }
    let i = names::effective(&c.argv);
    if names_it(&c.argv[i].text) {
        return Use::Runs;
    }
    let fed = c
        .redirs
        .iter()
        .any(|r| r.op == "<" && names_it(&r.target.text));
    if c.argv[i].dynamic {
        // Handed to a program nobody can name: with the file on its standard input (a loop's
        // `done < FILE`), the file's rows name the program.
        return if fed { Use::Runs } else { Use::Unknown };
    }
    let (name, args) = names::program(c);
    if fed && (names::reads_script_from_stdin(c) || names::is_interpreter(name)) {
        return Use::Runs;
    }
    // Given as a program: `sed -f FILE`, `awk -f FILE`, `--file=FILE`.
    let as_program = args.windows(2).any(|p| {
        matches!(p[0].text.as_str(), "-f" | "--file" | "--from-file" | "-x") && names_it(&p[1].text)
    }) || args.iter().any(|a| {
        a.text
            .strip_prefix("--file=")
            .or_else(|| {
                a.text
                    .strip_prefix("-f")
                    .filter(|r| !r.is_empty() && r.contains('.'))
            })
            .is_some_and(names_it)
    });
    if as_program
        || ((names::is_interpreter(name) || matches!(name, "source" | "."))
            && args
                .iter()
                .find(|a| !a.text.starts_with('-'))
                .is_some_and(|a| names_it(&a.text)))
    {
        return Use::Runs;
    }
    if COPIERS.contains(&name) {
        let operands: Vec<&str> = args
            .iter()
            .map(|a| a.text.as_str())
            .filter(|t| !t.starts_with('-'))
            .collect();
        let to_dir = args.iter().any(|a| {
            let t = a.text.as_str();
            t == "-t"
                || t.starts_with("--target-directory")
                || (t.starts_with('-') && !t.starts_with("--") && t.ends_with('t'))
        });
        let target = args
            .windows(2)
            .find(|p| matches!(p[0].text.as_str(), "-t" | "--target-directory"))
            .map(|p| p[1].text.as_str())
            .or_else(|| operands.last().copied())
            .unwrap_or("");
        // Into a directory (`-t DIR`, several files, `DIR/`): the copy keeps the file's name.
        let dir_named =
            to_dir || operands.len() > 2 || target.ends_with('/') || matches!(target, "." | "..");
        // Shipped as a program (an executable mode, a directory of programs): it runs on the
        // installed system, so it is a download like any other, not data.
        let executable = args.iter().any(|a| {
            let t = a.text.as_str();
            let mode = t.strip_prefix("--mode=").or_else(|| {
                t.strip_prefix('-')
                    .and_then(|f| f.split_once('m').map(|(_, m)| m))
            });
            mode.is_some_and(|m| {
                m.contains('x') || m.chars().any(|c| matches!(c, '1' | '3' | '5' | '7'))
            })
        }) || args.windows(2).any(|p| {
            p[0].text == "-m"
                && p[1]
                    .text
                    .chars()
                    .any(|c| matches!(c, '1' | '3' | '5' | '7' | 'x'))
        });
        let program_dir = ["/bin/", "/sbin/", "/libexec/", "/profile.d/", "/systemd/"]
            .iter()
            .any(|d| target.contains(d));
        if executable || program_dir {
            return Use::Unknown;
        }
        if into_package(target) || dir_named || inert(basename(target)) {
            return Use::Read;
        }
        return copy_use(ctx, basename(target));
    }
    if !READERS.contains(&name) {
        return Use::Unknown;
    }
    if runs_text(name, args) {
        return Use::Runs;
    }
    // What it prints goes on: into a file the build may run, or down a pipe.
    let mut worst = Use::Read;
    for r in &c.redirs {
        let out = r.op.starts_with('>') || r.op.starts_with("&>");
        let t = r.target.text.as_str();
        if out
            && !into_package(t)
            && !matches!(t, "/dev/null" | "&2" | "&1" | "2" | "1")
            && !inert(basename(t))
        {
            worst = worst.max(copy_use(ctx, basename(t)));
        }
    }
    if let Some((id, stage, _)) = c.pipe {
        for o in ctx.an.cmds.iter().filter(|o| {
            o.in_subst == c.in_subst && o.pipe.is_some_and(|p| p.0 == id && p.1 > stage)
        }) {
            let (n, a) = names::program(o);
            if o.argv.is_empty() {
                continue;
            }
            let u = if names::reads_script_from_stdin(o)
                || names::is_interpreter(n)
                || matches!(n, "xargs" | "parallel" | "source" | ".")
                || o.argv[names::effective(&o.argv)].dynamic
                || runs_text(n, a)
            {
                Use::Runs
            } else if READERS.contains(&n) {
                Use::Read
            } else {
                Use::Unknown
            };
            worst = worst.max(u);
        }
    }
    worst
}

/// Is the output of substitution `id` run as code by the command that holds it: its program's
/// name, `eval`'s or `source`'s argument, a shell's or interpreter's script or `-c` text?
fn subst_is_code(ctx: &Ctx, id: usize) -> bool {
    ctx.an.cmds.iter().any(|c| {
        if c.argv.is_empty() {
            return false;
        }
        let i = names::effective(&c.argv);
        let holds = |w: &crate::audit::shell::Word| w.subs.contains(&id);
        if holds(&c.argv[i]) {
            return true;
        }
        let (name, args) = names::program(c);
        let code_cmd = matches!(name, "eval" | "source" | ".")
            || names::is_shell(name)
            || names::is_interpreter(name);
        code_cmd && (args.iter().any(holds) || c.stdin.as_ref().is_some_and(holds))
    })
}

/// A path in the package being made.
fn into_package(t: &str) -> bool {
    t.starts_with("$pkgdir") || t.starts_with("${pkgdir}")
}

/// A reader whose own program runs what it reads: GNU sed's `e` command and flag, `w`/`r`
/// files; awk's `system()`, `| getline` and `print | "cmd"`.
fn runs_text(name: &str, args: &[crate::audit::shell::Word]) -> bool {
    match name {
        "sed" => sed_scripts(args).iter().any(|s| sed_runs(s)),
        "awk" | "gawk" | "mawk" => args
            .iter()
            .any(|a| a.text.contains("system") || a.text.contains('|')),
        _ => false,
    }
}

/// sed's scripts: every `-e SCRIPT` / `--expression=SCRIPT`, else its first operand. (`-f FILE`
/// reads the script from a file: judged as "given as a program" by the caller when it is the
/// download, and unknown otherwise — counted as running.)
fn sed_scripts(args: &[crate::audit::shell::Word]) -> Vec<String> {
    let mut out = Vec::new();
    let mut first = None;
    let mut it = args.iter().map(|a| a.text.as_str());
    while let Some(t) = it.next() {
        match t {
            "-e" | "--expression" => out.extend(it.next().map(str::to_owned)),
            "-f" | "--file" => out.push("e".to_owned()),
            _ if t.starts_with("--expression=") => out.push(t["--expression=".len()..].to_owned()),
            _ if t.starts_with("--file=") => out.push("e".to_owned()),
            _ if t.starts_with('-') && t.len() > 1 => {}
            _ => {
                if first.is_none() {
                    first = Some(t.to_owned());
                }
            }
        }
    }
    if out.is_empty() {
        out.extend(first);
    }
    out
}

/// Does a sed script hold a command that runs or writes (`e`, `w`, `W`, `r`, `R`, an `s` with
/// the `e` or `w` flag)? Each command is found after its address (`1`, `$`, `/re/`, `a,b`, `!`).
fn sed_runs(script: &str) -> bool {
    if crate::audit::shell::sed_script_is_plain(script) {
        return false;
    }
    for piece in script.split(['\n', ';']) {
        let mut rest = piece.trim_start();
        loop {
            let before = rest;
            rest = rest.trim_start_matches(|c: char| {
                c.is_ascii_digit()
                    || matches!(c, '$' | ',' | '!' | '{' | '}' | ' ' | '\t' | '~' | '+')
            });
            if let Some(r) = rest.strip_prefix('/') {
                // A regex address: up to its closing slash.
                rest = r.find('/').map_or("", |k| &r[k + 1..]);
            }
            if rest == before {
                break;
            }
        }
        match rest.chars().next() {
            Some('e' | 'w' | 'W' | 'r' | 'R') => return true,
            Some('s') => {
                // An `s` the plain reading refused: its flags decide.
                let d = rest[1..].chars().next().unwrap_or('/');
                let flags = rest[1..].rsplit(d).next().unwrap_or("");
                if flags.contains('e') || flags.contains('w') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}
