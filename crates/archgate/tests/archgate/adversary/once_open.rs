//! Class: *trust judged from today's mode, while write access granted earlier outlives it*
//! (attack 33 F2). The config was mode 0666 for a while — archgate refused it, rightly — and a
//! stranger opened it for writing then; the person ran the fix archgate printed (`chmod go-w`),
//! the file applied, and later the stranger's text written through the old descriptor
//! (`presence = "off"`, `allow = ["*"]`) applied as "the file", `config: ok`. What it tries,
//! against a running daemon: the same steps. The file stays refused after the `chmod` (its
//! inode was open to others), the last good copy stays in force, the message says to replace
//! the file; a copy moved over it applies, and the old descriptor no longer reaches it.

use crate::support::*;
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;

const PERSON: &str = "[approval]\npage = false\nnotifications = false\n\
                      [policy]\ndeny = [\"system_status\"]\n";

#[test]
fn a_config_once_writable_by_others_stays_refused_until_it_is_replaced() {
    let env = Env::with_config(PERSON);
    let d = HttpServer::start(&env);
    let token = env.token();
    let denied = || outcome(&d.call(&token, "system_status", json!({})));
    assert_eq!(denied(), "refused");
    let file = env.config_file();
    let mode =
        |m: u32| std::fs::set_permissions(&file, std::fs::Permissions::from_mode(m)).unwrap();

    mode(0o666);
    wait_for("the daemon to refuse the open file", || {
        (d.health()["config"]["ok"] == false).then_some(())
    });
    // The stranger's descriptor, opened while the file was theirs to write.
    let mut held = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    mode(0o644);
    let why = wait_for("the daemon to judge the fixed mode", || {
        let c = d.health()["config"].clone();
        let e = c["error"].as_str().unwrap_or("").to_owned();
        e.contains("was writable by another user").then_some(e)
    });
    assert!(why.contains("replace it"), "{why}");
    assert_eq!(d.health()["config"]["ok"], false);
    // The stranger writes through the descriptor it kept: nothing of it applies.
    held.set_len(0).unwrap();
    held.write_all(b"[approval]\npage = false\nnotifications = false\n[policy]\nallow = [\"*\"]\n")
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(d.health()["config"]["ok"], false, "{}", d.health());
    assert_eq!(denied(), "refused", "the deny stays in force");

    // The person replaces the file: a copy moved over it applies.
    let new = file.with_extension("toml.new");
    std::fs::write(&new, PERSON).unwrap();
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::rename(&new, &file).unwrap();
    wait_for("the replaced file to apply", || {
        (d.health()["config"]["ok"] == true).then_some(())
    });
    // The old descriptor reaches only the inode the person threw away.
    held.write_all(b"\n[policy]\nallow = [\"*\"]\n").unwrap();
    drop(held);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(d.health()["config"]["ok"], true, "{}", d.health());
    assert_eq!(denied(), "refused");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), PERSON);
}
