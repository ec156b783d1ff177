//! Class: *trust judged from the mode* — its member "a file a trusted route script reaches by
//! name, or `source`s as code" (attack 34 F4). The trust rule judged the route's own script and
//! the directories on `PATH`, but a helper the script calls by name (`omarchy-t-helper`, 0777)
//! and an Omarchy file it sources (`$OMARCHY_PATH/lib/common.sh`, 0666) were judged by no one:
//! another user rewrote both, and the person's yes to the route — whose question names only the
//! route's script — ran that user's code. What it tries, with the trust rule on: both; each
//! refuses the route before anything runs, and a replaced helper runs again.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "t callh",
                args: "",
            },
            Entry {
                words: "t srcstat",
                args: "",
            },
        ],
        "",
    );
    // The trust rule on (the rig's default turns it off), and the routes allowed.
    rig.trust_on("[policy]\nallow = [\"omarchy t callh\", \"omarchy t srcstat\"]");
    rig
}

fn mode(p: &std::path::Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

#[test]
fn a_helper_or_sourced_file_another_user_could_write_runs_nothing() {
    let rig = rig();
    let bin = rig.env.path("scratch/omarchy/bin");
    rig.set_script("omarchy-t-callh", "omarchy-t-helper");
    rig.set_script("omarchy-t-helper", "echo helper-ran");
    let call = |route: &str| {
        rig.env
            .call("omarchy_run", &json!({"route": route, "args": []}))
            .0
    };
    let r = call("t callh");
    assert_eq!(outcome(&r), "ok", "{r}");
    assert_eq!(rig.ran(), ["omarchy-t-callh ", "omarchy-t-helper "]);

    let helper = bin.join("omarchy-t-helper");
    mode(&helper, 0o777);
    let r = call("t callh");
    assert_ne!(outcome(&r), "ok", "{r}");
    assert!(r.to_string().contains("omarchy-t-helper"), "{r}");
    assert!(rig.ran().is_empty(), "something ran");
    // (The mode fixed with the inode the same stays refused in the process that saw it open —
    // the daemon; `crates/exec/tests/exec/once_open.rs` holds that. Each `archgate call` here
    // is a process of its own.)
    // Replaced: it runs again.
    std::fs::remove_file(&helper).unwrap();
    rig.set_script("omarchy-t-helper", "echo helper-ran");
    let r = call("t callh");
    assert_eq!(outcome(&r), "ok", "{r}");

    // A file of Omarchy's that the route's script sources.
    let lib = rig.env.path("scratch/omarchy/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("common.sh"), "true\n").unwrap();
    mode(&lib.join("common.sh"), 0o644);
    rig.set_script(
        "omarchy-t-srcstat",
        "source \"$OMARCHY_PATH/lib/common.sh\"\ndate +%s",
    );
    let _ = rig.ran();
    let r = call("t srcstat");
    assert_eq!(outcome(&r), "ok", "{r}");
    mode(&lib.join("common.sh"), 0o666);
    let _ = rig.ran();
    let r = call("t srcstat");
    assert_ne!(outcome(&r), "ok", "{r}");
    assert!(r.to_string().contains("common.sh"), "{r}");
    assert!(rig.ran().is_empty(), "something ran");
}
