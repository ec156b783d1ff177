//! archgate's AUR crate: a client for the AUR (RPC v5, and each package's git repository), a static audit of PKGBUILDs,
//! install scripts and hooks that never executes them, operations that combine both (audit a
//! package, audit an update's diff, review all pending updates), and the evaluation corpus.
//!
//! AUR packages are made by users and reviewed by nobody; every answer type carries
//! [`AUR_NOTICE`] so that reminder travels with the data.

pub mod args;
pub mod audit;
mod audited;
pub mod client;
pub mod corpus;
pub mod helpers;
pub mod local;
pub mod ops;
pub mod shadow;
pub mod vercmp;

pub use audit::{
    AuditInput, AuditReport, ChangeAudit, Finding, ScriptFile, Severity, Verdict, audit,
    audit_change,
};
pub use client::{
    AurClient, AurConfig, AurError, Commit, InfoResults, PackageFiles, PackageInfo, PackageRepo,
    RepoFile, RunGit, SearchBy, SearchResults,
};
pub use local::{LocalError, load_path};
pub use ops::{
    AuditRecord, BuildAt, PackageAudit, PackageDiff, UpdateReview, audit_package, audit_package_at,
    build_at, diff, last_audit, review_updates,
};
pub use shadow::{SHADOWS_OFFICIAL, Shadowed};

/// Sent with every AUR answer.
pub const AUR_NOTICE: &str = "AUR packages are made by users and reviewed by nobody: read the PKGBUILD and install scripts (and this audit) before building, and prefer official packages.";
