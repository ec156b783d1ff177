//! Class: *a directory trusted for the program archgate names is also the front of the `PATH` its
//! scripts search* (attack 33 F6). Omarchy's `bin/` in a git install is the person's, so an agent
//! writing in the home can drop a file there; with that directory first on the children's
//! `PATH`, a `date` dropped beside Omarchy's scripts ran inside a read route — no question, no
//! developer mode — as the person.
//!
//! What it tries, against the real binary and a fixture Omarchy (`support/omarchy.rs`) whose
//! `bin/` is not root's (the person's; nobody's when the tests run as root): a route whose script
//! calls `date` and an `omarchy-*` helper by name, with a `date` planted in that `bin/` that
//! leaves a mark. The route's `date` is root's `/usr/bin/date` and the planted one never runs;
//! the helper, a name no root directory has, is still found in Omarchy's `bin/`.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

#[test]
fn a_command_planted_beside_omarchys_scripts_never_stands_in_for_roots() {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "t status",
            args: "",
        }],
        "[policy]\nallow = [\"omarchy t status\"]",
    );
    let bin = rig.env.path("scratch/omarchy/bin");
    let mark = rig.env.path("scratch/planted-ran");
    rig.set_script(
        "omarchy-t-status",
        "date +%Y-was-the-year\nomarchy-t-helper",
    );
    rig.set_script("omarchy-t-helper", "echo helper-reached");
    let planted = bin.join("date");
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh\necho \"planted date ran as $(id -u)\" > {}\necho PLANTED\n",
            mark.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    if nix::unistd::geteuid().is_root() {
        // Run as root, the fixture's directory would be root's: make it someone else's, as it is
        // the person's on a desktop.
        nix::unistd::chown(&bin, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    let (r, _) = rig
        .env
        .call("omarchy_run", &json!({"route": "t status", "args": []}));
    assert_eq!(outcome(&r), "ok", "{r}");
    let text = r.to_string();
    assert!(
        text.contains("-was-the-year"),
        "root's date printed: {text}"
    );
    assert!(
        !text.contains("PLANTED"),
        "the planted date answered: {text}"
    );
    assert!(
        !mark.exists(),
        "the planted date ran: {}",
        std::fs::read_to_string(&mark).unwrap_or_default()
    );
    assert!(
        text.contains("helper-reached"),
        "Omarchy's own helper: {text}"
    );
    assert_eq!(rig.ran(), ["omarchy-t-status ", "omarchy-t-helper "]);
}
