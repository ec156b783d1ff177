//! Class: *trust judged from the mode* — its member "a file of Omarchy's tree a trusted script
//! reaches as code", by the doors round 36 found around the tree's judgement (attack 36 F2, F5,
//! F6): the tree judged at the daemon's own `OMARCHY_PATH` while routes ran from the install the
//! config names (F5); Omarchy's dispatcher run to load the registry — for a read,
//! `omarchy_search` — before any judgement (F6); a link to a directory never walked, and a link
//! to nothing passed (F2). What it tries, with the trust rule on: each refuses before anything
//! of Omarchy's runs, and the control beside it runs.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

/// The rig with the trust rule on, the route sourcing `lib/common.sh` (the person's, 0644).
fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "t src",
            args: "",
        }],
        "",
    );
    rig.trust_on("[policy]\nallow = [\"omarchy t src\"]");
    let lib = rig.env.path("scratch/omarchy/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("common.sh"), "true\n").unwrap();
    mode(&lib.join("common.sh"), 0o644);
    rig.set_script(
        "omarchy-t-src",
        ". \"$OMARCHY_PATH/lib/common.sh\"\ndate +%s",
    );
    rig
}

fn mode(p: &std::path::Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

fn run(rig: &OmarchyRig) -> serde_json::Value {
    rig.env
        .call("omarchy_run", &json!({"route": "t src", "args": []}))
        .0
}

/// F5: the install the config names, with no `OMARCHY_PATH` in archgate's environment, is the
/// tree judged — the one the route's scripts are found in and given.
#[test]
fn the_install_the_config_names_is_the_tree_judged() {
    let mut r = rig();
    let omarchy = r.env.path("scratch/omarchy");
    r.env.vars.retain(|(k, _)| k != "OMARCHY_PATH");
    r.trust_on(&format!(
        "[policy]\nallow = [\"omarchy t src\"]\n[desktop]\nomarchy_path = \"{}\"",
        omarchy.display()
    ));
    let out = run(&r);
    assert_eq!(outcome(&out), "ok", "the control: {out}");
    let _ = r.ran();
    mode(&omarchy.join("lib/common.sh"), 0o666);
    let out = run(&r);
    assert_ne!(outcome(&out), "ok", "{out}");
    assert!(out.to_string().contains("common.sh"), "{out}");
    assert!(r.ran().is_empty(), "something ran");
}

/// F6: Omarchy's dispatcher is Omarchy's code too; the registry is not loaded by running it while
/// the tree fails — not for `omarchy_search`, a read no one is asked about.
#[test]
fn the_registry_is_not_loaded_by_running_a_tree_another_user_could_write() {
    let rig = rig();
    let omarchy = rig.env.path("scratch/omarchy");
    let mark = rig.env.path("scratch/dispatcher-ran");
    std::fs::write(
        omarchy.join("lib/reg.sh"),
        format!("echo \"$1\" >> {}\n", mark.display()),
    )
    .unwrap();
    mode(&omarchy.join("lib/reg.sh"), 0o644);
    let dispatcher = std::fs::read_to_string(omarchy.join("bin/omarchy")).unwrap();
    let dispatcher = dispatcher.replacen(
        "\n",
        &format!("\n. \"{}/lib/reg.sh\"\n", omarchy.display()),
        1,
    );
    std::fs::write(omarchy.join("bin/omarchy"), dispatcher).unwrap();
    let search = || rig.env.call("omarchy_search", &json!({"query": "src"})).0;
    let out = search();
    assert_eq!(outcome(&out), "ok", "the control: {out}");
    assert!(mark.exists(), "the control: the dispatcher sources reg.sh");
    std::fs::remove_file(&mark).unwrap();
    mode(&omarchy.join("lib/reg.sh"), 0o666);
    let out = search();
    assert_ne!(outcome(&out), "ok", "{out}");
    assert!(out.to_string().contains("reg.sh"), "{out}");
    assert!(!mark.exists(), "the dispatcher ran another user's file");
}

/// F2: a link to a directory is walked as a directory of the tree; a link to nothing is judged
/// by who may create its end.
#[test]
fn links_in_the_tree_are_judged_by_everything_they_reach() {
    let rig = rig();
    let omarchy = rig.env.path("scratch/omarchy");
    let ext = rig.env.path("scratch/ext");
    std::fs::create_dir_all(ext.join("sub")).unwrap();
    mode(&ext, 0o755);
    mode(&ext.join("sub"), 0o755);
    std::os::unix::fs::symlink(&ext, omarchy.join("lib/ext")).unwrap();
    let out = run(&rig);
    assert_eq!(outcome(&out), "ok", "the control: {out}");
    let _ = rig.ran();
    mode(&ext.join("sub"), 0o777);
    let out = run(&rig);
    assert_ne!(outcome(&out), "ok", "{out}");
    assert!(out.to_string().contains("sub"), "{out}");
    assert!(rig.ran().is_empty(), "something ran");
    mode(&ext.join("sub"), 0o755);
    // A link to nothing, in a directory anyone may write: whoever makes its end writes code.
    let open = rig.env.path("scratch/open");
    std::fs::create_dir_all(&open).unwrap();
    mode(&open, 0o777);
    std::os::unix::fs::symlink(open.join("later.sh"), omarchy.join("lib/later.sh")).unwrap();
    let out = run(&rig);
    assert_ne!(outcome(&out), "ok", "{out}");
    assert!(out.to_string().contains("later.sh"), "{out}");
    assert!(rig.ran().is_empty(), "something ran");
}

/// F2's race: the tree is judged again as the route's program starts — a file made writable by
/// others while the question waited refuses the run after the person's yes.
#[test]
fn the_tree_is_judged_again_when_the_approved_route_starts() {
    let rig = rig();
    // No standing allow: the call waits for the person.
    rig.trust_on("");
    let env = &rig.env;
    let mut s = crate::support::StdioServer::session(env);
    s.call(1, "omarchy_run", json!({"route": "t src", "args": []}));
    let q = env.one_pending();
    mode(&env.path("scratch/omarchy/lib/common.sh"), 0o666);
    let yes = env.run(&["approve", q["id"].as_str().unwrap()]);
    assert!(yes.status.success(), "{}", crate::support::text(&yes));
    let (ok, body) = crate::support::result_text(&s.response(1));
    assert!(!ok, "{body}");
    assert!(body.contains("common.sh"), "{body}");
    assert!(rig.ran().is_empty(), "ran after the tree changed");
}
