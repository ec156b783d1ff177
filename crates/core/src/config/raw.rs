//! Stage one of the config: the file as written.
//!
//! Every field is optional so a partial file is fine, and keys archgate does not know are
//! collected (with their dotted path) instead of failing the load. Stage two (`validate.rs`)
//! turns this into a `Config` with defaults and range checks.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Default, Deserialize)]
pub struct RawConfig {
    pub paths: Option<RawPaths>,
    pub server: Option<RawServer>,
    pub policy: Option<RawPolicy>,
    pub approval: Option<RawApproval>,
    pub exec: Option<RawExec>,
    pub audit: Option<RawAudit>,
    pub limits: Option<RawLimits>,
    pub tools: Option<RawTools>,
    pub resolve: Option<RawResolve>,
    pub budgets: Option<RawBudgets>,
    pub clients: Option<BTreeMap<String, RawClient>>,
    pub arch: Option<RawArch>,
    pub wiki: Option<RawWiki>,
    pub desktop: Option<RawDesktop>,
    pub diagnostics: Option<RawDiagnostics>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawPaths {
    pub state_dir: Option<PathBuf>,
    pub runtime_dir: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawServer {
    pub port: Option<u16>,
    pub log: Option<String>,
    pub header_timeout_s: Option<u64>,
    pub idle_timeout_s: Option<u64>,
    pub max_connections: Option<usize>,
    pub max_connections_per_peer: Option<usize>,
    pub max_sessions_per_client: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawPolicy {
    pub deny: Option<Vec<String>>,
    pub ask: Option<Vec<String>>,
    pub allow: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawApproval {
    pub timeout_s: Option<u64>,
    pub page: Option<bool>,
    pub notifications: Option<bool>,
    pub page_port: Option<u16>,
    pub max_questions: Option<u32>,
    /// `off`, `auto` or `polkit` (see `crate::presence`).
    pub presence: Option<String>,
    /// Seconds after a session read untrusted text during which its act calls are the
    /// person's (see `crate::untrusted`).
    pub untrusted_window_s: Option<u64>,
    /// Seconds a question waits when its call is an MCP task.
    pub task_timeout_s: Option<u64>,
    /// Open MCP tasks per client.
    pub max_tasks: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawExec {
    pub search_dirs: Option<Vec<PathBuf>>,
    pub trust: Option<String>,
    pub require_root_owned: Option<bool>,
    pub timeout_s: Option<u64>,
    pub output_cap: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawAudit {
    pub max_bytes: Option<u64>,
    pub keep: Option<u32>,
    pub queue: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawLimits {
    pub max_args_bytes: Option<usize>,
    pub max_output_bytes: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawTools {
    pub disabled: Option<Vec<String>>,
    pub timeouts: Option<BTreeMap<String, u64>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawResolve {
    pub protect_sensitive: Option<bool>,
    pub protected: Option<Vec<PathBuf>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawBudgets {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
    pub questions_per_hour: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawClient {
    pub preset: Option<String>,
    pub tools: Option<Vec<String>>,
    pub trusted_relay: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawArch {
    pub pacman_conf: Option<PathBuf>,
    pub aur_url: Option<String>,
    pub packages_url: Option<String>,
    pub news_url: Option<String>,
    pub archive_url: Option<String>,
    pub security_url: Option<String>,
    pub pacman_log: Option<PathBuf>,
    pub http_timeout_s: Option<u64>,
    pub cache_ttl_s: Option<u64>,
    pub aur_cache_ttl_s: Option<u64>,
    pub packages_cache_ttl_s: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawWiki {
    pub url: Option<String>,
    pub cache_ttl_s: Option<u64>,
    pub prefer: Option<String>,
    pub docs_dir: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawDesktop {
    pub omarchy_path: Option<PathBuf>,
    pub screenshot_max_dim: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawDiagnostics {
    pub journal_dir: Option<PathBuf>,
}
