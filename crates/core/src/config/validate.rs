//! Stage two of the config: defaults applied, ranges checked, types made precise.
//!
//! Every value that cannot be applied as written — out of range, not one of the allowed names,
//! a relative path, an entry that is not a pattern — is reported through `report(key, message)`,
//! and any report keeps the whole file from applying (`super::load_str`). The value put in its
//! place here is only what `Config::default()` and the reports need; where it matters it is the
//! strictest (a presence typo reads as `polkit`, a preset typo as `read-only`).

use super::raw::*;
use super::types::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::paths::PathOverrides;

/// The defaults are what validation makes of an empty file, so the two cannot drift apart.
impl Default for Config {
    fn default() -> Self {
        validate(RawConfig::default(), &mut |_, _| {})
    }
}

/// `[exec] trust`, with the older `require_root_owned` still honoured: `false` is `off`, `true`
/// the default check (which now trusts the person's own directories too; `trust = "root"` trusts
/// root alone). Both given and disagreeing: `trust` wins, with a problem.
fn exec_trust(
    trust: Option<String>,
    legacy: Option<bool>,
    report: &mut dyn FnMut(&str, String),
) -> ExecTrust {
    let from_legacy = legacy.map(|strict| {
        if strict {
            ExecTrust::RootOrPerson
        } else {
            ExecTrust::Off
        }
    });
    let named = match trust {
        Some(t) => match ExecTrust::parse(&t) {
            Some(v) => Some(v),
            None => {
                report(
                    "exec.trust",
                    format!("{t:?} is not one of {}", ExecTrust::NAMES.join(", ")),
                );
                Some(ExecTrust::RootOrPerson)
            }
        },
        None => None,
    };
    match (named, from_legacy) {
        (Some(t), Some(l)) if (t == ExecTrust::Off) != (l == ExecTrust::Off) => {
            report(
                "exec.require_root_owned",
                format!(
                    "replaced by exec.trust, which says {:?}; remove require_root_owned",
                    t.name()
                ),
            );
            t
        }
        (Some(t), _) => t,
        (None, Some(l)) => l,
        (None, None) => ExecTrust::RootOrPerson,
    }
}

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
            report(key, format!("{x} is outside {lo}..={hi}"));
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
            report(key, format!("{u:?} is not an http(s) URL"));
            default.to_owned()
        }
        None => default.to_owned(),
    }
}

/// A value that is not one of the three is a mistake, and a mistake must not weaken presence:
/// it reads as the strictest setting.
fn presence(v: Option<&str>, report: &mut dyn FnMut(&str, String)) -> crate::presence::Presence {
    use crate::presence::Presence;
    match v {
        None => Presence::default(),
        Some(s) => Presence::parse(s).unwrap_or_else(|| {
            report(
                "approval.presence",
                format!("{s:?} is not off, auto or polkit"),
            );
            Presence::Polkit
        }),
    }
}

/// A list of tool names (`[tools] disabled`, `[clients.NAME] tools`): each entry a tool name or
/// a word ending in `*` (`"aur_*"`: every tool whose name starts `aur_`), as the rule lists read
/// it. An entry that is not one word, or has a `*` anywhere else, is named and keeps the file
/// from applying.
fn tool_names(
    list: Option<Vec<String>>,
    key: &str,
    report: &mut dyn FnMut(&str, String),
) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for (index, entry) in list.unwrap_or_default().into_iter().enumerate() {
        let why = match archgate_policy::Pattern::parse(&entry) {
            Err(e) => Some(e.to_string()),
            Ok(_) if entry.split_whitespace().count() != 1 => {
                Some("a tool name is one word".to_owned())
            }
            Ok(_) => super::known::names_no_tool(&entry),
        };
        match why {
            Some(why) => report(key, format!("[{index}] {entry:?}: {why}")),
            None => {
                out.insert(entry.trim().to_owned());
            }
        }
    }
    out
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
    let diagnostics = raw.diagnostics.unwrap_or_default();

    let mut absolute = |p: Option<PathBuf>, key: &str| match p {
        Some(p) if !p.is_absolute() => {
            report(key, format!("{} is not an absolute path", p.display()));
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
                format!("{l:?} is not one of error, warn, info, debug, trace"),
            );
            "info".into()
        }
        None => "info".into(),
    };

    // An entry that cannot be read is named (list, index, entry, why) and keeps the file from
    // applying; it is never dropped with the rest applied.
    let mut rules = archgate_policy::Rules::default();
    for (key, which, list, out) in [
        (
            "policy.deny",
            archgate_policy::RuleList::Deny,
            policy.deny,
            &mut rules.deny,
        ),
        (
            "policy.ask",
            archgate_policy::RuleList::Ask,
            policy.ask,
            &mut rules.ask,
        ),
        (
            "policy.allow",
            archgate_policy::RuleList::Allow,
            policy.allow,
            &mut rules.allow,
        ),
    ] {
        for (index, entry) in list.unwrap_or_default().into_iter().enumerate() {
            // A deny or ask naming no tool restricts nothing while saying it does (a misspelt
            // `allow` only fails safe).
            let names_none = (which != archgate_policy::RuleList::Allow)
                .then(|| super::known::rule_names_no_tool(&entry))
                .flatten();
            if let Some(why) = names_none {
                report(key, format!("[{index}] {entry:?}: {why}"));
                continue;
            }
            match archgate_policy::Pattern::parse(&entry) {
                Ok(p) => out.push(p),
                Err(source) => report(
                    key,
                    archgate_policy::RulesError {
                        list: which,
                        index,
                        entry,
                        source,
                    }
                    .to_string(),
                ),
            }
        }
    }

    let mut tool_timeouts = BTreeMap::new();
    for (tool, secs) in tools.timeouts.unwrap_or_default() {
        if let Some(why) = super::known::timeout_names_no_tool(&tool) {
            report(&format!("tools.timeouts.{tool}"), why);
        } else if (1..=3600).contains(&secs) {
            tool_timeouts.insert(tool, Duration::from_secs(secs));
        } else {
            report(
                &format!("tools.timeouts.{tool}"),
                format!("{secs} is outside 1..=3600"),
            );
        }
    }

    let mut clients = BTreeMap::new();
    for (name, c) in raw.clients.unwrap_or_default() {
        use archgate_policy::Preset;
        let preset = match c.preset.as_deref().map(|p| (p, p.parse::<Preset>())) {
            Some((_, Ok(p))) => Some(p),
            Some((p, Err(_))) => {
                // A mistake never grants more: it reads as the narrowest preset.
                report(
                    &format!("clients.{name}.preset"),
                    format!("{p:?} is not one of {}", PRESETS.join(", ")),
                );
                Some(Preset::ReadOnly)
            }
            // Not said: the stored grant, else the narrowest (`clients::grant_parts`).
            None => None,
        };
        let tools = c
            .tools
            .map(|t| tool_names(Some(t), &format!("clients.{name}.tools"), report));
        clients.insert(
            name,
            ClientConfig {
                preset,
                tools,
                trusted_relay: c.trusted_relay.unwrap_or(false),
            },
        );
    }

    let prefer = match wiki.prefer.as_deref().map(|p| (p, WikiPrefer::parse(p))) {
        Some((_, Some(p))) => p,
        Some((p, None)) => {
            report(
                "wiki.prefer",
                format!("{p:?} is not one of {}", WIKI_PREFERENCES.join(", ")),
            );
            WikiPrefer::OfflineFirst
        }
        None => WikiPrefer::OfflineFirst,
    };

    let trust = exec_trust(exec.trust, exec.require_root_owned, report);
    let exec_dirs = match exec.search_dirs {
        Some(d) if d.iter().any(|p| !p.is_absolute()) || d.is_empty() => {
            report(
                "exec.search_dirs",
                "every entry must be an absolute directory".into(),
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
            header_timeout: Duration::from_secs(bounded(
                server.header_timeout_s,
                10,
                1,
                300,
                "server.header_timeout_s",
                report,
            )),
            idle_timeout: Duration::from_secs(bounded(
                server.idle_timeout_s,
                120,
                20,
                3600,
                "server.idle_timeout_s",
                report,
            )),
            max_connections: bounded(
                server.max_connections,
                512,
                16,
                1 << 16,
                "server.max_connections",
                report,
            ),
            max_connections_per_peer: bounded(
                server.max_connections_per_peer,
                256,
                4,
                1 << 16,
                "server.max_connections_per_peer",
                report,
            ),
            max_sessions_per_client: bounded(
                server.max_sessions_per_client,
                32,
                1,
                4096,
                "server.max_sessions_per_client",
                report,
            ),
        },
        policy: PolicyConfig { rules },
        approval: ApprovalConfig {
            timeout: Duration::from_secs(bounded(
                approval.timeout_s,
                DEFAULT_APPROVAL_TIMEOUT_S,
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
            presence: presence(approval.presence.as_deref(), report),
            untrusted_window: Duration::from_secs(bounded(
                approval.untrusted_window_s,
                DEFAULT_UNTRUSTED_WINDOW_S,
                1,
                86_400,
                "approval.untrusted_window_s",
                report,
            )),
            task_timeout: Duration::from_secs(bounded(
                approval.task_timeout_s,
                DEFAULT_TASK_TIMEOUT_S,
                5,
                86_400,
                "approval.task_timeout_s",
                report,
            )),
            max_tasks: bounded(
                approval.max_tasks,
                DEFAULT_MAX_TASKS,
                1,
                256,
                "approval.max_tasks",
                report,
            ),
        },
        exec: ExecSettings {
            search_dirs: exec_dirs,
            trust,
            require_root_owned: trust != ExecTrust::Off,
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
            disabled: tool_names(tools.disabled, "tools.disabled", report),
            timeouts: tool_timeouts,
        },
        resolve: ResolveConfig {
            protect_sensitive: resolve.protect_sensitive.unwrap_or(true),
            // A relative entry would protect nothing while the person believes it holds.
            protected: {
                let list = resolve.protected.unwrap_or_default();
                for (i, p) in list.iter().enumerate() {
                    if !p.is_absolute() && !p.starts_with("~") {
                        report(
                            "resolve.protected",
                            format!("[{i}] {} is neither absolute nor under ~/", p.display()),
                        );
                    }
                }
                list
            },
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
            pacman_log: match arch.pacman_log {
                Some(p) if !p.is_absolute() => {
                    report(
                        "arch.pacman_log",
                        format!("{} is not an absolute path", p.display()),
                    );
                    None
                }
                p => p,
            },
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
            archive_url: url(
                arch.archive_url,
                "https://archive.archlinux.org",
                "arch.archive_url",
                report,
            ),
            security_url: url(
                arch.security_url,
                "https://security.archlinux.org",
                "arch.security_url",
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
            omarchy_path: match desktop.omarchy_path {
                Some(p) if !p.is_absolute() && !p.starts_with("~") => {
                    report(
                        "desktop.omarchy_path",
                        format!("{} is neither absolute nor under ~/", p.display()),
                    );
                    None
                }
                p => p,
            },
            screenshot_max_dim: bounded(
                desktop.screenshot_max_dim,
                1568,
                64,
                8192,
                "desktop.screenshot_max_dim",
                report,
            ),
        },
        diagnostics: DiagnosticsConfig {
            journal_dir: match diagnostics.journal_dir {
                Some(p) if !p.is_absolute() => {
                    report(
                        "diagnostics.journal_dir",
                        format!("{} is not an absolute path", p.display()),
                    );
                    None
                }
                p => p,
            },
        },
    }
}
