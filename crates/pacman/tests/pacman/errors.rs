//! Broken inputs give typed errors, never panics.

use std::io::Write;

use archgate_pacman::search::TermMode;
use archgate_pacman::{EntryProblem, PacmanConf, PacmanError, Snapshot, SyncRepo};

use crate::support::{fixture, scratch, snapshot, snapshot_for};

fn repos() -> String {
    format!(
        "[agcore]\nServer = file://{r}/$repo/os/$arch\n\n[agextra]\nServer = file://{r}/$repo/os/$arch\n",
        r = fixture().join("repos").display()
    )
}

#[test]
fn missing_database_is_typed_and_other_repos_still_answer() {
    let s = scratch(&repos());
    std::fs::remove_file(s.dir.path().join("db/sync/agcore.db")).unwrap();
    let snap = snapshot_for(&s.conf);
    let err = archgate_pacman::search::search(&snap, "e", Some("agcore"), TermMode::Pacman, 10)
        .unwrap_err();
    assert_eq!(err.kind(), "db_missing");
    let all = archgate_pacman::search::search(&snap, "editor", None, TermMode::Pacman, 10).unwrap();
    assert!(all.results.iter().all(|h| h.repo == "agextra"));
    assert_eq!(all.warnings.len(), 1);
    let direct = SyncRepo::load("agcore", &s.dir.path().join("db/sync/agcore.db")).unwrap_err();
    assert!(matches!(direct, PacmanError::DbMissing { ref repo, .. } if repo == "agcore"));
}

#[test]
fn truncated_archives_are_typed() {
    for (name, file) in [
        ("agcore", "repos/agcore/os/x86_64/agcore.db.tar.gz"),
        ("agextra", "repos/agextra/os/x86_64/agextra.db.tar.zst"),
    ] {
        let bytes = std::fs::read(fixture().join(file)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("cut.db");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let err = SyncRepo::load(name, &cut).unwrap_err();
        assert_eq!(err.kind(), "truncated", "{name}: {err}");
    }
    // A plain tar cut inside an entry.
    let dir = tempfile::tempdir().unwrap();
    let tar_bytes = tar_of(&[("a-1-1/desc", &"%NAME%\na\n\n%VERSION%\n1-1\n\n".repeat(200))]);
    let cut = dir.path().join("plain.db");
    std::fs::write(&cut, &tar_bytes[..1000]).unwrap();
    assert_eq!(
        SyncRepo::load("plain", &cut).unwrap_err().kind(),
        "truncated"
    );
}

fn tar_of(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, body) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, path, body.as_bytes())
            .unwrap();
    }
    builder.into_inner().unwrap()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn corrupt_entries_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, EntryProblem); 3] = [
        (
            "bad-1-1/desc",
            "%NAME%\nbad\n\n%VERSION%\n1-1\n\n%CSIZE%\nlots\n\n",
            EntryProblem::NotANumber {
                section: "CSIZE",
                value: "lots".into(),
            },
        ),
        (
            "nover-1-1/desc",
            "%NAME%\nnover\n\n",
            EntryProblem::MissingSection("VERSION"),
        ),
        (
            "stray-1-1/desc",
            "hello\n%NAME%\nx\n",
            EntryProblem::StrayLine { line: 1 },
        ),
    ];
    for (path, body, problem) in cases {
        let file = dir.path().join("c.db");
        let good = "%NAME%\ngood\n\n%VERSION%\n1-1\n\n";
        std::fs::write(&file, gz(&tar_of(&[("good-1-1/desc", good), (path, body)]))).unwrap();
        match SyncRepo::load("c", &file).unwrap_err() {
            PacmanError::DbCorrupt {
                entry, problem: p, ..
            } => {
                assert_eq!(entry, path);
                assert_eq!(p, problem);
            }
            other => panic!("{path}: {other}"),
        }
    }
    // Compressions we do not read are named, not misread.
    let xz = dir.path().join("x.db");
    std::fs::write(&xz, [0xfd, b'7', b'z', b'X', b'Z', 0, 1, 2]).unwrap();
    assert_eq!(
        SyncRepo::load("x", &xz).unwrap_err().kind(),
        "not_supported"
    );
    // Garbage is damage, not a panic.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![7u8; 3000]).unwrap();
    assert!(SyncRepo::load("j", &junk).is_err());
    // A corrupt local entry is skipped and reported; the rest of the system still answers.
    let s = crate::support::scratch(&repos());
    let entry = s.dir.path().join("db/local/broken-1-1");
    std::fs::create_dir(&entry).unwrap();
    std::fs::write(entry.join("desc"), "%NAME%\nbroken\n\n%SIZE%\nhuge\n").unwrap();
    let snap = snapshot_for(&s.conf);
    assert_eq!(snap.local.skipped.len(), 1);
    assert_eq!(snap.local.skipped[0].entry, "broken-1-1");
    assert!(snap.local.get("editor-one").is_some());
}

#[test]
fn unknown_repo_is_typed() {
    let snap = snapshot();
    let err = archgate_pacman::search::search(&snap, "x", Some("nope"), TermMode::Pacman, 10)
        .unwrap_err();
    match err {
        PacmanError::UnknownRepo { repo, known } => {
            assert_eq!(repo, "nope");
            assert_eq!(known, ["agcore", "agextra"]);
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        archgate_pacman::info::info(&snap, "nope/zlib-lite")
            .unwrap_err()
            .kind(),
        "unknown_repo"
    );
}

#[test]
fn unreadable_or_broken_conf_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    // A directory cannot be read as a file (root reads any file, so permissions cannot show it).
    let err = PacmanConf::load(dir.path()).unwrap_err();
    assert_eq!(err.kind(), "unreadable");
    assert_eq!(
        PacmanConf::load(&dir.path().join("absent.conf"))
            .unwrap_err()
            .kind(),
        "not_found"
    );
    let bad = dir.path().join("bad.conf");
    std::fs::write(&bad, "[options]\nRootDir = /\n[ ]\n").unwrap();
    assert!(matches!(
        PacmanConf::load(&bad).unwrap_err(),
        PacmanError::ConfMalformed { line: 3, .. }
    ));
    let inc = dir.path().join("inc.conf");
    std::fs::write(
        &inc,
        "[options]\n[core]\nInclude = /nonexistent/mirrorlist\n",
    )
    .unwrap();
    let err = PacmanConf::load(&inc).unwrap_err();
    assert!(
        matches!(err, PacmanError::ConfUnreadable { ref path, .. } if path.ends_with("mirrorlist"))
    );
}

#[test]
fn fixture_conf_is_read_like_pacman() {
    let conf = PacmanConf::load(&fixture().join("pacman.conf")).unwrap();
    assert_eq!(conf.db_path, fixture().join("db"));
    assert_eq!(conf.root_dir, fixture().join("root"));
    assert_eq!(conf.arch, "x86_64");
    assert_eq!(conf.ignore_pkg, ["python-plugins"]);
    assert_eq!(conf.ignore_group, ["network-extra"]);
    assert_eq!(conf.files.len(), 2, "conf and the included mirrorlist");
    let extra = conf.repo("agextra").unwrap();
    assert_eq!(
        extra.servers,
        [format!(
            "file://{}/agextra/os/x86_64",
            fixture().join("repos").display()
        )]
    );
    let snap = Snapshot::load(std::sync::Arc::new(conf), None).unwrap();
    assert!(snap.missing.is_empty());
}
