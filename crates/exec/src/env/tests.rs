//! The table's and the builder's own tests: what passes, what is dropped, and why.

use super::*;

fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

fn open_cfg(search: &[&str]) -> ExecConfig {
    ExecConfig {
        search_dirs: search.iter().map(PathBuf::from).collect(),
        require_root_owned: false,
        ..ExecConfig::default()
    }
}

#[test]
fn only_the_tables_names_pass() {
    let inherited = os(&[
        ("HOME", "/home/p"),
        ("EDITOR", "nvim"),
        ("LC_TIME", "C"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("BASH_ENV", "/tmp/evil.sh"),
        ("BASH_FUNC_ls%%", "() { id; }"),
        ("BW_SESSION", "secret"),
        ("PATH", "/usr/bin:relative::/nonexistent-h33"),
        ("ARCHGATE_TOKEN", "secret"),
        ("WAYLAND_DISPLAY", "wayland-1"),
    ]);
    let env = build(
        inherited,
        &open_cfg(&["/usr/bin", "/usr/local/bin"]),
        &[
            ("LANG".into(), "C.UTF-8".into()),
            ("HOME".into(), "/".into()),
            ("NODE_OPTIONS".into(), "--require /tmp/x.js".into()),
        ],
    );
    let keys: Vec<&OsStr> = env.iter().map(|(k, _)| k.as_os_str()).collect();
    assert_eq!(keys, ["LC_TIME", "WAYLAND_DISPLAY", "LANG", "HOME", "PATH"]);
    assert!(env.contains(&("HOME".into(), "/".into())));
    let path = &env.last().unwrap().1;
    assert!(path.to_str().unwrap().starts_with("/usr/bin"), "{path:?}");
    assert!(!path.to_str().unwrap().contains("relative"), "{path:?}");
    assert!(!path.to_str().unwrap().contains("nonexistent"), "{path:?}");
}

#[test]
fn the_home_that_is_no_ones_passes_and_no_other_missing_home_does() {
    let root_only = ExecConfig {
        search_dirs: vec!["/usr/bin".into()],
        require_root_owned: true,
        person_uid: None,
        ..ExecConfig::default()
    };
    for (home, passes) in [
        (NO_HOME, true),
        ("/nonexistent-h33", false),
        ("/tmp/h33", false),
    ] {
        let env = build(
            std::collections::HashMap::new(),
            &root_only,
            &[("HOME".into(), home.into())],
        );
        let got = env.iter().any(|(k, v)| k == "HOME" && v == home);
        // Where a machine made /nonexistent another's, it no longer passes.
        assert_eq!(got, passes && is_no_home(Path::new(NO_HOME)), "{home}");
    }
}

#[test]
fn every_row_says_why_and_no_name_repeats() {
    let mut seen = std::collections::HashSet::new();
    for r in TABLE {
        assert!(r.why.len() > 20, "{:?}", r.names);
        for n in r.names {
            assert!(seen.insert(*n), "{n} twice");
        }
    }
    assert!(!may_set("PATH") && may_set("HOME") && !may_set("BASH_ENV"));
}

#[test]
fn values_that_would_load_code_are_dropped() {
    let env = build(
        os(&[
            ("LANG", "/tmp/evil-locale"),
            // gettext reads each entry of LANGUAGE as a directory under the locale directory:
            // a relative path would climb out of it (attack 29's lead).
            ("LANGUAGE", "de:../../../tmp/x"),
            ("LC_TIME", "de_DE.UTF-8"),
            ("HYPRLAND_INSTANCE_SIGNATURE", "../../tmp/x"),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/run/user/1/bus;unixexec:path=/tmp/e",
            ),
            ("PATH", "/nonexistent-h33"),
        ]),
        &open_cfg(&["/nonexistent-h33-too"]),
        &[],
    );
    assert_eq!(env, os(&[("LC_TIME", "de_DE.UTF-8")]));
    let env = build(
        os(&[(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/run/user/1/bus,guid=0123",
        )]),
        &open_cfg(&[]),
        &[],
    );
    assert_eq!(env.len(), 1, "{env:?}");
    assert!(!unix_bus_only("") && !unix_bus_only("tcp:host=x,port=1"));
}

/// Class: a path is judged whole (attack 2 F4). `HOME` through a directory others may write
/// (where another user could swap it after the check), or through a link in one, is dropped
/// though its last directory is the person's and closed; the same for `XDG_*_HOME`.
#[test]
fn the_persons_directories_pass_only_when_the_whole_path_is_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let strict = ExecConfig {
        require_root_owned: true,
        ..open_cfg(&[])
    };
    let t = tempfile::tempdir().unwrap();
    let good = t.path().join("good");
    let open = t.path().join("open");
    std::fs::create_dir(&good).unwrap();
    std::fs::create_dir(&open).unwrap();
    std::fs::create_dir(open.join("home")).unwrap();
    std::os::unix::fs::symlink(&good, open.join("link")).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let home = |v: &Path, cfg: &ExecConfig| {
        build(
            os(&[
                ("HOME", v.to_str().unwrap()),
                ("XDG_DATA_HOME", v.to_str().unwrap()),
            ]),
            cfg,
            &[],
        )
        .into_iter()
        .filter(|(k, _)| k != "PATH")
        .count()
    };
    assert_eq!(home(&good, &strict), 2, "the person's own, closed");
    assert_eq!(
        home(&open.join("home"), &strict),
        0,
        "below an open directory"
    );
    assert_eq!(
        home(&open.join("link"), &strict),
        0,
        "a link in an open directory"
    );
    assert_eq!(home(&open, &strict), 0, "open itself");
    assert_eq!(home(&t.path().join("missing"), &strict), 0);
    assert_eq!(home(Path::new("relative"), &strict), 0);
    assert_eq!(home(&open.join("home"), &open_cfg(&[])), 2, "the rule off");
}

/// Class: nothing a client could make reaches a program through `PATH` (attack 2 F5), and a
/// directory trusted for the program archgate names is not the front of the `PATH` its scripts
/// search (attack 33 F6). Root's search directories come first, then the inherited directories
/// root owns all the way, and the person's search directory last; an inherited directory of the
/// person's (which a client, running as the person, can make) is dropped wherever it stood.
#[test]
fn path_holds_roots_directories_first_and_the_persons_search_directories_last() {
    let t = tempfile::tempdir().unwrap();
    let search = t.path().join("search");
    let mine = t.path().join("mine");
    std::fs::create_dir(&search).unwrap();
    std::fs::create_dir(&mine).unwrap();
    let me = nix::unistd::geteuid().as_raw();
    // The person's directories: this uid's, or when the tests run as root, nobody's made so.
    let person = if me == 0 {
        for d in [&search, &mine] {
            nix::unistd::chown(d, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        }
        65534
    } else {
        me
    };
    let strict = ExecConfig {
        require_root_owned: true,
        person_uid: Some(person),
        ..open_cfg(&[search.to_str().unwrap(), "/usr/bin"])
    };
    let inherited = format!("{}:/usr/bin:/bin:{}", mine.display(), search.display());
    let env = build(os(&[("PATH", &inherited)]), &strict, &[]);
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .unwrap()
        .1
        .to_str()
        .unwrap()
        .to_owned();
    let dirs: Vec<&str> = path.split(':').collect();
    // `/bin` is root's on Debian and Arch alike (a link to usr/bin or a directory).
    assert_eq!(
        dirs,
        ["/usr/bin", "/bin", search.to_str().unwrap()],
        "{path}"
    );
    assert!(!dirs.contains(&mine.to_str().unwrap()), "{path}");
}

#[test]
fn the_sessions_sockets_are_named_not_pointed_at() {
    use std::os::unix::fs::PermissionsExt;
    let strict = ExecConfig {
        require_root_owned: true,
        person_uid: Some(nix::unistd::geteuid().as_raw()),
        ..open_cfg(&[])
    };
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let sock = run.join("sway-ipc.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let elsewhere = t.path().join("other.sock");
    let _other = std::os::unix::net::UnixListener::bind(&elsewhere).unwrap();
    let r = run.to_str().unwrap();
    let keys = |pairs: &[(&str, &str)]| -> Vec<String> {
        build(os(pairs), &strict, &[])
            .into_iter()
            .map(|(k, _)| k.into_string().unwrap())
            .filter(|k| k != "PATH")
            .collect()
    };
    assert_eq!(
        keys(&[
            ("XDG_RUNTIME_DIR", r),
            ("WAYLAND_DISPLAY", "wayland-1"),
            ("SWAYSOCK", sock.to_str().unwrap()),
            ("DISPLAY", ":0"),
        ]),
        ["XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "SWAYSOCK"]
    );
    assert_eq!(
        keys(&[
            ("XDG_RUNTIME_DIR", r),
            ("WAYLAND_DISPLAY", "/tmp/elsewhere/wayland-0"),
            ("SWAYSOCK", elsewhere.to_str().unwrap()),
            ("DISPLAY", "evil.example:0"),
        ]),
        ["XDG_RUNTIME_DIR"]
    );
    // Without a runtime directory, no Sway socket either; an open one is no runtime dir.
    assert!(keys(&[("SWAYSOCK", sock.to_str().unwrap())]).is_empty());
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(keys(&[("XDG_RUNTIME_DIR", r)]).is_empty());
    assert!(local_display(":1.0") && !local_display(":") && !local_display("unix:0"));
}

/// Attack 24 F3: a `PATH` of root's directories leaves out a search directory of the person's
/// (the hand-off's terminal finds its notification and URL commands on it); the rest of the
/// environment is built as always.
#[test]
fn a_root_path_leaves_out_the_persons_search_directory() {
    let t = tempfile::tempdir().unwrap();
    let search = t.path().join("search");
    std::fs::create_dir(&search).unwrap();
    let me = nix::unistd::geteuid().as_raw();
    // The person's directory: this uid's, or when the tests run as root, nobody's made so.
    let person = if me == 0 {
        nix::unistd::chown(&search, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        65534
    } else {
        me
    };
    let cfg = ExecConfig {
        require_root_owned: true,
        person_uid: Some(person),
        ..open_cfg(&[search.to_str().unwrap(), "/usr/bin"])
    };
    let path_of = |env: Vec<(OsString, OsString)>| {
        env.into_iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let inherited = os(&[("PATH", "/usr/bin"), ("LANG", "C.UTF-8")]);
    let usual = path_of(build(inherited.clone(), &cfg, &[]));
    assert!(
        usual.split(':').any(|d| d == search.to_str().unwrap()),
        "{usual}"
    );
    let env = build_with(inherited, &cfg, &[], true);
    assert!(env.iter().any(|(k, _)| k == "LANG"), "{env:?}");
    let rooted = path_of(env);
    assert!(
        !rooted.split(':').any(|d| d == search.to_str().unwrap()),
        "{rooted}"
    );
    assert!(rooted.split(':').any(|d| d == "/usr/bin"), "{rooted}");
}

#[test]
fn a_font_configuration_passes_only_as_a_file_root_owns_all_the_way() {
    let cfg = open_cfg(&["/usr/bin"]);
    // Someone else's file: the test's own as a normal user, handed to nobody as root.
    let dir = tempfile::tempdir().unwrap();
    let persons = dir.path().join("fonts.conf");
    std::fs::write(&persons, "<fontconfig/>").unwrap();
    if nix::unistd::geteuid().is_root() {
        let nobody = Some(nix::unistd::Uid::from_raw(65534));
        nix::unistd::chown(&persons, nobody, None).unwrap();
    }
    let persons = persons.to_str().unwrap();
    for (value, passes) in [
        ("/etc/passwd", true),
        ("/etc", false),
        ("etc/passwd", false),
        ("/etc/passwd-h33-missing", false),
        (persons, false),
    ] {
        for (inherited, extra) in [
            (os(&[("FONTCONFIG_FILE", value)]), vec![]),
            (
                vec![],
                vec![("FONTCONFIG_FILE".to_owned(), value.to_owned())],
            ),
        ] {
            let env = build(inherited, &cfg, &extra);
            let got = env
                .iter()
                .any(|(k, v)| k == "FONTCONFIG_FILE" && v == value);
            assert_eq!(got, passes, "{value}");
        }
    }
    // The variables that would point fontconfig elsewhere are not in the table at all.
    let env = build(
        os(&[("FONTCONFIG_PATH", "/etc"), ("FONTCONFIG_SYSROOT", "/")]),
        &cfg,
        &[],
    );
    assert!(
        env.iter()
            .all(|(k, _)| !k.to_string_lossy().starts_with("FONTCONFIG"))
    );
}
