//! Stage two of the config: defaults applied, ranges checked, types made precise.
//!
//! A value out of range is reported through `report(key, message)` and replaced by its default;
//! nothing here fails the load.

use super::raw::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use crate::paths::PathOverrides;

pub const DEFAULT_PORT: u16 = 8765;
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub port: u16,
    pub log: String,
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSettings {
    /// `None` means the built-in list ($OMARCHY_PATH/bin, /usr/local/bin, /usr/bin).
    pub search_dirs: Option<Vec<PathBuf>>,
    pub require_root_owned: bool,
    pub timeout: Duration,
    pub output_cap: usize,
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
    pub disabled: BTreeSet<String>,
    pub timeouts: BTreeMap<String, Duration>,
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
    pub preset: String,
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
    pub prefer: String,
    pub docs_dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopConfig {
    pub omarchy_path: Option<PathBuf>,
    pub screenshot_max_dim: u32,
}

impl Default for Config {
    fn default() -> Self {
        validate(RawConfig::default(), &mut |_, _| {})
    }
}

pub const PRESETS: [&str; 3] = ["read-only", "desktop", "full"];
pub const WIKI_PREFERENCES: [&str; 4] = [
    "offline_first",
    "online_first",
    "offline_only",
    "online_only",
];

fn bounded<T: PartialOrd + Copy + std::fmt::Display>(
    v: Option<T>,
    default: T,
    lo: T,
    hi: T,
    key: &str,
    report: &mut dyn FnMut(&str, String),
) -> T {
    match v {
        Some(x) if x < lo || x > hi => {
            report(
                key,
                format!("{x} is outside {lo}..={hi}; using the default {default}"),
            );
            default
        }
        Some(x) => x,
        None => default,
    }
}

fn url(
    v: Option<String>,
    default: &str,
    key: &str,
    report: &mut dyn FnMut(&str, String),
) -> String {
    match v {
        Some(u) if u.starts_with("http://") || u.starts_with("https://") => u,
        Some(u) => {
            report(key, format!("{u:?} is not an http(s) URL; using {default}"));
            default.to_owned()
        }
        None => default.to_owned(),
    }
}

pub fn validate(raw: RawConfig, report: &mut dyn FnMut(&str, String)) -> Config {
    let paths = raw.paths.unwrap_or_default();
    let server = raw.server.unwrap_or_default();
    let policy = raw.policy.unwrap_or_default();
    let approval = raw.approval.unwrap_or_default();
    let exec = raw.exec.unwrap_or_default();
    let audit = raw.audit.unwrap_or_default();
    let limits = raw.limits.unwrap_or_default();
    let tools = raw.tools.unwrap_or_default();
    let resolve = raw.resolve.unwrap_or_default();
    let budgets = raw.budgets.unwrap_or_default();
    let arch = raw.arch.unwrap_or_default();
    let wiki = raw.wiki.unwrap_or_default();
    let desktop = raw.desktop.unwrap_or_default();

    let mut absolute = |p: Option<PathBuf>, key: &str| match p {
        Some(p) if !p.is_absolute() => {
            report(
                key,
                format!("{} is not an absolute path; ignored", p.display()),
            );
            None
        }
        p => p,
    };
    let paths = PathOverrides {
        state_dir: absolute(paths.state_dir, "paths.state_dir"),
        runtime_dir: absolute(paths.runtime_dir, "paths.runtime_dir"),
        cache_dir: absolute(paths.cache_dir, "paths.cache_dir"),
    };

    let log = match server.log {
        Some(l) if ["error", "warn", "info", "debug", "trace"].contains(&l.as_str()) => l,
        Some(l) => {
            report(
                "server.log",
                format!("{l:?} is not one of error, warn, info, debug, trace; using info"),
            );
            "info".into()
        }
        None => "info".into(),
    };

    let mut rules = archgate_policy::Rules::default();
    for (key, list, out) in [
        ("policy.deny", policy.deny, &mut rules.deny),
        ("policy.ask", policy.ask, &mut rules.ask),
        ("policy.allow", policy.allow, &mut rules.allow),
    ] {
        for entry in list.unwrap_or_default() {
            match entry.parse::<archgate_policy::Pattern>() {
                Ok(p) => out.push(p),
                Err(e) => report(key, format!("{e}; entry ignored")),
            }
        }
    }

    let mut tool_timeouts = BTreeMap::new();
    for (tool, secs) in tools.timeouts.unwrap_or_default() {
        if (1..=3600).contains(&secs) {
            tool_timeouts.insert(tool, Duration::from_secs(secs));
        } else {
            report(
                &format!("tools.timeouts.{tool}"),
                format!("{secs} is outside 1..=3600; ignored"),
            );
        }
    }

    let mut clients = BTreeMap::new();
    for (name, c) in raw.clients.unwrap_or_default() {
        let preset = match c.preset {
            Some(p) if PRESETS.contains(&p.as_str()) => p,
            Some(p) => {
                report(
                    &format!("clients.{name}.preset"),
                    format!("{p:?} is not one of read-only, desktop, full; using read-only"),
                );
                "read-only".into()
            }
            None => "full".into(),
        };
        clients.insert(
            name,
            ClientConfig {
                preset,
                tools: c.tools.map(|t| t.into_iter().collect()),
                trusted_relay: c.trusted_relay.unwrap_or(false),
            },
        );
    }

    let prefer = match wiki.prefer {
        Some(p) if WIKI_PREFERENCES.contains(&p.as_str()) => p,
        Some(p) => {
            report(
                "wiki.prefer",
                format!(
                    "{p:?} is not one of {}; using offline_first",
                    WIKI_PREFERENCES.join(", ")
                ),
            );
            "offline_first".into()
        }
        None => "offline_first".into(),
    };

    let exec_dirs = match exec.search_dirs {
        Some(d) if d.iter().any(|p| !p.is_absolute()) || d.is_empty() => {
            report(
                "exec.search_dirs",
                "every entry must be an absolute directory; using the built-in list".into(),
            );
            None
        }
        d => d,
    };

    Config {
        paths,
        server: ServerConfig {
            port: server.port.unwrap_or(DEFAULT_PORT),
            log,
        },
        policy: PolicyConfig { rules },
        approval: ApprovalConfig {
            timeout: Duration::from_secs(bounded(
                approval.timeout_s,
                60,
                5,
                600,
                "approval.timeout_s",
                report,
            )),
            page: approval.page.unwrap_or(true),
            notifications: approval.notifications.unwrap_or(true),
            page_port: approval.page_port.unwrap_or(DEFAULT_APPROVAL_PORT),
            max_questions: bounded(
                approval.max_questions,
                archgate_policy::NagConfig::default().max_questions,
                1,
                1000,
                "approval.max_questions",
                report,
            ),
        },
        exec: ExecSettings {
            search_dirs: exec_dirs,
            require_root_owned: exec.require_root_owned.unwrap_or(true),
            timeout: Duration::from_secs(bounded(
                exec.timeout_s,
                30,
                1,
                3600,
                "exec.timeout_s",
                report,
            )),
            output_cap: bounded(
                exec.output_cap,
                256 * 1024,
                1024,
                16 * 1024 * 1024,
                "exec.output_cap",
                report,
            ),
        },
        audit: AuditConfig {
            max_bytes: bounded(
                audit.max_bytes,
                16 * 1024 * 1024,
                64 * 1024,
                1 << 32,
                "audit.max_bytes",
                report,
            ),
            keep: bounded(audit.keep, 5, 1, 100, "audit.keep", report),
            queue: bounded(audit.queue, 4096, 16, 1 << 20, "audit.queue", report),
        },
        limits: LimitsConfig {
            max_args_bytes: bounded(
                limits.max_args_bytes,
                64 * 1024,
                1024,
                1 << 20,
                "limits.max_args_bytes",
                report,
            ),
            max_output_bytes: bounded(
                limits.max_output_bytes,
                256 * 1024,
                4096,
                16 * 1024 * 1024,
                "limits.max_output_bytes",
                report,
            ),
        },
        tools: ToolsConfig {
            disabled: tools.disabled.unwrap_or_default().into_iter().collect(),
            timeouts: tool_timeouts,
        },
        resolve: ResolveConfig {
            protect_sensitive: resolve.protect_sensitive.unwrap_or(true),
            protected: resolve.protected.unwrap_or_default(),
        },
        budgets: BudgetsConfig {
            per_minute: bounded(
                budgets.per_minute,
                120,
                1,
                100_000,
                "budgets.per_minute",
                report,
            ),
            per_day: bounded(
                budgets.per_day,
                2000,
                1,
                10_000_000,
                "budgets.per_day",
                report,
            ),
            questions_per_hour: bounded(
                budgets.questions_per_hour,
                30,
                1,
                10_000,
                "budgets.questions_per_hour",
                report,
            ),
        },
        clients,
        arch: ArchConfig {
            pacman_conf: arch
                .pacman_conf
                .unwrap_or_else(|| PathBuf::from("/etc/pacman.conf")),
            pacman_log: arch.pacman_log,
            aur_url: url(
                arch.aur_url,
                "https://aur.archlinux.org",
                "arch.aur_url",
                report,
            ),
            packages_url: url(
                arch.packages_url,
                "https://archlinux.org",
                "arch.packages_url",
                report,
            ),
            news_url: url(
                arch.news_url,
                "https://archlinux.org/feeds/news/",
                "arch.news_url",
                report,
            ),
            http_timeout: Duration::from_secs(bounded(
                arch.http_timeout_s,
                15,
                1,
                300,
                "arch.http_timeout_s",
                report,
            )),
            cache_ttl: Duration::from_secs(bounded(
                arch.cache_ttl_s,
                3600,
                0,
                7 * 86400,
                "arch.cache_ttl_s",
                report,
            )),
            aur_cache_ttl: Duration::from_secs(bounded(
                arch.aur_cache_ttl_s,
                600,
                0,
                7 * 86400,
                "arch.aur_cache_ttl_s",
                report,
            )),
            packages_cache_ttl: Duration::from_secs(bounded(
                arch.packages_cache_ttl_s,
                300,
                0,
                7 * 86400,
                "arch.packages_cache_ttl_s",
                report,
            )),
        },
        wiki: WikiConfig {
            url: url(wiki.url, "https://wiki.archlinux.org", "wiki.url", report),
            cache_ttl: Duration::from_secs(bounded(
                wiki.cache_ttl_s,
                3600,
                0,
                30 * 86400,
                "wiki.cache_ttl_s",
                report,
            )),
            prefer,
            docs_dir: wiki
                .docs_dir
                .unwrap_or_else(|| PathBuf::from("/usr/share/doc/arch-wiki/html")),
        },
        desktop: DesktopConfig {
            omarchy_path: desktop.omarchy_path,
            screenshot_max_dim: bounded(
                desktop.screenshot_max_dim,
                1920,
                64,
                8192,
                "desktop.screenshot_max_dim",
                report,
            ),
        },
    }
}
