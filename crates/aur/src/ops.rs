//! Operations that combine the client and the audit: audit a package with its trust and
//! history signals, audit the change between two versions, and review every pending update.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::audit::{self, AuditInput, AuditReport, ChangeAudit, ScriptFile, Severity, Verdict};
use crate::audited::remember;
pub use crate::audited::{AuditRecord, last_audit};
use crate::client::{AurClient, AurError, Commit, PackageInfo, PackageRepo, RepoFile, RunGit};
use crate::vercmp::vercmp;
use crate::{AUR_NOTICE, audit::srcinfo};

/// A fact about a package that bears on trusting it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrustSignal {
    /// `info`, `caution` or `warning`.
    pub level: &'static str,
    pub signal: String,
}

/// How to build exactly one commit of a package's AUR repository, and nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BuildAt {
    /// The full AUR git commit id the audit read.
    pub commit: String,
    pub clone_url: String,
    /// The directory the commands clone into (named after the commit, so an older clone is
    /// never reused by accident: `git clone` refuses a directory that exists).
    pub dir: String,
    /// Run in this order: clone, check out the audited commit, build it.
    pub commands: Vec<String>,
    pub note: &'static str,
}

const BUILD_NOTE: &str = "An AUR helper (yay, paru …) builds the branch head, which may have moved on since this audit; these commands build the audited commit and nothing else.";

/// The commands that build `commit` of `pkgbase` from the AUR at `base_url`.
pub fn build_at(base_url: &str, pkgbase: &str, commit: &str) -> BuildAt {
    let short: String = commit.chars().take(12).collect();
    let dir = format!("{pkgbase}-{short}");
    let clone_url = format!("{}/{pkgbase}.git", base_url.trim_end_matches('/'));
    BuildAt {
        commit: commit.to_owned(),
        commands: vec![
            format!("git clone {clone_url} {dir}"),
            format!("git -C {dir} checkout {commit}"),
            format!("cd {dir} && makepkg --syncdeps --install"),
        ],
        clone_url,
        dir,
        note: BUILD_NOTE,
    }
}

/// The answer of `aur_audit`.
#[derive(Clone, Debug, Serialize)]
pub struct PackageAudit {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub package: PackageInfo,
    /// The AUR git commit whose files were audited (its full id; every file was read from it).
    pub commit: Option<String>,
    /// The newest commit of the package when it was audited.
    pub head_commit: Option<String>,
    /// Set when the audited commit is not the newest one: what that means.
    pub moved_on: Option<String>,
    /// How to build the audited commit and nothing else.
    pub build: Option<BuildAt>,
    pub trust: Vec<TrustSignal>,
    /// Newest first (at most 10).
    pub recent_history: Vec<Commit>,
    pub files: Vec<RepoFile>,
    pub report: AuditReport,
}

/// One side of a diff.
#[derive(Clone, Debug, Serialize)]
pub struct VersionRef {
    pub commit: String,
    /// `[epoch:]pkgver-pkgrel` from that commit's .SRCINFO, if readable.
    pub version: Option<String>,
    pub author: String,
    pub date: String,
    pub subject: String,
}

/// One file's change.
#[derive(Clone, Debug, Serialize)]
pub struct FileDiff {
    pub path: String,
    /// `added`, `removed`, `modified` or `binary`.
    pub change: &'static str,
    /// Unified diff (cut at 64 KiB).
    pub unified: String,
}

/// The answer of `aur_diff`.
#[derive(Clone, Debug, Serialize)]
pub struct PackageDiff {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub name: String,
    pub package_base: String,
    pub from: VersionRef,
    pub to: VersionRef,
    /// Commits between the two, newest first.
    pub commits: Vec<Commit>,
    pub files: Vec<FileDiff>,
    /// The audit of what the change adds.
    pub audit: ChangeAudit,
    /// How to build the `to` commit (the one this diff read) and nothing else.
    pub build: BuildAt,
}

/// An error for one entry of a review, as data.
#[derive(Clone, Debug, Serialize)]
pub struct EntryError {
    pub kind: &'static str,
    pub message: String,
}

/// One pending update.
#[derive(Clone, Debug, Serialize)]
pub struct UpdateEntry {
    pub name: String,
    pub package_base: String,
    pub installed: String,
    pub available: String,
    /// The verdict used for ordering: of the change, or of the whole new version when the
    /// installed version is not in the history.
    pub verdict: Option<Verdict>,
    pub max_severity: Option<Severity>,
    /// The change since the installed version, with its audit.
    pub diff: Option<PackageDiff>,
    /// When the installed version could not be found in the history: the new version's audit.
    pub full_audit: Option<AuditReport>,
    /// The AUR git commit this review read (the newest).
    pub commit: Option<String>,
    /// How to build that commit and nothing else.
    pub build: Option<BuildAt>,
    /// The commit `aur_audit` last audited for this package, if recorded.
    pub audited_commit: Option<String>,
    /// Set when the package moved on since that audit: the audited commit is not the one
    /// reviewed here.
    pub moved_on: Option<String>,
    pub error: Option<EntryError>,
}

/// The answer of `aur_review_updates`.
#[derive(Clone, Debug, Serialize)]
pub struct UpdateReview {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    /// Most dangerous first.
    pub updates: Vec<UpdateEntry>,
    pub up_to_date: Vec<String>,
    /// Foreign packages the AUR does not know (local builds, removed packages).
    pub not_in_aur: Vec<String>,
}

const DIFF_CAP: usize = 64 * 1024;

fn trust_signals(p: &PackageInfo, history: &[Commit]) -> Vec<TrustSignal> {
    let mut out = Vec::new();
    let mut push = |level, s: String| out.push(TrustSignal { level, signal: s });
    if p.orphaned {
        push(
            "warning",
            "orphaned: anyone can adopt it and push an update".into(),
        );
    }
    if let Some(d) = &p.out_of_date {
        push("caution", format!("flagged out of date since {d}"));
    }
    if p.votes == 0 {
        push("caution", "no votes: few people, if any, use it".into());
    } else {
        push(
            "info",
            format!("{} votes, popularity {:.2}", p.votes, p.popularity),
        );
    }
    let now = time::OffsetDateTime::now_utc();
    let age_days = |s: &Option<String>| {
        s.as_deref()
            .and_then(|d| {
                time::OffsetDateTime::parse(d, &time::format_description::well_known::Rfc3339).ok()
            })
            .map(|t| (now - t).whole_days())
    };
    if let Some(d) = age_days(&p.first_submitted)
        && d < 30
    {
        push("caution", format!("first submitted {d} days ago"));
    }
    if let Some(d) = age_days(&p.last_modified)
        && d < 2
    {
        push("info", "changed in the last two days".into());
    }
    if let (Some(m), Some(s)) = (&p.maintainer, &p.submitter)
        && m != s
    {
        push("info", format!("maintained by {m}, first submitted by {s}"));
    }
    if !p.co_maintainers.is_empty() {
        push(
            "info",
            format!("co-maintainers: {}", p.co_maintainers.join(", ")),
        );
    }
    if history.len() >= 2 {
        let latest = &history[0].author;
        if !history[1..].iter().any(|c| &c.author == latest) {
            push(
                "warning",
                format!(
                    "the latest change is by {latest}, who never changed this package before (adoption or takeover)"
                ),
            );
        }
    }
    out
}

fn to_input(pkgbuild: String, srcinfo: Option<String>, scripts: Vec<ScriptFile>) -> AuditInput {
    AuditInput {
        pkgbuild,
        install_scripts: scripts,
        srcinfo,
    }
}

/// Fetches a package and audits its newest commit, with trust and history signals (`aur_audit`).
pub async fn audit_package(
    client: &AurClient,
    git: &dyn RunGit,
    name: &str,
) -> Result<PackageAudit, AurError> {
    audit_package_at(client, git, name, None).await
}

/// Audits one commit of a package (a commit id or prefix from its history; default: the
/// newest). The files are read at that exact commit, and the answer says how to build it.
pub async fn audit_package_at(
    client: &AurClient,
    git: &dyn RunGit,
    name: &str,
    commit: Option<&str>,
) -> Result<PackageAudit, AurError> {
    let package = client.info_one(name).await?;
    let pkgbase = package.package_base.clone();
    let repo = client.repo(git, &pkgbase, commit).await?;
    let history = repo.history().await?;
    let head = Some(repo.head.clone());
    let at = match commit {
        Some(c) => {
            let full = repo.resolve(c).await.ok();
            match history.iter().find(|h| Some(&h.id) == full.as_ref()) {
                Some(h) => Some(h.id.clone()),
                None => {
                    return Err(AurError::NotFound {
                        what: format!("commit {c} in the history of {pkgbase}"),
                    });
                }
            }
        }
        None => head.clone(),
    };
    let files = repo
        .package_files(name, at.as_deref().unwrap_or(&repo.head))
        .await?;
    let report = audit::audit(&to_input(
        files.pkgbuild,
        files.srcinfo,
        files.install_scripts,
    ));
    let trust = trust_signals(&package, &history);
    let moved_on = match (&at, &head) {
        (Some(a), Some(h)) if a != h => {
            let newer = history.iter().position(|c| &c.id == a).unwrap_or(0);
            Some(format!(
                "the package moved on: {newer} newer commit(s) since {a}, the newest is {h}; this audit covers {a} only"
            ))
        }
        _ => None,
    };
    let build = at
        .as_deref()
        .map(|c| build_at(&client.config().base_url, &pkgbase, c));
    if let Some(c) = &at {
        remember(
            client,
            &AuditRecord {
                package_base: pkgbase.clone(),
                commit: c.clone(),
                verdict: report.verdict.as_str().to_owned(),
                audited_at: time::OffsetDateTime::now_utc().unix_timestamp(),
            },
        )
        .await;
    }
    Ok(PackageAudit {
        notice: AUR_NOTICE,
        commit: at,
        head_commit: head,
        moved_on,
        build,
        trust,
        recent_history: history.into_iter().take(10).collect(),
        files: files.files,
        report,
        package,
    })
}

async fn version_at(repo: &PackageRepo<'_>, commit: &str) -> Option<String> {
    let s = repo.file(commit, ".SRCINFO").await.ok()?;
    srcinfo::parse(&s).version()
}

/// The newest commit whose .SRCINFO says `version` (also matched without pkgrel or epoch).
async fn find_version(
    repo: &PackageRepo<'_>,
    name: &str,
    history: &[Commit],
    version: &str,
) -> Result<usize, AurError> {
    let bare = |v: &str| v.split_once(':').map_or(v, |(_, r)| r).to_owned();
    for (i, c) in history.iter().enumerate() {
        if let Some(v) = version_at(repo, &c.id).await
            && (v == version
                || bare(&v) == bare(version)
                || (!version.contains('-')
                    && bare(&v)
                        .rsplit_once('-')
                        .is_some_and(|(p, _)| p == bare(version))))
        {
            return Ok(i);
        }
    }
    Err(AurError::VersionNotFound {
        name: name.to_owned(),
        version: version.to_owned(),
    })
}

async fn resolve(
    repo: &PackageRepo<'_>,
    name: &str,
    history: &[Commit],
    spec: &str,
) -> Result<usize, AurError> {
    let s = spec.trim().to_ascii_lowercase();
    if (7..=40).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_hexdigit())
        && let Some(i) = history.iter().position(|c| c.id.starts_with(&s))
    {
        return Ok(i);
    }
    find_version(repo, name, history, spec.trim()).await
}

async fn snapshot(
    repo: &PackageRepo<'_>,
    commit: &str,
) -> Result<BTreeMap<String, Option<String>>, AurError> {
    let mut out = BTreeMap::new();
    for f in repo.list_files(commit).await? {
        if f.kind != "file" && f.kind != "symlink" {
            continue;
        }
        let body = match repo.read(&f).await {
            Ok(t) => Some(t),
            Err(AurError::TooLarge { .. } | AurError::Malformed { .. }) => None,
            Err(e) => return Err(e),
        };
        out.insert(f.name, body);
    }
    Ok(out)
}

fn input_of(files: &BTreeMap<String, Option<String>>) -> AuditInput {
    let get = |n: &str| files.get(n).cloned().flatten();
    let pkgbuild = get("PKGBUILD").unwrap_or_default();
    let names: Vec<String> = files.keys().cloned().collect();
    let wanted = audit::files_to_read(&pkgbuild, &names);
    let scripts = files
        .iter()
        .filter(|(n, _)| wanted.contains(n))
        .filter_map(|(n, c)| {
            c.clone().map(|content| ScriptFile {
                name: n.clone(),
                content,
            })
        })
        .collect();
    to_input(pkgbuild, get(".SRCINFO"), scripts)
}

fn unified(path: &str, a: &str, b: &str) -> String {
    let d = similar::TextDiff::from_lines(a, b);
    let mut s = d
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    if s.len() > DIFF_CAP {
        let mut end = DIFF_CAP;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("\n[diff cut]\n");
    }
    s
}

fn file_diffs(
    a: &BTreeMap<String, Option<String>>,
    b: &BTreeMap<String, Option<String>>,
) -> Vec<FileDiff> {
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut out = Vec::new();
    for p in paths {
        let (x, y) = (a.get(p), b.get(p));
        let (change, text) = match (x, y) {
            (Some(Some(x)), Some(Some(y))) if x == y => continue,
            (Some(Some(x)), Some(Some(y))) => ("modified", unified(p, x, y)),
            (None, Some(Some(y))) => ("added", unified(p, "", y)),
            (Some(Some(x)), None) => ("removed", unified(p, x, "")),
            (Some(None), Some(None)) => continue,
            _ => ("binary", String::new()),
        };
        out.push(FileDiff {
            path: p.clone(),
            change,
            unified: text,
        });
    }
    out
}

async fn version_ref(repo: &PackageRepo<'_>, c: &Commit) -> VersionRef {
    VersionRef {
        commit: c.id.clone(),
        version: version_at(repo, &c.id).await,
        author: c.author.clone(),
        date: c.date.clone(),
        subject: c.subject.clone(),
    }
}

/// The change between two versions of a package and the audit of what it adds (`aur_diff`).
/// `from`/`to` are commit ids or versions; defaults: `to` = newest, `from` = the commit before.
pub async fn diff(
    client: &AurClient,
    git: &dyn RunGit,
    name: &str,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<PackageDiff, AurError> {
    let info = client.info_one(name).await?;
    let pkgbase = info.package_base.clone();
    let repo = client.repo(git, &pkgbase, None).await?;
    let history = repo.history().await?;
    if history.is_empty() {
        return Err(AurError::NotFound {
            what: format!("history of {pkgbase}"),
        });
    }
    let ti = match to {
        Some(s) => resolve(&repo, name, &history, s).await?,
        None => 0,
    };
    let fi = match from {
        Some(s) => resolve(&repo, name, &history, s).await?,
        None => (ti + 1).min(history.len() - 1),
    };
    let (fc, tc) = (&history[fi], &history[ti]);
    let before = if fi == ti && from.is_none() {
        BTreeMap::new()
    } else {
        snapshot(&repo, &fc.id).await?
    };
    let after = snapshot(&repo, &tc.id).await?;
    let files = file_diffs(&before, &after);
    let audit = audit::audit_change(&input_of(&before), &input_of(&after));
    let commits = if fi > ti {
        history[ti..fi].to_vec()
    } else {
        Vec::new()
    };
    Ok(PackageDiff {
        notice: AUR_NOTICE,
        name: name.to_owned(),
        package_base: pkgbase.clone(),
        from: version_ref(&repo, fc).await,
        to: version_ref(&repo, tc).await,
        commits,
        files,
        audit,
        build: build_at(&client.config().base_url, &pkgbase, &tc.id),
    })
}

/// For every installed foreign package with a newer AUR version: the diff since the installed
/// version and its audit, most dangerous first (`aur_review_updates`).
pub async fn review_updates(
    client: &AurClient,
    git: &dyn RunGit,
    installed: &[(String, String)],
) -> Result<UpdateReview, AurError> {
    let names: Vec<String> = installed
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| crate::client::valid_name(n))
        .collect();
    let info = client.info(&names).await?;
    let mut updates = Vec::new();
    let mut up_to_date = Vec::new();
    let mut not_in_aur = Vec::new();
    for (name, ver) in installed {
        let Some(p) = info.packages.iter().find(|p| &p.name == name) else {
            not_in_aur.push(name.clone());
            continue;
        };
        if vercmp(&p.version, ver) != std::cmp::Ordering::Greater {
            up_to_date.push(name.clone());
            continue;
        }
        let mut e = UpdateEntry {
            name: name.clone(),
            package_base: p.package_base.clone(),
            installed: ver.clone(),
            available: p.version.clone(),
            verdict: None,
            max_severity: None,
            diff: None,
            full_audit: None,
            commit: None,
            build: None,
            audited_commit: None,
            moved_on: None,
            error: None,
        };
        // Read before this review audits anything: the fallback full audit below records its
        // own commit, which must not stand in for the one the person's audit read.
        let audited = last_audit(client, &p.package_base).await;
        match diff(client, git, name, Some(ver), None).await {
            Ok(d) => {
                e.verdict = Some(d.audit.report.verdict);
                e.max_severity = d.audit.report.max_severity;
                e.commit = Some(d.to.commit.clone());
                e.build = Some(d.build.clone());
                e.diff = Some(d);
            }
            Err(AurError::VersionNotFound { .. }) => match audit_package(client, git, name).await {
                Ok(a) => {
                    e.verdict = Some(a.report.verdict);
                    e.max_severity = a.report.max_severity;
                    e.commit = a.commit.clone();
                    e.build = a.build.clone();
                    e.full_audit = Some(a.report);
                }
                Err(err) => {
                    e.error = Some(EntryError {
                        kind: err.kind(),
                        message: err.to_string(),
                    })
                }
            },
            Err(err @ (AurError::RateLimited { .. } | AurError::CouldNotReach { .. })) => {
                return Err(err);
            }
            Err(err) => {
                e.error = Some(EntryError {
                    kind: err.kind(),
                    message: err.to_string(),
                })
            }
        }
        if let Some(rec) = &audited {
            e.audited_commit = Some(rec.commit.clone());
            if let Some(now) = &e.commit
                && *now != rec.commit
            {
                e.moved_on = Some(format!(
                    "the package moved on since it was audited: aur_audit read {} (verdict {}), the AUR is now at {now}; what was audited is not what would be built now",
                    rec.commit, rec.verdict
                ));
            }
        }
        updates.push(e);
    }
    updates.sort_by(|a, b| {
        let rank = |e: &UpdateEntry| (e.error.is_none(), e.verdict, e.max_severity);
        rank(b).cmp(&rank(a)).then_with(|| a.name.cmp(&b.name))
    });
    Ok(UpdateReview {
        notice: AUR_NOTICE,
        updates,
        up_to_date,
        not_in_aur,
    })
}
