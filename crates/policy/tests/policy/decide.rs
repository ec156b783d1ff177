//! `decide` as a decision table: config (TOML, as the person writes it) × call → verdict.
//!
//! `case!(name: CONFIG, ROUTE, TIER, [ARGV] FLAGS => VERDICT TIER "reason_code")` where CONFIG is
//! `rules = {deny=[..], ask=[..], allow=[..]}` plus an optional `ack = [..]`, TIER is `read`,
//! `act`, `destructive`, `blocked` or `none` (unclassified), and FLAGS are `needs_sudo` /
//! `targets_archgate`.

use std::collections::BTreeSet;

use archgate_policy::{CallFacts, Decision, PolicyInput, Rules, Tier, Verdict, decide, explain};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestConfig {
    #[serde(default)]
    rules: Rules,
    #[serde(default)]
    ack: BTreeSet<String>,
}

fn config(text: &str) -> TestConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("test config {text:?}: {e}"))
}

fn tier(word: &str) -> Option<Tier> {
    match word {
        "none" => None,
        other => Some(other.parse().expect("tier")),
    }
}

fn run(cfg: &str, route: &str, declared: &str, argv: &[&str], flags: &[&str]) -> Decision {
    let cfg = config(cfg);
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let commands: Vec<Vec<String>> = if argv.is_empty() { vec![] } else { vec![argv] };
    let facts = CallFacts {
        client: "local",
        tool: "test_tool",
        route,
        names: &[],
        declared_tier: tier(declared),
        commands: &commands,
        needs_sudo: flags.contains(&"needs_sudo"),
        targets_archgate: flags.contains(&"targets_archgate"),
    };
    decide(
        &facts,
        &PolicyInput {
            rules: &cfg.rules,
            acknowledged: &cfg.ack,
        },
    )
}

macro_rules! case {
    ($($name:ident: $cfg:expr, $route:expr, $tier:ident, [$($arg:expr),* $(,)?] $($flag:ident)*
        => $verdict:ident $out:ident $code:literal;)*) => {$(
        #[test]
        fn $name() {
            let d = run($cfg, $route, stringify!($tier), &[$($arg),*], &[$(stringify!($flag)),*]);
            let want_tier: Tier = stringify!($out).parse().expect("tier");
            assert_eq!(
                (d.verdict, d.tier, d.reason.code()),
                (Verdict::$verdict, want_tier, $code),
                "{d:#?}"
            );
        }
    )*};
}

const ALLOW_ALL: &str = r#"rules = {allow=["*"]}
ack = ["pkg install", "pkg upgrade", "system sudo", "theme set"]"#;
const ALLOW_EXACT: &str =
    r#"rules = {allow=["pkg install", "pkg upgrade", "theme set", "system sudo"]}"#;
const NONE: &str = "";

case! {
    // Privilege elevation is blocked whatever the config says.
    sudo_argv_blocked_under_allow_all: ALLOW_ALL, "pkg upgrade", act, ["sudo", "pacman", "-Syu"] => Deny blocked "privilege_elevation";
    sudo_argv_blocked_under_exact_allow: ALLOW_EXACT, "pkg upgrade", act, ["sudo", "pacman", "-Syu"] => Deny blocked "privilege_elevation";
    env_sudo_blocked: ALLOW_ALL, "pkg upgrade", act, ["env", "sudo", "pacman", "-Syu"] => Deny blocked "privilege_elevation";
    usr_bin_sudo_blocked: ALLOW_ALL, "pkg upgrade", act, ["/usr/bin/sudo", "pacman", "-Syu"] => Deny blocked "privilege_elevation";
    sudo_hidden_in_argument_list_blocked: ALLOW_ALL, "pkg install", act, ["xargs", "-r", "--", "sudo", "pacman"] => Deny blocked "privilege_elevation";
    sudo_in_shell_text_blocked: ALLOW_ALL, "pkg install", act, ["sh", "-c", "true; sudo pacman -S x"] => Deny blocked "privilege_elevation";
    exec_equals_sudo_blocked: ALLOW_ALL, "pkg install", act, ["launcher", "--exec=sudo"] => Deny blocked "privilege_elevation";
    assignment_then_sudo_blocked: ALLOW_ALL, "pkg install", act, ["env", "VAR=x sudo"] => Deny blocked "privilege_elevation";
    pkexec_blocked: ALLOW_ALL, "pkg install", act, ["pkexec", "pacman"] => Deny blocked "privilege_elevation";
    doas_blocked: ALLOW_ALL, "pkg install", act, ["doas", "pacman"] => Deny blocked "privilege_elevation";
    su_blocked: ALLOW_ALL, "pkg install", act, ["su", "-c", "pacman -S x"] => Deny blocked "privilege_elevation";
    run0_blocked: ALLOW_ALL, "pkg install", act, ["run0", "pacman"] => Deny blocked "privilege_elevation";
    sudo_rs_blocked: ALLOW_ALL, "pkg install", act, ["sudo-rs", "pacman"] => Deny blocked "privilege_elevation";
    sudoedit_blocked: ALLOW_ALL, "pkg install", act, ["sudoedit", "/etc/pacman.conf"] => Deny blocked "privilege_elevation";
    sudo_in_route_blocked: ALLOW_ALL, "system sudo", read, [] => Deny blocked "privilege_elevation";
    sudo_in_route_blocked_under_exact_allow: ALLOW_EXACT, "system sudo", read, [] => Deny blocked "privilege_elevation";
    needs_sudo_route_blocked_under_allow_all: ALLOW_ALL, "pkg install", act, [] needs_sudo => Deny blocked "needs_sudo";
    needs_sudo_route_blocked_under_exact_allow: ALLOW_EXACT, "pkg install", read, [] needs_sudo => Deny blocked "needs_sudo";
    targets_archgate_blocked: ALLOW_ALL, "file read", read, [] targets_archgate => Deny blocked "targets_archgate";
    declared_blocked_stays_blocked: ALLOW_ALL, "theme set", blocked, [] => Deny blocked "declared_blocked";
    blocked_even_when_also_denied: r#"rules = {deny=["*"]}"#, "pkg install", act, ["sudo"] => Deny blocked "privilege_elevation";
    near_miss_sudoku_is_not_blocked: NONE, "game open", read, ["sudoku"] => Allow read "read_by_default";

    // The person's rules: deny → ask → allow.
    deny_beats_allow: r#"rules = {deny=["theme *"], allow=["theme set"]}"#, "theme set", act, [] => Deny act "denied_by_rule";
    deny_beats_allow_all: r#"rules = {deny=["theme set"], allow=["*"]}
ack = ["theme set"]"#, "theme set", act, [] => Deny act "denied_by_rule";
    deny_applies_to_reads: r#"rules = {deny=["clipboard *"]}"#, "clipboard read", read, [] => Deny read "denied_by_rule";
    ask_beats_allow: r#"rules = {ask=["theme *"], allow=["theme set"]}"#, "theme set", act, [] => Ask act "ask_by_rule";
    ask_holds_a_read: r#"rules = {ask=["screen *"]}"#, "screen capture", read, [] => Ask read "ask_by_rule";
    deny_beats_ask: r#"rules = {deny=["theme set"], ask=["theme *"]}"#, "theme set", act, [] => Deny act "denied_by_rule";
    deny_star_denies_everything: r#"rules = {deny=["*"]}"#, "anything at all", read, [] => Deny read "denied_by_rule";

    // Prefixes match on word boundaries, after whitespace and case are normalized.
    prefix_matches_bare_word: r#"rules = {deny=["theme *"]}"#, "theme", act, [] => Deny act "denied_by_rule";
    prefix_matches_longer_route: r#"rules = {deny=["theme *"]}"#, "theme set x", act, [] => Deny act "denied_by_rule";
    prefix_is_not_a_string_prefix: r#"rules = {deny=["theme *"]}"#, "themes list", read, [] => Allow read "read_by_default";
    exact_does_not_match_longer: r#"rules = {deny=["theme set"]}"#, "theme set x", read, [] => Allow read "read_by_default";
    exact_does_not_match_shorter: r#"rules = {deny=["theme set"]}"#, "theme", read, [] => Allow read "read_by_default";
    whitespace_normalized: r#"rules = {deny=["  theme   set "]}"#, "\ttheme  set\n", act, [] => Deny act "denied_by_rule";
    case_normalized: r#"rules = {deny=["Theme *"]}"#, "THEME set", act, [] => Deny act "denied_by_rule";

    // Grants do not extend forward: a route under an allow prefix waits for acknowledgement.
    new_route_under_allow_prefix_held_at_ask: r#"rules = {allow=["theme *"]}"#, "theme set", act, [] => Ask act "needs_acknowledgement";
    acknowledged_route_under_prefix_allowed: r#"rules = {allow=["theme *"]}
ack = ["theme set"]"#, "theme set", act, [] => Allow act "allowed_by_rule";
    acknowledgement_compared_normalized: r#"rules = {allow=["theme *"]}
ack = ["Theme   Set"]"#, "theme set", act, [] => Allow act "allowed_by_rule";
    acknowledging_one_route_covers_no_other: r#"rules = {allow=["theme *"]}
ack = ["theme set"]"#, "theme remove", act, [] => Ask act "needs_acknowledgement";
    unclassified_under_allow_star_held: r#"rules = {allow=["*"]}"#, "brand new", none, [] => Ask act "unclassified";
    exact_allow_grants_directly: r#"rules = {allow=["theme set"]}"#, "theme set", act, [] => Allow act "allowed_by_rule";
    exact_allow_wins_over_earlier_prefix: r#"rules = {allow=["theme *", "theme set"]}"#, "theme set", act, [] => Allow act "allowed_by_rule";
    exact_allow_never_covers_unclassified: r#"rules = {allow=["brand new"]}"#, "brand new", none, [] => Ask act "unclassified";
    read_under_allow_prefix_still_runs: r#"rules = {allow=["theme *"]}"#, "theme list", read, [] => Allow read "allowed_by_rule";

    // Destructive routes always ask.
    destructive_under_exact_allow_asks: r#"rules = {allow=["pkg remove"]}"#, "pkg remove", destructive, [] => Ask destructive "destructive_always_asks";
    destructive_under_acknowledged_allow_all_asks: r#"rules = {allow=["*"]}
ack = ["pkg remove"]"#, "pkg remove", destructive, [] => Ask destructive "destructive_always_asks";
    destructive_can_still_be_denied: r#"rules = {deny=["pkg *"], allow=["pkg remove"]}"#, "pkg remove", destructive, [] => Deny destructive "denied_by_rule";

    // No rule matched.
    read_default_allows: NONE, "theme list", read, [] => Allow read "read_by_default";
    act_default_asks: NONE, "theme set", act, [] => Ask act "act_asks_by_default";
    destructive_default_asks: NONE, "pkg remove", destructive, [] => Ask destructive "destructive_always_asks";
    unclassified_default_asks: NONE, "brand new", none, [] => Ask act "unclassified";
}

#[test]
fn rule_names_the_entry_that_decided() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            r#"rules = {deny=["theme set", "theme *"]}"#,
            "theme set",
            Some(r#"deny: "theme set""#),
        ),
        (
            r#"rules = {deny=["theme *", "theme set"]}"#,
            "theme set",
            Some(r#"deny: "theme *""#),
        ),
        (
            r#"rules = {ask=["theme *"], allow=["theme set"]}"#,
            "theme set",
            Some(r#"ask: "theme *""#),
        ),
        (r#"rules = {allow=["*"]}"#, "x y", Some(r#"allow: "*""#)),
        (
            r#"rules = {allow=["theme *", "theme set"]}"#,
            "theme set",
            Some(r#"allow: "theme set""#),
        ),
        (NONE, "theme set", None),
    ];
    for (cfg, route, want) in cases {
        let d = run(cfg, route, "act", &[], &[]);
        assert_eq!(d.rule.as_deref(), *want, "{cfg} / {route}");
    }
}

#[test]
fn blocked_decisions_name_no_config_rule() {
    let d = run(ALLOW_ALL, "pkg upgrade", "act", &["sudo", "pacman"], &[]);
    assert_eq!(d.rule, None);
    assert!(d.is_blocked());
}

#[test]
fn acknowledgement_reason_tells_the_command() {
    let d = run(
        r#"rules = {allow=["theme *"]}"#,
        "theme  set",
        "act",
        &[],
        &[],
    );
    let text = d.reason.to_string();
    assert!(text.contains("archgate policy ack 'theme set'"), "{text}");
    assert!(text.contains(r#"allow: "theme *""#), "{text}");
}

#[test]
fn destructive_reason_says_always_ask() {
    let d = run(
        r#"rules = {allow=["pkg remove"]}"#,
        "pkg remove",
        "destructive",
        &[],
        &[],
    );
    let text = d.reason.to_string();
    assert!(text.contains("always ask"), "{text}");
    assert_eq!(d.rule.as_deref(), Some(r#"allow: "pkg remove""#));
}

#[test]
fn every_reason_is_one_sentence() {
    let samples = [
        run(ALLOW_ALL, "pkg upgrade", "act", &["sudo"], &[]),
        run(ALLOW_ALL, "pkg upgrade", "act", &[], &["needs_sudo"]),
        run(ALLOW_ALL, "pkg upgrade", "act", &[], &["targets_archgate"]),
        run(ALLOW_ALL, "pkg upgrade", "blocked", &[], &[]),
        run(r#"rules = {deny=["*"]}"#, "a", "act", &[], &[]),
        run(r#"rules = {ask=["*"]}"#, "a", "act", &[], &[]),
        run(r#"rules = {allow=["a"]}"#, "a", "act", &[], &[]),
        run(r#"rules = {allow=["*"]}"#, "a", "act", &[], &[]),
        run(NONE, "a", "read", &[], &[]),
        run(NONE, "a", "act", &[], &[]),
        run(NONE, "a", "destructive", &[], &[]),
        run(NONE, "a", "none", &[], &[]),
    ];
    let mut codes = BTreeSet::new();
    for d in &samples {
        let text = d.reason.to_string();
        assert!(text.starts_with(char::is_uppercase), "{text}");
        assert!(text.ends_with('.'), "{text}");
        assert!(!text.contains('\n'), "{text}");
        codes.insert(d.reason.code());
    }
    assert_eq!(
        codes.len(),
        samples.len(),
        "each sample shows a distinct reason"
    );
}

#[test]
fn explain_shows_decision_tier_rule_and_reason() {
    let cfg = config(r#"rules = {deny=["theme *"]}"#);
    let facts = CallFacts {
        client: "local",
        tool: "theme_set",
        route: "theme   set",
        names: &[],
        declared_tier: Some(Tier::Act),
        commands: &[],
        needs_sudo: false,
        targets_archgate: false,
    };
    let input = PolicyInput {
        rules: &cfg.rules,
        acknowledged: &cfg.ack,
    };
    let e = explain(&facts, &input);
    assert_eq!(e.decision, decide(&facts, &input).verdict);
    let json = serde_json::to_value(&e).expect("serializes");
    assert_eq!(json["route"], "theme set");
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["tier"], "act");
    assert_eq!(json["rule"], r#"deny: "theme *""#);
    assert_eq!(json["reason_code"], "denied_by_rule");
    assert!(
        json["reason"]
            .as_str()
            .expect("text")
            .contains(r#"deny: "theme *""#)
    );
}

#[test]
fn decision_serializes_reason_with_its_code() {
    let d = run(ALLOW_ALL, "pkg upgrade", "act", &["/usr/bin/pkexec"], &[]);
    let json = serde_json::to_value(&d).expect("serializes");
    assert_eq!(json["verdict"], "deny");
    assert_eq!(json["tier"], "blocked");
    assert_eq!(json["reason"]["code"], "privilege_elevation");
    assert_eq!(json["reason"]["program"], "pkexec");
    assert_eq!(json["reason"]["found_in"], "command");
}

/// Attack 3 of issue 16: another spelling of a denied target. A rule written against any name
/// of the target (the canonical route, an alias, another tool's words) decides for all of them.
#[test]
fn a_rule_on_any_name_of_the_target_applies() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let check = |rules: &str, route: &str, other: &[&str], want: Verdict| {
        let cfg = config(rules);
        let other = names(other);
        let d = decide(
            &CallFacts {
                client: "local",
                tool: "omarchy_run",
                route,
                names: &other,
                declared_tier: Some(Tier::Act),
                commands: &[],
                needs_sudo: false,
                targets_archgate: false,
            },
            &PolicyInput {
                rules: &cfg.rules,
                acknowledged: &cfg.ack,
            },
        );
        assert_eq!(d.verdict, want, "{rules} / {route} {other:?}: {d:?}");
    };
    // The person denied the words of one tool; the call arrives under the canonical route.
    check(
        r#"rules = {deny=["omarchy_run theme set"]}"#,
        "omarchy theme set",
        &["omarchy_run theme set", "theme set"],
        Verdict::Deny,
    );
    // Denied by an alias the registry lists.
    check(
        r#"rules = {deny=["omarchy background"]}"#,
        "omarchy theme bg-switcher",
        &["omarchy background"],
        Verdict::Deny,
    );
    // A deny on one name beats an allow on another.
    check(
        r#"rules = {deny=["toggle nightlight"], allow=["omarchy toggle nightlight"]}"#,
        "omarchy toggle nightlight",
        &["toggle nightlight"],
        Verdict::Deny,
    );
    // An allow on an alias allows (the person wrote it), when nothing denies.
    check(
        r#"rules = {allow=["omarchy background"]}"#,
        "omarchy theme bg-switcher",
        &["omarchy background"],
        Verdict::Allow,
    );
    // Names that are not the target's are not consulted.
    check(
        r#"rules = {deny=["omarchy theme *"]}"#,
        "omarchy font set",
        &["font set"],
        Verdict::Ask,
    );
}

/// Attack 1 of issue 16: the privilege check reads every command resolution built, not the plan.
#[test]
fn elevation_in_any_resolved_command_blocks() {
    let cfg = config(ALLOW_ALL);
    let commands = vec![
        vec!["gtk-launch".to_string(), "x".to_string()],
        vec![
            "su".to_string(),
            "-c".to_string(),
            "id".to_string(),
            "root".to_string(),
        ],
    ];
    let d = decide(
        &CallFacts {
            client: "local",
            tool: "launch",
            route: "launch app x",
            names: &[],
            declared_tier: Some(Tier::Act),
            commands: &commands,
            needs_sudo: false,
            targets_archgate: false,
        },
        &PolicyInput {
            rules: &cfg.rules,
            acknowledged: &cfg.ack,
        },
    );
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(d.tier, Tier::Blocked);
    assert_eq!(d.reason.code(), "privilege_elevation");
}
