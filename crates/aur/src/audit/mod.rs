//! The PKGBUILD audit: parses a PKGBUILD, its install scripts and hooks with tree-sitter-bash,
//! resolves what the code would do without running it, and reports findings with a verdict.
//!
//! Entry points: [`audit`] for one version, [`audit_change`] for what an update adds.

pub mod checks;
mod diff;
mod local_files;
pub(crate) mod names;
mod report;
mod rules;
pub(crate) mod shell;
pub(crate) mod srcinfo;
mod urls;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use diff::{ChangeAudit, audit_change};
pub use local_files::files_to_read;
pub use report::{AuditReport, Finding, Severity, Verdict};

/// The largest PKGBUILD or script the audit reads (bigger inputs are cut and flagged).
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// A file shipped with the package: an install script (whatever its name: `install=` decides),
/// an ALPM hook, or another local file the PKGBUILD names (a helper script, a unit …), audited
/// in the role the PKGBUILD gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptFile {
    /// File name, e.g. `foo.install`.
    pub name: String,
    /// The file's text.
    pub content: String,
}

/// What the audit reads: the PKGBUILD, the install scripts and hooks, and optionally .SRCINFO.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditInput {
    /// The PKGBUILD text.
    pub pkgbuild: String,
    /// Install scripts, ALPM hooks and local `source=` files.
    #[serde(default)]
    pub install_scripts: Vec<ScriptFile>,
    /// The .SRCINFO text, if any.
    #[serde(default)]
    pub srcinfo: Option<String>,
}

impl AuditInput {
    /// An input with only a PKGBUILD.
    pub fn new(pkgbuild: impl Into<String>) -> AuditInput {
        AuditInput {
            pkgbuild: pkgbuild.into(),
            ..AuditInput::default()
        }
    }
}

/// Audits one version of a package. Never executes anything; never panics on any input.
pub fn audit(input: &AuditInput) -> AuditReport {
    rules::run(input).report()
}

/// Audits and keeps the internal analysis (for comparing two versions).
pub(crate) fn audit_full(input: &AuditInput) -> rules::Outcome {
    rules::run(input)
}
