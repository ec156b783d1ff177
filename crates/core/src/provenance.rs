//! Where the text of a tool's answer comes from: archgate's own words, or text someone else
//! wrote — an AUR maintainer, a wiki editor, a web page on the clipboard, a program writing to
//! the journal. Every `ToolSpec` says which (`ToolSpec::provenance`, a required field, so a new
//! tool must decide), and the gate keeps what each session read (`crate::untrusted`).
//!
//! The line: an answer is untrusted when it can carry free text (descriptions, messages, file
//! contents, titles, images) written outside archgate, wherever it came from — and a path or a
//! file name someone else chose is free text too: it may hold any words, spaces and all (a file
//! an AUR package ships, a dependency string, a theme cloned from any repository; attack 5a F7).
//! Names of a strict grammar (package and unit names, versions), numbers and states that
//! archgate reads from the system's own records are archgate's; so is how an approved command
//! ended (its exit status and output), which the person's approval already covered.

use serde::Serialize;
use serde_json::Value;

/// Where a tool's answer's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Only what archgate writes or reads from the system's own records.
    ArchgateOnly,
    /// Free text from this source, which anyone outside archgate may have written.
    Untrusted(Source),
}

/// A source of untrusted text. `label` names what a session read, for the person's question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    AurSearch,
    AurDetails,
    AurFiles,
    AurAudit,
    AurDiff,
    AurUpdates,
    PkgbuildAuditInput,
    WikiSearch,
    WikiPage,
    ArchNews,
    ArchWeb,
    PackageDescriptions,
    PacmanLog,
    Pacnew,
    Journal,
    Units,
    ProcessCommandLines,
    DeviceStrings,
    NetworkNames,
    WindowTitles,
    OmarchySummaries,
    OmarchyOutput,
    ShellAnswers,
    MediaTitles,
    Screen,
    Clipboard,
    PackageContents,
    FileNames,
}

/// The longest subject (a package, a page) a label names, in characters.
const SUBJECT_CHARS: usize = 80;

impl Source {
    /// The snake_case name (the audit record's `provenance.read`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::AurSearch => "aur_search",
            Source::AurDetails => "aur_details",
            Source::AurFiles => "aur_files",
            Source::AurAudit => "aur_audit",
            Source::AurDiff => "aur_diff",
            Source::AurUpdates => "aur_updates",
            Source::PkgbuildAuditInput => "pkgbuild_audit_input",
            Source::WikiSearch => "wiki_search",
            Source::WikiPage => "wiki_page",
            Source::ArchNews => "arch_news",
            Source::ArchWeb => "arch_web",
            Source::PackageDescriptions => "package_descriptions",
            Source::PacmanLog => "pacman_log",
            Source::Pacnew => "pacnew",
            Source::Journal => "journal",
            Source::Units => "units",
            Source::ProcessCommandLines => "process_command_lines",
            Source::DeviceStrings => "device_strings",
            Source::NetworkNames => "network_names",
            Source::WindowTitles => "window_titles",
            Source::OmarchySummaries => "omarchy_summaries",
            Source::OmarchyOutput => "omarchy_output",
            Source::ShellAnswers => "shell_answers",
            Source::MediaTitles => "media_titles",
            Source::Screen => "screen",
            Source::Clipboard => "clipboard",
            Source::PackageContents => "package_contents",
            Source::FileNames => "file_names",
        }
    }

    /// The argument that names what was read (a package, a page, a query), if any.
    fn subject_key(self) -> Option<&'static str> {
        match self {
            Source::AurFiles | Source::AurAudit | Source::AurDiff => Some("name"),
            Source::AurDetails => Some("names"),
            Source::AurSearch | Source::WikiSearch => Some("query"),
            Source::WikiPage => Some("title"),
            Source::OmarchyOutput => Some("route"),
            Source::PackageContents => Some("name"),
            Source::ShellAnswers => Some("method"),
            _ => None,
        }
    }

    /// What a session read, in words, from the call's arguments: "AUR package foo's PKGBUILD
    /// and files". The subject is the agent's own words, cut; every renderer escapes it.
    pub fn label(self, args: &Value) -> String {
        let subject = self
            .subject_key()
            .and_then(|k| subject(args.get(k)?))
            .unwrap_or_else(|| "?".to_owned());
        match self {
            Source::AurSearch => format!("AUR search results for {subject}"),
            Source::AurDetails => format!("AUR details of {subject}"),
            Source::AurFiles => format!("AUR package {subject}'s PKGBUILD and files"),
            Source::AurAudit => format!("AUR package {subject}'s audited PKGBUILD"),
            Source::AurDiff => format!("AUR package {subject}'s diff"),
            Source::AurUpdates => "pending AUR updates' diffs".to_owned(),
            Source::PkgbuildAuditInput => "PKGBUILD text given to pkgbuild_audit".to_owned(),
            Source::WikiSearch => format!("ArchWiki search results for {subject}"),
            Source::WikiPage => format!("ArchWiki page {subject}"),
            Source::ArchNews => "Arch news".to_owned(),
            Source::ArchWeb => "archlinux.org's advisories, mirrors and keys".to_owned(),
            Source::PackageDescriptions => "package descriptions".to_owned(),
            Source::PacmanLog => "pacman's log (install scripts' output)".to_owned(),
            Source::Pacnew => ".pacnew diffs".to_owned(),
            Source::Journal => "journal messages".to_owned(),
            Source::Units => "systemd units' descriptions and status".to_owned(),
            Source::ProcessCommandLines => "process command lines".to_owned(),
            Source::DeviceStrings => "names devices report".to_owned(),
            Source::NetworkNames => "network names (Wi-Fi)".to_owned(),
            Source::WindowTitles => "window titles".to_owned(),
            Source::OmarchySummaries => "Omarchy's command summaries".to_owned(),
            Source::OmarchyOutput if subject == "?" => "the output of an Omarchy route".to_owned(),
            Source::OmarchyOutput => format!("the output of Omarchy's {subject}"),
            Source::ShellAnswers => format!("the desktop shell's answer to {subject}"),
            Source::MediaTitles => "what the media player shows".to_owned(),
            Source::Screen => "the screen".to_owned(),
            Source::Clipboard => "the clipboard".to_owned(),
            Source::PackageContents if subject == "?" => {
                "packages' file lists, as their packagers wrote them".to_owned()
            }
            Source::PackageContents => {
                format!(
                    "package {subject}'s file list and dependencies, as its packager wrote them"
                )
            }
            Source::FileNames => "theme and background names (files others made)".to_owned(),
        }
    }
}

/// A string argument, or a list of them joined, cut to [`SUBJECT_CHARS`].
fn subject(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        _ => return None,
    };
    if s.is_empty() {
        return None;
    }
    Some(crate::text::cut(&s, SUBJECT_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_label_names_the_subject_from_the_arguments_and_is_cut() {
        assert_eq!(
            Source::AurFiles.label(&json!({"name": "yay-bin"})),
            "AUR package yay-bin's PKGBUILD and files"
        );
        assert_eq!(
            Source::AurDetails.label(&json!({"names": ["a", "b"]})),
            "AUR details of a, b"
        );
        assert_eq!(Source::Clipboard.label(&json!({})), "the clipboard");
        let long = Source::WikiPage.label(&json!({"title": "x".repeat(500)}));
        assert!(long.chars().count() < 120, "{long}");
    }

    #[test]
    fn every_source_has_its_serde_name() {
        for s in [
            Source::AurFiles,
            Source::PkgbuildAuditInput,
            Source::Clipboard,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
    }
}
