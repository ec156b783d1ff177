//! Static model of shell code: the commands a PKGBUILD, install script or hook would run, with
//! their words resolved (variables, arrays, functions, quoting, simple decoding) — never executed.
//!
//! `analyze` turns source files into an [`Analysis`]: a flat list of [`Cmd`]s in the order they
//! would run, each with the phase it runs in (global, `build()`, `package()`, install script …),
//! the pipeline and substitution it belongs to, and taint flags on every word that say whether
//! the text came from the network, from a decoder, or was hidden by escapes.

mod array;
mod command;
mod declare;
mod expand;
mod files;
pub(crate) mod lexer;
mod nested;
mod roles;
mod sed;
mod source;
pub(crate) mod statics;
mod text;
mod walk;

use std::collections::HashMap;
use std::rc::Rc;

pub(crate) use files::analyze;
pub(crate) use sed::script_is_plain as sed_script_is_plain;

/// `rel` resolved against the directory `base` (`cd`, relative paths): `.` and `..` are
/// folded, and `$srcdir/..` is `$startdir`. An absolute or `$`-rooted `rel` stands alone.
pub(crate) fn join_path(base: Option<&str>, rel: &str) -> String {
    let joined = match base {
        _ if rel.starts_with('/') || rel.starts_with('$') => rel.to_owned(),
        Some(b) if !b.is_empty() => format!("{}/{rel}", b.trim_end_matches('/')),
        _ => rel.to_owned(),
    };
    let mut parts: Vec<&str> = Vec::new();
    let rooted = joined.starts_with('/');
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&"$srcdir") | Some(&"${srcdir}") if parts.len() == 1 => {
                    parts[0] = "$startdir";
                }
                Some(&l) if l != ".." && !(parts.len() == 1 && l.starts_with('$')) => {
                    parts.pop();
                }
                _ if parts.is_empty() && rooted => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    if rooted {
        format!("/{body}")
    } else if body.is_empty() {
        ".".into()
    } else {
        body
    }
}

/// A 1-based line and column (in characters) of the original source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Pos {
    pub line: u32,
    pub col: u32,
}

/// When a piece of code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// Top level of a PKGBUILD: runs whenever the file is sourced, even to print .SRCINFO.
    Global,
    Prepare,
    Pkgver,
    Build,
    Check,
    Package,
    /// A PKGBUILD function nobody calls (or that only a trick could call).
    Function,
    /// An install script: runs as root when the package is installed, upgraded or removed.
    Install,
    /// An ALPM hook's Exec line: runs as root on every matching transaction.
    Hook,
    /// A script or unit that the package installs and that runs later on the system.
    Runtime,
}

impl Phase {
    pub(crate) fn of_function(name: &str) -> Phase {
        match name {
            "prepare" => Phase::Prepare,
            "pkgver" => Phase::Pkgver,
            "build" => Phase::Build,
            "check" => Phase::Check,
            n if n == "package" || n.starts_with("package_") => Phase::Package,
            _ => Phase::Function,
        }
    }
    /// Code that runs as root on the installed system rather than while building.
    pub(crate) fn runs_on_system(self) -> bool {
        matches!(self, Phase::Install | Phase::Hook | Phase::Runtime)
    }
    /// Code that runs while building (makepkg as the user).
    pub(crate) fn is_build(self) -> bool {
        matches!(
            self,
            Phase::Prepare | Phase::Pkgver | Phase::Build | Phase::Check | Phase::Function
        )
    }
    pub(crate) fn label(self) -> &'static str {
        match self {
            Phase::Global => "at the top level of the PKGBUILD (runs whenever it is read)",
            Phase::Prepare => "in prepare()",
            Phase::Pkgver => "in pkgver()",
            Phase::Build => "in build()",
            Phase::Check => "in check()",
            Phase::Package => "in package()",
            Phase::Function => "in a helper function",
            Phase::Install => "in an install script (runs as root)",
            Phase::Hook => "in an ALPM hook (runs as root)",
            Phase::Runtime => "in a file the package installs to run later",
        }
    }
}

/// Where a piece of text came from, as bit flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Taint(pub u8);

impl Taint {
    /// Output of a downloader (curl, wget, nc …).
    pub const NET: Taint = Taint(1);
    /// Output of a decoder (base64 -d, xxd -r, rev, tr …).
    pub const DECODED: Taint = Taint(2);
    /// Text hidden behind escapes, split quotes or `${IFS}`.
    pub const OBFUSCATED: Taint = Taint(4);
    /// Output of some command substitution.
    pub const SUBST: Taint = Taint(8);

    pub(crate) fn has(self, other: Taint) -> bool {
        self.0 & other.0 != 0
    }
    pub(crate) fn with(self, other: Taint) -> Taint {
        Taint(self.0 | other.0)
    }
}

/// A resolved string value.
#[derive(Clone, Debug, Default)]
pub(crate) struct Str {
    pub text: String,
    pub taint: Taint,
    /// Some part could not be resolved (unknown variable, command output).
    pub dynamic: bool,
}

impl Str {
    pub(crate) fn lit(text: impl Into<String>) -> Str {
        Str {
            text: text.into(),
            ..Str::default()
        }
    }
}

/// A shell variable's value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Scalar(Str),
    Array(Vec<Str>),
}

impl Val {
    pub(crate) fn first(&self) -> Str {
        match self {
            Val::Scalar(s) => s.clone(),
            Val::Array(a) => a.first().cloned().unwrap_or_default(),
        }
    }
    pub(crate) fn items(&self) -> Vec<Str> {
        match self {
            Val::Scalar(s) => vec![s.clone()],
            Val::Array(a) => a.clone(),
        }
    }
}

pub(crate) type Env = HashMap<String, Val>;

/// One resolved word (field) of a command.
#[derive(Clone, Debug, Default)]
pub(crate) struct Word {
    pub text: String,
    pub pos: Pos,
    pub taint: Taint,
    pub dynamic: bool,
    /// Substitutions whose output (or `/dev/fd` path) appears in this word.
    pub subs: Vec<usize>,
}

#[derive(Clone, Debug)]
pub(crate) struct Redir {
    /// `>`, `>>`, `<`, `&>`, `>&` …
    pub op: String,
    pub target: Word,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EmbedKind {
    /// `eval STRING`
    Eval,
    /// `sh -c STRING`, `su -c STRING`
    ShellArg,
    /// text piped or redirected into a shell
    Stdin,
    /// a script or unit body written by a here-document
    Generated,
    /// the Exec line of an ALPM hook
    HookExec,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Embed {
    pub kind: EmbedKind,
    /// Taint of the text that was run (e.g. DECODED when it came out of base64).
    pub taint: Taint,
}

/// Variables that tell a language package manager where to install.
pub(crate) const INSTALL_VARS: &[&str] = &[
    "GOPATH",
    "GOBIN",
    "CARGO_HOME",
    "CARGO_INSTALL_ROOT",
    "GEM_HOME",
    "npm_config_prefix",
    "NPM_CONFIG_PREFIX",
    "PIP_TARGET",
    "PIP_PREFIX",
    "PIP_ROOT",
    "PIP_USER",
    "PYTHONUSERBASE",
];

/// One simple command, as it would run.
#[derive(Clone, Debug)]
pub(crate) struct Cmd {
    pub file: usize,
    pub pos: Pos,
    /// The source text of the command (first line, shortened).
    pub snippet: String,
    /// For code that is not literally in the file (eval'd or decoded text): that text.
    pub decoded: Option<String>,
    pub phase: Phase,
    pub func: Option<Rc<str>>,
    pub argv: Vec<Word>,
    /// `VAR=value` words before the command name.
    pub env: Vec<(String, Word)>,
    pub redirs: Vec<Redir>,
    /// Here-document or here-string fed to the command.
    pub stdin: Option<Word>,
    /// (pipeline id, stage, number of stages)
    pub pipe: Option<(u32, u16, u16)>,
    pub background: bool,
    /// The substitution this command runs in, if any.
    pub in_subst: Option<usize>,
    /// The directory set by a preceding `cd` in the same function, if known.
    pub cwd: Option<String>,
    /// `PATH` as the code set it for this command (a `PATH=…` before it, else the last
    /// assignment, `export` or `declare -x`, or a sourced virtualenv `bin/activate`); `None`
    /// when the code never sets it. Which `pip` or `python` a bare name runs is read from it.
    pub path: Option<String>,
    /// The exported variables that tell a language package manager where to install
    /// ([`INSTALL_VARS`]: `GOPATH`, `GOBIN`, `CARGO_INSTALL_ROOT` …) with their values as the
    /// code set them (`export`, `declare -x`), for this command; `NAME=value` before the
    /// command is in `env`.
    pub exported: Vec<(String, String)>,
    pub embed: Option<Embed>,
    /// A call of the function this command runs in (directly or through others): recursion.
    pub recursive: bool,
    /// Runs inside a loop that never ends by itself (`while true`, `while :`, `for ((;;))`).
    pub forever: bool,
}

/// A `$(…)`, backquote or `<(…)` substitution.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subst {
    /// A downloader ran inside it.
    pub net: bool,
    /// A decoder ran inside it.
    pub decoded: bool,
    /// It only prints function definitions (`$(declare -f NAME)`): text already in the file.
    pub copies_functions: bool,
    /// An output process substitution, `>(…)`: its commands read what the command around it
    /// writes there (`echo CODE > >(sh)`, `exec > >(sh)`, `tee >(bash)`).
    pub fed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    Pkgbuild,
    Install,
    Hook,
    /// Another file of the package (a `source=` entry, a helper the PKGBUILD reads), walked
    /// in the role the PKGBUILD gives it: run while building, installed to run later, or data.
    Local,
}

#[derive(Clone, Debug)]
pub(crate) struct FileSrc {
    pub name: String,
    pub kind: FileKind,
}

/// A variable assignment as written (for arrays like `depends` set inside `package_foo()`).
#[derive(Clone, Debug)]
pub(crate) struct Assignment {
    pub file: usize,
    pub pos: Pos,
    pub name: String,
    pub value: Val,
    pub phase: Phase,
    pub snippet: String,
    /// Made inside a branch (if/case/&&/||): whether it happens depends on the builder.
    pub conditional: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ObfKind {
    /// `'b''u''n'`: a word glued from several short quoted pieces.
    QuoteSplit,
    /// `$'\x62\x75\x6e'`: printable characters written as escapes.
    PrintableEscapes,
    /// `${IFS}` used to hide spaces.
    Ifs,
}

#[derive(Clone, Debug)]
pub(crate) struct ObfNote {
    pub kind: ObfKind,
    pub file: usize,
    pub pos: Pos,
    pub phase: Phase,
    /// What the obfuscated text resolves to.
    pub resolved: String,
    pub snippet: String,
}

/// A file body a command writes from a here-document (`cat > "$pkgdir/…" <<EOF`).
#[derive(Clone, Debug)]
pub(crate) struct Generated {
    pub file: usize,
    pub pos: Pos,
    pub target: String,
    pub body: String,
}

/// Everything the rules look at.
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub files: Vec<FileSrc>,
    pub cmds: Vec<Cmd>,
    pub substs: Vec<Subst>,
    pub assigns: Vec<Assignment>,
    pub notes: Vec<ObfNote>,
    pub generated: Vec<Generated>,
    /// PKGBUILD variables after the top level ran.
    pub global: Env,
    /// Names of functions defined in the PKGBUILD.
    pub functions: Vec<String>,
    /// Every function definition walked: (file, name) — a shipped script's `getopt() { … }`
    /// is not the system's getopt.
    pub defined: Vec<(usize, String)>,
    /// (file, position) of parse errors.
    pub parse_errors: Vec<(usize, Pos)>,
    /// The analysis hit its work budget and stopped early.
    pub truncated: bool,
}

impl Analysis {
    /// A global PKGBUILD variable as a list of strings (scalar → one item).
    pub(crate) fn global_list(&self, name: &str) -> Vec<Str> {
        self.global.get(name).map(Val::items).unwrap_or_default()
    }
    pub(crate) fn global_str(&self, name: &str) -> Option<Str> {
        self.global.get(name).map(Val::first)
    }
    /// Every value assigned to `name` anywhere in the PKGBUILD (global and in package functions).
    pub(crate) fn all_values(&self, name: &str) -> Vec<Str> {
        let mut out = self.global_list(name);
        for a in &self.assigns {
            if a.name == name && a.file == 0 && a.phase != Phase::Global {
                out.extend(a.value.items());
            }
        }
        out
    }
}
