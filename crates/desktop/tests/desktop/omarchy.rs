//! Omarchy's registry from our snapshot: parsing, tiers, sudo, archgate-targeting routes,
//! search, the version-keyed cache and runs through a permit (a fixture `omarchy` program that
//! serves the snapshot stands in for Omarchy, which is not installed here).

use std::path::Path;

use archgate_desktop::{Desktop, DesktopConfig, DesktopEnv, Registry, SuggestedTier};

use crate::common::{data, permit_with, script};

fn registry() -> Registry {
    Registry::parse(&std::fs::read(data("omarchy/commands.json")).expect("snapshot"))
        .expect("parses")
}

#[test]
fn snapshot_parses_skipping_unusable_entries() {
    let reg = registry();
    assert_eq!(reg.version.as_deref(), Some("3.1.0"));
    assert_eq!(reg.routes.len(), 31);
    assert!(reg.get("--bad route").is_none());
    let set = reg.get("theme set").expect("theme set");
    assert_eq!(set.group, "theme");
    assert_eq!(set.args.len(), 1);
    assert!(set.args[0].required);
    assert_eq!(reg.get("omarchy theme set"), Some(set));
    // A route given as one string is split into words.
    assert!(reg.get("hyprland window gaps toggle").is_some());
}

#[test]
fn tiers_from_metadata_and_from_verbs() {
    let reg = registry();
    let tier = |r: &str| reg.get(r).unwrap_or_else(|| panic!("{r}")).tier;
    // (route, expected tier)
    let cases = [
        ("theme list", SuggestedTier::Read),
        ("theme current", SuggestedTier::Read),
        ("battery remaining", SuggestedTier::Read),
        ("theme set", SuggestedTier::Act),
        ("restart waybar", SuggestedTier::Act),
        ("toggle nightlight", SuggestedTier::Act),
        ("theme remove", SuggestedTier::Destructive),
        ("refresh hyprland", SuggestedTier::Destructive),
        ("update", SuggestedTier::Destructive),
        ("pkg install", SuggestedTier::Destructive),
    ];
    for (r, t) in cases {
        assert_eq!(tier(r), t, "{r}");
    }
}

#[test]
fn routes_needing_sudo_are_marked() {
    let reg = registry();
    let sudo: Vec<&str> = reg
        .routes
        .iter()
        .filter(|r| r.needs_sudo)
        .map(|r| r.route.as_str())
        .collect();
    // By flag, by alias, by tag, and by a description that says so.
    assert_eq!(
        sudo,
        vec![
            "drive set-password",
            "pkg install",
            "pkg remove",
            "restart wifi",
            "update"
        ]
    );
}

#[test]
fn routes_targeting_archgate_or_the_plugin_machinery_are_marked() {
    let reg = registry();
    let marked: Vec<&str> = reg
        .routes
        .iter()
        .filter(|r| r.targets_archgate)
        .map(|r| r.route.as_str())
        .collect();
    assert_eq!(
        marked,
        vec![
            "plugin add",
            "plugin disable",
            "plugin remove",
            "restart shell"
        ]
    );
}

#[test]
fn search_ranks_by_name_then_group_then_description() {
    let reg = registry();
    let top = |q: &str| reg.search(q, 3).first().map(|h| h.route.route.clone());
    assert_eq!(top("theme set").as_deref(), Some("theme set"));
    assert_eq!(top("nightlight").as_deref(), Some("toggle nightlight"));
    let bg: Vec<String> = reg
        .search("background", 2)
        .into_iter()
        .map(|h| h.route.route)
        .collect();
    assert_eq!(bg, vec!["theme bg next", "theme bg set"]);
    assert_eq!(top("background image").as_deref(), Some("theme bg set"));
    assert_eq!(top("warm colours").as_deref(), Some("toggle nightlight"));
    assert_eq!(top("battery").as_deref(), Some("battery remaining"));
    let theme = reg.search("theme", 20);
    assert!(theme.len() >= 6);
    assert!(
        theme
            .iter()
            .all(|h| h.route.group == "theme"
                || h.route.description.to_lowercase().contains("theme"))
    );
    assert!(reg.search("zzzz-nothing", 5).is_empty());
    assert!(reg.search("", 5).is_empty());
    // Results carry what policy needs.
    let json = serde_json::to_value(reg.search("pkg install", 1)).unwrap();
    assert_eq!(json[0]["route"]["needs_sudo"], true);
    assert_eq!(json[0]["route"]["tier"], "destructive");
}

#[test]
fn not_found_names_near_routes_and_args_are_checked() {
    let reg = registry();
    let err = reg.resolve("theme sett").expect_err("no such route");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("theme set"), "{err}");
    let set = reg.get("theme set").unwrap();
    assert_eq!(
        Registry::check_args(set, &[]).unwrap_err().kind(),
        "invalid_argument"
    );
    assert!(Registry::check_args(set, &["tokyo-night".into()]).is_ok());
    assert!(Registry::check_args(set, &["a".into(), "b".into()]).is_err());
    let install = reg.get("pkg install").unwrap();
    assert!(Registry::check_args(install, &["a".into(), "b".into(), "c".into()]).is_ok());
    let spec = archgate_desktop::omarchy::route_command(set, &["tokyo-night".into()]).unwrap();
    assert_eq!(spec.display(), "omarchy theme set tokyo-night");
}

#[test]
fn garbage_registries_are_malformed() {
    for bad in [
        &b"not json"[..],
        b"42",
        b"{\"commands\": 3}",
        b"[]",
        b"[{\"route\": 5}]",
    ] {
        assert_eq!(Registry::parse(bad).unwrap_err().kind(), "malformed");
    }
    // A bare array is accepted.
    let reg = Registry::parse(br#"[{"name": "theme list", "summary": "List themes"}]"#).unwrap();
    assert_eq!(reg.routes[0].description, "List themes");
}

/// A fixture Omarchy: `$OMARCHY_PATH/version`, and an `omarchy` program that logs each call to
/// `$HOME/calls.log` and prints the snapshot for `commands --json`.
fn fixture(dir: &Path) -> Desktop {
    let bin = dir.join("bin");
    let home = dir.join("home");
    let omarchy = dir.join("omarchy");
    for d in [&bin, &home, &omarchy] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::copy(data("omarchy/commands.json"), home.join("commands.json")).unwrap();
    std::fs::write(omarchy.join("version"), "3.1.0\n").unwrap();
    script(
        &bin,
        "omarchy",
        r#"echo "$*" >> "$HOME/calls.log"
case "$1" in
  commands) cat "$HOME/commands.json" ;;
  version) cat "$OMARCHY_PATH/version" ;;
  toggle) echo "toggled $2" ;;
  *) echo "ran $*"; exit 3 ;;
esac"#,
    );
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
    assert_eq!(calls(dir.path()), vec!["commands --json"]);
    std::fs::write(dir.path().join("omarchy/version"), "3.2.0\n").unwrap();
    let third = d.omarchy_registry(&permit).await.expect("reloads");
    assert_eq!(third.version.as_deref(), Some("3.2.0"));
    assert_eq!(
        calls(dir.path()),
        vec!["commands --json", "commands --json"]
    );
    // Without the version file, `omarchy version` is asked.
    std::fs::remove_file(dir.path().join("omarchy/version")).unwrap();
    assert!(d.omarchy_version(&permit).await.is_err());
}

#[tokio::test]
async fn run_toggle_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let d = fixture(dir.path());
    let permit = permit_with(&dir.path().join("bin"));
    let out = d.toggle(&permit, "Nightlight").await.expect("toggles");
    assert!(out.success);
    assert_eq!(out.stdout.trim(), "toggled nightlight");
    assert_eq!(out.command, "omarchy toggle nightlight");
    let gaps = d
        .resolve_toggle(&permit, "gaps")
        .await
        .expect("tagged toggle");
    assert_eq!(gaps.route, "hyprland window gaps toggle");
    let err = d
        .toggle(&permit, "bluetooth")
        .await
        .expect_err("not offered");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("nightlight"), "{err}");
    assert!(err.to_string().contains("window-gaps"), "{err}");
    // A failing route is an outcome, not an error.
    let out = d
        .omarchy_run(&permit, "font set", &["Mono".into()])
        .await
        .expect("ran");
    assert!(!out.success);
    assert_eq!(out.exit_code, Some(3));
    // Sudo routes and archgate-targeting routes never run, whatever the permit.
    let before = calls(dir.path()).len();
    let err = d
        .omarchy_run(&permit, "pkg install", &["vim".into()])
        .await
        .expect_err("sudo");
    assert_eq!(err.kind(), "blocked");
    let err = d
        .omarchy_run(&permit, "plugin remove", &["x".into()])
        .await
        .expect_err("plugin");
    assert_eq!(err.kind(), "blocked");
    let err = d
        .omarchy_run(
            &permit,
            "launch webapp",
            &["https://archgate.example".into()],
        )
        .await;
    assert_eq!(err.expect_err("names archgate").kind(), "blocked");
    assert_eq!(calls(dir.path()).len(), before, "nothing ran");
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
