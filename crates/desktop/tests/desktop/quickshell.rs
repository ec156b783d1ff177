//! Quickshell IPC from our `qs ipc show` snapshot: parsing, checked calls, archgate-targeting
//! calls blocked; and the whole path through a permit with a fixture `qs`.

use archgate_desktop::shell::{parse_ipc_show, plan_shell_call};
use archgate_desktop::{Desktop, DesktopConfig, DesktopEnv, IpcType};
use archgate_exec::CommandSpec;
use serde_json::json;

use crate::common::{data, permit_with, script};

fn targets() -> Vec<archgate_desktop::ShellTarget> {
    parse_ipc_show(&std::fs::read_to_string(data("quickshell/ipc-show.txt")).unwrap())
        .expect("parses")
}

fn plan(target: &str, method: &str, args: serde_json::Value) -> archgate_desktop::Result<String> {
    let args = args.as_array().cloned().unwrap_or_default();
    plan_shell_call(
        &targets(),
        CommandSpec::new("qs").arg("ipc"),
        target,
        method,
        &args,
    )
    .map(|s| s.display())
}

#[test]
fn ipc_show_parses_into_typed_signatures() {
    let t = targets();
    assert_eq!(
        t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        vec![
            "bar",
            "volume",
            "launcher",
            "notifications",
            "wallpaper",
            "shell",
            "io.github.person.archgate",
            "plugins"
        ]
    );
    let volume = &t[1];
    let nudge = volume.functions.iter().find(|f| f.name == "nudge").unwrap();
    assert_eq!(nudge.params.len(), 2);
    assert_eq!(nudge.params[0].ty, IpcType::Real);
    assert_eq!(nudge.params[1].ty, IpcType::Bool);
    assert_eq!(nudge.returns, IpcType::Void);
    assert_eq!(volume.functions[0].returns, IpcType::String);
    assert_eq!(volume.properties[0].name, "level");
    let json = serde_json::to_value(&t[0]).unwrap();
    assert_eq!(json["functions"][1]["params"][0]["type"], "bool");
}

#[test]
fn calls_are_checked_against_signatures() {
    assert_eq!(
        plan("volume", "setVolume", json!([40])).unwrap(),
        "qs ipc call volume setVolume 40"
    );
    assert_eq!(
        plan("volume", "setVolume", json!(["40"])).unwrap(),
        "qs ipc call volume setVolume 40"
    );
    assert_eq!(
        plan("volume", "nudge", json!([0.5, true])).unwrap(),
        "qs ipc call volume nudge 0.5 true"
    );
    assert_eq!(
        plan("launcher", "search", json!(["fire fox"])).unwrap(),
        "qs ipc call launcher search 'fire fox'"
    );
    assert_eq!(
        plan("bar", "toggle", json!([])).unwrap(),
        "qs ipc call bar toggle"
    );
    // (target, method, args, error kind)
    let bad = [
        ("volume", "setVolume", json!([]), "invalid_argument"),
        ("volume", "setVolume", json!([1, 2]), "invalid_argument"),
        ("volume", "setVolume", json!(["loud"]), "invalid_argument"),
        ("volume", "setVolume", json!([1.5]), "invalid_argument"),
        ("volume", "nudge", json!([0.5, "yes"]), "invalid_argument"),
        ("bar", "setVisible", json!([1]), "invalid_argument"),
        ("launcher", "search", json!([3]), "invalid_argument"),
        // A string starting with `-` would be an option of qs itself (issue 33's class:
        // a flag nobody's signature lists passes nowhere).
        ("launcher", "search", json!(["--pid"]), "invalid_argument"),
        ("wallpaper", "load", json!(["-c", "x"]), "invalid_argument"),
        ("wallpaper", "fancy", json!(["x"]), "invalid_argument"),
        ("volumes", "setVolume", json!([1]), "not_found"),
        ("volume", "mute", json!([]), "not_found"),
        ("shell", "quit", json!([]), "blocked"),
        ("shell", "reload", json!([]), "blocked"),
        ("io.github.person.archgate", "status", json!([]), "blocked"),
        ("plugins", "disable", json!(["weather"]), "blocked"),
        ("launcher", "search", json!(["archgate"]), "blocked"),
    ];
    for (t, m, a, kind) in bad {
        let err = plan(t, m, a.clone()).expect_err(&format!("{t}.{m}({a})"));
        assert_eq!(err.kind(), kind, "{t}.{m}({a}): {err}");
    }
    // Reading the shell's version is not a lifecycle call.
    assert!(plan("shell", "version", json!([])).is_ok());
}

#[test]
fn malformed_listings() {
    assert_eq!(
        parse_ipc_show("  function f(): void\n").unwrap_err().kind(),
        "malformed"
    );
    assert_eq!(parse_ipc_show("target \n").unwrap_err().kind(), "malformed");
    // Unknown lines and unreadable signatures are skipped, not fatal.
    let t = parse_ipc_show("target a\n  function (: void\n  weird line\n  function ok(): void\n")
        .unwrap();
    assert_eq!(t[0].functions.len(), 1);
    assert!(parse_ipc_show("").unwrap().is_empty());
}

#[tokio::test]
async fn shell_targets_and_call_through_a_permit() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(data("quickshell/ipc-show.txt"), home.join("ipc-show.txt")).unwrap();
    script(
        &bin,
        "qs",
        r#"for a in "$@"; do
  case "$a" in
    show) cat "$HOME/ipc-show.txt"; exit 0 ;;
    call) shift 2; echo "called $*"; exit 0 ;;
  esac
done
exit 2"#,
    );
    let d = Desktop::new(
        DesktopEnv::from_vars([("HOME", home.to_str().unwrap())]),
        DesktopConfig::default(),
    );
    let permit = permit_with(&bin);
    let t = d.shell_targets(&permit).await.expect("targets");
    assert_eq!(t.len(), 8);
    let out = d
        .shell_call(&permit, "volume", "setVolume", &[json!(35)])
        .await
        .expect("called");
    assert!(out.success);
    assert_eq!(out.stdout.trim(), "called volume setVolume 35");
    let err = d
        .shell_call(&permit, "shell", "quit", &[])
        .await
        .expect_err("blocked");
    assert_eq!(err.kind(), "blocked");
}
