//! Class: *a program that elevates as its purpose judged as an ordinary program* — Omarchy 4's
//! `pkg aur add` is `yay -S --noconfirm --needed "$@"`: yay builds the package (its PKGBUILD runs
//! as the person) and runs `sudo pacman` itself, yet the route was `act`, so developer mode built
//! and installed any AUR package (attack 5a F8, attack 5b F6). AUR helpers (`yay`, `paru`,
//! `pikaur`, `trizen`, `aura`, `pamac`) and `makepkg -s/-i/-r` count as elevators, in the
//! privilege check every argv meets and in the script analysis.
//!
//! What it tries, against the real binary and a fixture Omarchy whose scripts do what Omarchy
//! 4's do (our own text in their shape): `pkg aur add x`, a route whose helper script runs
//! `paru -S`, and one that runs `makepkg -si`, each allowed by the person's policy, are blocked (a hand-off, never `act`) and nothing runs; a route whose script
//! only asks yay (`yay -Qi`) is not.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

#[test]
fn a_route_that_builds_from_the_aur_is_blocked() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "pkg aur add",
                args: "<packages...>",
            },
            Entry {
                words: "install thing",
                args: "",
            },
            Entry {
                words: "dev pkg build",
                args: "",
            },
            Entry {
                words: "pkg aur info",
                args: "<package>",
            },
        ],
        "[policy]\nallow = [\"omarchy pkg aur add\", \"omarchy install thing\", \"omarchy dev pkg build\", \"omarchy pkg aur info\"]",
    );
    rig.set_script(
        "omarchy-pkg-aur-add",
        "yay -S --noconfirm --needed \"$@\" || exit 1",
    );
    rig.set_script("omarchy-install-thing", "omarchy-helper-build thing");
    rig.set_script("omarchy-helper-build", "paru -S --noconfirm \"$1\"");
    rig.set_script(
        "omarchy-dev-pkg-build",
        "cd \"$HOME/src\" && makepkg -si --noconfirm",
    );
    rig.set_script("omarchy-pkg-aur-info", "yay -Qi \"$1\"");
    for (route, args) in [
        ("pkg aur add", json!(["some-aur-package"])),
        ("install thing", json!([])),
        ("dev pkg build", json!([])),
    ] {
        let (r, _) = rig
            .env
            .call("omarchy_run", &json!({"route": route, "args": args}));
        assert_eq!(outcome(&r), "refused", "{route}: {r}");
        assert!(r.to_string().contains("root"), "{route}: {r}");
        assert!(rig.ran().is_empty(), "{route} ran");
    }
    // Asking yay about a package elevates nothing: it runs.
    let (r, _) = rig.env.call(
        "omarchy_run",
        &json!({"route": "pkg aur info", "args": ["x"]}),
    );
    assert_eq!(outcome(&r), "ok", "{r}");
}
