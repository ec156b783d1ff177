//! An entry that cannot be applied makes the whole file not apply; `aur_*` is a prefix.

use super::*;
use archgate_core::config::load_str;

#[test]
fn a_deny_entry_that_cannot_be_read_keeps_the_last_good_copy() {
    let p = Place::new();
    let h = p.with_person();
    // The person's deny rewritten with one entry that cannot be read: nothing of it applies.
    p.write("[policy]\ndeny = [\"aur*search\", \"pkg_remove\"]\n");
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "deny[0] \"aur*search\"");
    let kept = std::fs::read_to_string(&p.last_good).unwrap();
    assert_eq!(
        kept, PERSON,
        "a file that does not apply is never the last good copy"
    );
    drop(h);
    let h = p.open();
    assert!(denies_aur(&h), "at start too");
    says_last_good(&h, "line 2: policy.deny");
}

#[test]
fn a_trailing_star_on_a_word_is_a_prefix() {
    let l = load_str("[policy]\ndeny = [\"aur_*\"]\nask = [\"theme s*\"]\n");
    assert!(l.applies, "{:?}", l.problems);
    let rules = &l.config.policy.rules;
    for tool in ["aur_search", "aur_info", "AUR_PKGBUILD"] {
        let hit = rules.first_match(tool).expect(tool);
        assert_eq!(hit.list, archgate_core::policy::RuleList::Deny);
        assert_eq!(hit.describe(), "deny: \"aur_*\"");
    }
    assert!(rules.first_match("pkg_search").is_none());
    assert!(rules.first_match("theme set dark").is_some());
    assert!(rules.first_match("theme list").is_none());
}

#[test]
fn every_list_of_tool_names_takes_a_prefix_and_refuses_what_it_cannot_read() {
    use archgate_core::policy::Tier;
    let l = load_str("[tools]\ndisabled = [\"aur_*\"]\n[clients.x]\ntools = [\"pkg_*\"]\n");
    assert!(l.applies, "{:?}", l.problems);
    assert!(l.config.tools.is_disabled("aur_search"));
    assert!(!l.config.tools.is_disabled("pkg_search"));
    let g = archgate_core::clients::grant_for("x", None, &l.config);
    assert!(g.permits("pkg_search", Tier::Read));
    assert!(!g.permits("aur_search", Tier::Read));
    for (text, key) in [
        (
            "[tools]\ndisabled = [\"aur_search\", \"a*b\"]\n",
            "tools.disabled",
        ),
        ("[tools]\ndisabled = [\"aur search\"]\n", "tools.disabled"),
        ("[clients.x]\ntools = [\"*pkg\"]\n", "clients.x.tools"),
        ("[policy]\nask = [\"theme **\"]\n", "policy.ask"),
        ("[policy]\nallow = [\"\"]\n", "policy.allow"),
    ] {
        let l = load_str(text);
        assert!(!l.applies, "{text}");
        assert_eq!(l.config, archgate_core::config::Config::default(), "{text}");
        let p = l
            .problems
            .iter()
            .find(|p| p.key.as_deref() == Some(key))
            .unwrap_or_else(|| panic!("{key} named in {:?}", l.problems));
        assert!(p.fatal_to_file && p.line == Some(2), "{p:?}");
    }
}

/// Every value `validate` cannot take as written keeps the file from applying: none is dropped
/// or replaced with the rest applied.
#[test]
fn no_problem_is_warned_and_the_rest_applied() {
    for text in [
        "[approval]\ntimeout_s = 4000\n",
        "[approval]\npresence = \"of\"\n",
        "[clients.x]\npreset = \"admin\"\n",
        "[tools.timeouts]\naur_search = 0\n",
        "[paths]\nstate_dir = \"relative\"\n",
        "[exec]\nsearch_dirs = [\"bin\"]\n",
        "[exec]\ntrust = \"everyone\"\n",
        "[arch]\naur_url = \"ftp://x\"\n",
        "[server]\nlog = \"loud\"\n",
        "[policy]\ndney = [\"aur_search\"]\n",
        "[polcy]\ndeny = [\"aur_search\"]\n",
        "[resolve]\nprotected = [\"secrets\"]\n",
    ] {
        let l = load_str(&format!("[policy]\ndeny = [\"pkg_search\"]\n{text}"));
        assert!(!l.applies, "{text}");
        assert!(l.config.policy.rules.is_empty(), "{text}");
        assert!(!l.problems.is_empty() && l.problems.iter().all(|p| p.fatal_to_file));
    }
}
