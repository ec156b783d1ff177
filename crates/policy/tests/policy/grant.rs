//! Grants: presets, tool lists, and `blocked` never granted.

use archgate_policy::{Grant, GrantError, Preset, Tier, ToolSet};

macro_rules! permits {
    ($($name:ident: $grant:expr, $tool:expr, $tier:ident => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let g: Grant = $grant;
            assert_eq!(g.permits($tool, Tier::$tier), $want, "{g:?}");
        }
    )*};
}

permits! {
    read_only_reads: Grant::read_only(), "theme_list", Read => true;
    read_only_does_not_act: Grant::read_only(), "theme_set", Act => false;
    read_only_does_not_destroy: Grant::read_only(), "pkg_remove", Destructive => false;
    desktop_reads: Grant::desktop(), "theme_list", Read => true;
    desktop_acts: Grant::desktop(), "theme_set", Act => true;
    desktop_does_not_destroy: Grant::desktop(), "pkg_remove", Destructive => false;
    full_reads: Grant::full(), "theme_list", Read => true;
    full_acts: Grant::full(), "theme_set", Act => true;
    full_destroys: Grant::full(), "pkg_remove", Destructive => true;
    full_never_blocked: Grant::full(), "anything", Blocked => false;
    hand_made_blocked_still_refused: Grant { tools: ToolSet::All, tiers: Tier::ALL.into_iter().collect() }, "x", Blocked => false;
    tool_list_limits: Grant::full().with_tools(["theme_set"]), "pkg_remove", Destructive => false;
    tool_list_allows_listed: Grant::full().with_tools(["theme_set"]), "theme_set", Act => true;
    tool_list_keeps_tier_limit: Grant::read_only().with_tools(["theme_set"]), "theme_set", Act => false;
}

#[test]
fn presets_parse_and_display() {
    for p in [Preset::ReadOnly, Preset::Desktop, Preset::Full] {
        assert_eq!(p.to_string().parse::<Preset>(), Ok(p));
    }
    assert!(matches!(
        "root".parse::<Preset>(),
        Err(GrantError::UnknownPreset { .. })
    ));
}

#[test]
fn grants_read_from_toml() {
    let g: Grant = toml::from_str(r#"preset = "desktop""#).expect("valid");
    assert_eq!(g, Grant::desktop());
    let g: Grant = toml::from_str(
        r#"preset = "read-only"
tools = ["theme_list", "wiki_search"]"#,
    )
    .expect("valid");
    assert!(g.permits("wiki_search", Tier::Read));
    assert!(!g.permits("pkg_search", Tier::Read));
    let g: Grant = toml::from_str(
        r#"tools = "all"
tiers = ["read", "destructive"]"#,
    )
    .expect("valid");
    assert!(g.permits("x", Tier::Destructive) && !g.permits("x", Tier::Act));
}

#[test]
fn bad_grants_refused() {
    for (text, needle) in [
        (
            r#"tiers = ["read", "blocked"]"#,
            "blocked tier can never be granted",
        ),
        (r#"preset = "root""#, "unknown preset"),
        (r#"tools = ["x"]"#, "needs a preset or a list of tiers"),
        (
            r#"tools = "some"
preset = "full""#,
            "tools must be",
        ),
        (
            r#"preset = "full"
tier = ["read"]"#,
            "tier",
        ),
    ] {
        let err = toml::from_str::<Grant>(text).expect_err(text);
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
}

#[test]
fn grant_serializes_for_client_listings() {
    let json = serde_json::to_value(Grant::desktop().with_tools(["b", "a"])).expect("json");
    assert_eq!(
        json,
        serde_json::json!({"tools": ["a", "b"], "tiers": ["read", "act"]})
    );
    let json = serde_json::to_value(Grant::read_only()).expect("json");
    assert_eq!(json["tools"], "all");
}
