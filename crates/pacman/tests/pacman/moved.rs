//! The fixture world is built for one place: its `pacman.conf` and mirror lists name paths inside
//! its own directory. A target directory copied or moved elsewhere (a CI cache seeding another
//! user's target with `cp -a`, a clone moved) carries a finished world whose paths point back to
//! where it was built; `build-repo.sh` must rebuild it for its new place rather than trust the
//! `.done` stamp (issue 36: a normal user's run from a moved target dir failed 13 pacman tests
//! with "mirrorlist not found" at the old clone's path).

use std::process::Command;

use archgate_pacman::PacmanConf;

#[test]
fn a_fixture_world_copied_elsewhere_is_rebuilt_for_its_new_place() {
    let built = crate::support::fixture();
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("pacman-fixture");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(built)
        .arg(&moved)
        .status()
        .expect("cp");
    assert!(cp.success());
    let script = crate::manifest_dir().join("tests/fixtures/build-repo.sh");
    let status = Command::new("bash")
        .arg(&script)
        .arg(&moved)
        .status()
        .expect("build-repo.sh");
    assert!(status.success());

    let conf = PacmanConf::load(&moved.join("pacman.conf"))
        .expect("the moved world's pacman.conf loads at its new place");
    let text = std::fs::read_to_string(moved.join("pacman.conf")).unwrap();
    assert!(
        !text.contains(&built.display().to_string()),
        "the moved world still names where it was built:\n{text}"
    );
    assert!(
        conf.db_path.starts_with(&moved),
        "{}",
        conf.db_path.display()
    );
}
