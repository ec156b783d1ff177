//! Shared fixture: the real repository world built once by `fixtures/build-repo.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use archgate_pacman::{PacmanConf, PacmanDb, PacmanSettings, Snapshot};

/// OUTDIR of the fixture script, built once per test process (the script itself caches across
/// runs by its hash and serialises concurrent builders with flock).
pub fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pacman-fixture");
        let script = crate::manifest_dir().join("tests/fixtures/build-repo.sh");
        let status = Command::new("bash")
            .arg(&script)
            .arg(&out)
            .status()
            .expect("run build-repo.sh");
        assert!(status.success(), "build-repo.sh failed");
        out
    })
}

pub fn conf_path() -> PathBuf {
    fixture().join("pacman.conf")
}

pub fn snapshot_for(conf: &Path) -> Snapshot {
    let conf = PacmanConf::load(conf).expect("conf loads");
    Snapshot::load(std::sync::Arc::new(conf), None).expect("snapshot loads")
}

pub fn snapshot() -> Snapshot {
    snapshot_for(&conf_path())
}

pub fn db_for(conf: &Path) -> PacmanDb {
    PacmanDb::new(PacmanSettings {
        conf_path: conf.to_owned(),
        ..PacmanSettings::default()
    })
}

/// Whether the tests run as root (`/proc/self` belongs to the process's effective uid).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Real pacman: as root itself; as anyone else under fakeroot, since pacman wants uid 0 for a
/// transaction even when every path it writes is the test's own (a normal user's `cargo test`).
pub fn pacman_command() -> Command {
    if is_root() {
        Command::new("pacman")
    } else {
        let mut c = Command::new("fakeroot");
        c.args(["--", "pacman"]);
        c
    }
}

/// Runs real pacman with the fixture's configuration (C locale, UTC); returns stdout.
pub fn pacman(conf: &Path, args: &[&str]) -> (i32, String) {
    let out = pacman_command()
        .arg("--config")
        .arg(conf)
        .args(args)
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .output()
        .expect("run pacman");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Parses pacman's `Key : value` blocks (-Si/-Qi) into one map per package.
pub fn parse_info_blocks(text: &str) -> Vec<Vec<(String, String)>> {
    let mut blocks = Vec::new();
    let mut cur: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if line.starts_with(' ') {
            if let Some(last) = cur.last_mut() {
                last.1.push('\n');
                last.1.push_str(line.trim());
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(" : ") {
            cur.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    blocks
}

pub fn field<'a>(block: &'a [(String, String)], key: &str) -> &'a str {
    block
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("pacman printed no {key}"))
}

/// pacman's list fields: `None` or values separated by two spaces.
pub fn list(value: &str) -> Vec<String> {
    if value == "None" {
        Vec::new()
    } else {
        value.split("  ").map(str::to_owned).collect()
    }
}

/// pacman's size format (`%.2f` of the best binary unit).
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v.abs() > 2048.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2} {}", units[i])
}

/// pacman's date format in the C locale (`%c`), UTC.
pub fn c_date(secs: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
    let f = time::macros::format_description!(
        "[weekday repr:short] [month repr:short] [day padding:space] [hour]:[minute]:[second] [year]"
    );
    t.format(&f).unwrap()
}

/// A copy of the fixture's databases in a temporary directory, with its own pacman.conf whose
/// body is `repos` (repository sections) — for tests that damage or change files.
pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub conf: PathBuf,
}

pub fn scratch(repos: &str) -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    copy_dir(&fixture().join("db"), &db);
    let conf = dir.path().join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nRootDir = {root}\nDBPath = {db}\nLogFile = {log}\nArchitecture = x86_64\n\
             SigLevel = Never\n\n{repos}",
            root = fixture().join("root").display(),
            db = db.display(),
            log = fixture().join("pacman.log").display(),
        ),
    )
    .unwrap();
    Scratch { dir, conf }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
