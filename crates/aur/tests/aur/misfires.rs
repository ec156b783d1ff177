//! The shapes that misfired on real, legitimate AUR packages, written as our own samples in
//! the corpus (see each PKGBUILD's "Shape:" line): each is judged `ok` (or `review` at most),
//! with the reason the audit gives. And the other side: the same commands aimed at the live
//! system are still caught.

use archgate_aur::audit::{AuditInput, AuditReport, Severity, Verdict, audit};

fn sample(name: &str) -> AuditReport {
    let dir = crate::manifest_dir().join("corpus/benign").join(name);
    audit(&archgate_aur::load_path(&dir).expect("sample loads"))
}

#[track_caller]
fn ok_without(r: &AuditReport, id: &str) {
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    assert_eq!(r.reasons, ["no finding above low severity"]);
    assert!(
        !r.findings.iter().any(|f| f.id == id),
        "{id} still reported: {}",
        r.to_text()
    );
}

#[test]
fn sed_expression_before_a_pkgdir_file_is_not_a_write_to_the_system() {
    // `sed -i -e "/Exec=/i\…" "$pkgdir"/…desktop` (google-chrome shape).
    ok_without(
        &sample("b51-sed-expression-then-pkgdir-file"),
        "AUR-WRITE-SYSTEM",
    );
}

#[test]
fn sed_expression_then_in_place_flag_on_a_srcdir_file_is_not_a_write_to_the_system() {
    // `sed -E -e '/^(CLEAN|MODULES_CONF)/d' -i "$_pkgsrc/dkms.conf"` (facetimehd-dkms shape).
    ok_without(&sample("b52-dkms-sed-E-e-i-srcdir"), "AUR-WRITE-SYSTEM");
}

#[test]
fn the_projects_own_github_repo_is_not_foreign_and_go_version_runs_nothing() {
    let r = sample("b53-own-github-repo-website-url");
    ok_without(&r, "AUR-SOURCE-FOREIGN-EXEC");
    assert!(!r.findings.iter().any(|f| f.id == "AUR-SOURCE-FOREIGN"));
}

#[test]
fn a_unit_rename_migration_is_low_with_its_reason() {
    let r = sample("b54-unit-rename-migration");
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-PERSISTENCE")
        .expect("the enable is still reported");
    assert_eq!(f.severity, Severity::Low);
    assert_eq!(f.file, "fanpilot.install");
    assert!(f.why.contains("unit rename"), "{}", f.why);
}

#[test]
fn a_driver_enabling_its_vendors_suspend_services_is_low_with_its_reason() {
    let r = sample("b55-driver-vendor-suspend-services");
    assert!(r.verdict <= Verdict::Review, "{}", r.to_text());
    let p: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.id == "AUR-PERSISTENCE")
        .collect();
    assert!(p.len() >= 2, "both enables are reported: {}", r.to_text());
    for f in p {
        assert_eq!(f.severity, Severity::Low, "{}", f.why);
        assert!(
            f.why.contains("suspend") || f.why.contains("ships"),
            "{}",
            f.why
        );
    }
    // What keeps it at review is the setuid helper, named as such.
    assert!(
        r.reasons.iter().all(|x| x.contains("AUR-SETUID")),
        "{:?}",
        r.reasons
    );
}

#[test]
fn brace_expansion_and_globs_are_not_obfuscation() {
    ok_without(&sample("b56-brace-expansion-and-globs"), "AUR-OBFUSCATION");
}

#[test]
fn an_install_script_without_a_dot_is_read_not_missing() {
    let r = sample("b57-install-script-without-dot");
    ok_without(&r, "AUR-INSTALL-MISSING");
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-INSTALL-SCRIPT")
        .expect("install= is noted as read");
    assert!(f.why.contains("vrlink-install"), "{}", f.why);
}

#[test]
fn the_electron_sandbox_helper_setuid_is_low_with_its_reason() {
    let r = sample("b58-electron-sandbox-setuid");
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let s: Vec<_> = r.findings.iter().filter(|f| f.id == "AUR-SETUID").collect();
    assert_eq!(s.len(), 2, "{}", r.to_text());
    assert!(
        s.iter()
            .all(|f| f.severity == Severity::Low && f.why.contains("sandbox"))
    );
}

#[test]
fn enabling_the_unit_the_package_ships_is_low_with_its_reason() {
    let r = sample("b59-enables-shipped-unit");
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-PERSISTENCE")
        .expect("reported");
    assert_eq!(f.severity, Severity::Low);
    assert!(f.why.contains("ships itself"), "{}", f.why);
    // `systemctl disable --now` is not "enables and starts".
    assert!(
        !r.findings
            .iter()
            .any(|f| f.why.contains("enables and starts"))
    );
}

fn pb(body: &str) -> AuditInput {
    AuditInput::new(format!(
        "pkgname=demo\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://github.com/demo/demo\"\nlicense=('MIT')\nsource=(\"https://github.com/demo/demo/archive/v1.0.tar.gz\")\nsha256sums=('{}')\n{body}",
        "ab".repeat(32)
    ))
}

#[track_caller]
fn flags(body: &str, id: &str, min: Severity) {
    let r = audit(&pb(body));
    assert!(
        r.findings.iter().any(|f| f.id == id && f.severity >= min),
        "{id} missing for {body}: {}",
        r.to_text()
    );
}

#[test]
fn real_writes_to_the_system_are_still_caught_in_every_argument_order() {
    let h = Severity::High;
    flags(
        "build() {\n  sed -i -e 's/x/y/' /etc/hosts\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  sed -E -e '/^a/d' -i /etc/hosts\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  sed -i.bak 's/x/y/' /usr/share/x.conf\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  sed --in-place --expression='s/x/y/' /usr/share/x.conf\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  perl -pi -e 's/x/y/' /usr/share/x.conf\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "package() {\n  install -Dm644 x.rules /usr/lib/udev/rules.d/x.rules\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "package() {\n  install -m 644 -t /usr/local/bin tool\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  cp -a tool /usr/local/bin/\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  echo x | tee -a /usr/local/etc/x.conf\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  cd /usr/local/bin\n  cp \"$srcdir/tool\" tool\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  cd /usr/local/share\n  cd ../bin\n  touch x\n}\n",
        "AUR-WRITE-SYSTEM",
        h,
    );
    flags(
        "build() {\n  echo x >> /etc/profile\n}\n",
        "AUR-PERSISTENCE",
        h,
    );
    // A sed expression that names a path is still just an expression.
    let r = audit(&pb(
        "prepare() {\n  sed -i -e '/usr/local/etc/d' -e 's|/etc/x|/etc/y|' x.conf\n}\n",
    ));
    assert!(
        !r.findings.iter().any(|f| f.id.starts_with("AUR-WRITE")),
        "{}",
        r.to_text()
    );
}

#[test]
fn quote_splitting_is_still_obfuscation_but_braces_are_not() {
    flags(
        "build() {\n  'c''u''r''l' -s https://example.org/x\n}\n",
        "AUR-OBFUSCATION",
        Severity::Medium,
    );
    flags(
        "build() {\n  \"b\"u\"n\" x\n}\n",
        "AUR-OBFUSCATION",
        Severity::Medium,
    );
    let r = audit(&pb(
        "build() {\n  cp {a,b,c}.[ch] x/\n  ls src/*.{c,h}\n}\n",
    ));
    assert!(
        !r.findings.iter().any(|f| f.id == "AUR-OBFUSCATION"),
        "{}",
        r.to_text()
    );
}

#[test]
fn enabling_a_unit_the_package_does_not_ship_stays_high() {
    let inp = AuditInput {
        install_scripts: vec![archgate_aur::ScriptFile {
            name: "demo.install".into(),
            content: "post_install() {\n  systemctl enable sshd.service\n}\n".into(),
        }],
        ..pb("install=demo.install\npackage() {\n  true\n}\n")
    };
    let r = audit(&inp);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-PERSISTENCE")
        .expect("found");
    assert_eq!(f.severity, Severity::High, "{}", f.why);
    assert!(f.why.contains("does not ship"), "{}", f.why);
    // A migration needs the old unit checked and disabled; enabling alone is not one.
    let fake = AuditInput {
        install_scripts: vec![archgate_aur::ScriptFile {
            name: "demo.install".into(),
            content: "post_upgrade() {\n  systemctl is-enabled -q sshd\n  systemctl enable evil.service\n}\n".into(),
        }],
        ..pb("install=demo.install\n")
    };
    assert_eq!(audit(&fake).verdict, Verdict::Dangerous);
}

#[test]
fn a_foreign_repo_named_like_the_package_is_own_but_a_renamed_patch_repo_is_not() {
    let r = audit(&pb(
        "source+=(\"patches::git+https://github.com/someone-else/tweaks.git\")\nsha256sums+=('SKIP')\nprepare() {\n  cd patches\n  ./apply.sh\n}\n",
    ));
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-SOURCE-FOREIGN-EXEC")
        .expect("foreign code run");
    assert_eq!(f.severity, Severity::Critical);
    assert_eq!(r.verdict, Verdict::Dangerous);
}
