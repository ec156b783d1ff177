//! Presence's own tests: the stat parser, polkit's answers, and — through a root and a bus only
//! these tests can set — that root's files decide whether presence applies and that, once it
//! does, every failure to reach polkit refuses.

use super::polkit::outcome;
use super::root::{ACTIONS_FILE, POLKITD, Probe};
use super::*;
use std::path::{Path, PathBuf};

#[test]
fn start_time_is_field_22_whatever_the_name() {
    // The shape of /proc/PID/stat (proc(5)); the name holds a space and a parenthesis.
    let stat = "4242 (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
    assert_eq!(start_time(stat), Some(987654));
    assert_eq!(start_time("4242 (x) S 1"), None);
    assert_eq!(start_time("no parenthesis"), None);
}

#[test]
fn this_process_has_a_start_time() {
    let me = Subject::this_process().unwrap();
    assert_eq!(me.pid, std::process::id());
    assert!(me.start_time > 0);
}

#[test]
fn only_an_authorization_goes_ahead() {
    assert!(outcome(true, false).is_ok());
    assert!(matches!(outcome(false, true), Err(PresenceError::NoAgent)));
    assert!(matches!(
        outcome(false, false),
        Err(PresenceError::NotAuthorized)
    ));
}

/// A root of our own: archgate's actions file (owned by this test's uid, standing for
/// root's; mode 0644) and, when `polkitd`, polkit's daemon.
fn root(actions: bool, polkitd: bool) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    if actions {
        let f = t.path().join(ACTIONS_FILE);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, "<policyconfig/>\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    if polkitd {
        let d = t.path().join(POLKITD[0]);
        std::fs::create_dir_all(d.parent().unwrap()).unwrap();
        std::fs::write(&d, "").unwrap();
    }
    t
}

fn probe(root: &Path, bus: PathBuf) -> Probe {
    Probe {
        root: root.to_owned(),
        owner: nix::unistd::getuid().as_raw(),
        bus,
    }
}

/// A socket file nobody listens on: bound, then closed (connecting is refused, as when a
/// same-user process holds every system-bus connection this uid may open).
fn dead_bus(dir: &Path) -> PathBuf {
    let p = dir.join("dead-bus.sock");
    drop(std::os::unix::net::UnixListener::bind(&p).unwrap());
    p
}

/// One confirmation at a time is the module's rule (`IN_FLIGHT`): these tests take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every yes that needs presence under each setting.
const WEIGHTY: [(Presence, Act); 6] = [
    (
        Presence::Auto,
        Act::Allow(archgate_policy::Tier::Destructive),
    ),
    (Presence::Auto, Act::AllowAlways(archgate_policy::Tier::Act)),
    (Presence::Auto, Act::DevModeOn),
    (Presence::Auto, Act::ChangeClient),
    (Presence::Polkit, Act::Allow(archgate_policy::Tier::Read)),
    (Presence::Polkit, Act::DevModeOn),
];

/// Issue 33, item 5 ("a failure to reach a checker is read as the checker's absence"):
/// with archgate's actions installed, a bus that cannot be reached refuses every yes that
/// needs presence — under `auto` too, where it once let `approve` of a destructive route and
/// `dev-mode on` through as "presence not available".
#[tokio::test]
async fn an_unreachable_bus_refuses_once_presence_applies() {
    let _serial = SERIAL.lock().await;
    let r = root(true, true);
    let p = probe(r.path(), dead_bus(r.path()));
    assert!(matches!(p.installed(), Installed::Yes));
    for (setting, act) in WEIGHTY {
        let e = confirm_at(
            &p,
            setting,
            act,
            Subject::this_process().map_err(|e| e.to_string()),
            Duration::from_secs(5),
        )
        .await
        .expect_err(&format!(
            "{setting:?} {act:?} went through with the bus out of reach"
        ));
        assert_eq!(e.kind(), "presence_unreachable", "{setting:?} {act:?}: {e}");
    }
    // What needs no presence still goes ahead: the bus is not consulted for it.
    let ok = confirm_at(
        &p,
        Presence::Auto,
        Act::Allow(archgate_policy::Tier::Act),
        Err("none".into()),
        Duration::ZERO,
    )
    .await;
    assert_eq!(ok.unwrap(), Confirmed::NotNeeded);
}

/// The same, with the bus reachable but never answering (it accepts and says nothing, as a
/// bus too busy for this uid would): refused once the connect bound passes.
#[tokio::test]
async fn a_bus_that_never_answers_refuses_once_presence_applies() {
    let _serial = SERIAL.lock().await;
    let r = root(true, true);
    let path = r.path().join("silent-bus.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let held = tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            kept.push(s);
        }
    });
    let p = probe(r.path(), path);
    let e = confirm_at(
        &p,
        Presence::Auto,
        Act::DevModeOn,
        Subject::this_process().map_err(|e| e.to_string()),
        Duration::from_secs(5),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), "presence_unreachable", "{e}");
    held.abort();
}

/// Whether presence applies is read from root's files: without archgate's actions (or
/// without polkitd) `auto` lets a yes through and `polkit` refuses; a file at the actions'
/// place that root does not vouch for refuses under both.
#[tokio::test]
async fn root_s_files_decide_whether_presence_applies() {
    let _serial = SERIAL.lock().await;
    let subject = || Subject::this_process().map_err(|e| e.to_string());
    let destructive = Act::Allow(archgate_policy::Tier::Destructive);
    for (actions, polkitd) in [(false, true), (true, false), (false, false)] {
        let r = root(actions, polkitd);
        let p = probe(r.path(), dead_bus(r.path()));
        assert!(
            matches!(p.installed(), Installed::No(_)),
            "{actions} {polkitd}"
        );
        let auto = confirm_at(
            &p,
            Presence::Auto,
            destructive,
            subject(),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(
            auto.unwrap(),
            Confirmed::NotInstalled,
            "{actions} {polkitd}"
        );
        let strict = confirm_at(
            &p,
            Presence::Polkit,
            destructive,
            subject(),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(strict.unwrap_err().kind(), "presence_unavailable");
    }
    // Writable by others: not root's word.
    let r = root(true, true);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        r.path().join(ACTIONS_FILE),
        std::fs::Permissions::from_mode(0o664),
    )
    .unwrap();
    let p = probe(r.path(), dead_bus(r.path()));
    assert!(matches!(p.installed(), Installed::Untrusted(_)));
    let e = confirm_at(
        &p,
        Presence::Auto,
        destructive,
        subject(),
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(e.unwrap_err().kind(), "presence_unavailable");
    // Another owner than the one root's files must have.
    let r = root(true, true);
    let mut p = probe(r.path(), dead_bus(r.path()));
    p.owner = p.owner.wrapping_add(1);
    assert!(matches!(p.installed(), Installed::Untrusted(_)));
    // The machine's own probe reads the fixed paths.
    let system = Probe::system();
    assert_eq!(system.root, PathBuf::from("/"));
    assert_eq!(system.owner, 0);
    assert_eq!(system.bus, PathBuf::from("/run/dbus/system_bus_socket"));
}

#[tokio::test]
async fn a_no_never_asks_polkit() {
    // No subject and (possibly) no polkit: a no goes ahead, under the strictest setting.
    for act in [Act::Deny, Act::DevModeOff, Act::RevokeRule] {
        confirm(Presence::Polkit, act, Err("none".into()), Duration::ZERO)
            .await
            .unwrap();
    }
    confirm(
        Presence::Off,
        Act::DevModeOn,
        Err("none".into()),
        Duration::ZERO,
    )
    .await
    .unwrap();
}
