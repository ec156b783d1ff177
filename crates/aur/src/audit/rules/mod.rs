//! The rules: each module looks at the [`Analysis`] and adds findings to a [`Sink`].

mod accounts;
mod argv;
mod elevation;
mod ends_session;
mod exec;
mod exhaustion;
mod fed_shell;
mod files;
mod getopt_idiom;
mod inert;
mod install;
mod modes;
mod obfuscation;
mod own_group;
mod own_units;
mod pkgmgr;
mod printed_version;
mod session;
mod session_bus;
mod sources;
mod spread;
mod srcinfo_check;
mod text_subst;
mod unit_owners;
mod units;
mod version;
mod version_text;

use std::collections::{HashMap, HashSet};

use super::names;
use super::report::{AuditReport, Finding, Severity};
use super::shell::{self, Analysis, Cmd, Phase, Pos};
use super::srcinfo::{self, Srcinfo};
use super::{AuditInput, MAX_INPUT_BYTES};

/// Findings plus what was learnt on the way (for comparing versions).
pub(crate) struct Outcome {
    pub findings: Vec<Finding>,
    pub an: Analysis,
}

impl Outcome {
    pub(crate) fn report(&self) -> AuditReport {
        AuditReport::from_findings(self.findings.clone())
    }
}

/// What every rule may consult.
pub(super) struct Ctx<'a> {
    pub an: &'a Analysis,
    pub srcinfo: Option<Srcinfo>,
    /// Language families the package is built with (from makedepends and build commands).
    pub built_with: HashSet<&'static str>,
    pub pkgnames: Vec<String>,
    /// The package's local files (install scripts, hooks, `source=` files) with their text.
    pub local_texts: &'a [(String, String)],
    /// The substitutions the commands on each line run in, by (file, line): built once, on
    /// first use (`text_subst::unseen_variable` asks it for every assignment it follows; read
    /// by scanning every command each time, a 749-line PKGBUILD took 50 s).
    pub substs_by_line: std::cell::OnceCell<HashMap<(usize, u32), Vec<usize>>>,
    /// The commands each substitution runs, by its id, built once on first use
    /// (`text_subst::unseen_from_written_text`, asked per word and per assignment).
    pub cmds_by_subst: std::cell::OnceCell<HashMap<usize, Vec<usize>>>,
}

impl Ctx<'_> {
    pub(super) fn file_name(&self, file: usize) -> &str {
        self.an
            .files
            .get(file)
            .map_or("PKGBUILD", |f| f.name.as_str())
    }
    /// Commands that are not just printing messages.
    pub(super) fn acting(&self) -> impl Iterator<Item = &Cmd> {
        self.an
            .cmds
            .iter()
            .filter(|c| !names::is_message(names::program(c).0))
    }
    /// Position of the first assignment of a PKGBUILD variable.
    pub(super) fn assign_pos(&self, name: &str) -> Option<(Pos, String)> {
        self.an
            .assigns
            .iter()
            .find(|a| a.file == 0 && a.name == name)
            .map(|a| (a.pos, a.snippet.clone()))
    }
    /// Position of the assignment that contains `value` in one of `names`.
    pub(super) fn value_pos(&self, names: &[&str], value: &str) -> Option<(Pos, String)> {
        self.an
            .assigns
            .iter()
            .find(|a| {
                a.file == 0
                    && names.contains(&a.name.as_str())
                    && a.value.items().iter().any(|v| v.text == value)
            })
            .map(|a| (a.pos, a.snippet.clone()))
    }
}

/// Collects findings, one per (id, file, position), keeping the most severe.
pub(super) struct Sink {
    files: Vec<String>,
    out: HashMap<(&'static str, String, u32, u32), Finding>,
}

impl Sink {
    pub(super) fn add(
        &mut self,
        id: &'static str,
        severity: Severity,
        file: &str,
        pos: Pos,
        snippet: &str,
        why: String,
    ) {
        let key = (id, file.to_owned(), pos.line, pos.col);
        let f = Finding {
            id,
            severity,
            line: pos.line.max(1),
            column: pos.col.max(1),
            snippet: snippet.to_owned(),
            why,
            check: super::checks::for_id(id),
            file: file.to_owned(),
        };
        match self.out.get(&key) {
            Some(old) if old.severity >= severity => {}
            _ => {
                self.out.insert(key, f);
            }
        }
    }

    /// A finding about a command; code that only exists after decoding is quoted in the why.
    pub(super) fn cmd(&mut self, id: &'static str, severity: Severity, cmd: &Cmd, why: String) {
        let why = match &cmd.decoded {
            Some(d) => format!("{why} (hidden in text that only becomes code at run time: `{d}`)"),
            None => why,
        };
        let file = self.files.get(cmd.file).cloned().unwrap_or_default();
        self.add(id, severity, &file, cmd.pos, &cmd.snippet, why);
    }

    pub(super) fn at(
        &mut self,
        id: &'static str,
        severity: Severity,
        file: usize,
        pos: Pos,
        snippet: &str,
        why: String,
    ) {
        let f = self.files.get(file).cloned().unwrap_or_default();
        self.add(id, severity, &f, pos, snippet, why);
    }
}

fn cap(s: &str) -> (&str, bool) {
    if s.len() <= MAX_INPUT_BYTES {
        return (s, false);
    }
    let mut end = MAX_INPUT_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

pub(crate) fn run(input: &AuditInput) -> Outcome {
    let (pkgbuild, mut cut) = cap(&input.pkgbuild);
    let mut cut_files = Vec::new();
    let extra: Vec<(String, String)> = input
        .install_scripts
        .iter()
        .take(64)
        .enumerate()
        .map(|(i, s)| {
            let (c, t) = cap(&s.content);
            if t {
                cut_files.push(i + 1);
            }
            (s.name.clone(), c.to_owned())
        })
        .collect();
    let an = shell::analyze(pkgbuild, &extra);
    // Only text read as code matters when cut short: a file named as a document or image from
    // which no command was read (a licence page the package installs) is data, whatever its
    // length. `analyze` numbers the files as given, after the PKGBUILD.
    cut |= cut_files.iter().any(|&f| {
        let name = an.files.get(f).map_or("", |x| x.name.as_str());
        !sources::inert(name) || an.cmds.iter().any(|c| c.file == f)
    });
    let srcinfo = input.srcinfo.as_deref().map(|s| srcinfo::parse(cap(s).0));
    let mut built_with = HashSet::new();
    for key in ["makedepends", "checkdepends", "makedepends_x86_64"] {
        for d in an.all_values(key) {
            if let Some(f) = names::family_of_package(&d.text) {
                built_with.insert(f);
            }
        }
    }
    for c in &an.cmds {
        // Installing named packages does not show what the package is built with — unless
        // they are installed into the package (`npm install -g --prefix "$pkgdir"/usr`, the
        // Node.js packaging guideline's spelling): that is building it with the tool.
        let into_package = c.argv.iter().any(|a| a.text.contains("$pkgdir"));
        let named_install = names::pkg_manager(c).is_some()
            && !into_package
            && names::program(c)
                .1
                .iter()
                .filter(|a| !a.text.starts_with('-'))
                .count()
                > 1;
        if (c.phase.is_build() || c.phase == Phase::Package) && !named_install && c.embed.is_none()
        {
            let fam = match names::program(c).0 {
                "npm" | "yarn" | "pnpm" | "bun" | "node" | "npx" | "electron-builder" => "node",
                "cargo" | "rustc" => "rust",
                "go" => "go",
                "python" | "python3" | "pip" | "pip3" | "maturin" => "python",
                "gem" | "bundle" | "ruby" => "ruby",
                "composer" | "php" => "php",
                _ => continue,
            };
            built_with.insert(fam);
        }
    }
    let pkgnames = an
        .global_list("pkgname")
        .into_iter()
        .map(|s| s.text)
        .collect();
    let ctx = Ctx {
        an: &an,
        srcinfo,
        built_with,
        pkgnames,
        local_texts: &extra,
        substs_by_line: std::cell::OnceCell::new(),
        cmds_by_subst: std::cell::OnceCell::new(),
    };
    let mut sink = Sink {
        files: an.files.iter().map(|f| f.name.clone()).collect(),
        out: HashMap::new(),
    };
    exec::check(&ctx, &mut sink);
    fed_shell::check(&ctx, &mut sink);
    accounts::check(&ctx, &mut sink);
    ends_session::check(&ctx, &mut sink);
    pkgmgr::check(&ctx, &mut sink);
    files::check(&ctx, &mut sink);
    modes::check(&ctx, &mut sink);
    exhaustion::check(&ctx, &mut sink);
    install::check(&ctx, &mut sink);
    sources::check(&ctx, &mut sink);
    obfuscation::check(&ctx, &mut sink);
    spread::check(&ctx, &mut sink);
    srcinfo_check::check(&ctx, &mut sink);
    version::check(&ctx, &mut sink);
    if cut {
        sink.add(
            "AUR-AUDIT-TRUNCATED",
            Severity::Medium,
            "PKGBUILD",
            Pos { line: 1, col: 1 },
            "",
            format!(
                "a file is larger than {MAX_INPUT_BYTES} bytes; only its beginning was audited"
            ),
        );
    }
    if an.truncated {
        sink.add(
            "AUR-AUDIT-TRUNCATED",
            Severity::Medium,
            "PKGBUILD",
            Pos { line: 1, col: 1 },
            "",
            "the code is unusually complex; the audit stopped before reading all of it".into(),
        );
    }
    if let Some((file, pos)) = an.parse_errors.first() {
        let name = ctx.file_name(*file).to_owned();
        sink.add(
            "AUR-PARSE-ERROR",
            Severity::Low,
            &name,
            *pos,
            "",
            "the shell parser could not read this part; findings around it may be incomplete"
                .into(),
        );
    }
    let findings = sink.out.into_values().collect();
    Outcome { findings, an }
}
