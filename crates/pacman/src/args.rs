//! Arguments agents send to the package tools (their JSON schemas come from these types).

use serde::Deserialize;

use crate::list::ListFilter;
use crate::log::LogAction;

/// Arguments of `pkg_search`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Terms; each must match name, description, a provision or a group.
    pub query: String,
    /// Only this repository (e.g. `extra`).
    pub repo: Option<String>,
    /// Terms are regexes (default: like pacman, when valid).
    pub regex: Option<bool>,
    /// Most results (default 50).
    pub limit: Option<usize>,
}

/// Arguments of `pkg_info`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InfoArgs {
    /// Package name, optionally `repo/name`.
    pub name: String,
}

/// Arguments of `pkg_files`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesArgs {
    /// Package name.
    pub name: String,
    /// Most paths (default 2000).
    pub limit: Option<usize>,
}

/// Arguments of `pkg_owner`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnerArgs {
    /// Absolute path of a file or directory.
    pub path: String,
}

/// Arguments of `pkg_deps`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DepsArgs {
    /// Package name.
    pub name: String,
    /// Levels to descend (default 3, at most 16).
    pub depth: Option<u32>,
    /// What needs it instead.
    pub reverse: Option<bool>,
}

/// Arguments of `pkg_list`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub filter: ListFilter,
}

/// Arguments of `pacman_log`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogArgs {
    /// Only this package, with its history summary.
    pub package: Option<String>,
    /// Only this action.
    pub action: Option<LogAction>,
    /// Since: RFC 3339, YYYY-MM-DD or Unix seconds.
    pub since: Option<String>,
    /// Most entries (default 100).
    pub limit: Option<usize>,
}

/// Arguments of `pkg_install_plan`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallPlanArgs {
    /// Packages to install (`name` or `repo/name`).
    pub names: Vec<String>,
}

/// Arguments of `pkg_verify`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyArgs {
    /// One package (default: all).
    pub name: Option<String>,
    /// -Qkk: also owner, mode, mtime, size, checksums.
    pub full: Option<bool>,
    /// Resume at the answer's `next`.
    pub from: Option<String>,
}

/// Arguments of `pkg_cache`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheArgs {
    /// One package: versions to downgrade to.
    pub name: Option<String>,
    /// Versions paccache keeps (default 3).
    pub keep: Option<usize>,
}
