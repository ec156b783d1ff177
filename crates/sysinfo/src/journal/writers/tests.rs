//! The writers of command lines, each shape as the program writes it (see `writers.rs`).

use super::*;
use crate::journal::withheld::{WITHHELD, withhold, withhold_entry};

const SECRET: &str = "S3cret";

fn shown(ident: &str, message: &str) -> String {
    withhold(ident, message).unwrap_or_else(|| message.to_owned())
}

/// Attack 16 F4: sudo (eventlog.c `do_syslog`) splits a record past `syslog_maxlen` into
/// `(command continued)` records, and a long `ENV=` puts the split before `COMMAND=`.
/// Shapes captured from real sudo 1.9.13 by the attacker; our own text.
#[test]
fn sudo_shows_only_its_known_shapes() {
    let first = format!(
        "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/curl --header=X-Filler-0:{}",
        "a".repeat(800)
    );
    assert_eq!(
        shown("sudo", &first),
        format!(
            "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/curl {WITHHELD}"
        )
    );
    for m in [
        format!("   alice : (command continued) --header=Authorization:Bearer:{SECRET} https://x"),
        format!("root : (command continued) ENV=PGPASSWORD={SECRET} A=b"),
        "root : PWD=/root ; USER=nobody ;".to_owned(),
        format!("root : (command continued) ; COMMAND=/bin/true {SECRET}"),
        "unable to resolve host x".to_owned(),
    ] {
        assert_eq!(shown("sudo", &m), MESSAGE_WITHHELD, "{m}");
    }
    for safe in [
        "pam_unix(sudo:session): session opened for user root(uid=0) by alice(uid=1000)",
        "pam_unix(sudo:session): session closed for user root",
        "pam_unix(sudo:auth): authentication failure; logname=alice uid=1000 euid=0 tty=/dev/pts/1 ruser=alice rhost=  user=alice",
    ] {
        assert_eq!(withhold("sudo", safe), None, "{safe}");
    }
    // A PAM line's prefix on something else is not a PAM line.
    assert_eq!(
        shown("sudo", &format!("pam_unix(sudo:session): x {SECRET}")),
        MESSAGE_WITHHELD
    );
}

/// F7 (polkit's `polkitbackendinteractiveauthority.c` formats with a D-Bus caller subject,
/// `polkitsystembusname.c`'s `system-bus-name::1.77`), F8 (OpenDoas's `command not
/// permitted for %s: %s`), F9 (cronie's `CMDEND`), F10 (dbus-daemon's activation line,
/// captured from real dbus-daemon 1.14.10). Our own text in those shapes.
#[test]
fn every_writers_other_shapes_are_withheld() {
    let polkit = format!(
        "Operator of unix-session:2 FAILED to authenticate to gain authorization for action org.freedesktop.systemd1.manage-units for system-bus-name::1.81 [systemctl start backup@--password={SECRET}.service] (owned by unix-user:alice)"
    );
    assert_eq!(
        shown("polkitd", &polkit),
        format!(
            "Operator of unix-session:2 FAILED to authenticate to gain authorization for action org.freedesktop.systemd1.manage-units for system-bus-name::1.81 [systemctl {WITHHELD}] (owned by unix-user:alice)"
        )
    );
    let home = format!(
        "Operator of unix-session:2 successfully authenticated as unix-user:alice to gain ONE-SHOT authorization for action org.freedesktop.home1.activate-home for system-bus-name::1.77 [busctl call org.freedesktop.home1 {{\"password\":[\"{SECRET}\"]}}] (owned by unix-user:alice)"
    );
    assert!(!shown("polkitd", &home).contains(SECRET));
    assert_eq!(
        shown(
            "polkitd",
            &format!("/etc/polkit-1/rules.d/x.rules:3: {SECRET}")
        ),
        MESSAGE_WITHHELD
    );
    assert_eq!(
        shown("polkitd", &format!("Operator of x for y [{SECRET}]")),
        MESSAGE_WITHHELD
    );
    assert_eq!(
        withhold(
            "polkitd",
            "Finished loading, compiling and executing 12 rules"
        ),
        None
    );

    assert_eq!(
        shown(
            "doas",
            &format!("command not permitted for alice: mysql -u root -p{SECRET} -e DROP")
        ),
        MESSAGE_WITHHELD
    );
    assert_eq!(withhold("doas", "failed auth for alice"), None);

    assert_eq!(
        shown(
            "CROND",
            &format!("(alice) CMDEND (/usr/bin/backup --password={SECRET})")
        ),
        format!("(alice) CMDEND (/usr/bin/backup {WITHHELD})")
    );
    assert_eq!(
        shown("CROND", &format!("(alice) CMDOUT ({SECRET})")),
        MESSAGE_WITHHELD
    );
    assert_eq!(shown("CROND", &format!("job {SECRET}")), MESSAGE_WITHHELD);
    assert_eq!(withhold("CROND", "(CRON) STARTUP (1.7.2)"), None);
    assert_eq!(
        withhold("CROND", "(root) RELOAD (/var/spool/cron/root)"),
        None
    );
    assert_eq!(
        shown(
            "fcron",
            &format!("Job '/usr/bin/x -p{SECRET}' started for user alice (pid 4)")
        ),
        MESSAGE_WITHHELD
    );
    assert_eq!(withhold("anacron", "Job `cron.daily' started"), None);

    let dbus = format!(
        "[system] Activating via systemd: service name='org.freedesktop.nm_dispatcher' unit='dbus-org.freedesktop.nm-dispatcher.service' requested by ':1.60' (uid=1000 pid=2345 comm=\"nmcli dev wifi connect Home password {SECRET}\")"
    );
    assert_eq!(
        shown("dbus-daemon", &dbus),
        format!(
            "[system] Activating via systemd: service name='org.freedesktop.nm_dispatcher' unit='dbus-org.freedesktop.nm-dispatcher.service' requested by ':1.60' (uid=1000 pid=2345 comm=\"nmcli {WITHHELD}\")"
        )
    );
    assert_eq!(
        withhold(
            "dbus-daemon",
            "[system] Successfully activated service 'org.freedesktop.nm_dispatcher'"
        ),
        None
    );
    assert_eq!(
        shown("dbus-daemon", &format!("[system] x {SECRET}")),
        MESSAGE_WITHHELD
    );
    assert_eq!(
        shown("dbus-broker", &format!("x {SECRET}")),
        MESSAGE_WITHHELD
    );

    assert_eq!(withhold("su", "(to root) alice on pts/1"), None);
    assert_eq!(shown("su", &format!("x {SECRET}")), MESSAGE_WITHHELD);
    assert_eq!(
        withhold(
            "run0",
            "Running as unit: run-u12.service; invocation ID: 1f"
        ),
        None
    );
    assert_eq!(
        shown("systemd-run", &format!("x {SECRET}")),
        MESSAGE_WITHHELD
    );
    assert_eq!(shown("pkexec", &format!("x {SECRET}")), MESSAGE_WITHHELD);
}

/// The writer is known by any of journald's fields naming it, not the identifier alone.
#[test]
fn the_writer_is_named_by_identifier_command_or_executable() {
    let m = format!("command not permitted for alice: mysql -p{SECRET}");
    for o in [
        Origin {
            comm: "doas",
            ..Origin::default()
        },
        Origin {
            ident: "x",
            exe: "/usr/bin/doas",
            ..Origin::default()
        },
    ] {
        assert_eq!(
            withhold_entry(&o, &m).as_deref(),
            Some(MESSAGE_WITHHELD),
            "{o:?}"
        );
    }
    assert_eq!(
        withhold_entry(
            &Origin {
                ident: "sshd",
                ..Origin::default()
            },
            &m
        ),
        None
    );
}

/// F5: systemd's job lines under `StatusUnitFormat=description` have no `UNIT - `; the
/// unit is journald's `UNIT=`, the job by `MESSAGE_ID`.
#[test]
fn systemds_unit_lines_are_judged_by_the_unit_field() {
    let o = |unit, id| Origin {
        ident: "systemd",
        unit,
        message_id: id,
        ..Origin::default()
    };
    let started = "39f53479d3a045ac8e11786248231fbf";
    let run = o("run-u42.service", started);
    let m = format!("Started /usr/bin/mysql -u root -p{SECRET} -e DROP.");
    assert_eq!(
        withhold_entry(&run, &m).unwrap(),
        format!("run-u42.service: {MESSAGE_WITHHELD}")
    );
    let named = o("backup.service", started);
    let m = format!("Failed to start /usr/bin/pg_dump --dbname=postgresql://app:{SECRET}@db/app.");
    assert!(!withhold_entry(&named, &m).unwrap().contains(SECRET));
    assert!(
        !withhold_entry(
            &o("run-u9.service", ""),
            &format!("Starting [run0] sh -c {SECRET}...")
        )
        .unwrap()
        .contains(SECRET)
    );
    // Without journald's fields (forwarded syslog), by the job verb.
    let bare = o("", "");
    assert_eq!(
        withhold_entry(&bare, &format!("Started /usr/bin/mysql -p{SECRET}.")).as_deref(),
        Some(MESSAGE_WITHHELD)
    );
    assert_eq!(
        withhold_entry(&bare, "Started Session 2 of User alice."),
        None
    );
    // systemd's quoting of a program path (attack 19 F1), with and without the unit field, with
    // and without `UNIT - `; and a unit given its own name whose program was not resolved.
    let quoted = format!("\"/home/alice/My Scripts/backup\" --password={SECRET}");
    for (origin, m) in [
        (&named, format!("Started backup.service - {quoted}.")),
        (&bare, format!("Started backup.service - {quoted}.")),
        (&named, format!("Started {quoted}.")),
        (&bare, format!("Started {quoted}.")),
        (&bare, format!("Started '/opt/my app/run' -p{SECRET}.")),
        (
            &named,
            format!("Started backup.service - mysql -p{SECRET}."),
        ),
    ] {
        let got = withhold_entry(origin, &m).unwrap();
        assert!(!got.contains(SECRET), "{m}: {got}");
    }
    assert_eq!(
        withhold_entry(&named, &format!("Started backup.service - {quoted}.")).unwrap(),
        format!("Started backup.service - \"/home/alice/My Scripts/backup\" {WITHHELD}.")
    );
    // Debug lines of the unit's own prefix carry the command line.
    assert!(
        !withhold_entry(
            &named,
            &format!("backup.service: About to execute /usr/bin/x {SECRET}")
        )
        .unwrap()
        .contains(SECRET)
    );
    for (unit, m) in [
        ("run-u42.service", "Started run-u42.service."),
        ("sshd.service", "Started OpenSSH Daemon."),
        ("sshd.service", "Started sshd.service - OpenSSH Daemon."),
        ("boot.mount", "Mounted /boot."),
        ("", "Reloading finished in 120 ms."),
    ] {
        assert_eq!(withhold_entry(&o(unit, started), m), None, "{m}");
    }
    // systemd's per-unit log prefix (not a job line) names no description.
    let succeeded = o("run-u42.service", "7ad2d189f7e94e70a38c781354912448");
    assert_eq!(
        withhold_entry(&succeeded, "run-u42.service: Deactivated successfully."),
        None
    );
}
