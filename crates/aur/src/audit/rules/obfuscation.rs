//! Obfuscation: words glued from short quoted pieces, printable characters written as escapes,
//! `${IFS}` instead of spaces, long encoded blobs, and decoders in places that run as root.

use std::sync::LazyLock;

use regex::Regex;

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, ObfKind, Phase};

static BLOB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9+/]{100,}={0,2}|[0-9a-fA-F]{160,}").expect("constant regex is valid")
});

/// A long run that looks like base64 (mixed case and digits) or hex, not a checksum.
fn blob(text: &str) -> Option<&str> {
    BLOB.find_iter(text).map(|m| m.as_str()).find(|b| {
        let hex = b.chars().all(|c| c.is_ascii_hexdigit());
        if hex {
            return b.len() >= 160;
        }
        b.chars().any(|c| c.is_ascii_uppercase())
            && b.chars().any(|c| c.is_ascii_lowercase())
            && b.chars().any(|c| c.is_ascii_digit())
            && !b.contains("//")
    })
}

fn checksum_var(name: &str) -> bool {
    name.contains("sums")
        || name == "validpgpkeys"
        || name.starts_with("_commit")
        || name.ends_with("_sha")
        || name.contains("hash")
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    // Quote splitting is noted only where it hides a word from a search of the whole word as
    // written (`shell::expand::every_word_visible`).
    for n in &ctx.an.notes {
        let (what, sev) = match n.kind {
            ObfKind::QuoteSplit => (
                "is glued together from short quoted pieces",
                Severity::Medium,
            ),
            ObfKind::PrintableEscapes => (
                "writes ordinary characters as escape codes",
                Severity::Medium,
            ),
            ObfKind::Ifs => ("uses ${IFS} in place of spaces", Severity::High),
        };
        let sev = if n.phase.runs_on_system() {
            sev.max(Severity::High)
        } else {
            sev
        };
        sink.at(
            "AUR-OBFUSCATION",
            sev,
            n.file,
            n.pos,
            &n.snippet,
            format!("this word {what} (it reads `{}`): a way to slip past text searches, with no honest use in a PKGBUILD; read what it resolves to and where it runs", n.resolved.chars().take(80).collect::<String>()),
        );
    }
    for a in &ctx.an.assigns {
        if checksum_var(&a.name) {
            continue;
        }
        for v in a.value.items() {
            if let Some(b) = blob(&v.text) {
                sink.at(
                    "AUR-ENCODED-BLOB",
                    Severity::Medium,
                    a.file,
                    a.pos,
                    &a.snippet,
                    format!("${} holds a long encoded string ({} characters) that hides what it contains", a.name, b.len()),
                );
            }
        }
    }
    for cmd in &ctx.an.cmds {
        let texts = cmd.argv.iter().chain(cmd.stdin.iter());
        if let Some(b) = texts.filter_map(|w| blob(&w.text)).next() {
            sink.cmd(
                "AUR-ENCODED-BLOB",
                Severity::Medium,
                cmd,
                format!("a long encoded string ({} characters) is used here; its content is hidden from readers", b.len()),
            );
        }
        if names::is_decoder(cmd)
            && !reversed_back(ctx, cmd)
            && matches!(cmd.phase, Phase::Install | Phase::Hook | Phase::Global)
        {
            sink.cmd(
                "AUR-DECODE",
                Severity::Medium,
                cmd,
                format!("decodes hidden data {}", cmd.phase.label()),
            );
        }
    }
    for g in &ctx.an.generated {
        if let Some(b) = blob(&g.body) {
            sink.at(
                "AUR-ENCODED-BLOB",
                Severity::Medium,
                g.file,
                g.pos,
                &g.target,
                format!(
                    "the file written to {} contains a long encoded string ({} characters)",
                    g.target,
                    b.len()
                ),
            );
        }
    }
}

/// `rev` in a pipeline that reverses its text back again (`echo "$tag" | rev | cut -d- -f1 |
/// rev`, the idiom for a string's last field): an even number of `rev` stages gives text in
/// its own order, a piece of the input, not a decoded form of it.
fn reversed_back(ctx: &Ctx, cmd: &Cmd) -> bool {
    let Some((id, _, _)) = cmd.pipe else {
        return false;
    };
    if names::program(cmd).0 != "rev" {
        return false;
    }
    let revs = ctx
        .an
        .cmds
        .iter()
        .filter(|c| c.file == cmd.file && c.pipe.is_some_and(|p| p.0 == id))
        .filter(|c| names::program(c).0 == "rev")
        .count();
    revs % 2 == 0
}
