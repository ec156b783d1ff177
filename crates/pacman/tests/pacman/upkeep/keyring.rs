//! The keyring: expired and expiring keys in a real GnuPG home made here, an unreadable
//! keyring, the archlinux-keyring package against the repository.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::SystemTime;

use archgate_pacman::{PacmanConf, Snapshot, keyring};

fn gpg(home: &Path, args: &[&str]) {
    let out = Command::new("gpg")
        .arg("--homedir")
        .arg(home)
        .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
        .args(args)
        .output()
        .expect("gpg");
    assert!(
        out.status.success(),
        "gpg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A GnuPG home like pacman's (root-owned, 0755, world-readable pubring) with a key that expires
/// in 10 days, one that expired (made with a faked clock a year back, valid for 30 days), one
/// valid for years and one revoked.
fn keyring_home(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("gnupg");
    std::fs::create_dir_all(&home).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Soon Packager <soon@example.invalid>",
            "ed25519",
            "sign",
            "10d",
        ],
    );
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Long Packager <long@example.invalid>",
            "ed25519",
            "sign",
            "5y",
        ],
    );
    let year_ago = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 365 * 86400;
    gpg(
        &home,
        &[
            "--faked-system-time",
            &year_ago.to_string(),
            "--quick-gen-key",
            "Old Packager <old@example.invalid>",
            "ed25519",
            "sign",
            "30d",
        ],
    );
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Gone Packager <gone@example.invalid>",
            "ed25519",
            "sign",
            "5y",
        ],
    );
    let out = Command::new("gpg")
        .arg("--homedir")
        .arg(&home)
        .args([
            "--batch",
            "--with-colons",
            "--list-keys",
            "gone@example.invalid",
        ])
        .output()
        .unwrap();
    let fpr = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.strip_prefix("fpr:")
                .map(|r| r.trim_matches(':').to_owned())
        })
        .unwrap();
    let rev = home.join("openpgp-revocs.d").join(format!("{fpr}.rev"));
    let text = std::fs::read_to_string(&rev)
        .unwrap()
        .replacen(":-----BEGIN", "-----BEGIN", 1);
    std::fs::write(&rev, text).unwrap();
    gpg(&home, &["--import", rev.to_str().unwrap()]);
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(&home)
        .args(["--kill", "gpg-agent"])
        .status();
    // The agent removes its sockets (in this home when there is no /run/user/UID) as it exits,
    // after `--kill` returns: wait, so the test's before/after listing sees a settled home.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("S.gpg-agent"))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in std::fs::read_dir(&home).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    home
}

/// A local database with archlinux-keyring at `installed` and a sync [core] with `available`.
fn keyring_world(dir: &Path, installed: &str, available: &str) -> Snapshot {
    let db = dir.join("db");
    let local = db
        .join("local")
        .join(format!("archlinux-keyring-{installed}"));
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(db.join("local/ALPM_DB_VERSION"), "9\n").unwrap();
    std::fs::write(
        local.join("desc"),
        format!("%NAME%\narchlinux-keyring\n\n%VERSION%\n{installed}\n\n%ARCH%\nany\n\n"),
    )
    .unwrap();
    let stage = dir.join("stage");
    let entry = stage.join(format!("archlinux-keyring-{available}"));
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(
        entry.join("desc"),
        format!(
            "%FILENAME%\narchlinux-keyring-{available}-any.pkg.tar.zst\n\n%NAME%\narchlinux-keyring\n\n\
             %VERSION%\n{available}\n\n%ARCH%\nany\n\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(db.join("sync")).unwrap();
    let st = Command::new("tar")
        .arg("-czf")
        .arg(db.join("sync/core.db"))
        .arg("-C")
        .arg(&stage)
        .arg(format!("archlinux-keyring-{available}"))
        .status()
        .unwrap();
    assert!(st.success());
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nDBPath = {}\n\n[core]\nServer = file:///x\n",
            db.display()
        ),
    )
    .unwrap();
    Snapshot::load(Arc::new(PacmanConf::load(&conf).unwrap()), None).unwrap()
}

#[test]
fn keys_expired_and_expiring_read_by_an_unprivileged_user() {
    if !crate::support::is_root() {
        // It reads a root-owned keyring as nobody (setpriv). CI runs as root.
        return eprintln!("skipped: needs root (a root-owned keyring read as nobody)");
    }
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = keyring_home(dir.path());
    keyring::readable(&home).expect("readable");
    // As nobody, with the arguments the tool runs: nothing in the root-owned home is written.
    let before: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let out = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "env",
            "HOME=/nonexistent",
            "gpg",
        ])
        .args(keyring::gpg_args(&home))
        .output()
        .expect("setpriv gpg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let (mut before, mut after) = (before, after);
    before.sort();
    after.sort();
    assert_eq!(before, after, "gpg wrote into the keyring home");
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let list = keyring::parse_keys(&String::from_utf8_lossy(&out.stdout), now);
    assert_eq!(list.total, 4, "{list:?}");
    assert_eq!(list.revoked, 1);
    assert_eq!(list.expired.len(), 1, "{list:?}");
    assert!(list.expired[0].uid.contains("old@example.invalid"));
    assert_eq!(list.expired[0].fingerprint.len(), 40);
    assert!(list.expired[0].days_left < 0);
    assert_eq!(list.expiring.len(), 1, "{list:?}");
    assert!(list.expiring[0].uid.contains("soon@example.invalid"));
    assert!(
        (9..=10).contains(&list.expiring[0].days_left),
        "{:?}",
        list.expiring[0]
    );

    let r = keyring::report(
        keyring::KeyringPackage {
            installed: Some("20260101-1".into()),
            repo: Some("core".into()),
            available: Some("20260101-1".into()),
            outdated: false,
        },
        &home,
        Ok(list),
    );
    assert_eq!(r.commands, ["sudo pacman-key --refresh-keys"]);
    assert!(r.keys.readable);
}

#[test]
fn an_unreadable_keyring_is_said_never_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let e = keyring::readable(dir.path()).unwrap_err();
    assert!(e.contains("pacman-key --init"), "{e}");
    let e = keyring::readable(&dir.path().join("missing")).unwrap_err();
    assert!(e.contains("missing"), "{e}");
    // gpg as nobody on a 0700 home fails; the report then says not readable, with the command.
    let home = dir.path().join("private");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("pubring.kbx"), b"").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let r = keyring::report(
        keyring::KeyringPackage {
            installed: None,
            repo: None,
            available: None,
            outdated: false,
        },
        &home,
        Err("permission denied".into()),
    );
    assert!(!r.keys.readable);
    let v = serde_json::to_value(&r).unwrap();
    assert!(
        v["keys"].get("expired").is_none(),
        "no empty list stands in for unread keys: {v}"
    );
    assert!(
        r.commands
            .contains(&"sudo pacman-key --list-keys".to_owned())
    );
}

#[test]
fn the_keyring_package_against_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let snap = keyring_world(dir.path(), "20251001-1", "20251120.1-1");
    let p = keyring::package_state(&snap);
    assert_eq!(p.installed.as_deref(), Some("20251001-1"));
    assert_eq!(p.available.as_deref(), Some("20251120.1-1"));
    assert_eq!(p.repo.as_deref(), Some("core"));
    assert!(p.outdated);
    let r = keyring::report(p, Path::new("/x"), Ok(Default::default()));
    assert_eq!(
        r.commands,
        ["sudo pacman -Sy archlinux-keyring && sudo pacman -Su"]
    );

    let dir = tempfile::tempdir().unwrap();
    let snap = keyring_world(dir.path(), "20251120-1", "20251120-1");
    let p = keyring::package_state(&snap);
    assert!(!p.outdated);
    assert!(
        keyring::report(p, Path::new("/x"), Ok(Default::default()))
            .commands
            .is_empty()
    );
}
