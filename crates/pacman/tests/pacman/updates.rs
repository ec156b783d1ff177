//! Pending updates (against the checkupdates method with real pacman) and install plans
//! (against `pacman -Sp`).

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use crate::support::{db_for, fixture, pacman, scratch, snapshot, snapshot_for};

/// checkupdates: copy local/ into a temporary dbpath, -Sy there, then -Qu.
fn checkupdates(conf: &Path) -> BTreeSet<String> {
    let tmp = tempfile::tempdir().unwrap();
    crate::support::copy_dir(&fixture().join("db/local"), &tmp.path().join("local"));
    let db = tmp.path().to_str().unwrap();
    let (code, _) = pacman(conf, &["--dbpath", db, "--logfile", "/dev/null", "-Sy"]);
    assert_eq!(code, 0);
    let (_, out) = pacman(conf, &["--dbpath", db, "-Qu"]);
    out.lines().map(str::to_owned).collect()
}

fn ours(result: &archgate_pacman::updates::UpdatesResult) -> BTreeSet<String> {
    result
        .updates
        .iter()
        .map(|u| format!("{} {} -> {}", u.name, u.installed, u.available))
        .collect()
}

fn mtimes(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.path(), e.metadata().unwrap().modified().unwrap())
        })
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn updates_match_checkupdates_without_touching_the_real_databases() {
    let next = fixture().join("pacman-next.conf");
    let sync_dir = fixture().join("db/sync");
    let before = mtimes(&sync_dir);
    let result = db_for(&next).updates().await.unwrap();
    assert!(result.refreshed, "{:?}", result.reason);
    let expected = checkupdates(&next);
    assert_eq!(
        expected.len(),
        2,
        "fixture has two newer packages: {expected:?}"
    );
    assert_eq!(ours(&result), expected);
    assert_eq!(mtimes(&sync_dir), before, "sync databases were touched");
    assert!(result.command.starts_with("sudo pacman --config "));
    assert!(result.command.ends_with(" -Syu"));
    // The current repositories have nothing newer.
    let same = db_for(&fixture().join("pacman.conf"))
        .updates()
        .await
        .unwrap();
    assert!(same.refreshed);
    assert_eq!(ours(&same), checkupdates(&fixture().join("pacman.conf")));
    assert!(same.updates.is_empty());
}

/// Serves files under `base` over HTTP/1.1 on 127.0.0.1 (one thread, Connection: close).
fn serve(base: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&req);
            let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let response = match std::fs::read(base.join(path.trim_start_matches('/'))) {
                Ok(body) => {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(&body);
                    r
                }
                Err(_) => {
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_vec()
                }
            };
            let _ = stream.write_all(&response);
        }
    });
    port
}

#[tokio::test]
async fn updates_over_http_and_fallback_when_unreachable() {
    let port = serve(fixture().join("repos-next"));
    let s = scratch(&format!(
        "[agcore]\nServer = http://127.0.0.1:{port}/$repo/os/$arch\n\n\
         [agextra]\nServer = http://127.0.0.1:1/$repo\nServer = file:///nonexistent/$repo\n"
    ));
    let result = db_for(&s.conf).updates().await.unwrap();
    assert!(!result.refreshed);
    let core = &result.repos[0];
    assert!(core.refreshed && core.server.as_deref().unwrap().contains(&port.to_string()));
    let extra = &result.repos[1];
    assert!(!extra.refreshed);
    let reason = extra.reason.as_deref().unwrap();
    assert!(
        reason.contains("127.0.0.1:1") && reason.contains("/nonexistent/agextra"),
        "{reason}"
    );
    assert!(result.reason.as_deref().unwrap().starts_with("agextra: "));
    // agcore came fresh over HTTP (text-engine newer); agextra from its current database.
    let names: Vec<&str> = result.updates.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["text-engine"]);
}

#[test]
fn install_plan_pulls_the_same_dependencies_as_pacman() {
    let s = scratch(&format!(
        "[agcore]\nServer = file://{r}/$repo/os/$arch\n\n[agextra]\nServer = file://{r}/$repo/os/$arch\n",
        r = fixture().join("repos").display()
    ));
    // An empty system: nothing installed.
    std::fs::remove_dir_all(s.dir.path().join("db/local")).unwrap();
    std::fs::create_dir(s.dir.path().join("db/local")).unwrap();
    let snap = snapshot_for(&s.conf);
    for targets in [
        vec!["editor-one"],
        vec!["net-fetcher", "spell-checker"],
        vec!["python-plugins"],
    ] {
        let names: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
        let plan = archgate_pacman::plan::install_plan(&snap, &names).unwrap();
        let mut args = vec!["-Sp", "--print-format", "%n"];
        args.extend(targets.iter().copied());
        let (code, out) = pacman(&s.conf, &args);
        assert_eq!(code, 0, "{out}");
        let expected: BTreeSet<String> = out.lines().map(str::to_owned).collect();
        let got: BTreeSet<String> = plan
            .targets
            .iter()
            .chain(plan.dependencies.iter())
            .map(|p| p.name.clone())
            .collect();
        assert_eq!(got, expected, "{targets:?}");
        assert!(plan.unresolved.is_empty());
        let sum: u64 = plan
            .targets
            .iter()
            .chain(&plan.dependencies)
            .map(|p| p.installed_size)
            .sum();
        assert_eq!(plan.installed_size, sum);
        assert!(plan.download_size > 0);
    }
}

#[test]
fn install_plan_reports_conflicts_and_the_command() {
    let snap = snapshot();
    let plan = archgate_pacman::plan::install_plan(&snap, &["editor-two".to_owned()]).unwrap();
    assert!(plan.dependencies.is_empty(), "text-engine is installed");
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].conflicts_with, "editor-one");
    assert!(plan.conflicts[0].installed);
    assert_eq!(
        plan.command,
        format!(
            "sudo pacman --config {} -S editor-two",
            fixture().join("pacman.conf").display()
        )
    );
    let bad = archgate_pacman::plan::install_plan(&snap, &["foo;rm".to_owned()]).unwrap_err();
    assert_eq!(bad.kind(), "invalid_argument");
    let missing =
        archgate_pacman::plan::install_plan(&snap, &["editr-one".to_owned()]).unwrap_err();
    assert!(
        matches!(missing, archgate_pacman::PacmanError::PackageNotFound { ref near, .. } if near.contains(&"editor-one".to_owned()))
    );
}

#[tokio::test]
async fn handle_reloads_when_a_database_changes() {
    let s = scratch(&format!(
        "[agcore]\nServer = file://{r}/$repo/os/$arch\n",
        r = fixture().join("repos").display()
    ));
    let db = db_for(&s.conf);
    let info = |db: archgate_pacman::PacmanDb| async move {
        db.info(&archgate_pacman::args::InfoArgs {
            name: "text-engine".into(),
        })
        .await
        .unwrap()
        .sync[0]
            .details
            .version
            .clone()
    };
    assert_eq!(info(db.clone()).await, "0.9.1-3");
    let first = db.snapshot().await.unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &db.snapshot().await.unwrap()),
        "unchanged: reused"
    );
    std::fs::copy(
        fixture().join("repos-next/agcore/os/x86_64/agcore.db"),
        s.dir.path().join("db/sync/agcore.db"),
    )
    .unwrap();
    assert_eq!(info(db.clone()).await, "0.10.0-1");
    // The local database was not reloaded: same Arc.
    let second = db.snapshot().await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&first.local, &second.local));
}

#[tokio::test]
async fn handle_sees_a_pacman_conf_edit_on_the_very_next_call() {
    // The change check runs inline on every call (no blocking-thread hop, no cached "checked
    // recently"): an edit made between two calls is in the second one's answer.
    let s = scratch(&format!(
        "[agcore]\nServer = file://{r}/$repo/os/$arch\n",
        r = fixture().join("repos").display()
    ));
    let db = db_for(&s.conf);
    let first = db.conf().await.unwrap();
    assert!(first.ignore_pkg.is_empty(), "{:?}", first.ignore_pkg);
    assert!(
        std::sync::Arc::ptr_eq(&first, &db.conf().await.unwrap()),
        "unchanged: the parsed pacman.conf is kept"
    );
    let text = std::fs::read_to_string(&s.conf).unwrap();
    let edited = text.replace(
        "SigLevel = Never\n",
        "SigLevel = Never\nIgnorePkg = text-engine\n",
    );
    assert_ne!(text, edited);
    std::fs::write(&s.conf, edited).unwrap();
    assert_eq!(db.conf().await.unwrap().ignore_pkg, ["text-engine"]);
}
