//! Class: *trust judged from the words that name a file* — the files a route's value reaches
//! (attack 37 F1, F2, F5, F6, F7): a value judged as the path it spells, while the script read a
//! pipe, a name it prefixed with a directory, a word of an unquoted value, a file it found in a
//! directory it moved to, or what a link in a directory value led to; and a file a route sources
//! from the person's home, shown as theirs. What it tries, with open files and directories (any
//! user may write them, so any user's file may be read there): each is refused before anyone is
//! asked; the person's own files pass.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

fn mode(p: &std::path::Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Routes in the shapes round 37 used; `open` is a directory anyone may write, named literally by
/// two of the scripts as Omarchy's name `/tmp`.
fn rig() -> (OmarchyRig, std::path::PathBuf) {
    let words = [
        "t keep",
        "t prefixed",
        "t moved",
        "t split",
        "t tree",
        "t sourced",
        "t byhome",
        "t joined",
    ];
    let entries: Vec<Entry> = words
        .iter()
        .map(|w| Entry {
            words: w,
            args: "<name>",
        })
        .collect();
    let rig = OmarchyRig::new(&entries, "");
    let open = rig.env.path("scratch/open");
    std::fs::create_dir_all(&open).unwrap();
    mode(&open, 0o777);
    let o = open.display();
    let d = "D=\"$HOME/.config/omarchy/hooks/post-update.d\"\nmkdir -p \"$D\"\n";
    rig.set_script("omarchy-t-keep", &format!("{d}cp \"$1\" \"$D/x\""));
    rig.set_script("omarchy-t-prefixed", &format!("{d}cp \"{o}/$1\" \"$D/x\""));
    rig.set_script(
        "omarchy-t-moved",
        &format!("{d}env -C {o} cp \"$1\" \"$D/x\""),
    );
    rig.set_script("omarchy-t-split", &format!("{d}cp $1 \"$D/\""));
    rig.set_script("omarchy-t-tree", &format!("{d}cp -rL \"$1\" \"$D/\""));
    rig.set_script(
        "omarchy-t-joined",
        &format!("{d}N=$(echo \"$1\" | tr 'A-Z ' 'a-z-')\ncp \"{o}/theme-$N.sh\" \"$D/x\""),
    );
    rig.set_script("omarchy-t-byhome", "\"$HOME/.local/bin/helper-x\" \"$1\"");
    rig.set_script(
        "omarchy-t-sourced",
        ". \"$HOME/.config/omarchy/extra.sh\"\necho \"$1\"",
    );
    (rig, open)
}

fn refused(rig: &OmarchyRig, route: &str, value: &str, why: &str) {
    let (r, _) = rig
        .env
        .call("omarchy_run", &json!({"route": route, "args": [value]}));
    assert_eq!(outcome(&r), "unresolved", "{route} {value}: {r}");
    assert!(r.to_string().contains(why), "{route} {value}: {r}");
}

#[test]
fn the_files_a_value_reaches_are_judged_where_the_script_reads_them() {
    let (rig, open) = rig();
    let planted = open.join("hook");
    std::fs::write(&planted, "#!/bin/sh\nexit 0\n").unwrap();
    mode(&planted, 0o755);
    // F1: a pipe is a file another user's writer feeds; a path that names nothing yet, in a
    // directory anyone may write, is one another user may create after the judgement.
    let fifo = open.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    refused(&rig, "t keep", fifo.to_str().unwrap(), "not yours alone");
    refused(
        &rig,
        "t keep",
        open.join("later").to_str().unwrap(),
        "not yours alone",
    );
    // F5, F2: a bare name the script prefixes with a directory, or reads where it moved to.
    refused(&rig, "t prefixed", "hook", "not yours alone");
    refused(&rig, "t moved", "hook", "not yours alone");
    // F5: an unquoted value splits; each word that is a file is judged.
    let own = rig.env.path("scratch/own-hook");
    std::fs::write(&own, "#!/bin/sh\nexit 0\n").unwrap();
    let both = format!("{} {}", own.display(), planted.display());
    refused(&rig, "t split", &both, "not yours alone");
    // Round 38 F1: a name the script builds around the value, cleaned as Omarchy cleans names.
    let joined = open.join("theme-dark-mode.sh");
    std::fs::write(&joined, "#!/bin/sh\nexit 0\n").unwrap();
    refused(&rig, "t joined", "Dark Mode", "not yours alone");
    // F5: a relative value that climbs; round 38 F5, F6, F8, F3: an absolute one that climbs
    // (through a directory a script would create), a process's view of the disk, a one-slash
    // `file:` address, a list split at commas.
    refused(&rig, "t prefixed", "zz/../../hook", "climbs");
    let climbing = format!("{}/new.d/../hook", open.display());
    refused(&rig, "t keep", &climbing, "climbs");
    refused(&rig, "t keep", "/proc/self/cwd/hook", "/proc");
    refused(
        &rig,
        "t keep",
        &format!("file:{}", planted.display()),
        "not yours alone",
    );
    refused(
        &rig,
        "t split",
        &format!("{},{}", own.display(), planted.display()),
        "not yours alone",
    );
    // F7: a directory value is judged through the links in it (`cp -rL` copies what they reach).
    let set = rig.env.path("scratch/set");
    std::fs::create_dir_all(&set).unwrap();
    std::os::unix::fs::symlink(&open, set.join("more")).unwrap();
    refused(&rig, "t tree", set.to_str().unwrap(), "not yours alone");
    // F6: a file the route sources from the person's home that another user could write.
    let extra = rig.env.path("scratch/.config/omarchy/extra.sh");
    std::fs::create_dir_all(extra.parent().unwrap()).unwrap();
    std::fs::write(&extra, "true\n").unwrap();
    mode(&extra, 0o666);
    let (r, _) = rig
        .env
        .call("omarchy_run", &json!({"route": "t sourced", "args": ["x"]}));
    assert_ne!(outcome(&r), "ok", "{r}");
    assert!(
        r.to_string().contains("another user could have written"),
        "{r}"
    );
    // Round 38 F9: a program of the home run by its literal path is judged as a file too.
    let helper = rig.env.path("scratch/.local/bin/helper-x");
    std::fs::create_dir_all(helper.parent().unwrap()).unwrap();
    std::fs::write(&helper, "#!/bin/sh\nexit 0\n").unwrap();
    mode(&helper, 0o777);
    let (r, _) = rig
        .env
        .call("omarchy_run", &json!({"route": "t byhome", "args": ["x"]}));
    assert_ne!(outcome(&r), "ok", "{r}");
    assert!(
        r.to_string().contains("another user could have written"),
        "{r}"
    );
    assert!(rig.ran().is_empty(), "something ran");
    // The person's own: passes (the route runs or asks as its tier says).
    std::fs::remove_file(set.join("more")).unwrap();
    let (r, _) = rig.env.call(
        "omarchy_run",
        &json!({"route": "t keep", "args": [own.to_str().unwrap()]}),
    );
    assert!(!r.to_string().contains("not yours alone"), "{r}");
    let (r, _) = rig.env.call(
        "omarchy_run",
        &json!({"route": "t tree", "args": [set.to_str().unwrap()]}),
    );
    assert!(!r.to_string().contains("not yours alone"), "{r}");
}
