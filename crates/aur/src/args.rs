//! Argument types of the AUR tools as agents send them (JSON schema from the doc comments).
//! `pkgbuild_audit` takes [`crate::audit::AuditInput`] directly.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::client::SearchBy;

/// `aur_search`
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Text to search for (1–256 characters).
    pub query: String,
    /// Field to search in; default `name-desc` (name and description).
    #[serde(default)]
    pub by: Option<SearchBy>,
}

/// `aur_info`
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InfoArgs {
    /// AUR package names (many at once).
    pub names: Vec<String>,
}

/// `aur_pkgbuild`
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackageArgs {
    /// AUR package name.
    pub name: String,
}

/// `aur_audit`
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditArgs {
    /// AUR package name.
    pub name: String,
    /// AUR git commit (id or prefix; default: the newest).
    #[serde(default)]
    pub commit: Option<String>,
}

/// `aur_diff`
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// AUR package name.
    pub name: String,
    /// Older commit or version (default: the one before `to`).
    #[serde(default)]
    pub from: Option<String>,
    /// Newer commit or version (default: the newest).
    #[serde(default)]
    pub to: Option<String>,
}
