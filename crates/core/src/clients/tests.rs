//! The client store, tried: tokens stored as hashes, changes noticed, identities judged (`clients.rs`).

use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn first_run_token_is_256_bits_0600_and_authenticates_default() {
    let t = tempfile::tempdir().unwrap();
    let s = ClientStore::open(&t.path().join("token"), &t.path().join("clients.json")).unwrap();
    let tok = s.default_token();
    assert_eq!(tok.len(), 64);
    assert_eq!(
        std::fs::metadata(t.path().join("token"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let cfg = Config::default();
    assert_eq!(s.authenticate(&tok, &cfg).unwrap().name, "default");
    assert!(s.authenticate("wrong", &cfg).is_none());
    assert!(s.authenticate("", &cfg).is_none());
    // Re-opening keeps the token.
    let s2 = ClientStore::open(&t.path().join("token"), &t.path().join("clients.json")).unwrap();
    assert_eq!(s2.default_token(), tok);
}

#[test]
fn added_clients_store_only_hashes_and_can_be_revoked_and_renamed() {
    let t = tempfile::tempdir().unwrap();
    let s = ClientStore::open(&t.path().join("token"), &t.path().join("clients.json")).unwrap();
    let tok = s.add("chat", "read-only", None).unwrap();
    let stored = std::fs::read_to_string(t.path().join("clients.json")).unwrap();
    assert!(!stored.contains(&tok), "the token itself is never stored");
    let cfg = Config::default();
    let c = s.authenticate(&tok, &cfg).unwrap();
    assert_eq!(c.name, "chat");
    assert!(!c.grant.permits("theme", archgate_policy::Tier::Act));
    assert!(s.add("chat", "full", None).is_err());
    assert_eq!(
        s.add("bad name", "full", None).unwrap_err().kind(),
        "invalid_name"
    );
    s.rename("chat", "chat2").unwrap();
    assert_eq!(s.authenticate(&tok, &cfg).unwrap().name, "chat2");
    s.revoke("chat2").unwrap();
    assert!(s.authenticate(&tok, &cfg).is_none());
}

/// Attack 23: what a token left waiting is judged by the token. `holds` says no once the
/// token is revoked or rotated — `default`'s included, whose name stays — and yes for a
/// renamed client's; a rename another process made is told to this one's `on_renamed` when
/// it re-reads the files (F3: the daemon's budget counts follow a CLI rename).
#[test]
fn a_tokens_identity_outlives_a_rename_not_a_rotation_and_another_processs_rename_is_told() {
    let t = tempfile::tempdir().unwrap();
    let (token, clients) = (t.path().join("token"), t.path().join("clients.json"));
    let server = ClientStore::open(&token, &clients).unwrap();
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = told.clone();
    server.on_renamed(move |from, to| seen.lock().unwrap().push((from.to_owned(), to.to_owned())));
    let cli = ClientStore::open(&token, &clients).unwrap();
    let cfg = Config::default();
    let phone = cli.add("phone", "read-only", None).unwrap();
    server.reload();
    let id = server.authenticate(&phone, &cfg).unwrap().token.unwrap();
    let default = server
        .authenticate(&server.default_token(), &cfg)
        .unwrap()
        .token
        .unwrap();
    assert!(server.holds(&id) && server.holds(&default));

    cli.rename("phone", "phone2").unwrap();
    server.reload();
    assert_eq!(
        *told.lock().unwrap(),
        vec![("phone".to_owned(), "phone2".to_owned())]
    );
    assert!(
        server.holds(&id),
        "a renamed client's token still authenticates"
    );

    cli.revoke("default").unwrap();
    cli.revoke("phone2").unwrap();
    cli.add("phone2", "read-only", None).unwrap();
    server.reload();
    assert!(!server.holds(&default), "the rotated default token");
    assert!(
        !server.holds(&id),
        "the revoked token, its name given again"
    );
    assert_eq!(
        told.lock().unwrap().len(),
        1,
        "no rename in a revoke and an add"
    );
}

/// Issue 34: a server notices a revocation by inotify, not by the files' `mtime`s: a
/// clients file replaced by the CLI with its `mtime` set back (as a restore from a backup
/// does) is noticed too, and the revoked token is refused on a request after the change.
#[test]
fn a_revocation_is_noticed_by_the_watch_even_with_the_mtime_set_back() {
    let t = tempfile::tempdir().unwrap();
    let (token, clients) = (t.path().join("token"), t.path().join("clients.json"));
    let server = ClientStore::open(&token, &clients).unwrap();
    assert!(server.watch(), "inotify works here");
    let cli = ClientStore::open(&token, &clients).unwrap();
    let cfg = Config::default();
    let tok = cli.add("chat", "read-only", None).unwrap();
    // Bounded waits: the watch's thread counts the change a moment after it is made.
    let eventually = |f: &dyn Fn() -> bool| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !f() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        f()
    };
    let request = || {
        server.reload_if_changed();
        server.authenticate(&tok, &cfg).is_some()
    };
    assert!(eventually(&request), "the added client is known");
    let added = std::fs::metadata(&clients).unwrap().modified().unwrap();
    cli.revoke("chat").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&clients)
        .unwrap()
        .set_modified(added)
        .unwrap();
    assert_eq!(
        mtime(&clients),
        Some(added),
        "the mtime says nothing changed"
    );
    assert!(eventually(&|| !request()), "the revoked token is refused");
}
