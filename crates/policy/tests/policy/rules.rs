//! Patterns, rule lists as read from config, and tier names.

use archgate_policy::{Pattern, PatternError, RuleList, Rules, Tier};

macro_rules! matches_table {
    ($($name:ident: $pattern:expr, $route:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let p = Pattern::parse($pattern).expect("valid pattern");
            assert_eq!(p.matches($route), $want, "{:?} vs {:?}", $pattern, $route);
        }
    )*};
}

matches_table! {
    prefix_matches_its_bare_word: "theme *", "theme" => true;
    prefix_matches_one_more_word: "theme *", "theme set" => true;
    prefix_matches_many_more_words: "theme *", "theme set tokyo night" => true;
    prefix_stops_at_word_boundary: "theme *", "themes" => false;
    prefix_needs_its_first_word: "theme *", "set theme" => false;
    two_word_prefix: "pkg remove *", "pkg remove x" => true;
    two_word_prefix_other_verb: "pkg remove *", "pkg install x" => false;
    star_matches_everything: "*", "anything goes here" => true;
    star_matches_empty_route: "*", "" => true;
    exact_matches_itself: "theme set", "theme set" => true;
    exact_ignores_spacing: "theme set", "  theme \t set  " => true;
    exact_ignores_case: "theme set", "Theme SET" => true;
    exact_rejects_longer: "theme set", "theme set x" => false;
    exact_rejects_shorter: "theme set", "theme" => false;
    exact_rejects_word_prefix: "theme set", "theme settings" => false;
    word_prefix_matches_its_tools: "aur_*", "aur_search" => true;
    word_prefix_matches_more_words: "aur_*", "aur_info x" => true;
    word_prefix_ignores_case: "AUR_*", "Aur_Search" => true;
    word_prefix_needs_its_start: "aur_*", "pkg_search" => false;
    word_prefix_is_not_infix: "aur_*", "x aur_search" => false;
    word_prefix_after_words: "theme s*", "theme set tokyo" => true;
    word_prefix_after_words_other: "theme s*", "theme list" => false;
    word_prefix_glued_to_a_word: "theme*", "themes" => true;
    word_prefix_multibyte_route: "é*", "éa" => true;
    word_prefix_shorter_route: "aur_*", "au" => false;
}

macro_rules! parse_table {
    ($($name:ident: $text:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let got = Pattern::parse($text).map(|p| p.to_string());
            assert_eq!(got, $want, "{:?}", $text);
        }
    )*};
}

parse_table! {
    parse_exact: "theme set" => Ok("theme set".to_string());
    parse_prefix: "theme *" => Ok("theme *".to_string());
    parse_star: " * " => Ok("*".to_string());
    parse_normalizes: "  Theme   SET " => Ok("theme set".to_string());
    parse_empty: "" => Err(PatternError::Empty);
    parse_blank: "  \t " => Err(PatternError::Empty);
    parse_word_prefix: " AUR_* " => Ok("aur_*".to_string());
    parse_word_prefix_after_words: "theme s*" => Ok("theme s*".to_string());
    parse_star_glued_twice: "theme**" => Err(PatternError::MisplacedStar { word: "theme**".into() });
    parse_star_before_glued: "a*b*" => Err(PatternError::MisplacedStar { word: "a*b*".into() });
    parse_star_first: "* theme" => Err(PatternError::MisplacedStar { word: "*".into() });
    parse_star_inside: "the*me set" => Err(PatternError::MisplacedStar { word: "the*me".into() });
    parse_two_stars: "theme * *" => Err(PatternError::MisplacedStar { word: "*".into() });
    parse_control: "theme\u{0}set" => Err(PatternError::ControlCharacter);
}

#[test]
fn rules_read_from_toml() {
    let rules: Rules = toml::from_str(
        r#"deny = ["pkg remove *"]
ask = ["theme *"]
allow = ["theme set", "*"]"#,
    )
    .expect("valid rules");
    assert_eq!(rules.deny.len(), 1);
    assert_eq!(rules.ask.len(), 1);
    assert_eq!(rules.allow.len(), 2);
    assert!(rules.allow[1].is_prefix());
    let hit = rules.first_match("theme set").expect("matches");
    assert_eq!(hit.list, RuleList::Ask);
    assert_eq!(hit.describe(), r#"ask: "theme *""#);
}

#[test]
fn every_list_is_optional() {
    let rules: Rules = toml::from_str(r#"deny = ["x"]"#).expect("valid");
    assert!(rules.ask.is_empty() && rules.allow.is_empty());
    let empty: Rules = toml::from_str("").expect("valid");
    assert!(empty.is_empty());
    assert!(empty.first_match("anything").is_none());
}

#[test]
fn invalid_entry_is_named() {
    let err =
        toml::from_str::<Rules>(r#"allow = ["theme set", "the*me"]"#).expect_err("invalid pattern");
    let text = err.to_string();
    assert!(text.contains(r#"allow[1] "the*me""#), "{text}");

    let err = Rules::from_lists(&["ok"], &["", "x"], &[]).expect_err("empty entry");
    assert_eq!(
        (err.list, err.index, err.entry.as_str()),
        (RuleList::Ask, 0, "")
    );
    assert_eq!(err.source, PatternError::Empty);
    assert_eq!(err.kind(), "malformed");
}

#[test]
fn unknown_list_is_refused() {
    let err = toml::from_str::<Rules>(r#"alow = ["x"]"#).expect_err("typo");
    assert!(err.to_string().contains("alow"), "{err}");
}

#[test]
fn tier_names_round_trip() {
    for t in Tier::ALL {
        assert_eq!(t.to_string().parse::<Tier>(), Ok(t));
        let json = serde_json::to_string(&t).expect("serializes");
        assert_eq!(json, format!("\"{t}\""));
        assert_eq!(serde_json::from_str::<Tier>(&json).expect("parses"), t);
    }
    assert_eq!(" Destructive ".parse::<Tier>(), Ok(Tier::Destructive));
    let err = "root".parse::<Tier>().expect_err("unknown");
    assert_eq!(err.kind(), "malformed");
    assert!(err.to_string().contains("root"));
    assert!(Tier::Read < Tier::Act && Tier::Act < Tier::Destructive);
    assert!(Tier::Destructive < Tier::Blocked);
}
