//! Argument injection (part of `hostile.rs`): a table of hostile strings through `archgate call`
//! into every tool that runs a program. The programs are recorders in a private bin directory
//! (`[exec] search_dirs`), which write down the argv they were given; archgate must pass each
//! hostile string as one whole argument or refuse it — never split it, never interpret it,
//! never let it create a file, never crash.

use crate::support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The hostile strings: shell syntax, option injection, control characters, long and unicode
/// tricks. Each mentions `{c}` (the canary directory) where a successful injection would create
/// a file.
fn payloads(c: &Path) -> Vec<String> {
    let c = c.display().to_string();
    let mut p: Vec<String> = [
        "$(touch {c}/p1)",
        "`touch {c}/p2`",
        "; touch {c}/p3",
        "| touch {c}/p4",
        "&& touch {c}/p5",
        "|| touch {c}/p6",
        "& touch {c}/p7",
        "\ntouch {c}/p8",
        "\r\ntouch {c}/p9",
        "x;touch${IFS}{c}/p10",
        "$(printf 'touch {c}/p11'|sh)",
        "${touch {c}/p12}",
        "<(touch {c}/p13)",
        ">(touch {c}/p14)",
        "> {c}/p15",
        ">> {c}/p16",
        "2> {c}/p17",
        "< /etc/passwd > {c}/p18",
        "'; touch {c}/p19; '",
        "\"; touch {c}/p20; \"",
        "\\\"; touch {c}/p21",
        "$'\\x3b' touch {c}/p22",
        "--output={c}/p23",
        "--output {c}/p24",
        "-o{c}/p25",
        "-o {c}/p26",
        "--config={c}/p27",
        "--exec=touch {c}/p28",
        "--eval=touch('{c}/p29')",
        "-e touch {c}/p30",
        "--",
        "-",
        "--help",
        "-h",
        "--version",
        "-rf",
        "--no-preserve-root",
        "--log-file={c}/p31",
        "--save={c}/p32",
        "--file={c}/p33",
        "--dump-to={c}/p34",
        "-exec touch {c}/p35 ;",
        "@{c}/p36",
        "file://{c}/p37",
        "http://127.0.0.1:1/$(touch {c}/p38)",
        "mailto:x@y?body=$(touch {c}/p39)",
        "javascript:alert(1)",
        "data:text/html,<script>1</script>",
        "\u{0}touch {c}/p40",
        "a\u{0}--output={c}/p41",
        "\u{1b}]0;touch {c}/p42\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{7f}\u{8}\u{8}touch {c}/p43",
        "\u{202e}txt.exe",
        "\u{200b}--output={c}/p44",
        "\u{ff1b} touch {c}/p45",
        "\u{2014}\u{2014}output={c}/p46",
        "\u{feff}$(touch {c}/p47)",
        "é\u{301}$(touch {c}/p48)",
        "\u{d7ff}\u{e000}\u{10ffff}",
        "%24(touch%20{c}/p49)",
        "%0atouch {c}/p50",
        "\\n touch {c}/p51",
        "*",
        "/*",
        "~/.ssh/id_rsa",
        "../../../../etc/shadow",
        "/etc/passwd",
        "/dev/zero",
        "/proc/self/environ",
        "{c}/../../../../bin/sh",
        "$HOME",
        "${PATH}",
        "$((1+1))",
        "!!",
        "!-1",
        "#",
        "a b c d",
        "\t",
        " ",
        "",
        "sudo touch {c}/p52",
        "pkexec touch {c}/p53",
        "doas touch {c}/p54",
        "su -c 'touch {c}/p55'",
        "run0 touch {c}/p56",
        "x; sudo -s",
        "$(sudo id)",
        "/usr/bin/sudo",
        "SUDO_ASKPASS=/bin/true sudo -A true",
        "env sudo true",
        "exec --output={c}/p57",
        "theme; touch {c}/p58",
        "'\"`$\\",
        "{{{{}}}}",
        "%s%s%s%s%n",
        "%(touch {c}/p59)s",
    ]
    .iter()
    .map(|t| t.replace("{c}", &c))
    .collect();
    p.push(format!("{}$(touch {c}/p60)", "A".repeat(60_000)));
    p.push("-".repeat(5000));
    p.push(format!("{}touch {c}/p61", "\n".repeat(1000)));
    p.push("\u{1F4A9}".repeat(2000));
    p
}

/// The words that elevate privilege; a payload naming one must be refused.
const ELEVATORS: &[&str] = &["sudo", "pkexec", "doas", "su", "run0"];

fn elevates(p: &str) -> bool {
    p.split(|c: char| c.is_whitespace() || "=;|&$(){}`<>,:!'\"".contains(c))
        .any(|w| {
            let base = w.rsplit('/').next().unwrap_or(w);
            ELEVATORS.iter().any(|e| e.eq_ignore_ascii_case(base))
        })
}

/// A recorder program: writes its name and argv (NUL-separated) to `log`, then answers what
/// archgate asks of it (Omarchy's version and registry, Quickshell's IPC listing).
fn recorder(bin: &Path, name: &str, log: &Path, fixtures: &Path) {
    let script = format!(
        r#"#!/bin/sh
PATH=/usr/bin:/bin
n=${{0##*/}}
f="{log}/$n.$$.$(cat /proc/sys/kernel/random/uuid)"
printf '%s\0' "$n" "$@" > "$f"
case "$n $1" in
  "omarchy version") echo 4.0.0 ;;
  "omarchy commands") cat "{fx}/commands.json" ;;
  "qs ipc") [ "$2" = show ] && cat "{fx}/ipc-show.txt" ;;
  "wpctl status") cat "{fx}/wpctl-status.txt" ;;
esac
exit 0
"#,
        log = log.display(),
        fx = fixtures.display()
    );
    let p = bin.join(name);
    std::fs::write(&p, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

struct Rig {
    env: Env,
    canary: PathBuf,
    log: PathBuf,
}

fn rig() -> Rig {
    let env0 = Env::with_config("");
    let scratch = env0.path("scratch");
    let bin = scratch.join("bin");
    let log = scratch.join("argv");
    let canary = scratch.join("canary");
    let fixtures = scratch.join("fixtures");
    let omarchy = scratch.join("omarchy");
    for d in [&bin, &log, &canary, &fixtures, &omarchy] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
    // Omarchy 4's registry shape (`omarchy commands --all --json`); our own summaries.
    std::fs::write(
        fixtures.join("commands.json"),
        r#"{"ok": true, "commands": [
  {"route": "omarchy theme set", "binary": "omarchy-theme-set", "group": "theme", "name": "set", "summary": "Switch theme", "requires_sudo": false, "hidden": false, "args": "<theme-name>", "examples": [], "aliases": [], "filename_route": "omarchy theme set", "routes": ["omarchy theme set"]},
  {"route": "omarchy osd", "binary": "omarchy-osd", "group": "osd", "name": "", "summary": "Show a message", "requires_sudo": false, "hidden": false, "args": "[-i|--icon <icon>] [-m|--message <text>]", "examples": [], "aliases": [], "filename_route": "omarchy osd", "routes": ["omarchy osd"]},
  {"route": "omarchy font set", "binary": "omarchy-font-set", "group": "font", "name": "set", "summary": "Set the font", "requires_sudo": false, "hidden": false, "args": "<font-name> [style...]", "examples": [], "aliases": [], "filename_route": "omarchy font set", "routes": ["omarchy font set"]}
]}"#,
    )
    .unwrap();
    std::fs::write(
        fixtures.join("ipc-show.txt"),
        "target launcher\n  function open(): void\n  function search(query: string): void\n",
    )
    .unwrap();
    std::fs::write(
        fixtures.join("wpctl-status.txt"),
        "Audio\n ├─ Sinks:\n │  *   46. Built-in Audio Analog Stereo  [vol: 0.45]\n ├─ Sources:\n",
    )
    .unwrap();
    for name in [
        "omarchy",
        "omarchy-osd",
        "omarchy-font-set",
        "omarchy-theme-set",
        "omarchy-theme-bg-next",
        "notify-send",
        "wl-copy",
        "wl-paste",
        "setsid",
        "xdg-open",
        "gtk-launch",
        "qs",
        "wpctl",
        "brightnessctl",
        "playerctl",
        "grim",
        "tesseract",
        "makoctl",
    ] {
        recorder(&bin, name, &log, &fixtures);
    }
    let config = format!(
        "[approval]\npage = false\nnotifications = false\n\
         [budgets]\nper_minute = 100000\nper_day = 10000000\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\ntimeout_s = 10\n\
         [policy]\nallow = [\"omarchy_run theme set\", \"omarchy_run font set\", \"omarchy_run osd\", \"notify\", \"osd\", \"clipboard_write\", \"launch url\", \"shell_call launcher search\", \"audio switch\", \"theme set\"]\n",
        bin.display()
    );
    env0.write_config(&config);
    let mut env = env0;
    env.vars
        .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
    env.vars
        .push(("WAYLAND_DISPLAY".into(), "wayland-test".into()));
    Rig { env, canary, log }
}

/// The argv lists recorded since the last call (and clears them).
fn take_argvs(log: &Path) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(log).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        out.push(
            bytes
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>(),
        );
        std::fs::remove_file(e.path()).unwrap();
    }
    out
}

/// The tools that run a program, each with the place a hostile string goes.
fn carriers(p: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("omarchy_run", json!({"route": "theme set", "args": [p]})),
        (
            "omarchy_run",
            json!({"route": "font set", "args": ["Mono", p]}),
        ),
        ("notify", json!({"title": p, "body": p})),
        ("osd", json!({"message": p})),
        ("clipboard_write", json!({"text": p})),
        ("launch", json!({"url": p})),
        ("launch", json!({"app": p})),
        (
            "shell_call",
            json!({"target": "launcher", "method": "search", "args": [p]}),
        ),
        ("audio", json!({"action": "switch", "sink": p})),
        ("theme", json!({"action": "set", "name": p})),
        ("toggle", json!({"name": p})),
        ("omarchy_run", json!({"route": p})),
    ]
}

#[test]
fn argument_injection_into_every_program_running_tool_never_succeeds() {
    let rig = rig();
    let payloads = payloads(&rig.canary);
    assert!(payloads.len() >= 100, "{} hostile inputs", payloads.len());
    let mut calls = 0usize;
    let mut ran = 0usize;
    let mut whole = 0usize;
    for p in &payloads {
        for (tool, args) in carriers(p) {
            let (result, out) = rig.env.call(tool, &args);
            calls += 1;
            assert!(
                out.status.code().is_some(),
                "{tool} with {p:?}: archgate died of a signal: {out:?}"
            );
            let o = outcome(&result);
            let argvs = take_argvs(&rig.log);
            // A payload that names a privilege-elevating program is refused where it could become
            // a command; where it is only text (a notification, the clipboard) it stays text.
            if elevates(p) && !matches!(tool, "clipboard_write" | "notify" | "osd") {
                assert_ne!(o, "ok", "{tool} with {p:?} must be refused: {result}");
                assert!(
                    argvs.iter().flatten().all(|a| !a.contains(p.as_str())),
                    "{tool} passed {p:?} to a program: {argvs:?}"
                );
            }
            for argv in &argvs {
                assert!(!elevates(&argv[0]), "{tool} ran {argv:?}");
            }
            // Whatever ran got the hostile string as one argument, never in pieces.
            let probe: String = p.chars().filter(|c| *c != '\0').take(12).collect();
            for argv in &argvs {
                ran += 1;
                for a in argv.iter().skip(1) {
                    if probe.len() >= 4 && a.contains(&probe) && !p.contains('\0') {
                        assert!(
                            a == p || a.contains(p.as_str()),
                            "{tool}: {p:?} reached {} split: {argv:?}",
                            argv[0]
                        );
                        whole += 1;
                    }
                }
            }
            if o == "ok" {
                assert!(
                    !argvs.is_empty() || matches!(tool, "clipboard_write"),
                    "{tool} said ok with {p:?} but ran nothing"
                );
            }
        }
    }
    let created: Vec<_> = std::fs::read_dir(&rig.canary).unwrap().flatten().collect();
    assert!(
        created.is_empty(),
        "an injection created files: {:?}",
        created.iter().map(|e| e.path()).collect::<Vec<_>>()
    );
    assert_eq!(
        rig.env.calls().len(),
        calls,
        "one record per call, no crash"
    );
    assert!(
        ran > 0 && whole > 0,
        "the table reached real programs ({ran} runs, {whole} whole hostile arguments)"
    );
    eprintln!(
        "{} hostile inputs × {} carriers = {calls} calls; {ran} program runs, {whole} hostile arguments passed whole",
        payloads.len(),
        carriers("").len()
    );
}
