//! The operations' values, checks and argv.
use super::*;

const SUDO: &str = "/usr/bin/sudo";

fn install(names: &[&str]) -> Operation {
    Operation::Install {
        packages: names.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn the_argv_is_built_from_typed_values_only() {
    let conf = Path::new("/etc/pacman.conf");
    assert_eq!(
        argv(
            &install(&["hello", "lib32-glibc"]),
            Path::new(SUDO),
            Path::new("/usr/bin/pacman"),
            conf
        ),
        [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/pacman",
            "--noconfirm",
            "-S",
            "--",
            "hello",
            "lib32-glibc"
        ]
    );
    assert_eq!(
        argv(
            &Operation::SystemUpdate,
            Path::new(SUDO),
            Path::new("/usr/bin/pacman"),
            Path::new("/t/p.conf")
        ),
        [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/pacman",
            "--config",
            "/t/p.conf",
            "--noconfirm",
            "-Syu"
        ]
    );
    assert_eq!(
        argv(
            &Operation::CleanCache,
            Path::new(SUDO),
            Path::new("/usr/bin/paccache"),
            conf
        ),
        ["/usr/bin/sudo", "-k", "--", "/usr/bin/paccache", "-rk3"]
    );
    let unit = Operation::Unit {
        action: UnitVerb::Restart,
        unit: "sshd.service".into(),
    };
    assert_eq!(
        argv(
            &unit,
            Path::new(SUDO),
            Path::new("/usr/bin/systemctl"),
            conf
        ),
        [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/systemctl",
            "restart",
            "--",
            "sshd.service"
        ]
    );
}

#[test]
fn names_are_checked_as_the_package_tools_check_them() {
    for ok in [
        "hello",
        "lib32-glibc",
        "gtk+3",
        "python3.12",
        "foo@bar",
        "a_b",
    ] {
        assert_eq!(install(&[ok]).check(), Ok(()), "{ok}");
    }
    for bad in [
        "-Syu",
        ".hidden",
        "Hello",
        "a b",
        "a;rm",
        "a\x1b[2J",
        "",
        "a/b",
        "x\u{202e}y",
        "--",
    ] {
        assert!(
            matches!(install(&[bad]).check(), Err(OpError::PackageName(_))),
            "{bad:?}"
        );
    }
    assert_eq!(install(&[]).check(), Err(OpError::NoPackages));
    assert_eq!(
        install(&["a", "a"]).check(),
        Err(OpError::Duplicate("a".into()))
    );
    let many: Vec<String> = (0..=MAX_PACKAGES).map(|i| format!("p{i}")).collect();
    assert_eq!(
        Operation::Remove { packages: many }.check(),
        Err(OpError::TooManyPackages)
    );
}

#[test]
fn paths_are_absolute_plain_and_of_the_right_kind() {
    let file = |p: &str| Operation::InstallFile { path: p.into() }.check();
    assert_eq!(
        file("/var/cache/pacman/pkg/foo-1.0-1-x86_64.pkg.tar.zst"),
        Ok(())
    );
    for bad in [
        "foo-1.0-1-x86_64.pkg.tar.zst",
        "/var/cache/pacman/pkg/../../../etc/x.pkg.tar.zst",
        "/var/cache/pacman/pkg/./x.pkg.tar.zst",
        "/var/cache//x.pkg.tar.zst",
        "/var/cache/pacman/pkg/x.tar.zst",
        "/var/cache/pacman/pkg/x\n.pkg.tar.zst",
        "/var/cache/pacman/pkg/\u{202e}x.pkg.tar.zst",
        "/.pkg.tar.zst",
    ] {
        assert!(file(bad).is_err(), "{bad:?}");
    }
    let pacnew = |p: &str| Operation::PacnewDiscard { path: p.into() }.check();
    assert_eq!(pacnew("/etc/pacman.conf.pacnew"), Ok(()));
    assert_eq!(pacnew("/etc/ssh/sshd_config.pacsave"), Ok(()));
    for bad in [
        "/etc/passwd",
        "/etc/.pacnew",
        "etc/x.pacnew",
        "/etc/../root/x.pacnew",
    ] {
        assert!(pacnew(bad).is_err(), "{bad:?}");
    }
    let conf = Path::new("/etc/pacman.conf");
    assert_eq!(
        argv(
            &Operation::PacnewAdopt {
                path: "/etc/a.pacnew".into(),
                live: "/etc/a".into()
            },
            Path::new(SUDO),
            Path::new("/usr/bin/mv"),
            conf
        ),
        [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/mv",
            "-f",
            "-T",
            "--",
            "/etc/a.pacnew",
            "/etc/a"
        ]
    );
    assert_eq!(
        argv(
            &Operation::Snapshot(SnapshotTool::Timeshift),
            Path::new(SUDO),
            Path::new("/usr/bin/timeshift"),
            conf
        ),
        [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/timeshift",
            "--create",
            "--comments",
            SNAPSHOT_DESCRIPTION
        ]
    );
}

#[test]
fn unit_names_need_a_suffix_and_systemds_characters() {
    for ok in [
        "sshd.service",
        "getty@tty1.service",
        "fstrim.timer",
        "a-b\\x2d.mount",
    ] {
        assert_eq!(check_unit(ok), Ok(()), "{ok}");
    }
    for bad in [
        "sshd",
        "-x.service",
        ".service",
        "a b.service",
        "a;b.service",
        "a\n.service",
    ] {
        assert!(check_unit(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn each_op_takes_exactly_its_values() {
    let p = || Some(vec!["a".to_string()]);
    let u = || Some("sshd.service".to_string());
    let args = |packages, unit, path| Values {
        packages,
        unit,
        path,
    };
    assert_eq!(
        Operation::from_args(Op::Install, args(p(), None, None)),
        Ok(install(&["a"]))
    );
    assert!(matches!(
        Operation::from_args(Op::Install, args(None, None, None)),
        Err(OpError::Needs { .. })
    ));
    assert!(matches!(
        Operation::from_args(Op::Install, args(p(), u(), None)),
        Err(OpError::Extra { .. })
    ));
    assert!(matches!(
        Operation::from_args(Op::SystemUpdate, args(p(), None, None)),
        Err(OpError::Extra { .. })
    ));
    assert!(matches!(
        Operation::from_args(Op::SnapshotSnapper, args(None, None, Some("/x".into()))),
        Err(OpError::Extra { .. })
    ));
    assert!(matches!(
        Operation::from_args(Op::UnitRestart, args(None, None, None)),
        Err(OpError::Needs { .. })
    ));
    assert_eq!(
        Operation::from_args(Op::UnitDisable, args(None, u(), None)),
        Ok(Operation::Unit {
            action: UnitVerb::Disable,
            unit: "sshd.service".into()
        })
    );
    assert!(matches!(
        Operation::from_args(Op::UnitEnable, args(None, Some("x; reboot".into()), None)),
        Err(OpError::UnitName(_))
    ));
    assert!(matches!(
        Operation::from_args(Op::Remove, args(Some(vec!["-Rdd".into()]), None, None)),
        Err(OpError::PackageName(_))
    ));
    assert_eq!(
        Operation::from_args(
            Op::PacnewAdopt,
            args(None, None, Some("/etc/pacman.conf.pacnew".into()))
        ),
        Ok(Operation::PacnewAdopt {
            path: "/etc/pacman.conf.pacnew".into(),
            live: "/etc/pacman.conf".into()
        })
    );
}

#[test]
fn paccache_reads_pacmans_default_configuration_whatever_the_setting_says() {
    let setting = Path::new("/srv/other/pacman.conf");
    let op = Operation::CleanCache;
    let v = argv(
        &op,
        Path::new("/usr/bin/sudo"),
        Path::new("/usr/bin/paccache"),
        setting,
    );
    // Nothing in its argv names the setting's file: paccache reads pacman's default one, which
    // is the one judged.
    assert!(
        !v.iter()
            .any(|a| a.contains("pacman.conf") || a == "--config"),
        "{v:?}"
    );
    assert!(op.reads_default_pacman_conf() && !op.reads_pacman_conf());
    assert!(!Operation::SystemUpdate.reads_default_pacman_conf());
}
