//! Snapshots before an upgrade: which of snapper, Timeshift and plain btrfs this machine has,
//! their recent snapshots where the person can read them, and the command that takes one.
//!
//! Read from files, never by running the tools (snapper and Timeshift list through root-only
//! daemons or need root): snapper's configs in `/etc/snapper/configs/` (`SUBVOLUME="/"`) and
//! each snapshot's `SUBVOLUME/.snapshots/N/info.xml` (`<snapshot><type>`, `<num>`, `<date>` in
//! UTC `YYYY-MM-DD HH:MM:SS`, `<description>`, `<cleanup>` — snapper's `Snapshot.cc` writes
//! them with `datetime(date, utc, classic)`); Timeshift's `/etc/timeshift/timeshift.json` and its
//! snapshot directories, named by their local time `YYYY-MM-DD_HH-MM-SS`, each with an
//! `info.json` whose `created` is Unix seconds (UTC), `tags` the words `ondemand`, `boot`,
//! `hourly`, `daily`, `weekly`, `monthly` and `comments` the person's note (Timeshift's
//! `Snapshot.vala`); they live in `timeshift/snapshots` (rsync) or `timeshift-btrfs/snapshots`
//! (btrfs) on the backup device, which Timeshift mounts at `/run/timeshift/PID/backup` while it
//! runs (`/run/timeshift/backup` before 21.09), and is visible at `/timeshift/snapshots` when
//! the backup device is the root; the root filesystem's type from `/proc/self/mounts`; `snap-pac` or
//! `timeshift-autosnap` hooks in `/usr/share/libalpm/hooks` (pacman then takes one itself).
//! A directory the person may not read is said so, with the command that lists it.

use std::path::Path;

use serde::Serialize;

/// One snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snap {
    /// Number (snapper) or directory name (Timeshift).
    pub id: String,
    /// When it was taken: UTC `YYYY-MM-DD HH:MM:SS`; a Timeshift snapshot without its
    /// `info.json` says its directory's local time, `YYYY-MM-DD HH:MM:SS (local)`.
    pub date: String,
    /// `single`, `pre`, `post` (snapper) or Timeshift's tags.
    pub kind: String,
    /// Its description or comment.
    pub description: String,
}

/// One snapper configuration or Timeshift setup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setup {
    /// `snapper` or `timeshift`.
    pub tool: &'static str,
    /// snapper's config name (`root`), or Timeshift's mode (`btrfs`, `rsync`).
    pub name: String,
    /// The subvolume it snapshots (snapper) or where its snapshots are.
    pub path: String,
    /// Whether the snapshots could be read as the person.
    pub readable: bool,
    /// Snapshots found, newest first (at most 10).
    pub recent: Vec<Snap>,
    /// Total found.
    pub count: usize,
    /// The command that lists them all, for the person.
    pub list_command: String,
}

/// The answer of `snapshots`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotsReport {
    /// The root filesystem's type (`btrfs`, `ext4` …).
    pub root_fs: String,
    /// Installed programs among snapper, timeshift and btrfs.
    pub programs: Vec<&'static str>,
    /// Configured setups.
    pub setups: Vec<Setup>,
    /// pacman hooks that snapshot every transaction (`snap-pac`, `timeshift-autosnap`).
    pub pacman_hooks: Vec<String>,
    /// The command that takes a snapshot now (absent: no snapshot tool here).
    pub before_upgrade: Option<String>,
    /// What the person should know.
    pub findings: Vec<String>,
}

const RECENT: usize = 10;

fn root_fs(root: &Path) -> String {
    let text = std::fs::read_to_string(root.join("proc/self/mounts"))
        .or_else(|_| std::fs::read_to_string(root.join("proc/mounts")))
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && f[1] == "/").then(|| f[2].to_owned())
        })
        .next_back()
        .unwrap_or_else(|| "unknown".into())
}

fn has_program(root: &Path, name: &str) -> bool {
    ["usr/bin", "usr/local/bin", "usr/sbin"]
        .iter()
        .any(|d| root.join(d).join(name).is_file())
}

/// The text of `<tag>…</tag>` in a flat XML element, entities decoded.
fn xml_text(xml: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let Some(s) = xml.find(&open).map(|i| i + open.len()) else {
        return String::new();
    };
    let Some(e) = xml[s..].find(&close) else {
        return String::new();
    };
    xml[s..s + e]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn config_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.trim().split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn snapper_setups(root: &Path) -> Vec<Setup> {
    let Ok(rd) = std::fs::read_dir(root.join("etc/snapper/configs")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(root.join("etc/snapper/configs").join(&name))
            .unwrap_or_default();
        let subvol = config_value(&text, "SUBVOLUME").unwrap_or_else(|| "/".into());
        let dir = root.join(subvol.trim_start_matches('/')).join(".snapshots");
        let mut snaps = Vec::new();
        let readable = match std::fs::read_dir(&dir) {
            Ok(rd) => {
                for e in rd.flatten() {
                    let Ok(xml) = std::fs::read_to_string(e.path().join("info.xml")) else {
                        continue;
                    };
                    let num = xml_text(&xml, "num");
                    if num.is_empty() {
                        continue;
                    }
                    snaps.push(Snap {
                        id: num,
                        date: xml_text(&xml, "date"),
                        kind: xml_text(&xml, "type"),
                        description: xml_text(&xml, "description"),
                    });
                }
                true
            }
            Err(_) => false,
        };
        snaps.sort_by(|a, b| {
            b.date.cmp(&a.date).then(
                b.id.parse::<u64>()
                    .unwrap_or(0)
                    .cmp(&a.id.parse::<u64>().unwrap_or(0)),
            )
        });
        let count = snaps.len();
        snaps.truncate(RECENT);
        out.push(Setup {
            tool: "snapper",
            list_command: format!("sudo snapper -c {name} list"),
            name,
            path: subvol,
            readable,
            recent: snaps,
            count,
        });
    }
    out
}

/// A snapshot directory's name, local time: `2024-01-15_10-00-01` → `2024-01-15 10:00:01`.
fn timeshift_date(dir: &str) -> Option<String> {
    let (d, t) = dir.split_once('_')?;
    let ok = d.len() == 10
        && t.len() == 8
        && dir
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'_');
    ok.then(|| format!("{d} {}", t.replace('-', ":")))
}

/// `info.json`'s `created` (Unix seconds as a string) as UTC `YYYY-MM-DD HH:MM:SS`.
fn utc_from_unix(created: &str) -> Option<String> {
    let secs: i64 = created.trim().parse().ok()?;
    let t = time::OffsetDateTime::from_unix_timestamp(secs).ok()?;
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    t.format(&f).ok()
}

/// Where Timeshift's snapshots may be seen, first found first: the backup device mounted by a
/// running Timeshift (`/run/timeshift/PID/backup`, or `/run/timeshift/backup` before 21.09), then
/// the root itself.
fn timeshift_dirs(root: &Path, btrfs: bool) -> Vec<String> {
    let leaf = if btrfs {
        "timeshift-btrfs/snapshots"
    } else {
        "timeshift/snapshots"
    };
    let mut mounts: Vec<String> = std::fs::read_dir(root.join("run/timeshift"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                .map(|pid| format!("run/timeshift/{pid}/backup/{leaf}"))
                .collect()
        })
        .unwrap_or_default();
    mounts.sort();
    mounts.push(format!("run/timeshift/backup/{leaf}"));
    mounts.push(leaf.to_owned());
    mounts
}

fn timeshift_setup(root: &Path) -> Option<Setup> {
    let conf = std::fs::read_to_string(root.join("etc/timeshift/timeshift.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&conf).unwrap_or_default();
    let btrfs = v.get("btrfs_mode").and_then(|m| m.as_str()) == Some("true");
    let candidates = timeshift_dirs(root, btrfs);
    let mut snaps = Vec::new();
    let mut readable = false;
    let mut path = format!("/{}", candidates[candidates.len() - 1]);
    for c in &candidates {
        if let Ok(rd) = std::fs::read_dir(root.join(c)) {
            readable = true;
            path = format!("/{c}");
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(local) = timeshift_date(&name) else {
                    continue;
                };
                let info: serde_json::Value = std::fs::read_to_string(e.path().join("info.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default();
                let field = |k: &str| {
                    info.get(k)
                        .and_then(|x| x.as_str())
                        .unwrap_or("")
                        .to_owned()
                };
                let date =
                    utc_from_unix(&field("created")).unwrap_or_else(|| format!("{local} (local)"));
                snaps.push(Snap {
                    id: name,
                    date,
                    kind: field("tags"),
                    description: field("comments"),
                });
            }
            break;
        }
    }
    // Newest first by name: the names are the local times they were taken, so they order even
    // where one snapshot's `info.json` is missing.
    snaps.sort_by(|a, b| b.id.cmp(&a.id));
    let count = snaps.len();
    snaps.truncate(RECENT);
    Some(Setup {
        tool: "timeshift",
        name: if btrfs { "btrfs" } else { "rsync" }.into(),
        path,
        readable,
        recent: snaps,
        count,
        list_command: "sudo timeshift --list".into(),
    })
}

/// Reads everything under `root`.
pub fn snapshots(root: &Path) -> SnapshotsReport {
    let fs = root_fs(root);
    let programs: Vec<&'static str> = ["snapper", "timeshift", "btrfs"]
        .into_iter()
        .filter(|p| has_program(root, p))
        .collect();
    let mut setups = snapper_setups(root);
    setups.extend(timeshift_setup(root));
    let pacman_hooks: Vec<String> = std::fs::read_dir(root.join("usr/share/libalpm/hooks"))
        .map(|rd| {
            let mut v: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("snap-pac") || n.contains("timeshift"))
                .collect();
            v.sort();
            v
        })
        .unwrap_or_default();

    let mut findings = Vec::new();
    let snapper_root = setups.iter().find(|s| s.tool == "snapper" && s.path == "/");
    let before_upgrade = if let Some(s) = snapper_root.filter(|_| programs.contains(&"snapper")) {
        Some(format!(
            "sudo snapper -c {} create --type single --cleanup-algorithm number --description \"before upgrade\"",
            s.name
        ))
    } else if setups.iter().any(|s| s.tool == "timeshift") && programs.contains(&"timeshift") {
        Some("sudo timeshift --create --comments \"before upgrade\"".into())
    } else if fs == "btrfs" && programs.contains(&"btrfs") {
        findings.push(
            "the root is btrfs without snapper or Timeshift: a read-only snapshot of / can be taken by hand"
                .into(),
        );
        Some("sudo btrfs subvolume snapshot -r / /.snapshot-before-upgrade".into())
    } else {
        None
    };
    for s in &setups {
        if !s.readable {
            findings.push(format!(
                "{} {}: snapshots not readable without privilege; `{}` lists them",
                s.tool, s.name, s.list_command
            ));
        }
    }
    if !pacman_hooks.is_empty() {
        findings.push(format!(
            "pacman snapshots each transaction itself ({})",
            pacman_hooks.join(", ")
        ));
    }
    if before_upgrade.is_none() {
        findings
            .push("no snapshot tool set up: back up what matters before a large upgrade".into());
    }
    SnapshotsReport {
        root_fs: fs,
        programs,
        setups,
        pacman_hooks,
        before_upgrade,
        findings,
    }
}
