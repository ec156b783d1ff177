//! Omarchy's registry in Omarchy 4's real shape: parsing, the classification table over every
//! route Omarchy 4 ships, sudo and archgate-targeting routes, spellings, search, the
//! version-keyed cache, and resolved routes running exactly their own script. The snapshot and
//! the route list are in `tests/data/omarchy/` (see its README for where the shape came from);
//! a fixture `omarchy` program serving the snapshot stands in for the dispatcher, and fixture
//! scripts with Omarchy's header lines for the route scripts.

use std::path::Path;

use archgate_desktop::omarchy::{Invocation, RouteTier, classify, targets_archgate};
use archgate_desktop::{Desktop, DesktopConfig, DesktopEnv, Registry};

use crate::common::{data, permit_with, script};

fn registry() -> Registry {
    Registry::parse(
        &std::fs::read(data("omarchy/commands.json")).expect("snapshot"),
        Some("4.0.0.alpha"),
    )
    .expect("parses")
}

#[test]
fn snapshot_parses_skipping_unusable_entries() {
    let reg = registry();
    assert_eq!(reg.version.as_deref(), Some("4.0.0.alpha"));
    // 30 commands; the entry whose binary leaves bin/ and the one without a binary are skipped.
    assert_eq!(reg.routes.len(), 30);
    assert!(reg.get("evil").is_none() && reg.get("broken").is_none());
    let set = reg.get("theme set").expect("theme set");
    assert_eq!(set.route, "omarchy theme set");
    assert_eq!(set.binary, "omarchy-theme-set");
    assert_eq!(set.group, "theme");
    assert_eq!(set.args, "<theme-name>");
    assert_eq!(reg.get("omarchy theme set"), Some(set));
    assert_eq!(reg.get("  omarchy   theme set "), Some(set));
    assert!(reg.get("--bad route").is_none());
}

/// Every route in `routes` and every alias names the same command.
#[test]
fn every_spelling_names_one_command() {
    let reg = registry();
    let canonical = |r: &str| reg.get(r).map(|x| x.route.clone());
    assert_eq!(
        canonical("background").as_deref(),
        Some("omarchy theme bg-switcher")
    );
    assert_eq!(
        canonical("theme bg switcher").as_deref(),
        Some("omarchy theme bg-switcher")
    );
    assert_eq!(
        canonical("omarchy logout").as_deref(),
        Some("omarchy system logout")
    );
    assert_eq!(
        canonical("screenshot").as_deref(),
        Some("omarchy capture screenshot")
    );
    assert_eq!(
        canonical("install dev env").as_deref(),
        Some("omarchy install dev-env")
    );
    let bg = reg.get("background").unwrap();
    assert!(
        bg.aliases.contains(&"omarchy background".to_owned()),
        "{:?}",
        bg.aliases
    );
}

/// The committed list of every route Omarchy 4 ships (facts: route, requires_sudo, hidden),
/// each classified by the one table.
#[test]
fn every_omarchy_4_route_is_classified() {
    let text = std::fs::read_to_string(data("omarchy/routes-4.0.0.alpha.tsv")).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.split('\t');
        let route = f.next().unwrap();
        let sudo = f.next().unwrap() == "true";
        let words: Vec<String> = route.split(' ').skip(1).map(str::to_owned).collect();
        let tier = classify(&words);
        n += 1;
        *counts
            .entry(if sudo {
                "blocked".to_owned()
            } else {
                format!("{tier:?}")
            })
            .or_insert(0) += 1;
        // Spot checks of the table against routes a person would judge the same way.
        let expect = match route {
            "omarchy system reboot"
            | "omarchy system shutdown"
            | "omarchy system logout"
            | "omarchy refresh hyprland"
            | "omarchy remove gaming battlenet"
            | "omarchy update"
            | "omarchy reinstall configs"
            | "omarchy theme remove"
            | "omarchy drive select"
            | "omarchy hibernation setup"
            | "omarchy channel set"
            | "omarchy update aur pkgs"
            | "omarchy hyprland window close all"
            // Values run as code (attack 3, F9): every such route Omarchy 4 ships.
            | "omarchy launch tui"
            | "omarchy launch or focus tui"
            | "omarchy launch or focus"
            | "omarchy launch or focus webapp"
            | "omarchy launch terminal"
            | "omarchy launch floating terminal with presentation"
            | "omarchy restart app"
            | "omarchy hook"
            | "omarchy shell"
            | "omarchy tui install"
            | "omarchy webapp install"
            | "omarchy mise install" => Some(RouteTier::Destructive),
            "omarchy theme list"
            | "omarchy theme current"
            | "omarchy version"
            | "omarchy version channel"
            | "omarchy battery status"
            | "omarchy update available"
            | "omarchy network status"
            | "omarchy hibernation available"
            | "omarchy font list" => Some(RouteTier::Read),
            "omarchy theme set"
            | "omarchy toggle nightlight"
            | "omarchy font set"
            | "omarchy launch browser"
            | "omarchy audio output volume"
            | "omarchy osd" => Some(RouteTier::Act),
            _ => None,
        };
        if let Some(want) = expect {
            assert_eq!(tier, want, "{route}");
        }
        // No route under a destructive group is ever read or act by accident.
        for g in ["remove", "reinstall", "refresh", "drive"] {
            if words.first().map(String::as_str) == Some(g) && words.len() > 1 {
                let last = words.last().unwrap();
                if !["info", "available", "status", "current", "list"].contains(&last.as_str()) {
                    assert_eq!(tier, RouteTier::Destructive, "{route}");
                }
            }
        }
    }
    assert_eq!(n, 368, "the list holds every route of Omarchy 4.0.0.alpha");
    assert_eq!(counts.get("blocked"), Some(&73), "{counts:?}");
}

/// Every plugin route Omarchy 4 ships is guarded unless it only reads (issue 33: `plugin
/// clone` was not). The bare groups (`plugin`, `bar plugin`) take their verb as the first
/// argument: each verb their usages offer is judged (our list of the verbs, not Omarchy's text).
#[test]
fn every_omarchy_4_plugin_route_is_guarded_unless_it_reads() {
    use archgate_desktop::omarchy::guard::PLUGIN_READS;
    let text = std::fs::read_to_string(data("omarchy/routes-4.0.0.alpha.tsv")).unwrap();
    let verbs = [
        "list", "rescan", "enable", "disable", "add", "update", "remove", "rm", "drop", "clone",
        "edit", "validate", "move", "set", "replace",
    ];
    let mut guarded = Vec::new();
    let mut plugin_routes = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let route = line.split('\t').next().unwrap();
        let words: Vec<String> = route.split(' ').skip(1).map(str::to_owned).collect();
        if !words.iter().any(|w| w.contains("plugin")) {
            continue;
        }
        plugin_routes += 1;
        let judged = |args: &[String]| {
            targets_archgate(Invocation::Route {
                words: &words,
                args,
            })
        };
        if words.last().is_some_and(|w| w.contains("plugin")) {
            // A bare group: nothing yet, then each verb as its first argument.
            assert!(!judged(&[]), "{route} alone prints its usage");
            for v in verbs {
                let args = vec![v.to_owned(), "some.id".to_owned()];
                assert_eq!(judged(&args), !PLUGIN_READS.contains(&v), "{route} {v}");
            }
        } else if judged(&[]) {
            guarded.push(route);
        }
    }
    assert_eq!(plugin_routes, 5, "the plugin routes of Omarchy 4.0.0.alpha");
    assert_eq!(guarded, vec!["omarchy plugin clone"]);
}

#[test]
fn tiers_and_blocks_in_the_snapshot() {
    let reg = registry();
    let tier = |r: &str| reg.get(r).unwrap_or_else(|| panic!("{r}")).tier;
    assert_eq!(tier("theme list"), RouteTier::Read);
    assert_eq!(tier("theme set"), RouteTier::Act);
    assert_eq!(tier("system reboot"), RouteTier::Destructive);
    assert_eq!(tier("logout"), RouteTier::Destructive);
    // An unreadable usage is asked as act at least.
    assert!(!reg.get("bar").unwrap().usage.is_readable());
    assert_eq!(tier("bar"), RouteTier::Act);
    let sudo: Vec<&str> = reg
        .routes
        .iter()
        .filter(|r| r.requires_sudo)
        .map(|r| r.route.as_str())
        .collect();
    assert_eq!(
        sudo,
        vec![
            "omarchy install dev-env",
            "omarchy pkg add",
            "omarchy update"
        ]
    );
    let marked: Vec<&str> = reg
        .routes
        .iter()
        .filter(|r| r.targets_archgate)
        .map(|r| r.route.as_str())
        .collect();
    assert_eq!(marked, vec!["omarchy restart shell"]);
}

#[test]
fn search_ranks_by_name_then_group_then_summary_and_hides_hidden() {
    let reg = registry();
    let top = |q: &str| reg.search(q, 3).first().map(|h| h.route.route.clone());
    assert_eq!(top("theme set").as_deref(), Some("omarchy theme set"));
    assert_eq!(
        top("nightlight").as_deref(),
        Some("omarchy toggle nightlight")
    );
    assert_eq!(
        top("background").as_deref(),
        Some("omarchy theme bg-switcher")
    );
    assert_eq!(
        top("wallpaper image file").as_deref(),
        Some("omarchy theme bg set")
    );
    assert_eq!(
        top("warm colours").as_deref(),
        Some("omarchy toggle nightlight")
    );
    assert!(
        reg.search("browser", 10).iter().all(|h| !h.route.hidden),
        "hidden routes are not offered"
    );
    assert_eq!(
        top("theme set browser").as_deref(),
        Some("omarchy theme set browser"),
        "unless named"
    );
    assert!(reg.search("zzzz-nothing", 5).is_empty());
    assert!(reg.search("", 5).is_empty());
    let json = serde_json::to_value(reg.search("pkg add", 1)).unwrap();
    assert_eq!(json[0]["route"], "omarchy pkg add");
    assert_eq!(json[0]["args"], "<packages...>");
    assert!(json[0]["blocked"].as_str().unwrap().contains("root"));
    assert!(
        json[0].get("binary").is_none(),
        "agents get what they need, in few tokens"
    );
}

#[test]
fn not_found_names_near_routes_and_args_follow_the_usage() {
    let reg = registry();
    let err = reg.resolve("theme sett").expect_err("no such route");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("omarchy theme set"), "{err}");
    let check = |r: &str, a: &[&str]| {
        let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        Registry::check_args(reg.get(r).unwrap(), &a)
    };
    assert_eq!(
        check("theme set", &[]).unwrap_err().kind(),
        "invalid_argument"
    );
    assert!(check("theme set", &["tokyo-night"]).is_ok());
    assert!(check("theme set", &["a", "b"]).is_err());
    // An option nobody listed never reaches the script.
    let e = check("theme set", &["--help"]).unwrap_err();
    assert!(e.to_string().contains("no flags"), "{e}");
    assert!(
        check("audio output volume", &["sideways"]).is_ok(),
        "open choice (+N|-N)"
    );
    assert!(check("audio output volume", &["-5"]).is_ok());
    assert!(check("osd", &["--message", "hi", "--progress", "40"]).is_ok());
    assert!(check("osd", &["--yes"]).is_err());
    assert!(
        check("toggle idle", &["sometimes"]).is_err(),
        "closed choices"
    );
    assert!(check("toggle idle", &["stay-awake"]).is_ok());
    assert!(check("pkg aur add", &["a", "b", "c"]).is_ok());
    assert!(check("font set", &["a\0b"]).is_err());
    let spec = archgate_desktop::omarchy::route_command(
        reg.get("theme set").unwrap(),
        &["tokyo-night".into()],
    )
    .unwrap();
    assert_eq!(spec.display(), "omarchy-theme-set tokyo-night");
}

#[test]
fn garbage_registries_are_malformed_naming_version_and_entry() {
    for bad in [
        &b"not json"[..],
        b"42",
        b"{\"ok\": true, \"commands\": 3}",
        b"{\"ok\": false}",
        b"{\"ok\": true}",
        b"{\"ok\": true, \"commands\": []}",
        b"{\"ok\": true, \"commands\": [{\"route\": 5}]}",
    ] {
        let e = Registry::parse(bad, Some("4.0.0")).unwrap_err();
        assert_eq!(e.kind(), "malformed", "{}", String::from_utf8_lossy(bad));
    }
    let e = Registry::parse(
        br#"{"ok": true, "commands": [{"route": "omarchy x"}]}"#,
        Some("4.0.1"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("4.0.1") && e.contains("entry 0") && e.contains("omarchy x"),
        "{e}"
    );
    // The shape we never had (route arrays, tiers) is not read as if it were Omarchy's.
    let old = br#"{"ok": true, "commands": [{"route": ["theme", "set"], "tier": "act"}]}"#;
    assert!(Registry::parse(old, None).is_err());
}

/// A fixture Omarchy: `$OMARCHY_PATH/version`, an `omarchy` dispatcher that logs each call to
/// `$HOME/calls.log` and prints the snapshot for `commands --all --json`, and route scripts with
/// Omarchy 4's header lines (`# omarchy:summary=…`), each logging how it was called.
fn fixture(dir: &Path) -> Desktop {
    let bin = dir.join("bin");
    let home = dir.join("home");
    let omarchy = dir.join("omarchy");
    for d in [&bin, &home, &omarchy] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(data("omarchy/commands.json"), home.join("commands.json")).unwrap();
    std::fs::write(omarchy.join("version"), "4.0.0.alpha\n").unwrap();
    script(
        &bin,
        "omarchy",
        r#"echo "$*" >> "$HOME/calls.log"
case "$1" in
  commands) cat "$HOME/commands.json" ;;
  version) cat "$OMARCHY_PATH/version" ;;
  *) echo "the dispatcher itself is never what runs a route" >&2; exit 99 ;;
esac"#,
    );
    for (name, summary, body) in [
        (
            "omarchy-toggle-nightlight",
            "Warm screen colours on or off",
            r#"echo "toggled nightlight $*""#,
        ),
        (
            "omarchy-hyprland-window-gaps-toggle",
            "Gaps on or off",
            r#"echo "toggled gaps""#,
        ),
        (
            "omarchy-font-set",
            "Use another font",
            "echo \"font $1\"; exit 3",
        ),
        ("omarchy-pkg-add", "Install packages", "echo installed"),
        ("omarchy-plugin", "Manage plugins", "echo plugins"),
    ] {
        script(
            &bin,
            name,
            &format!(
                "# omarchy:summary={summary}\necho \"{name} $*\" >> \"$HOME/calls.log\"\n{body}"
            ),
        );
    }
    Desktop::new(
        DesktopEnv::from_vars([
            ("HOME", home.to_str().unwrap()),
            ("OMARCHY_PATH", omarchy.to_str().unwrap()),
        ]),
        DesktopConfig::default(),
    )
}

fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("home/calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn registry_is_cached_until_the_version_changes() {
    let dir = tempfile::tempdir().unwrap();
    let d = fixture(dir.path());
    let permit = permit_with(&dir.path().join("bin"));
    let first = d.omarchy_registry(&permit).await.expect("loads");
    let second = d.omarchy_registry(&permit).await.expect("cached");
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    assert_eq!(calls(dir.path()), vec!["commands --all --json"]);
    std::fs::write(dir.path().join("omarchy/version"), "4.0.1\n").unwrap();
    let third = d.omarchy_registry(&permit).await.expect("reloads");
    assert_eq!(third.version.as_deref(), Some("4.0.1"));
    assert_eq!(
        calls(dir.path()),
        vec!["commands --all --json", "commands --all --json"]
    );
    // Without the version file, `omarchy version` is asked.
    std::fs::remove_file(dir.path().join("omarchy/version")).unwrap();
    assert!(d.omarchy_version(&permit).await.is_err());
}

#[tokio::test]
async fn resolved_routes_run_their_own_script_and_refusals_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = fixture(dir.path());
    let permit = permit_with(&dir.path().join("bin"));
    let call = d
        .resolve_toggle_call(&permit, "Nightlight")
        .await
        .expect("a toggle");
    assert_eq!(call.route.route, "omarchy toggle nightlight");
    assert_eq!(call.spec.display(), "omarchy-toggle-nightlight");
    let out = d.run_route(&permit, &call).await.expect("runs");
    assert!(out.success);
    assert_eq!(out.stdout.trim(), "toggled nightlight");
    let gaps = d
        .resolve_toggle(&permit, "gaps")
        .await
        .expect("a toggle by its last word");
    assert_eq!(gaps.route, "omarchy hyprland window gaps toggle");
    let err = d
        .resolve_toggle(&permit, "bluetooth")
        .await
        .expect_err("not offered");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("nightlight"), "{err}");
    assert!(err.to_string().contains("window-gaps"), "{err}");
    // A failing route is an outcome, not an error.
    let call = d
        .resolve_route(&permit, "font set", &["Mono".into()])
        .await
        .expect("resolves");
    let out = d.run_route(&permit, &call).await.expect("ran");
    assert!(!out.success);
    assert_eq!(out.exit_code, Some(3));
    // Sudo routes and archgate-targeting calls resolve marked (policy blocks them) and never
    // run, whatever the permit.
    let before = calls(dir.path()).len();
    for (route, args) in [
        ("pkg add", vec!["vim"]),
        ("restart shell", vec![]),
        ("plugin", vec!["disable", "io.example.archgate"]),
        ("plugin", vec!["remove", "weather"]),
        ("launch webapp", vec!["https://archgate.example"]),
    ] {
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        let call = d.resolve_route(&permit, route, &args).await.expect(route);
        assert!(
            call.route.requires_sudo || call.targets_archgate,
            "{route} {args:?}"
        );
        let err = d.run_route(&permit, &call).await.expect_err(route);
        assert_eq!(err.kind(), "blocked", "{route} {args:?}");
    }
    // A usage the arguments do not fit is refused before anything runs.
    let err = d
        .resolve_route(&permit, "font set", &[])
        .await
        .expect_err("needs a font");
    assert_eq!(err.kind(), "invalid_argument");
    assert_eq!(calls(dir.path()).len(), before, "nothing ran");
    // `plugin list` only looks.
    let list = d
        .resolve_route(&permit, "plugin", &["list".into()])
        .await
        .unwrap();
    assert!(!list.targets_archgate);
}

#[tokio::test]
async fn without_omarchy_the_answer_is_not_available() {
    let dir = tempfile::tempdir().unwrap();
    let d = Desktop::new(DesktopEnv::default(), DesktopConfig::default());
    let err = d
        .omarchy_search(&crate::common::empty_permit(dir.path()), "theme", 5)
        .await
        .expect_err("no omarchy");
    assert_eq!(err.kind(), "not_available");
    assert!(err.to_string().contains("omarchy"), "{err}");
}
