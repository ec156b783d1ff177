//! Attack round 31's breaks F15–F17 (findings/attack31.md): privilege grants a package ships,
//! files root's own tools act on later, and what a unit link or drop-in enables — each in its
//! attack shape (now dangerous) and beside the real packages' ordinary neighbours (not).

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

const HEAD: &str = "pkgname=foopkg\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\n";

/// A package whose package() is `body`, with local files `files` (name, text) in its sources.
fn packaged(body: &str, files: &[(&str, &str)]) -> AuditInput {
    let mut src = vec!["\"https://example.org/foopkg-1.0.tar.gz\"".to_owned()];
    src.extend(files.iter().map(|(n, _)| format!("\"{n}\"")));
    let sums =
        vec!["'0000000000000000000000000000000000000000000000000000000000000000'"; src.len()]
            .join(" ");
    AuditInput {
        pkgbuild: format!(
            "{HEAD}source=({})\nsha256sums=({sums})\npackage() {{\n  {body}\n}}\n",
            src.join(" ")
        ),
        install_scripts: files
            .iter()
            .map(|(n, t)| ScriptFile {
                name: (*n).into(),
                content: (*t).into(),
            })
            .collect(),
        srcinfo: None,
    }
}

/// A package whose install file's post_install() is `body`.
fn scriptlet(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "{HEAD}install=foopkg.install\nsource=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage() {{\n  install -Dm755 foopkg \"$pkgdir/usr/bin/foopkg\"\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: "foopkg.install".into(),
            content: format!("post_install() {{\n  {body}\n}}\n"),
        }],
        srcinfo: None,
    }
}

/// Dangerous, and by finding `id` (at least high): the rule that reads the file, not a bystander.
fn dangerous_by(input: &AuditInput, what: &str, id: &str) {
    let r = audit(input);
    assert_eq!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
    assert!(
        max_of(&r, id) >= Some(Severity::High),
        "{what}: {id}\n{}",
        r.to_text()
    );
}

fn not_dangerous(input: &AuditInput, what: &str) {
    let r = audit(input);
    assert_ne!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
}

const YES_RULE: &str = "polkit.addRule(function(a, s) { return polkit.Result.YES; });";

/// F15: a polkit rule that answers YES to every action, sudo and doas rules that let everyone
/// become root, a polkit action that pkexecs a shell with no password — in any spelling of the
/// path, printed, from a here-document, or a local source file.
#[test]
fn privilege_grants_for_everyone_are_dangerous() {
    for body in [
        r#"mkdir -p "$pkgdir/etc/polkit-1/rules.d"; printf 'polkit.addRule(function(a, s) { return polkit.Result.YES; });\n' > "$pkgdir/etc/polkit-1/rules.d/00-foopkg.rules""#,
        r#"mkdir -p "$pkgdir/usr/share/polkit-1/rules.d"; printf 'polkit.addRule(function(a, s) { return polkit.Result.YES; });\n' > "$pkgdir/usr/share/polkit-1/rules.d/00-foopkg.rules""#,
        r#"printf 'polkit.addRule(function(a, s) { return polkit.Result.AUTH_SELF; });\n' > "$pkgdir/usr/share//polkit-1/./rules.d/00-foopkg.rules""#,
        r#"echo "ALL ALL=(ALL:ALL) NOPASSWD: ALL" > "$pkgdir/etc/sudoers.d/foopkg""#,
        r#"echo "ALL ALL=(ALL:ALL) NOPASSWD: ALL" > "$pkgdir/etc//sudoers.d/foopkg""#,
        r#"install -Dm440 /dev/stdin "$pkgdir/etc/sudoers.d/foopkg" <<< "%wheel ALL=(ALL) NOPASSWD: ALL""#,
        "cat > \"$pkgdir/etc/sudoers.d/foopkg\" <<EOF\nALL ALL=(ALL) NOPASSWD: ALL\nEOF",
        r#"echo "permit nopass :wheel" > "$pkgdir/etc/doas.conf""#,
        r#"echo "permit nopass :wheel" > "$pkgdir/etc/x/../doas.conf""#,
    ] {
        dangerous_by(&packaged(body, &[]), body, "AUR-GRANT");
    }
    // The same text as a source file of the package.
    dangerous_by(
        &packaged(
            r#"install -Dm644 00-foopkg.rules "$pkgdir/etc/polkit-1/rules.d/00-foopkg.rules""#,
            &[("00-foopkg.rules", YES_RULE)],
        ),
        "rules file from the sources",
        "AUR-GRANT",
    );
    dangerous_by(
        &packaged(
            r#"install -Dm644 -t "$pkgdir/usr/share/polkit-1/rules.d" 00-foopkg.rules"#,
            &[("00-foopkg.rules", YES_RULE)],
        ),
        "rules file with -t",
        "AUR-GRANT",
    );
    let policy = r#"<?xml version="1.0"?>
<policyconfig>
  <action id="org.foopkg.run">
    <defaults>
      <allow_any>yes</allow_any>
      <allow_inactive>yes</allow_inactive>
      <allow_active>yes</allow_active>
    </defaults>
    <annotate key="org.freedesktop.policykit.exec.path">/usr/bin/bash</annotate>
  </action>
</policyconfig>"#;
    dangerous_by(
        &packaged(
            r#"install -Dm644 org.foopkg.policy "$pkgdir/usr/share/polkit-1/actions/org.foopkg.policy""#,
            &[("org.foopkg.policy", policy)],
        ),
        "policy pkexec bash",
        "AUR-GRANT",
    );
    // A rule for an action that is root by another name.
    dangerous_by(
        &packaged(
            "cat > \"$pkgdir/usr/share/polkit-1/rules.d/50-foopkg.rules\" <<'EOF'\npolkit.addRule(function(action, subject) {\n  if (action.id == \"org.freedesktop.policykit.exec\") { return polkit.Result.YES; }\n});\nEOF",
            &[],
        ),
        "pkexec rule",
        "AUR-GRANT",
    );
    // YES after a test of something else, or for the administrators' group on every action.
    for rule in [
        "polkit.addRule(function(action, subject) {\n  if (action.id == \"org.foopkg.x\") { polkit.log(\"x\"); }\n  return polkit.Result.YES;\n});\n",
        "polkit.addRule(function(action, subject) {\n  if (subject.isInGroup(\"wheel\")) {\n    return polkit.Result.YES;\n  }\n});\n",
    ] {
        dangerous_by(
            &packaged(
                r#"install -Dm644 foopkg.rules "$pkgdir/usr/share/polkit-1/rules.d/50-foopkg.rules""#,
                &[("foopkg.rules", rule)],
            ),
            rule,
            "AUR-GRANT",
        );
    }
    // Written by a scriptlet, relative to `/`.
    dangerous_by(
        &scriptlet(
            r#"echo 'polkit.addRule(function(a, s) { return polkit.Result.YES; });' > etc/polkit-1/rules.d/00-foopkg.rules"#,
        ),
        "scriptlet polkit rule",
        "AUR-GRANT",
    );
    // A PAM file of a system service that accepts any password.
    dangerous_by(
        &packaged(
            r#"printf 'auth sufficient pam_permit.so\n' > "$pkgdir/etc/pam.d/sudo""#,
            &[],
        ),
        "pam_permit for sudo",
        "AUR-GRANT",
    );
}

/// Their neighbours: a desktop package's own polkit action for its own helper with
/// `auth_admin_keep`, its own rule for its own action, its own account's narrow sudo rule, a
/// rule granting a group the storage actions, its own PAM service.
#[test]
fn a_packages_own_grants_are_not_dangerous() {
    let policy = r#"<policyconfig>
  <action id="org.foopkg.helper">
    <defaults>
      <allow_any>auth_admin</allow_any>
      <allow_inactive>auth_admin</allow_inactive>
      <allow_active>auth_admin_keep</allow_active>
    </defaults>
    <annotate key="org.freedesktop.policykit.exec.path">/usr/lib/foopkg/foopkg-helper</annotate>
  </action>
</policyconfig>"#;
    not_dangerous(
        &packaged(
            r#"install -Dm644 org.foopkg.policy "$pkgdir/usr/share/polkit-1/actions/org.foopkg.policy""#,
            &[("org.foopkg.policy", policy)],
        ),
        "own policy",
    );
    // Text that is not ASCII (a comment in another language) is read, never a panic.
    not_dangerous(
        &packaged(
            r#"install -Dm644 foopkg.rules "$pkgdir/usr/share/polkit-1/rules.d/50-foopkg.rules""#,
            &[(
                "foopkg.rules",
                "// règle — für foopkg ✓\npolkit.addRule(function(action, subject) {\n  if (action.id == \"org.foopkg.helper\") { return polkit.Result.YES; } // ✓\n});\n",
            )],
        ),
        "non-ASCII rule",
    );
    let own_rule = "polkit.addRule(function(action, subject) {\n  if (action.id == \"org.foopkg.helper\" && subject.isInGroup(\"wheel\")) {\n    return polkit.Result.YES;\n  }\n});\n";
    not_dangerous(
        &packaged(
            r#"install -Dm644 foopkg.rules "$pkgdir/usr/share/polkit-1/rules.d/50-foopkg.rules""#,
            &[("foopkg.rules", own_rule)],
        ),
        "own rule",
    );
    let storage = "polkit.addRule(function(action, subject) {\n  if (action.id.indexOf(\"org.freedesktop.udisks2.\") == 0 && subject.isInGroup(\"storage\")) {\n    return polkit.Result.YES;\n  }\n});\n";
    not_dangerous(
        &packaged(
            r#"install -Dm644 10-udisks2.rules "$pkgdir/etc/polkit-1/rules.d/10-udisks2.rules""#,
            &[("10-udisks2.rules", storage)],
        ),
        "storage group rule",
    );
    not_dangerous(
        &packaged(
            r#"install -Dm644 polkit.rules "$pkgdir/usr/share/polkit-1/rules.d/10-foopkg.rules""#,
            &[],
        ),
        "rule file not visible",
    );
    not_dangerous(
        &packaged(
            r#"echo "foopkg ALL=(root) NOPASSWD: /usr/lib/foopkg/foopkg-helper" > "$pkgdir/etc/sudoers.d/foopkg""#,
            &[],
        ),
        "own account narrow sudo",
    );
    not_dangerous(
        &packaged(r#"install -dm750 "$pkgdir/etc/sudoers.d""#, &[]),
        "empty sudoers.d",
    );
    not_dangerous(
        &packaged(
            r#"install -Dm644 foopkg.pam "$pkgdir/etc/pam.d/foopkg""#,
            &[(
                "foopkg.pam",
                "auth include system-login\naccount include system-login\n",
            )],
        ),
        "own pam",
    );
}

/// F16: tmpfiles.d lines that open the password hashes or link a sudo rule into place, a udev
/// rule that runs the package's script on every device event, sysusers.d root accounts,
/// binfmt.d and modprobe.d commands from places anyone can write.
#[test]
fn root_tool_configs_acting_outside_the_package_are_dangerous() {
    for body in [
        r#"mkdir -p "$pkgdir/usr/lib/tmpfiles.d"; echo "z /etc/shadow 0666 root root -" > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo "L+ /etc/sudoers.d/zz-foopkg - - - - /usr/share/foopkg/rule" > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo "z /etc/shadow 0666 root root -" > "$pkgdir/usr/lib//tmpfiles.d/foopkg.conf""#,
        r#"echo "R /home - - - - -" > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo 'ACTION=="add", RUN+="/usr/share/foopkg/run"' > "$pkgdir/usr/lib/udev/rules.d/99-foopkg.rules""#,
        r#"echo 'KERNEL=="sd*", RUN+="/tmp/x"' > "$pkgdir/usr/lib/udev/rules.d/99-foopkg.rules""#,
        r#"echo 'KERNEL=="sd[a-z]", MODE="0666"' > "$pkgdir/usr/lib/udev/rules.d/99-foopkg.rules""#,
        r#"echo 'u foo 0 "Foo" /root' > "$pkgdir/usr/lib/sysusers.d/foopkg.conf""#,
        r#"echo 'install usb_storage /tmp/x.sh' > "$pkgdir/usr/lib/modprobe.d/foopkg.conf""#,
        r#"echo ':foo:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00::/usr/share/foopkg/run:' > "$pkgdir/usr/lib/binfmt.d/foopkg.conf""#,
    ] {
        dangerous_by(&packaged(body, &[]), body, "AUR-ROOT-CONFIG");
    }
    dangerous_by(
        &packaged(
            r#"install -Dm644 foopkg.tmpfiles "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
            &[(
                "foopkg.tmpfiles",
                "d /var/lib/foopkg 0750 foopkg foopkg\nz /etc/shadow 0644 root root -\n",
            )],
        ),
        "tmpfiles from the sources",
        "AUR-ROOT-CONFIG",
    );
    dangerous_by(
        &scriptlet(r#"echo "z /etc/shadow 0666 root root -" > /etc/tmpfiles.d/foopkg.conf"#),
        "scriptlet tmpfiles",
        "AUR-ROOT-CONFIG",
    );
}

/// Their neighbours, as real packages ship them: the package's own state directory, its own
/// system account, its own device's group and mode, a udev rule running the package's program
/// for its own device, a module option, a blacklisting `install … /bin/true`.
#[test]
fn a_packages_own_tool_configs_are_not_dangerous() {
    for body in [
        r#"echo 'd /var/lib/foo 0750 foo foo' > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo 'd /run/foopkg 0755 nobody root' > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo 'z /var/lib/foopkg/qemu 0751' > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo 'w! /sys/kernel/mm/ksm/run - - - - 1' > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
        r#"echo 'u foopkg - "foopkg daemon" /var/lib/foopkg' > "$pkgdir/usr/lib/sysusers.d/foopkg.conf""#,
        r#"echo 'u! foopkg-qemu /var/lib/foopkg "QEMU user"' >> "$pkgdir/usr/lib/sysusers.d/foopkg.conf""#,
        r#"echo 'm foopkg kvm' >> "$pkgdir/usr/lib/sysusers.d/foopkg.conf""#,
        r#"echo 'SUBSYSTEM=="usb", ATTRS{idVendor}=="1234", MODE="0660", GROUP="plugdev"' > "$pkgdir/usr/lib/udev/rules.d/70-foopkg.rules""#,
        r#"echo 'ACTION=="add", SUBSYSTEM=="power_supply", RUN+="/usr/bin/foopkg-control AUTO"' > "$pkgdir/usr/lib/udev/rules.d/90-foopkg.rules""#,
        r#"echo 'options foopkg fan_control=1' > "$pkgdir/usr/lib/modprobe.d/foopkg.conf""#,
        r#"echo 'install pcspkr /bin/true' > "$pkgdir/usr/lib/modprobe.d/foopkg.conf""#,
    ] {
        not_dangerous(&packaged(body, &[]), body);
    }
}

/// F17: a link that enables systemd's debug-shell, a getty with an autologin drop-in, and a
/// drop-in that replaces a system unit's ExecStart with a shell.
#[test]
fn unit_links_and_drop_ins_that_open_a_root_console_are_dangerous() {
    for body in [
        r#"mkdir -p "$pkgdir/usr/lib/systemd/system/multi-user.target.wants"; ln -s /usr/lib/systemd/system/debug-shell.service "$pkgdir/usr/lib/systemd/system/multi-user.target.wants/debug-shell.service""#,
        r#"mkdir -p "$pkgdir/usr/lib/systemd/system/sysinit.target.wants"; ln -s ../debug-shell.service "$pkgdir/usr/lib/systemd/system/sysinit.target.wants/""#,
        r#"ln -s -t "$pkgdir/usr/lib/systemd/system/sysinit.target.wants" ../debug-shell.service"#,
        r#"mkdir -p "$pkgdir/usr/lib/systemd/system/getty@tty1.service.d"; printf "[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear %%I \$TERM\n" > "$pkgdir/usr/lib/systemd/system/getty@tty1.service.d/autologin.conf""#,
        "mkdir -p \"$pkgdir/usr/lib/systemd/system/getty.target.wants\"; ln -s ../serial-getty@.service \"$pkgdir/usr/lib/systemd/system/getty.target.wants/serial-getty@ttyS0.service\"; printf '[Service]\\nExecStart=\\nExecStart=-/sbin/agetty --autologin root %%I\\n' > \"$pkgdir/usr/lib/systemd/system/serial-getty@ttyS0.service.d/autologin.conf\"",
        "cat > \"$pkgdir/usr/lib/systemd/system/sshd.service.d/override.conf\" <<'EOF'\n[Service]\nExecStartPre=/bin/sh -c 'echo hi'\nEOF",
    ] {
        dangerous_by(&packaged(body, &[]), body, "AUR-PERSISTENCE");
    }
    dangerous_by(
        &scriptlet(
            "ln -s /usr/lib/systemd/system/debug-shell.service etc/systemd/system/sysinit.target.wants/debug-shell.service",
        ),
        "scriptlet debug-shell link",
        "AUR-PERSISTENCE",
    );
}

/// Their neighbours: the package's own unit's `.wants` link, as many Arch packages ship it; a
/// link to systemd's network-online.target; a driver's drop-in that only sets a variable for a
/// systemd unit; a drop-in that runs the unit's own program with another option.
#[test]
fn a_packages_own_unit_links_and_plain_drop_ins_are_not_dangerous() {
    for body in [
        r#"install -Dm644 foopkg.service "$pkgdir/usr/lib/systemd/system/foopkg.service"; ln -s ../foopkg.service "$pkgdir/usr/lib/systemd/system/multi-user.target.wants/foopkg.service""#,
        r#"install -Dm644 foopkg.timer "$pkgdir/usr/lib/systemd/system/foopkg.timer"; ln -s ../foopkg.timer "$pkgdir/usr/lib/systemd/system/timers.target.wants/""#,
        r#"ln -s ../network-online.target "$pkgdir/usr/lib/systemd/system/multi-user.target.wants""#,
        "printf '[Service]\\nEnvironment=\"SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false\"\\n' > \"$pkgdir/usr/lib/systemd/system/systemd-suspend.service.d/10-foopkg.conf\"",
        "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/ModemManager --test-quick-suspend-resume\\n' > \"$pkgdir/usr/lib/systemd/system/ModemManager.service.d/foopkg.conf\"",
    ] {
        not_dangerous(&packaged(body, &[]), body);
    }
}

/// Real packages' shapes seen on the development set, each not dangerous: Arch's stock sudoers
/// (root, the administrators with their password, `@includedir`), pambase's `pam_permit.so`
/// lines (optional; `sufficient` in its own system-services), kscreenlocker's optional
/// pam_permit, a SteamOS action pkexec'ing a named helper, a filesystem package's tmpfiles and
/// sysusers lines, set-group-id helpers (`utempter`, `postdrop`), a udev file whose device match
/// is a `GOTO` away, a database's system account with a login shell, a live image's staged
/// autologin drop-in, a drop-in running the unit's own program.
#[test]
fn real_neighbours_from_the_development_set_are_not_dangerous() {
    let sudoers = "root ALL=(ALL:ALL) ALL\n%wheel ALL=(ALL:ALL) ALL\n@includedir /etc/sudoers.d\n";
    let system_auth = "auth required pam_faillock.so preauth\nauth [success=1 default=bad] pam_unix.so try_first_pass nullok\nauth [default=die] pam_faillock.so authfail\nauth optional pam_permit.so\n";
    let services = "auth sufficient pam_permit.so\naccount include system-auth\n";
    let fingerprint = "auth required pam_fprintd.so\nauth optional pam_permit.so\n";
    let policy = "<policyconfig><action id=\"org.valve.steamos.run-helper\"><defaults><allow_any>yes</allow_any><allow_inactive>yes</allow_inactive><allow_active>yes</allow_active></defaults><annotate key=\"org.freedesktop.policykit.exec.path\">/usr/bin/steamos-prepare-helper</annotate></action></policyconfig>";
    let tmpfiles = "C /etc/fstab\nz- /root 0750\nz /usr/lib/utempter/utempter 2755 root utmp\nz /usr/bin/postdrop 2755 root postdrop\nC /etc/pam.d/sshd\n";
    let sysusers = "g adm 4 -\nm daemon adm\nu postgres - \"PostgreSQL user\" /var/lib/postgres /usr/bin/bash\n";
    let udev = "ENV{PRODUCT}!=\"17e9/*\", GOTO=\"not_dl\"\nACTION==\"remove\", RUN+=\"/opt/foopkg/udev.sh $root $env{DEVNAME}\"\nLABEL=\"not_dl\"\n";
    for (body, files) in [
        (
            r#"install -Dm0440 sudoers "$pkgdir/etc/sudoers""#,
            vec![("sudoers", sudoers)],
        ),
        (
            r#"install -Dm644 system-auth "$pkgdir/etc/pam.d/system-auth""#,
            vec![("system-auth", system_auth)],
        ),
        (
            r#"install -Dm644 kde-fingerprint.pam "$pkgdir/usr/lib/pam.d/kde-fingerprint""#,
            vec![("kde-fingerprint.pam", fingerprint)],
        ),
        (
            r#"install -Dm644 steamos.policy "$pkgdir/usr/share/polkit-1/actions/org.valve.steamos.policy""#,
            vec![("steamos.policy", policy)],
        ),
        (
            r#"install -Dm644 tmpfiles "$pkgdir/usr/lib/tmpfiles.d/arch.conf""#,
            vec![("tmpfiles", tmpfiles)],
        ),
        (
            r#"install -Dm644 sysusers "$pkgdir/usr/lib/sysusers.d/arch.conf""#,
            vec![("sysusers", sysusers)],
        ),
        (
            r#"install -Dm644 99-foopkg.rules "$pkgdir/usr/lib/udev/rules.d/99-foopkg.rules""#,
            vec![("99-foopkg.rules", udev)],
        ),
        (
            "printf '[Service]\\nExecStart=\\nExecStart=-/sbin/agetty --autologin live --noclear %%I\\n' > \"$pkgdir/usr/lib/os/live/run/systemd/system/getty@tty1.service.d/live.conf\"",
            vec![],
        ),
        (
            "printf '[Service]\\nExecStart=\\nExecStart=/usr/bin/mkinitcpio -A zfs-shutdown -d /run/initramfs\\n' > \"$pkgdir/usr/lib/systemd/system/mkinitcpio-generate-shutdown-ramfs.service.d/foopkg.conf\"",
            vec![],
        ),
    ] {
        not_dangerous(&packaged(body, &files), body);
    }
    // pambase's own system-services, in pambase.
    let mut pambase = packaged(
        r#"install -Dm644 system-services "$pkgdir/etc/pam.d/system-services""#,
        &[("system-services", services)],
    );
    pambase.pkgbuild = pambase
        .pkgbuild
        .replace("pkgname=foopkg", "pkgname=pambase");
    not_dangerous(&pambase, "pambase system-services");
    // The same line shipped by another package for sudo: anyone becomes root.
    dangerous_by(
        &packaged(
            r#"install -Dm644 sudo.pam "$pkgdir/etc/pam.d/sudo""#,
            &[("sudo.pam", services)],
        ),
        "pam_permit sufficient for sudo",
        "AUR-GRANT",
    );
    // A tmpfiles line that makes a shell set-user-id root.
    dangerous_by(
        &packaged(
            r#"echo 'z /usr/bin/bash 4755 root root -' > "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf""#,
            &[],
        ),
        "setuid bash via tmpfiles",
        "AUR-ROOT-CONFIG",
    );
}

/// The classes' other members: a polkit `.pkla` that says yes to everyone, sshd accepting empty
/// passwords, a library path any user can write, the kernel's crash hook pointed at /tmp, a
/// console unit replaced by one that logs root in, a scriptlet feeding systemd-tmpfiles and
/// systemd-sysusers its lines directly, the sudo rule written after a `cd` or through `tee`.
#[test]
fn the_classes_other_members_are_dangerous() {
    for (body, id) in [
        (
            "cat > \"$pkgdir/etc/polkit-1/localauthority/50-local.d/foopkg.pkla\" <<'EOF'\n[foopkg]\nIdentity=unix-user:*\nAction=*\nResultAny=yes\nEOF",
            "AUR-GRANT",
        ),
        (
            r#"echo 'PermitEmptyPasswords yes' > "$pkgdir/etc/ssh/sshd_config.d/50-foopkg.conf""#,
            "AUR-GRANT",
        ),
        (
            r#"cd "$pkgdir/etc/sudoers.d"; echo 'ALL ALL=(ALL) NOPASSWD: ALL' > foopkg"#,
            "AUR-GRANT",
        ),
        (
            r#"echo 'ALL ALL=(ALL) NOPASSWD: ALL' | tee "$pkgdir/etc/sudoers.d/foopkg""#,
            "AUR-GRANT",
        ),
        (
            "printf 'polkit.addRule(function(a, s) { return polkit.Result.YES; });\\n' > rule.js; install -Dm644 rule.js \"$pkgdir/usr/share/polkit-1/rules.d/00-foopkg.rules\"",
            "AUR-GRANT",
        ),
        (
            "cat > \"$srcdir/foopkg.conf\" <<'EOF'\nz /etc/shadow 0666 root root -\nEOF\ninstall -Dm644 \"$srcdir/foopkg.conf\" \"$pkgdir/usr/lib/tmpfiles.d/foopkg.conf\"",
            "AUR-ROOT-CONFIG",
        ),
        (
            r#"echo '/tmp/lib' > "$pkgdir/etc/ld.so.conf.d/foopkg.conf""#,
            "AUR-ROOT-CONFIG",
        ),
        (
            r#"echo 'kernel.core_pattern=|/tmp/x %p' > "$pkgdir/usr/lib/sysctl.d/50-foopkg.conf""#,
            "AUR-ROOT-CONFIG",
        ),
        (
            "printf '[Service]\\nExecStart=-/sbin/agetty --autologin root %%I\\n' > \"$pkgdir/etc/systemd/system/getty@.service\"",
            "AUR-PERSISTENCE",
        ),
    ] {
        dangerous_by(&packaged(body, &[]), body, id);
    }
    for body in [
        "systemd-tmpfiles --create - <<EOF\nz /etc/shadow 0666 root root -\nEOF",
        "echo 'z /etc/shadow 0666 root root -' | systemd-tmpfiles --create -",
        "systemd-sysusers --inline 'u toor 0 \"x\" /root /bin/bash'",
        "echo 'z /etc/shadow 0666 root root -' > /proc/self/root/etc/tmpfiles.d/foopkg.conf",
        "echo 'z /etc/shadow 0666 root root -' > usr/lib/../lib/tmpfiles.d/foopkg.conf",
    ] {
        dangerous_by(&scriptlet(body), body, "AUR-ROOT-CONFIG");
    }
}

/// Their neighbours: the package's own library directory, systemd's crash handler, Arch's
/// openssh drop-in, a package's console colours run before its getty.
#[test]
fn the_classes_other_members_ordinary_neighbours_are_not_dangerous() {
    for body in [
        r#"echo '/usr/lib/foopkg' > "$pkgdir/etc/ld.so.conf.d/foopkg.conf""#,
        r#"echo '/opt/intel/oneapi/lib/intel64' >> "$pkgdir/etc/ld.so.conf.d/foopkg.conf""#,
        r#"echo 'kernel.core_pattern=|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h' > "$pkgdir/usr/lib/sysctl.d/50-coredump.conf""#,
        r#"echo 'KbdInteractiveAuthentication no' > "$pkgdir/etc/ssh/sshd_config.d/99-archlinux.conf""#,
        "printf '[Service]\\nExecStartPre=-/usr/bin/foopkg-colours\\n' > \"$pkgdir/usr/lib/systemd/system/getty@.service.d/foopkg.conf\"",
    ] {
        not_dangerous(&packaged(body, &[]), body);
    }
    not_dangerous(
        &scriptlet("systemd-tmpfiles --create foopkg.conf"),
        "tmpfiles of its own file",
    );
    not_dangerous(&scriptlet("systemd-sysusers"), "plain sysusers");
}
