//! Mirrors: the servers pacman.conf (and its `Include`d mirrorlists) puts in use, each one's last
//! sync from the mirror status JSON archlinux.org publishes (`{base}/mirrors/status/json/`), and
//! whether the local sync databases are older than what the mirror holds.
//!
//! The status document is `{cutoff, last_check, num_checks, check_frequency, urls: [{url,
//! protocol, last_sync, completion_pct, delay, duration_avg, duration_stddev, score, active,
//! country, country_code, isos, ipv4, ipv6, details}], version}`; times are RFC 3339. A mirror is
//! out of date when its last sync is more than `cutoff` seconds before the status' last check
//! (how the status page marks it). A configured server matches the status record whose `url`
//! is the longest prefix of it (`…/archlinux/` for `…/archlinux/core/os/x86_64`).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::conf::PacmanConf;
use crate::http::HttpError;
use crate::info::Timestamp;
use crate::netjson::Origin;

/// What the status JSON is called in errors.
pub const WHAT: &str = "the mirror status JSON";

/// The path of the status JSON under the packages site (`https://archlinux.org`).
pub const STATUS_PATH: &str = "/mirrors/status/json/";

/// The status document as published (fields archgate reads; others are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct StatusDoc {
    /// Seconds of delay after which a mirror counts as out of date.
    pub cutoff: i64,
    /// When the status was last checked (RFC 3339).
    pub last_check: String,
    /// The mirrors.
    pub urls: Vec<StatusUrl>,
}

/// One mirror URL of the status document.
#[derive(Debug, Clone, Deserialize)]
pub struct StatusUrl {
    /// The mirror's base URL (`https://mirror.example/archlinux/`).
    pub url: String,
    /// `http`, `https` or `rsync`.
    pub protocol: String,
    /// Its last successful sync (RFC 3339), `null` when never seen synced.
    pub last_sync: Option<String>,
    /// Share of checks that succeeded, 0..1.
    pub completion_pct: Option<f64>,
    /// Seconds behind the master mirror on average.
    pub delay: Option<i64>,
    /// Whether the mirror is active.
    pub active: bool,
    /// Country name (may be empty).
    #[serde(default)]
    pub country: String,
}

/// The parsed status with its times checked.
#[derive(Debug, Clone)]
pub struct MirrorStatus {
    /// Out-of-date threshold in seconds.
    pub cutoff: i64,
    /// Last check, seconds since the epoch.
    pub last_check: i64,
    /// Each URL with its last sync in seconds since the epoch.
    pub urls: Vec<(StatusUrl, Option<i64>)>,
}

fn rfc3339(s: &str) -> Option<i64> {
    OffsetDateTime::parse(s, &Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}

impl MirrorStatus {
    /// Checks the times of a parsed document; a time that is not RFC 3339 is
    /// [`HttpError::Malformed`] naming its field.
    pub fn from_doc(doc: StatusDoc, url: &str) -> Result<MirrorStatus, HttpError> {
        let bad = |field: String, value: &str| HttpError::Malformed {
            url: url.to_owned(),
            what: WHAT,
            field,
            detail: format!("{value:?} is not an RFC 3339 time"),
        };
        let last_check =
            rfc3339(&doc.last_check).ok_or_else(|| bad("last_check".into(), &doc.last_check))?;
        let mut urls = Vec::with_capacity(doc.urls.len());
        for (i, u) in doc.urls.into_iter().enumerate() {
            let sync = match &u.last_sync {
                None => None,
                Some(s) => Some(rfc3339(s).ok_or_else(|| bad(format!("urls[{i}].last_sync"), s))?),
            };
            urls.push((u, sync));
        }
        Ok(MirrorStatus {
            cutoff: doc.cutoff,
            last_check,
            urls,
        })
    }

    /// Parses the status JSON.
    pub fn parse(body: &[u8], url: &str) -> Result<MirrorStatus, HttpError> {
        let doc: StatusDoc = crate::http::parse_json(body, url, WHAT)?;
        MirrorStatus::from_doc(doc, url)
    }

    /// The record whose URL is the longest prefix of `server`.
    pub fn find(&self, server: &str) -> Option<&(StatusUrl, Option<i64>)> {
        self.urls
            .iter()
            .filter(|(u, _)| {
                let base = u.url.trim_end_matches('/');
                server == base || server.starts_with(&format!("{base}/"))
            })
            .max_by_key(|(u, _)| u.url.len())
    }
}

/// The answer of the `mirrors` tool.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorsReport {
    /// Every server in use, in the order pacman tries them for the first repository using it.
    pub servers: Vec<ServerInUse>,
    /// Each sync database against the last sync of the first server of its repository.
    pub databases: Vec<DbFreshness>,
    /// Where the status came from, or why it could not be read.
    pub status: StatusSource,
    /// What needs attention, in words (empty: nothing).
    pub findings: Vec<String>,
    /// Commands for the person, when something needs doing (archgate runs none).
    pub commands: Vec<String>,
}

/// One configured server.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInUse {
    /// The URL as pacman uses it (`$repo`/`$arch` substituted, first repository's spelling).
    pub url: String,
    /// Repositories listing it.
    pub repos: Vec<String>,
    /// Repositories for which it is the first server (the one pacman downloads from).
    pub first_for: Vec<String>,
    /// Its record in the status JSON; absent for local or unknown servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorState>,
}

/// A server's state in the status JSON.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorState {
    /// The status record's URL.
    pub status_url: String,
    /// Its last sync (absent: never seen synced).
    pub last_sync: Option<Timestamp>,
    /// Seconds between its last sync and the status' last check.
    pub behind_s: Option<i64>,
    /// Average delay in seconds.
    pub delay_s: Option<i64>,
    /// Share of successful checks, 0..1.
    pub completion_pct: Option<f64>,
    /// Whether the mirror is active.
    pub active: bool,
    /// Country.
    pub country: String,
    /// Last sync older than the cutoff before the last check, never synced, or inactive.
    pub out_of_date: bool,
}

/// One sync database.
#[derive(Debug, Clone, Serialize)]
pub struct DbFreshness {
    /// Repository.
    pub repo: String,
    /// Database file.
    pub file: String,
    /// Its modification time (pacman sets it to the server's); absent when the file is missing.
    pub modified: Option<Timestamp>,
    /// The first server's last sync, when the status knows it.
    pub mirror_last_sync: Option<Timestamp>,
    /// The database is older than the mirror's last sync: the mirror has newer packages.
    pub older_than_mirror: Option<bool>,
}

/// Where the status came from.
#[derive(Debug, Clone, Serialize)]
pub struct StatusSource {
    /// The status URL.
    pub url: String,
    /// How it was read (absent when it could not be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The status' last check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_check: Option<Timestamp>,
    /// Why it could not be read (kind and message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<StatusError>,
}

/// A failed status look-up.
#[derive(Debug, Clone, Serialize)]
pub struct StatusError {
    /// Stable code (`could_not_reach`, `malformed` …).
    pub kind: &'static str,
    /// What happened.
    pub message: String,
}

/// The command that refreshes the mirror list by the status' ranking (the `reflector` package).
pub const REFLECTOR: &str =
    "sudo reflector --protocol https --latest 20 --sort rate --save /etc/pacman.d/mirrorlist";

/// Builds the report from the configuration and the status (or its failure).
pub fn report(
    conf: &PacmanConf,
    status_url: &str,
    status: Result<(MirrorStatus, Origin), HttpError>,
) -> MirrorsReport {
    let mut servers: Vec<ServerInUse> = Vec::new();
    for repo in &conf.repos {
        for (i, url) in repo.servers.iter().enumerate() {
            // The same mirror serves every repository: match it by its spelling without the repo.
            let key = url.replace(&format!("/{}/", repo.name), "/$repo/");
            let pos = servers
                .iter()
                .position(|s| s.url.replace(&format!("/{}/", s.repos[0]), "/$repo/") == key);
            let entry = match pos {
                Some(p) => &mut servers[p],
                None => {
                    servers.push(ServerInUse {
                        url: url.clone(),
                        repos: Vec::new(),
                        first_for: Vec::new(),
                        mirror: None,
                    });
                    servers.last_mut().expect("just pushed")
                }
            };
            if !entry.repos.contains(&repo.name) {
                entry.repos.push(repo.name.clone());
            }
            if i == 0 {
                entry.first_for.push(repo.name.clone());
            }
        }
    }

    let mut findings = Vec::new();
    let mut commands = Vec::new();
    let (parsed, source) = match status {
        Ok((s, origin)) => {
            let src = StatusSource {
                url: status_url.to_owned(),
                origin: Some(origin),
                last_check: Some(Timestamp(s.last_check)),
                error: None,
            };
            (Some(s), src)
        }
        Err(e) => {
            findings.push(format!(
                "could not read the mirror status ({}): mirror freshness unknown",
                e.kind()
            ));
            (
                None,
                StatusSource {
                    url: status_url.to_owned(),
                    origin: None,
                    last_check: None,
                    error: Some(StatusError {
                        kind: e.kind(),
                        message: e.to_string(),
                    }),
                },
            )
        }
    };

    if let Some(st) = &parsed {
        for s in &mut servers {
            if let Some((u, sync)) = st.find(&s.url) {
                let behind = sync.map(|t| st.last_check - t);
                let out_of_date = !u.active || behind.is_none_or(|b| b > st.cutoff);
                if out_of_date && !s.first_for.is_empty() {
                    findings.push(format!(
                        "{} (first server for {}) is out of date: {}",
                        s.url,
                        s.first_for.join(", "),
                        match behind {
                            Some(b) =>
                                format!("last synced {} h before the status check", b / 3600),
                            None if !u.active => "inactive".into(),
                            None => "never seen synced".into(),
                        }
                    ));
                }
                s.mirror = Some(MirrorState {
                    status_url: u.url.clone(),
                    last_sync: sync.map(Timestamp),
                    behind_s: behind,
                    delay_s: u.delay,
                    completion_pct: u.completion_pct,
                    active: u.active,
                    country: u.country.clone(),
                    out_of_date,
                });
            }
        }
        if servers
            .iter()
            .any(|s| !s.first_for.is_empty() && s.mirror.as_ref().is_some_and(|m| m.out_of_date))
        {
            commands.push(REFLECTOR.to_owned());
        }
    }

    let mut databases = Vec::new();
    for repo in &conf.repos {
        let file = conf.sync_db_path(&repo.name, "db");
        let modified = std::fs::metadata(&file)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs() as i64);
        let mirror_sync = servers
            .iter()
            .find(|s| s.first_for.contains(&repo.name))
            .and_then(|s| s.mirror.as_ref())
            .and_then(|m| m.last_sync.map(|t| t.0));
        let older = match (modified, mirror_sync) {
            (Some(m), Some(s)) => Some(m < s),
            _ => None,
        };
        if modified.is_none() {
            findings.push(format!(
                "{}: no sync database at {} (pacman -Sy never ran for it)",
                repo.name,
                file.display()
            ));
        }
        databases.push(DbFreshness {
            repo: repo.name.clone(),
            file: file.display().to_string(),
            modified: modified.map(Timestamp),
            mirror_last_sync: mirror_sync.map(Timestamp),
            older_than_mirror: older,
        });
    }
    let stale: Vec<&str> = databases
        .iter()
        .filter(|d| d.older_than_mirror == Some(true) || d.modified.is_none())
        .map(|d| d.repo.as_str())
        .collect();
    if !stale.is_empty() {
        if databases.iter().any(|d| d.older_than_mirror == Some(true)) {
            findings.push(format!(
                "the sync databases of {} are older than the mirror's last sync: updates are waiting",
                stale.join(", ")
            ));
        }
        // A database refresh alone would be a partial upgrade; the whole upgrade is the command.
        commands.push("sudo pacman -Syu".to_owned());
    }
    MirrorsReport {
        servers,
        databases,
        status: source,
        findings,
        commands,
    }
}
