//! Attack 19: command lines logged by a launcher, in real journal files.
//!
//! F1: systemd's job lines for `systemd-run --unit=backup "/home/alice/My Scripts/backup"
//! --password=…`: the unit's default description is the command line as systemd quotes it
//! (`quote_command_line`, `"…"` around a word with a space or a shell character; systemd's
//! src/run/run.c), so it begins with `"`, and the unit is not named `run-*`.
//! F2: uwsm's app daemon prints every `uwsm-app -- CMD ARGS` it serves, `received: …` and
//! `sent: exec systemd-run … -- CMD ARGS` (uwsm's `uwsm/main.py` `send_cmdline`), under
//! `SyslogIdentifier=uwsm_app-daemon` (its `wayland-wm-app-daemon.service`); the compositor's
//! unit (`uwsm_<entry>`) carries the stream of every app it starts. elephant (walker's backend)
//! with `--debug` logs each desktop entry's `sh -c` command line (its
//! `desktopapplications/activate.go`). Our own text in those shapes.

use archgate_sysinfo::journal::{self, JournalQuery};

use super::*;

const SECRET: &str = "S3cretLaunched";

fn export_with_launchers() -> Vec<u8> {
    let mut out = Vec::new();
    let job = |unit_field: &'static str, unit: &'static str, id: &'static str, msg: String| {
        (
            vec![
                ("SYSLOG_IDENTIFIER", "systemd"),
                ("_COMM", "systemd"),
                ("_TRANSPORT", "journal"),
                ("MESSAGE_ID", id),
                (unit_field, unit),
            ],
            msg,
        )
    };
    let uwsm = |ident: &'static str, comm: &'static str, msg: String| {
        (
            vec![
                ("SYSLOG_IDENTIFIER", ident),
                ("_COMM", comm),
                ("_TRANSPORT", "stdout"),
                (
                    "_SYSTEMD_USER_UNIT",
                    match ident {
                        "elephant" => "elephant.service",
                        "uwsm_app-daemon" => "wayland-wm-app-daemon.service",
                        _ => "wayland-wm@hyprland.desktop.service",
                    },
                ),
            ],
            msg,
        )
    };
    let lines = [
        job(
            "UNIT",
            "backup.service",
            "7d4958e842da4a758f6c1cdc7b36dcc5",
            format!(
                "Starting backup.service - \"/home/alice/My Scripts/backup\" --password={SECRET}..."
            ),
        ),
        job(
            "UNIT",
            "backup.service",
            "39f53479d3a045ac8e11786248231fbf",
            format!(
                "Started backup.service - \"/home/alice/My Scripts/backup\" --password={SECRET}."
            ),
        ),
        job(
            "USER_UNIT",
            "sync.service",
            "be02cf6855d2428ba40df7e9d022f03d",
            format!(
                "Failed to start sync.service - \"/home/alice/Dropbox (Personal)/bin/sync\" --token={SECRET}."
            ),
        ),
        // A unit not transient whose description was never resolved (`-p RootDirectory=`).
        job(
            "UNIT",
            "dump.service",
            "39f53479d3a045ac8e11786248231fbf",
            format!("Started dump.service - mysqldump -u root -p{SECRET}."),
        ),
        // uwsm's app scope: its description is the app's name (uwsm's `app()`), shown.
        job(
            "USER_UNIT",
            "app-Hyprland-chromium-4f2a1b3c.scope",
            "39f53479d3a045ac8e11786248231fbf",
            "Started app-Hyprland-chromium-4f2a1b3c.scope - chromium.".to_owned(),
        ),
        job(
            "UNIT",
            "sshd.service",
            "39f53479d3a045ac8e11786248231fbf",
            "Started sshd.service - OpenSSH Daemon.".to_owned(),
        ),
        uwsm(
            "uwsm_app-daemon",
            "uwsm",
            format!(
                "received: app -- chromium --app=https://vault.example.com/unlock?token={SECRET}"
            ),
        ),
        uwsm(
            "uwsm_app-daemon",
            "uwsm",
            format!(
                "sent: exec systemd-run --user --scope --slice=app-graphical.slice --unit=app-Hyprland-chromium-4f2a1b3c.scope --description=chromium --quiet --collect --same-dir -- chromium --app=https://vault.example.com/unlock?token={SECRET}"
            ),
        ),
        uwsm(
            "uwsm_app-daemon",
            "uwsm",
            format!("sent: error 'Invalid arguments: app -x mysql -p{SECRET}' 2"),
        ),
        // What an app started by the compositor writes lands in the compositor unit's stream.
        uwsm(
            "uwsm_hyprland.desktop",
            "Hyprland",
            format!("Invalid arguments: app -x mysql -p{SECRET}"),
        ),
        uwsm(
            "uwsm_app-daemon",
            "uwsm",
            "Received signal 15, stopping app daemon...".to_owned(),
        ),
        // elephant `--debug` (walker's backend): the desktop entry's `sh -c` command line.
        uwsm(
            "elephant",
            "elephant",
            format!(
                "time=2025-12-06T10:00:00.000+01:00 level=DEBUG msg=desktopapplications activate=\"/usr/bin/sh -c uwsm-app -- mysql -p{SECRET}\""
            ),
        ),
        uwsm(
            "elephant",
            "elephant",
            "time=2025-12-06T10:00:00.001+01:00 level=INFO msg=desktopapplications activated=mysql.desktop".to_owned(),
        ),
    ];
    for (i, (fields, msg)) in lines.iter().enumerate() {
        let t = (T0 + (i as u64 + 1) * 1_000_000).to_string();
        let mono = format!("{}", i + 1);
        let mut all = vec![
            ("__REALTIME_TIMESTAMP", t.as_str()),
            ("__MONOTONIC_TIMESTAMP", mono.as_str()),
            ("_BOOT_ID", BOOT_B),
            ("PRIORITY", "6"),
            ("MESSAGE", msg.as_str()),
        ];
        all.extend(fields.iter().copied());
        entry(&mut out, &all, &[]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launchers_logged_command_lines_keep_only_their_programs() {
    let dir = journal_dir(export_with_launchers()).await;
    let d = dir.path();
    let p = permit();
    let whole = oracle(d, &[]).await;
    assert_eq!(
        whole
            .iter()
            .filter(|e| text(&e["MESSAGE"]).contains(SECRET))
            .count(),
        9,
        "the oracle has every secret whole"
    );
    let page = journal::query(&p, &opts(d), &q(50)).await.unwrap();
    assert_eq!(page.entries.len(), 13, "{:?}", page.entries);
    for e in &page.entries {
        assert!(!e.message.contains(SECRET), "{e:?}");
    }
    let shown: Vec<&str> = page.entries.iter().map(|e| e.message.as_str()).collect();
    for kept in [
        "Started backup.service - \"/home/alice/My Scripts/backup\" [arguments withheld",
        "Starting backup.service - \"/home/alice/My Scripts/backup\" [arguments withheld",
        "Failed to start sync.service - \"/home/alice/Dropbox (Personal)/bin/sync\" [arguments withheld",
        "Started dump.service - mysqldump [arguments withheld",
        "received: app -- chromium [arguments withheld",
        "sent: exec [arguments withheld: a command line may hold secrets] -- chromium [arguments withheld",
        "sent: error [arguments withheld",
        "[message withheld",
    ] {
        assert!(
            shown.iter().any(|m| m.starts_with(kept)),
            "{kept}: {shown:?}"
        );
    }
    for whole in [
        "Started app-Hyprland-chromium-4f2a1b3c.scope - chromium.",
        "Started sshd.service - OpenSSH Daemon.",
        "Received signal 15, stopping app daemon...",
        "time=2025-12-06T10:00:00.001+01:00 level=INFO msg=desktopapplications activated=mysql.desktop",
    ] {
        assert!(shown.contains(&whole), "{whole} is shown: {shown:?}");
    }
    for grep in [SECRET, "token=", "password=", "-p.*S3"] {
        let got = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(grep.to_owned()),
                ..q(50)
            },
        )
        .await
        .unwrap();
        assert!(
            got.entries.is_empty(),
            "grep {grep} matches only withheld text: {:?}",
            got.entries
        );
    }
}
