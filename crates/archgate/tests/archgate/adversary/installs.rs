//! Class: *a route that installs code that runs later, judged by what its script does now* —
//! `hook install <type> <file>` copies a file where Omarchy runs it (and with `type =
//! ../../systemd/user/pipewire.service`, into a systemd drop-in), `theme install <repo>` clones a
//! repository whose files terminals and the editor load as code; both were `act`, so developer
//! mode planted code that ran at the next login or `nvim` (attack 5a F8, attack 5b F5).
//!
//! What it tries, against the real binary and a fixture Omarchy whose scripts do what Omarchy
//! 4's do (our own text in their shape: `omarchy-hook-install` builds
//! `$HOME/.config/omarchy/hooks/$HOOK_TYPE.d`, copies the file there and `chmod 755`s it;
//! `omarchy-theme-install` removes `$THEMES_DIR/$THEME_NAME` and `git clone`s the URL there):
//! each install is destructive whatever its values — the person, never developer mode — a hook
//! type that climbs is refused before anyone is asked, and so is a hook file another user owns or
//! could swap (a link or a directory on its way that another user can write).

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, outcome, result_text, text};

fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "hook install",
                args: "<type> <file>",
            },
            Entry {
                words: "theme install",
                args: "[git-repo-url]",
            },
            // Attack 35 F6's two shapes: the file copied to a name of the script's own, and a
            // directory copied whole.
            Entry {
                words: "hook put",
                args: "<type> <file>",
            },
            Entry {
                words: "hook set",
                args: "<type> <dir>",
            },
            // Attack 36 F1's shapes, installing without a copy program and an exec bit both, and
            // F4's, reading its value after `cd`.
            Entry {
                words: "hook keep",
                args: "<file>",
            },
            Entry {
                words: "hook cat",
                args: "<file>",
            },
            Entry {
                words: "autostart add",
                args: "<file>",
            },
            Entry {
                words: "hook unpack",
                args: "<file>",
            },
            Entry {
                words: "hook fetched",
                args: "<name>",
            },
        ],
        "",
    );
    rig.set_script(
        "omarchy-hook-install",
        "HOOK_TYPE=$1\nHOOK_FILE=$2\nHOOK_DIR=\"$HOME/.config/omarchy/hooks/$HOOK_TYPE.d\"\n\
         HOOK_PATH=\"$HOOK_DIR/$(basename \"$HOOK_FILE\")\"\nmkdir -p \"$HOOK_DIR\"\n\
         cp \"$HOOK_FILE\" \"$HOOK_PATH\"\nchmod 755 \"$HOOK_PATH\"",
    );
    rig.set_script(
        "omarchy-theme-install",
        "REPO_URL=\"$1\"\nTHEMES_DIR=\"$HOME/.config/omarchy/themes\"\n\
         THEME_NAME=$(basename \"$REPO_URL\" .git | sed -E 's/^omarchy-//; s/-theme$//')\n\
         THEME_PATH=\"$THEMES_DIR/$THEME_NAME\"\nrm -rf \"$THEME_PATH\"\n\
         git clone \"$REPO_URL\" \"$THEME_PATH\"",
    );
    rig.set_script(
        "omarchy-hook-put",
        "T=$1\nF=$2\nD=\"$HOME/.config/omarchy/hooks/$T.d\"\nmkdir -p \"$D\"\n\
         cp \"$F\" \"$D/x\"\nchmod 755 \"$D/x\"",
    );
    let d = "D=\"$HOME/.config/omarchy/hooks/post-update.d\"\nmkdir -p \"$D\"\n";
    rig.set_script("omarchy-hook-keep", &format!("{d}cp \"$1\" \"$D/x\""));
    rig.set_script(
        "omarchy-hook-cat",
        &format!("{d}cat \"$1\" > \"$D/xc\"\nchmod +x \"$D/xc\""),
    );
    rig.set_script(
        "omarchy-autostart-add",
        "mkdir -p \"$HOME/.config/autostart\"\ncp \"$1\" \"$HOME/.config/autostart/\"",
    );
    rig.set_script(
        "omarchy-hook-unpack",
        &format!("{d}tar -xf \"$1\" -C \"$D\""),
    );
    rig.set_script(
        "omarchy-hook-fetched",
        &format!("{d}cd /tmp || exit 1\ncp \"$1\" \"$D/dl\"\nchmod +x \"$D/dl\""),
    );
    rig.set_script(
        "omarchy-hook-set",
        "T=$1\nS=$2\nD=\"$HOME/.config/omarchy/hooks/$T.d\"\nmkdir -p \"$D\"\n\
         cp -r \"$S\" \"$D/\"\nchmod -R 755 \"$D\"",
    );
    rig
}

fn explain(rig: &OmarchyRig, route: &str, args: serde_json::Value) -> String {
    let req = json!({"route": route, "args": args}).to_string();
    text(&rig.env.run(&["policy", "explain", "omarchy_run", &req]))
}

#[test]
fn a_route_that_installs_code_is_destructive_whatever_its_values() {
    let rig = rig();
    let hook = rig.env.path("scratch/my-hook");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    let hook = hook.display().to_string();
    for (route, args) in [
        ("hook install", json!(["post-update", hook])),
        (
            "theme install",
            json!(["https://example.invalid/someone/omarchy-x-theme.git"]),
        ),
        // The empty name after Omarchy's own cleanup: the whole themes directory.
        (
            "theme install",
            json!(["https://example.invalid/someone/omarchy-.git"]),
        ),
    ] {
        let t = explain(&rig, route, args.clone());
        assert!(t.contains("tier:     destructive"), "{route} {args}: {t}");
    }
    // Under developer mode the install parks for the person; a no runs nothing.
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    s.call(
        1,
        "omarchy_run",
        json!({"route": "hook install", "args": ["post-update", hook]}),
    );
    let q = env.one_pending();
    assert_eq!(q["tier"], "destructive", "{q}");
    assert!(rig.ran().is_empty(), "ran before the person answered");
    let out = env.run(&["deny", q["id"].as_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "{body}");
    assert!(rig.ran().is_empty(), "ran after a no");
}

#[test]
fn a_hook_type_that_climbs_is_refused() {
    let rig = rig();
    let hook = rig.env.path("scratch/x.conf");
    std::fs::write(&hook, "[Service]\n").unwrap();
    let hook = hook.display().to_string();
    for ty in [
        "../../systemd/user/pipewire.service",
        "../../environment",
        "..",
    ] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "hook install", "args": [ty, hook]}),
        );
        assert_eq!(outcome(&r), "unresolved", "{ty}: {r}");
        assert!(r.to_string().contains("climb"), "{ty}: {r}");
        assert!(rig.ran().is_empty(), "{ty} ran");
    }
}

#[test]
fn a_file_another_user_owns_or_controls_is_not_installed_as_code() {
    use std::os::unix::fs::PermissionsExt;
    let rig = rig();
    // The person's own file, in their own directory: installed (asked as destructive).
    let own = rig.env.path("scratch/my-hook");
    std::fs::write(&own, "#!/bin/sh\nexit 0\n").unwrap();
    let asked = explain(&rig, "hook install", json!(["post-update", own]));
    assert!(asked.contains("tier:     destructive"), "{asked}");
    // A directory anyone can write (not sticky): whoever else writes there chooses the file
    // between the check and the copy — the person's own file in it, and a link there to it.
    let open = rig.env.path("scratch/open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let in_open = open.join("hook");
    std::fs::write(&in_open, "#!/bin/sh\nexit 0\n").unwrap();
    let link = open.join("link");
    std::os::unix::fs::symlink(&own, &link).unwrap();
    let mut planted = vec![
        (in_open.display().to_string(), "writable by group or others"),
        (link.display().to_string(), "writable by group or others"),
    ];
    // Another uid's file (root can make one: a scratch file given to `nobody`).
    if nix::unistd::geteuid().is_root() {
        let f = rig.env.path("scratch/planted.conf");
        std::fs::write(&f, "[Service]\nExecStartPre=/bin/true\n").unwrap();
        std::os::unix::fs::chown(&f, Some(65534), None).unwrap();
        planted.push((f.display().to_string(), "owned by uid 65534"));
    }
    for (file, why) in planted {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "hook install", "args": ["post-update", file]}),
        );
        assert_eq!(outcome(&r), "unresolved", "{file}: {r}");
        let t = r.to_string();
        assert!(
            t.contains("not yours alone") && t.contains(why),
            "{file}: {r}"
        );
    }
    assert!(rig.ran().is_empty(), "ran");
}

/// Attack 35 F6: every value of a code-installing route is judged as a file it may install — a
/// file copied to a name of the script's own, every entry of a directory copied whole, and a
/// relative value as the script sees it (routes run in `/`).
#[test]
fn a_file_installed_under_another_name_or_inside_a_directory_is_judged_too() {
    use std::os::unix::fs::PermissionsExt;
    let rig = rig();
    let open = rig.env.path("scratch/open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let in_open = open.join("hook");
    std::fs::write(&in_open, "#!/bin/sh\nexit 0\n").unwrap();
    // The person's own directory, holding a file anyone may rewrite until the copy.
    let set = rig.env.path("scratch/hookset");
    std::fs::create_dir(&set).unwrap();
    let loose = set.join("b.sh");
    std::fs::write(&loose, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o666)).unwrap();
    let relative = in_open.strip_prefix("/").unwrap().display().to_string();
    let mut refused = vec![
        ("hook put", in_open.display().to_string()),
        ("hook put", relative),
        ("hook set", set.display().to_string()),
    ];
    if nix::unistd::geteuid().is_root() {
        let f = rig.env.path("scratch/planted");
        std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
        std::os::unix::fs::chown(&f, Some(65534), None).unwrap();
        refused.push(("hook put", f.display().to_string()));
    }
    for (route, file) in &refused {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": route, "args": ["post-update", file]}),
        );
        assert_eq!(outcome(&r), "unresolved", "{route} {file}: {r}");
        assert!(r.to_string().contains("not yours"), "{route} {file}: {r}");
    }
    assert!(rig.ran().is_empty(), "ran");
    // The same routes with the person's own file and directory: asked, as destructive.
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o755)).unwrap();
    let own = rig.env.path("scratch/my-hook");
    std::fs::write(&own, "#!/bin/sh\nexit 0\n").unwrap();
    for (route, file) in [("hook put", &own), ("hook set", &set)] {
        let t = explain(&rig, route, json!(["post-update", file]));
        assert!(t.contains("tier:     destructive"), "{route}: {t}");
    }
}

/// Attack 36 F1: a route that installs a value's file without both a copy program and an exec bit
/// (`cp` keeps the source's mode; `cat >`; an autostart entry; `tar -x`) is judged the same —
/// every value of every route is; F4: a value a script reads after `cd` must be absolute.
#[test]
fn every_routes_file_values_are_judged_and_a_value_read_after_cd_must_be_absolute() {
    use std::os::unix::fs::PermissionsExt;
    let rig = rig();
    let open = rig.env.path("scratch/open36");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = open.join("hook");
    std::fs::write(&planted, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let planted = planted.display().to_string();
    for route in ["hook keep", "hook cat", "autostart add", "hook unpack"] {
        let (r, _) = rig
            .env
            .call("omarchy_run", &json!({"route": route, "args": [planted]}));
        assert_eq!(outcome(&r), "unresolved", "{route}: {r}");
        assert!(r.to_string().contains("not yours alone"), "{route}: {r}");
    }
    // The person's own file: judged and passed (asked or run as its tier says).
    let own = rig.env.path("scratch/own-hook");
    std::fs::write(&own, "#!/bin/sh\nexit 0\n").unwrap();
    let t = explain(&rig, "hook keep", json!([own]));
    assert!(!t.contains("not yours alone"), "{t}");
    // After `cd /tmp`, a bare or relative value names a file there: refused, whoever's it is.
    for value in ["hook", "open36/hook"] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "hook fetched", "args": [value]}),
        );
        assert_eq!(outcome(&r), "unresolved", "{value}: {r}");
        assert!(r.to_string().contains("absolute path"), "{value}: {r}");
    }
    assert!(rig.ran().is_empty(), "ran");
}
