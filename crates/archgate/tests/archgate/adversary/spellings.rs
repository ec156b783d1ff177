//! Issue 16, attacks 1–3, against the real binary: one canonical route per target whatever the
//! spelling or the tool, a destructive Omarchy route asks through any tool whether or not the
//! registry was searched first, sudo routes are blocked, and a desktop entry whose `Exec=`
//! elevates is blocked on the command resolution built — while the honest call still runs.
//!
//! The Omarchy here is a fixture: a dispatcher that prints a registry in Omarchy 4's real shape
//! (`omarchy commands --all --json`, our own summaries) and route scripts that record how they
//! were called.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::support::{Env, RunLog, outcome};

const REGISTRY: &str = r#"{"ok": true, "commands": [
  {"route": "omarchy theme set", "binary": "omarchy-theme-set", "group": "theme", "name": "set", "summary": "Switch theme", "requires_sudo": false, "hidden": false, "args": "<theme-name>", "examples": [], "aliases": [], "filename_route": "omarchy theme set", "routes": ["omarchy theme set"]},
  {"route": "omarchy theme bg-switcher", "binary": "omarchy-theme-bg-switcher", "group": "theme", "name": "bg-switcher", "summary": "Pick a wallpaper", "requires_sudo": false, "hidden": false, "args": "", "examples": [], "aliases": ["omarchy background"], "filename_route": "omarchy theme bg switcher", "routes": ["omarchy background", "omarchy theme bg switcher", "omarchy theme bg-switcher"]},
  {"route": "omarchy toggle nightlight", "binary": "omarchy-toggle-nightlight", "group": "toggle", "name": "nightlight", "summary": "Warm colours", "requires_sudo": false, "hidden": false, "args": "[--status]", "examples": [], "aliases": [], "filename_route": "omarchy toggle nightlight", "routes": ["omarchy toggle nightlight"]},
  {"route": "omarchy system reboot", "binary": "omarchy-system-reboot", "group": "system", "name": "reboot", "summary": "Restart the computer", "requires_sudo": false, "hidden": false, "args": "", "examples": [], "aliases": ["omarchy reboot"], "filename_route": "omarchy system reboot", "routes": ["omarchy reboot", "omarchy system reboot"]},
  {"route": "omarchy pkg add", "binary": "omarchy-pkg-add", "group": "pkg", "name": "add", "summary": "Install packages", "requires_sudo": true, "hidden": false, "args": "<packages...>", "examples": [], "aliases": [], "filename_route": "omarchy pkg add", "routes": ["omarchy pkg add"]}
]}"#;

struct Rig {
    env: Env,
    ran: RunLog,
    /// A trusted directory of applications outside Omarchy's `bin/` (a program there is no
    /// route's script: `launch` starts it as an application).
    apps: PathBuf,
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fixture Omarchy and desktop, with `policy` as the `[policy]` section.
fn rig(policy: &str) -> Rig {
    let mut env = Env::with_config("");
    let omarchy = env.path("scratch/omarchy");
    let bin = omarchy.join("bin");
    let ran = env.path("scratch/ran.log");
    std::fs::create_dir_all(&bin).unwrap();
    // An installed theme (a value `theme set` resolves before the question).
    std::fs::create_dir_all(omarchy.join("themes/nord")).unwrap();
    std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
    std::fs::write(omarchy.join("commands.json"), REGISTRY).unwrap();
    script(
        &bin.join("omarchy"),
        &format!(
            "case \"$1\" in version) echo 4.0.0 ;; commands) /bin/cat {} ;; *) exit 99 ;; esac",
            omarchy.join("commands.json").display()
        ),
    );
    for name in [
        "omarchy-theme-set",
        "omarchy-theme-bg-switcher",
        "omarchy-toggle-nightlight",
        "omarchy-system-reboot",
        "omarchy-pkg-add",
    ] {
        // Route scripts carry Omarchy 4's header lines, as the real ones in its bin/ do.
        script(
            &bin.join(name),
            &format!(
                "# omarchy:summary=Fixture for {name}\n# omarchy:group=fixture\necho \"${{0##*/}} $*\" >> {}",
                ran.display()
            ),
        );
    }
    let apps = env.path("scratch/apps");
    std::fs::create_dir_all(&apps).unwrap();
    script(
        &apps.join("true"),
        &format!("echo \"${{0##*/}} $*\" >> {}", ran.display()),
    );
    env.write_config(&format!(
        "[approval]\npage = false\nnotifications = false\n\
         [exec]\nsearch_dirs = [\"{}\", \"{}\"]\nrequire_root_owned = false\n\
         [policy]\n{policy}\n",
        bin.display(),
        apps.display()
    ));
    env.vars
        .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
    // System desktop entries (`entry`) are here: root's when the tests run as root.
    let share = env.path("scratch/share");
    env.vars
        .push(("XDG_DATA_DIRS".into(), share.display().to_string()));
    Rig {
        env,
        ran: RunLog::new(ran),
        apps,
    }
}

impl Rig {
    fn ran(&self) -> Vec<String> {
        self.ran.take()
    }
    fn call(&self, tool: &str, args: Value) -> (String, Value) {
        let (r, _) = self.env.call(tool, &args);
        (outcome(&r), r)
    }
    /// A system desktop entry (`$XDG_DATA_DIRS/applications`): an application only when root's,
    /// so when these tests run as root (CI); a person's own entry would be refused (attack 18).
    fn entry(&self, id: &str, exec: &str) {
        let dir = self.env.path("scratch/share/applications");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{id}.desktop")),
            format!("[Desktop Entry]\nType=Application\nName={id}\nExec={exec}\n"),
        )
        .unwrap();
    }
}

#[test]
fn another_spelling_of_a_denied_target_is_denied() {
    // (the person's deny rule, a call that names the same target another way)
    let cases: &[(&str, &str, Value)] = &[
        (
            "omarchy_run theme set",
            "omarchy_run",
            json!({"route": "omarchy theme set", "args": ["nord"]}),
        ),
        (
            "theme set",
            "omarchy_run",
            json!({"route": "theme set", "args": ["nord"]}),
        ),
        (
            "toggle nightlight",
            "omarchy_run",
            json!({"route": "toggle nightlight"}),
        ),
        (
            "omarchy_run toggle nightlight",
            "toggle",
            json!({"name": "nightlight"}),
        ),
        (
            "omarchy background",
            "omarchy_run",
            json!({"route": "theme bg-switcher"}),
        ),
        (
            "omarchy_run theme bg-switcher",
            "omarchy_run",
            json!({"route": "background"}),
        ),
        (
            "launch app org.example.Tool",
            "launch",
            json!({"app": "org.example.Tool.desktop"}),
        ),
    ];
    for (rule, tool, args) in cases {
        let r = rig(&format!(
            "deny = [\"{rule}\"]\nallow = [\"omarchy theme set\", \"omarchy toggle nightlight\", \"omarchy theme bg-switcher\", \"launch app org.example.Tool\"]"
        ));
        r.entry(
            "org.example.Tool",
            &format!("{}/true tool", r.apps.display()),
        );
        let (o, res) = r.call(tool, args.clone());
        assert_eq!(
            o, "refused",
            "deny {rule:?} must hold for {tool} {args}: {res}"
        );
        assert!(
            r.ran().is_empty(),
            "deny {rule:?}: {tool} {args} ran something"
        );
    }
    // The honest path: the same calls under the allow rules alone run exactly the route's script.
    let r = rig(
        "allow = [\"omarchy theme set\", \"omarchy toggle nightlight\", \"omarchy theme bg-switcher\"]",
    );
    for (tool, args, ran) in [
        (
            "omarchy_run",
            json!({"route": "omarchy theme set", "args": ["nord"]}),
            "omarchy-theme-set nord",
        ),
        (
            "toggle",
            json!({"name": "nightlight"}),
            "omarchy-toggle-nightlight ",
        ),
        (
            "omarchy_run",
            json!({"route": "background"}),
            "omarchy-theme-bg-switcher ",
        ),
    ] {
        let (o, res) = r.call(tool, args.clone());
        assert_eq!(o, "ok", "{tool} {args}: {res}");
        assert_eq!(r.ran(), vec![ran.to_owned()], "{tool} {args}");
    }
    // Every spelling is recorded under the one canonical route.
    let routes: Vec<String> = r
        .env
        .calls()
        .iter()
        .filter_map(|c| c["route"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        routes,
        vec![
            "omarchy theme set",
            "omarchy toggle nightlight",
            "omarchy theme bg-switcher"
        ]
    );
}

#[test]
fn a_destructive_route_asks_through_any_spelling_before_and_after_a_search() {
    // An allow rule on every spelling: destructive routes still ask (no channel here, so the
    // answer is that the person's yes is needed), whether or not the registry was read first.
    let r = rig(
        "allow = [\"omarchy system reboot\", \"omarchy_run system reboot\", \"omarchy reboot\"]",
    );
    for round in ["before a search", "after a search"] {
        for route in ["system reboot", "reboot", "omarchy system reboot"] {
            let (o, res) = r.call("omarchy_run", json!({"route": route}));
            assert_eq!(o, "unsupported", "{round}: {route}: {res}");
            let text = res.to_string();
            assert!(
                text.contains("omarchy-system-reboot"),
                "the exact command is named: {text}"
            );
        }
        let (o, _) = r.call("omarchy_search", json!({"query": "reboot"}));
        assert_eq!(o, "ok");
    }
    assert!(r.ran().is_empty(), "nothing rebooted");
    // `archgate policy explain` takes the same decision the gate takes.
    let out = r
        .env
        .run(&["policy", "explain", "omarchy_run", r#"{"route":"reboot"}"#]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("route:    omarchy system reboot"), "{text}");
    assert!(text.contains("tier:     destructive"), "{text}");
    assert!(text.contains("decision: ask"), "{text}");
}

#[test]
fn sudo_routes_are_blocked_whatever_allows_them() {
    let r = rig("allow = [\"omarchy pkg add\", \"omarchy_run pkg add\"]");
    let (o, res) = r.call("omarchy_run", json!({"route": "pkg add", "args": ["vim"]}));
    assert_eq!(o, "refused", "{res}");
    assert!(res.to_string().contains("root"), "{res}");
    assert!(r.ran().is_empty());
}

#[test]
fn a_desktop_entry_that_elevates_is_blocked_on_what_it_resolves_to() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED: needs root (a system desktop entry must be root's to launch); CI runs it as root"
        );
        return;
    }
    let r = rig("allow = [\"launch app evil\", \"launch app fine\"]");
    for exec in [
        "su -c \"touch /tmp/x\" root",
        "pkexec /usr/bin/id",
        "env sudo id",
        "/usr/bin/doas id",
    ] {
        r.entry("evil", exec);
        let (o, res) = r.call("launch", json!({"app": "evil"}));
        assert_eq!(o, "refused", "Exec={exec}: {res}");
        assert!(res.to_string().contains("elevates privilege"), "{res}");
    }
    // The honest entry runs (the program is the fixture `true`, in the trusted directory).
    r.entry("fine", &format!("{}/true fine", r.apps.display()));
    let (o, res) = r.call("launch", json!({"app": "fine.desktop"}));
    assert_eq!(o, "ok", "{res}");
    let ran = crate::support::wait_for("the launched program", || {
        let v = r.ran();
        (!v.is_empty()).then_some(v)
    });
    assert_eq!(ran, vec!["true fine".to_owned()]);
}
