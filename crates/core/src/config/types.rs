//! The validated config: what the rest of archgate reads (every value in range, every enum
//! named). `validate.rs` makes it from what the file says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::paths::PathOverrides;

pub const DEFAULT_PORT: u16 = 8765;
/// Seconds a call waits for the person by default: below the 60 s most MCP clients wait for an
/// answer (the TypeScript SDK, Claude Code), so the agent hears "declined", not a timeout.
pub const DEFAULT_APPROVAL_TIMEOUT_S: u64 = 50;
/// How long a question waits when its call is an MCP task (no request is held open).
pub const DEFAULT_TASK_TIMEOUT_S: u64 = 600;
/// Open MCP tasks per client.
pub const DEFAULT_MAX_TASKS: u32 = 8;
/// Seconds after an untrusted read during which rules and developer mode step back.
pub const DEFAULT_UNTRUSTED_WINDOW_S: u64 = 600;
pub const DEFAULT_APPROVAL_PORT: u16 = 8766;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub paths: PathOverrides,
    pub server: ServerConfig,
    pub policy: PolicyConfig,
    pub approval: ApprovalConfig,
    pub exec: ExecSettings,
    pub audit: AuditConfig,
    pub limits: LimitsConfig,
    pub tools: ToolsConfig,
    pub resolve: ResolveConfig,
    pub budgets: BudgetsConfig,
    pub clients: BTreeMap<String, ClientConfig>,
    pub arch: ArchConfig,
    pub wiki: WikiConfig,
    pub desktop: DesktopConfig,
    pub diagnostics: DiagnosticsConfig,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub port: u16,
    pub log: String,
    /// Time a connection has to send a whole request header (also the wait for the next request
    /// on a kept-alive connection); every listener.
    pub header_timeout: Duration,
    /// A connection on which no byte moves either way for this long is closed (streams send a
    /// keep-alive well within it).
    pub idle_timeout: Duration,
    /// Open connections per listener (lowered further below the descriptor limit).
    pub max_connections: usize,
    /// Open connections per peer address per listener.
    pub max_connections_per_peer: usize,
    /// Live stateful MCP sessions per client; past it the least recently used one is closed.
    pub max_sessions_per_client: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyConfig {
    pub rules: archgate_policy::Rules,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalConfig {
    pub timeout: Duration,
    pub page: bool,
    pub notifications: bool,
    pub page_port: u16,
    /// The nag guard's cap: questions to the person per rolling 10 minutes, all clients together.
    pub max_questions: u32,
    /// Which yeses the person confirms through polkit (`crate::presence`).
    pub presence: crate::presence::Presence,
    /// How long after a session read text archgate did not write (`crate::untrusted`) its act
    /// and destructive calls are not approved by a standing rule or developer mode.
    pub untrusted_window: Duration,
    /// How long a question waits when its call became an MCP task (SEP-2663): the client polls
    /// instead of holding a request open, so this may be minutes (`approval.task_timeout_s`).
    pub task_timeout: Duration,
    /// How many MCP tasks one client may have open at once (`approval.max_tasks`).
    pub max_tasks: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSettings {
    /// `None` means the built-in list ($OMARCHY_PATH/bin, /usr/local/bin, /usr/bin).
    pub search_dirs: Option<Vec<PathBuf>>,
    /// Whose programs run: `exec.trust` (or the older `exec.require_root_owned`).
    pub trust: ExecTrust,
    /// Whether any ownership check applies (`trust` is not `off`); kept for readers of the
    /// older key.
    pub require_root_owned: bool,
    pub timeout: Duration,
    pub output_cap: usize,
}

/// Whose files and directories a program may come from (`[exec] trust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecTrust {
    /// `"root-or-person"` (the default): owned by root or by the uid archgate runs as, writable
    /// by neither group nor others, every component up to `/`.
    RootOrPerson,
    /// `"root"`: owned by root alone.
    Root,
    /// `"off"`: any executable file in the search directories (`require_root_owned = false`).
    Off,
}

impl ExecTrust {
    pub const NAMES: [&'static str; 3] = ["root-or-person", "root", "off"];

    pub fn name(self) -> &'static str {
        match self {
            ExecTrust::RootOrPerson => "root-or-person",
            ExecTrust::Root => "root",
            ExecTrust::Off => "off",
        }
    }

    pub(super) fn parse(s: &str) -> Option<ExecTrust> {
        match s {
            "root-or-person" => Some(ExecTrust::RootOrPerson),
            "root" => Some(ExecTrust::Root),
            "off" => Some(ExecTrust::Off),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    pub max_bytes: u64,
    pub keep: u32,
    pub queue: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsConfig {
    pub max_args_bytes: usize,
    pub max_output_bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolsConfig {
    /// Tool names, or words ending in `*` (`"aur_*"`); read through [`ToolsConfig::is_disabled`].
    pub disabled: BTreeSet<String>,
    pub timeouts: BTreeMap<String, Duration>,
}

impl ToolsConfig {
    /// Whether `[tools] disabled` names `tool` (by name, or by an entry such as `"aur_*"`).
    pub fn is_disabled(&self, tool: &str) -> bool {
        self.disabled.contains(tool)
            || self
                .disabled
                .iter()
                .any(|e| archgate_policy::names_tool(e, tool))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveConfig {
    /// Refuse ~/.ssh, ~/.gnupg, ~/.password-store and browser profiles (default true).
    pub protect_sensitive: bool,
    /// More paths the person wants refused.
    pub protected: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetsConfig {
    pub per_minute: u32,
    pub per_day: u32,
    pub questions_per_hour: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// `None`: the section does not say (`clients::grant_parts` keeps the stored preset, else
    /// the narrowest) — never the widest.
    pub preset: Option<archgate_policy::Preset>,
    pub tools: Option<BTreeSet<String>>,
    pub trusted_relay: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchConfig {
    pub pacman_conf: PathBuf,
    pub pacman_log: Option<PathBuf>,
    pub aur_url: String,
    pub packages_url: String,
    pub news_url: String,
    /// The Arch Linux Archive (older package versions).
    pub archive_url: String,
    /// The Arch security tracker (`{url}/all.json`).
    pub security_url: String,
    pub http_timeout: Duration,
    /// Arch news and other HTTP caches without a key of their own.
    pub cache_ttl: Duration,
    /// AUR answers by branch (RPC info, PKGBUILD at the head); commit-addressed ones never expire.
    pub aur_cache_ttl: Duration,
    /// The official package API (archlinux.org/packages).
    pub packages_cache_ttl: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiConfig {
    pub url: String,
    /// ArchWiki pages fetched online.
    pub cache_ttl: Duration,
    pub prefer: WikiPrefer,
    pub docs_dir: PathBuf,
}

/// `[wiki] prefer`: where ArchWiki answers come from first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WikiPrefer {
    /// `"offline_first"` (the default): the local index, then the ArchWiki.
    #[default]
    OfflineFirst,
    /// `"online_first"`: the ArchWiki, then the local index.
    OnlineFirst,
    /// `"offline_only"`: the local index only.
    OfflineOnly,
    /// `"online_only"`: the ArchWiki only.
    OnlineOnly,
}

impl WikiPrefer {
    pub const ALL: [WikiPrefer; 4] = [
        WikiPrefer::OfflineFirst,
        WikiPrefer::OnlineFirst,
        WikiPrefer::OfflineOnly,
        WikiPrefer::OnlineOnly,
    ];

    /// The spelling in config.
    pub const fn as_str(self) -> &'static str {
        match self {
            WikiPrefer::OfflineFirst => "offline_first",
            WikiPrefer::OnlineFirst => "online_first",
            WikiPrefer::OfflineOnly => "offline_only",
            WikiPrefer::OnlineOnly => "online_only",
        }
    }

    pub fn parse(s: &str) -> Option<WikiPrefer> {
        WikiPrefer::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopConfig {
    pub omarchy_path: Option<PathBuf>,
    pub screenshot_max_dim: u32,
}

/// `[diagnostics]`: where the journal tools read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiagnosticsConfig {
    /// A directory of journal files read instead of the machine's journal (a rescue mount's
    /// `/mnt/var/log/journal`, a copied journal).
    pub journal_dir: Option<PathBuf>,
}

pub const PRESETS: [&str; 3] = ["read-only", "desktop", "full"];
pub const WIKI_PREFERENCES: [&str; 4] = [
    WikiPrefer::OfflineFirst.as_str(),
    WikiPrefer::OnlineFirst.as_str(),
    WikiPrefer::OfflineOnly.as_str(),
    WikiPrefer::OnlineOnly.as_str(),
];
