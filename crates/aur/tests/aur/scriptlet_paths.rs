//! Install scriptlets run with `/` as the working directory (pacman chroots to the root and
//! changes to `/` before running one; an ALPM hook's Exec line the same), so `usr/bin/x` in
//! one is the live `/usr/bin/x`. Class: a relative path in a scriptlet or hook was not resolved
//! against `/`, so what it changes on the live system got no finding at all.
//! The shapes are our own text: post_install functions written with the paths relative, the way
//! several packages' .install files spell `usr/lib/...` for `/usr/lib/...`.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

fn with_install(script: &str) -> AuditInput {
    AuditInput {
        pkgbuild: "pkgname=demo\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://github.com/demo/demo\"\nlicense=('MIT')\ninstall=demo.install\npackage() {\n  install -Dm755 demo \"$pkgdir/usr/bin/demo\"\n}\n".into(),
        install_scripts: vec![ScriptFile {
            name: "demo.install".into(),
            content: script.into(),
        }],
        srcinfo: None,
    }
}

#[track_caller]
fn severity_of(script: &str, id: &str) -> Option<Severity> {
    audit(&with_install(script))
        .findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.severity)
        .max()
}

#[test]
fn relative_paths_in_an_install_script_are_the_live_system() {
    for (rel, abs) in [
        (
            "post_install() {\n  setcap cap_setuid+ep usr/bin/x\n}\n",
            "post_install() {\n  setcap cap_setuid+ep /usr/bin/x\n}\n",
        ),
        (
            "post_install() {\n  chmod u+s usr/bin/x\n}\n",
            "post_install() {\n  chmod u+s /usr/bin/x\n}\n",
        ),
        (
            "post_install() {\n  chmod 777 etc/demo\n}\n",
            "post_install() {\n  chmod 777 /etc/demo\n}\n",
        ),
    ] {
        let id = if rel.contains("setcap") {
            "AUR-CAPABILITY"
        } else if rel.contains("777") {
            "AUR-WORLD-WRITABLE"
        } else {
            "AUR-SETUID"
        };
        let r = audit(&with_install(rel));
        assert_eq!(r.verdict, Verdict::Dangerous, "{rel}: {}", r.to_text());
        let f = r.findings.iter().find(|f| f.id == id).expect("found");
        assert!(f.severity >= Severity::High, "{rel}: {}", r.to_text());
        assert!(
            f.why.contains("/usr/bin/x") || f.why.contains("/etc/demo"),
            "{}",
            f.why
        );
        // The relative spelling is judged exactly as the absolute one.
        assert_eq!(severity_of(rel, id), severity_of(abs, id), "{rel}");
    }
    // `./usr/bin/x` and a `cd` to another directory first are resolved too.
    assert!(
        severity_of(
            "post_install() {\n  chmod 4755 ./usr/bin/x\n}\n",
            "AUR-SETUID"
        ) >= Some(Severity::High)
    );
    assert!(
        severity_of(
            "post_install() {\n  cd usr/lib\n  setcap cap_sys_admin+ep ../bin/x\n}\n",
            "AUR-CAPABILITY"
        ) >= Some(Severity::High)
    );
}

#[test]
fn relative_writes_in_an_install_script_are_writes_to_the_system() {
    // A relative write into the system's cron folder from a root scriptlet is persistence.
    let r = audit(&with_install(
        "post_install() {\n  echo '* * * * * root /opt/x' > etc/cron.d/demo\n}\n",
    ));
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "AUR-PERSISTENCE" && f.severity >= Severity::High),
        "{}",
        r.to_text()
    );
}

#[test]
fn relative_paths_in_an_alpm_hook_are_the_live_system() {
    // A hook's Exec line runs chrooted at the root with `/` as its working directory too.
    let mut inp = with_install("post_install() {\n  true\n}\n");
    inp.pkgbuild = inp.pkgbuild.replace(
        "package() {",
        "source+=(\"demo.hook\")\npackage() {\n  install -Dm644 demo.hook \"$pkgdir/usr/share/libalpm/hooks/demo.hook\"",
    );
    inp.install_scripts.push(ScriptFile {
        name: "demo.hook".into(),
        content: "[Trigger]\nOperation = Install\nType = Package\nTarget = *\n\n[Action]\nWhen = PostTransaction\nExec = /usr/bin/chmod u+s usr/bin/x\n".into(),
    });
    let r = audit(&inp);
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "AUR-SETUID" && f.file == "demo.hook" && f.severity >= Severity::High),
        "{}",
        r.to_text()
    );
}
