//! False dangerous verdicts found in bench/aur's landing-3 test set (BioArchLinux and Artix's
//! `world` tree, looked at once, bench/RESULTS.md "Landing 3"), each fixed afterwards at its rule
//! by what the code means. The packages are our own text in the real shapes (each test names the
//! shape); the attack each rule exists for is asserted beside it. The test set's figures stay the
//! ones taken at the look: these fixes are measured on the development set only.

use archgate_aur::audit::{AuditInput, AuditReport, Severity, Verdict, audit};

fn max_of(r: &AuditReport, id: &str) -> Option<Severity> {
    r.findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.severity)
        .max()
}

fn with_package(pkgname: &str, body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/{pkgname}\"\nlicense=('GPL')\nsource=(\"https://example.org/{pkgname}-$pkgver.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage() {{\n{body}\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

// Class: a slash written before one of makepkg's absolute build directories (`/$pkgdir/…`,
// `/${srcdir}/…`) was read as a path on the live system. `$pkgdir` is itself an absolute
// path, so `/$pkgdir/usr/share/x` is `//…/pkg/x/usr/share/x`: the package's own tree.

#[test]
fn a_slash_before_pkgdir_still_writes_into_the_package() {
    // Shape: a Java tool's package() copying its jar with `cp x.jar /$pkgdir/usr/share/x/`
    // (BioArchLinux's mhap).
    let r = audit(&with_package(
        "jartool",
        "  cd jartool-$pkgver/target\n  mkdir -p ${pkgdir}/usr/share/${pkgname}\n  cp jartool.jar /$pkgdir/usr/share/${pkgname}/\n  cp -r lib //${pkgdir}/usr/share/${pkgname}/lib\n  install -Dm644 README /${srcdir}/README.copy",
    ));
    assert_eq!(max_of(&r, "AUR-WRITE-SYSTEM"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_live_system_path_in_package_is_still_a_write_to_the_system() {
    // The attack the rule is for: package() writing the live /usr, not the package's tree.
    let r = audit(&with_package(
        "jartool",
        "  cp jartool.jar /usr/share/jartool/\n  cp jartool.jar /usr/$pkgdir/x",
    ));
    assert_eq!(
        max_of(&r, "AUR-WRITE-SYSTEM"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}
