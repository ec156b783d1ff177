//! Configuration fails closed (issue 33, items 2 and 7), against a running daemon. What it
//! tries: another user who may write the config directory deletes `config.toml` (the daemon
//! used to run on defaults within one poll, and a denied tool ran); the person writes
//! `deny = ["aur_*"]` (the entry used to be "ignored" with a warning and `aur_search` ran); an
//! entry that still cannot be read (`"aur*x"`) next to a good one. None may lift a deny rule:
//! the last good copy stays in force, at start and on reload, and `/health`, `archgate status`
//! and the bar (state.json) name the file, the reason and that the last good copy applies.

use crate::support::*;
use serde_json::{Value, json};

/// The person's config: `system_status` denied; the AUR at a port nothing answers on, so a
/// call that gets past the gate ends `unavailable`, never reaching the network.
const PERSON: &str = "[approval]\npage = false\nnotifications = false\n\
                      [arch]\naur_url = \"http://127.0.0.1:9\"\n\
                      [policy]\ndeny = [\"system_status\"]\n";

fn bar(env: &Env) -> Value {
    wait_for("the bar state", || {
        std::fs::read(env.path("runtime/archgate/state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
    })
}

/// `/health`, `archgate status` and the bar say the file is not applied, `why`, and that the
/// last good copy applies.
fn says_last_good(env: &Env, d: &HttpServer, why: &str) {
    let h = d.health();
    let c = &h["config"];
    assert_eq!(c["ok"], false, "{h}");
    assert!(
        c["using"].as_str().unwrap().starts_with("last good from "),
        "{h}"
    );
    assert!(c["error"].as_str().unwrap_or("").contains(why), "{h}");
    assert_eq!(c["file"], env.config_file().display().to_string(), "{h}");
    let out = env.run(&["status", "--port", &d.port.to_string()]);
    let said = stdout(&out);
    assert!(said.contains("config: NOT APPLIED"), "{said}");
    assert!(
        said.contains(why) && said.contains("last good from"),
        "{said}"
    );
    let b: Value = wait_for("the bar to say so", || {
        let b = bar(env);
        (b["config_ok"] == false).then_some(b)
    });
    let line = b["config_problem"].as_str().unwrap_or("");
    assert!(line.contains(why) && line.contains("last good from"), "{b}");
}

#[test]
fn deleting_the_config_keeps_the_last_good_deny_rules() {
    let env = Env::with_config(PERSON);
    let mut d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused"
    );
    // Another user who may write the directory removes the file.
    std::fs::remove_file(env.config_file()).unwrap();
    // Until the daemon has judged the file gone: not applied, or (the break) on defaults.
    wait_for("the daemon to judge the file gone", || {
        let c = d.health()["config"].clone();
        (c["ok"] == false
            || c["using"]
                .as_str()
                .is_some_and(|u| u.starts_with("defaults")))
        .then_some(())
    });
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused",
        "the denied tool stays denied"
    );
    says_last_good(&env, &d, "is missing");
    let check = env.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    assert!(
        stdout(&check).contains("missing") && stdout(&check).contains("last good copy"),
        "{}",
        stdout(&check)
    );
    // Restarted with the file still gone: the last good copy on disk is the evidence.
    assert!(d.stop().0.success());
    let d = HttpServer::start(&env);
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused"
    );
    says_last_good(&env, &d, "is missing");
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "the CLI path too: {r}");
    // For defaults on purpose, an empty file: it applies, and the bar is quiet again.
    env.write_config("[approval]\npage = false\nnotifications = false\n");
    wait_for("the empty config to apply", || {
        (d.health()["config"]["ok"] == true).then_some(())
    });
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
}

#[test]
fn a_trailing_star_is_a_prefix_and_an_unreadable_entry_keeps_the_last_good_copy() {
    let env = Env::with_config(&PERSON.replace("\"system_status\"", "\"aur_*\""));
    let d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(
        d.health()["config"]["ok"],
        true,
        "aur_* is read, not ignored"
    );
    let r = d.call(&token, "aur_search", json!({"query": "yay"}));
    assert_eq!(outcome(&r), "refused", "{r}");
    assert!(!d.log().contains("entry ignored"), "{}", d.log());
    // An entry that still cannot be read: the whole file does not apply; the last good one
    // (with aur_*) stays, and the system_status deny beside the bad entry is not half-applied.
    env.write_config(&PERSON.replace("\"system_status\"", "\"aur*x\", \"pkg_search\""));
    wait_for("the file to be refused", || {
        (d.health()["config"]["ok"] == false).then_some(())
    });
    let r = d.call(&token, "aur_search", json!({"query": "yay"}));
    assert_eq!(outcome(&r), "refused", "{r}");
    says_last_good(&env, &d, "deny[0] \"aur*x\"");
    let check = env.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("aur*x"), "{}", stdout(&check));
}

#[test]
fn an_unreadable_entry_with_no_last_good_copy_refuses_to_start() {
    let env = Env::with_config(&PERSON.replace("\"system_status\"", "\"aur*x\""));
    let out = env.run(&["serve", "--http", "--port", "0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("aur*x") && err.contains("does not run on defaults"),
        "{err}"
    );
}

/// attack1 finding 8: the config missing and a last good copy that exists but cannot be
/// trusted used to mean defaults, with `/health` saying ok. Now nothing starts, and the error
/// names the copy and what to do; a copy readable by others (0644) is still the person's.
#[test]
fn a_last_good_copy_that_cannot_be_trusted_never_means_defaults() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::with_config(PERSON);
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "{r}");
    let copy = env.state_dir().join("config.last-good.toml");
    assert!(copy.exists());
    std::fs::remove_file(env.config_file()).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "a 0644 copy applies: {r}");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o666)).unwrap();
    for args in [
        &["call", "system_status", "{}"][..],
        &["serve", "--http", "--port", "0"][..],
    ] {
        let out = env.run(args);
        assert!(!out.status.success(), "{args:?}: {}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&copy.display().to_string())
                && err.contains("chmod 600")
                && err.contains("does not run on defaults"),
            "{args:?}: {err}"
        );
        assert!(!stdout(&out).contains("hostname"), "{}", stdout(&out));
    }
    let check = env.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        stdout(&check).contains("cannot be used"),
        "{}",
        stdout(&check)
    );
}

/// attack1 finding 9: with `[paths] runtime_dir` set and the config gone, `approvals`,
/// `reload` (and `approve`, `deny`, `ui`, `doctor`) read defaults and said no archgate was
/// running while the daemon ran on the last good copy. They find it where the daemon is.
#[test]
fn commands_find_the_daemon_where_the_config_in_force_puts_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let rt = env.path("scratch/rt2");
    std::fs::create_dir_all(&rt).unwrap();
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    env.write_config(&format!(
        "{PERSON}[paths]\nruntime_dir = \"{}\"\n",
        rt.display()
    ));
    let d = HttpServer::start(&env);
    let said = stdout(&env.run(&["approvals"]));
    assert!(!said.contains("no running archgate"), "{said}");
    std::fs::remove_file(env.config_file()).unwrap();
    wait_for("the daemon to judge the file gone", || {
        (d.health()["config"]["ok"] == false).then_some(())
    });
    let out = env.run(&["approvals"]);
    assert!(
        out.status.success() && !stdout(&out).contains("no running archgate"),
        "{}",
        text(&out)
    );
    assert!(env.pending().is_empty());
    let out = env.run(&["reload"]);
    assert!(
        out.status.success() && stdout(&out).contains("asked 1 running"),
        "{}",
        text(&out)
    );
}

/// attack1 finding 1, against a running daemon: the config is the person's link to a link in a
/// directory another user controls (played by a directory everyone may write). That user
/// points its link at an empty file: it used to apply (defaults, the deny gone) and replace the
/// last good copy. Now the chain is refused, the deny stays, and the copy is untouched.
#[test]
fn a_link_in_the_chain_another_user_controls_never_applies() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let private = |rel: &str| {
        let d = env.path(rel);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        d
    };
    let dotfile = private("scratch/dotfiles").join("archgate.toml");
    std::fs::write(&dotfile, PERSON).unwrap();
    let empty = env.path("scratch/dotfiles/empty.toml");
    std::fs::write(&empty, "").unwrap();
    let shared = private("scratch/shared");
    let hop = shared.join("archgate.toml");
    std::os::unix::fs::symlink(&dotfile, &hop).unwrap();
    std::fs::create_dir_all(env.config_file().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&hop, env.config_file()).unwrap();
    // Every hop the person's: it applies (dotfile managers link twice).
    let d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(d.health()["config"]["ok"], true, "{}", d.health());
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused"
    );
    let copy = env.state_dir().join("config.last-good.toml");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), PERSON);
    // The hop's directory becomes another user's to write, and that user repoints the link.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let swap = shared.join("swap");
    std::os::unix::fs::symlink(&empty, &swap).unwrap();
    std::fs::rename(&swap, &hop).unwrap();
    wait_for("the daemon to judge the chain", || {
        let c = d.health()["config"].clone();
        (c["ok"] == false
            || c["using"] == "the file"
                && !std::fs::read_to_string(&copy).unwrap().contains("deny"))
        .then_some(())
    });
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused",
        "the deny rule stays"
    );
    says_last_good(&env, &d, "shared is writable by group or others");
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        PERSON,
        "the copy is untouched"
    );
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "the CLI path too: {r}");
}

/// Class: *an entry that applies to less than the person meant, silently* (attack 3, F6): `deny =
/// ["omarchy_run", "processes"]` was accepted (`config check: ok`) but matched only a call with no
/// route — every `omarchy_run` route and `processes cmdline` ran or asked. A deny (or ask) naming
/// a tool now covers every call of that tool; an allow naming it widens nothing.
#[test]
fn a_deny_naming_a_tool_denies_every_route_of_it() {
    use crate::support::omarchy::{Entry, OmarchyRig};
    let rig = OmarchyRig::new(
        &[Entry {
            words: "toggle nightlight",
            args: "",
        }],
        "[policy]\ndeny = [\"omarchy_run\", \"processes\"]\nallow = [\"clipboard_write\"]\n",
    );
    let env = &rig.env;
    let check = env.run(&["config", "check"]);
    assert!(check.status.success(), "{}", text(&check));
    for (tool, args) in [
        ("omarchy_run", json!({"route": "toggle nightlight"})),
        ("processes", json!({"cmdline": true})),
        ("processes", json!({})),
    ] {
        let out = env.run(&["policy", "explain", tool, &args.to_string()]);
        let t = String::from_utf8_lossy(&out.stdout);
        assert!(t.contains("decision: deny"), "{tool} {args}: {t}");
    }
    let mut s = StdioServer::session(env);
    s.call(1, "omarchy_run", json!({"route": "toggle nightlight"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "a denied tool ran: {body}");
    assert!(rig.ran().is_empty(), "a denied tool ran");
}

/// Attack 10 F5: an entry that names no tool of archgate's — `disabled = ["pkg-search"]`, a
/// misspelt `deny`/`ask`, a prefix matching nothing — used to be `ok` everywhere while the tool
/// it meant ran unrestricted (the file applied and became the last good copy). Now it keeps the
/// file from applying, named with what it could have meant; with a last good copy, that copy
/// stays in force. Well-spelt entries and prefixes still apply, and a route word without `_`
/// (an Omarchy route not installed here) is not judged.
#[test]
fn an_entry_naming_no_tool_keeps_the_file_from_applying() {
    for (config, entry, hint) in [
        (
            "[tools]\ndisabled = [\"pkg-search\"]\n",
            "pkg-search",
            "did you mean \"pkg_search\"",
        ),
        (
            "[tools]\ndisabled = [\"nosuch_*\"]\n",
            "nosuch_*",
            "names no tool",
        ),
        (
            "[policy]\ndeny = [\"pkg_serch\"]\n",
            "pkg_serch",
            "did you mean \"pkg_search\"",
        ),
        (
            "[policy]\ndeny = [\"pkg-search\"]\n",
            "pkg-search",
            "did you mean \"pkg_search\"",
        ),
        (
            "[policy]\nask = [\"system_stauts\"]\n",
            "system_stauts",
            "names no tool",
        ),
        (
            "[clients.default]\ntools = [\"pkg_serch\"]\n",
            "pkg_serch",
            "names no tool",
        ),
    ] {
        let env = Env::with_config(config);
        let out = env.run(&["serve", "--http", "--port", "0"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{config}: started: {err}");
        assert!(
            err.contains(entry) && err.contains(hint) && err.contains("does not run on defaults"),
            "{config}: {err}"
        );
    }
    for good in [
        "[tools]\ndisabled = [\"pkg_search\", \"aur_*\"]\n",
        "[policy]\ndeny = [\"PKG_SEARCH\", \"aur_*\", \"omarchy_run toggle nightlight\", \"reboot\"]\n",
    ] {
        let env = Env::with_config(good);
        let out = env.run(&["config", "check"]);
        assert!(
            out.status.success(),
            "{good}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A misspelt deny after a good one: the last good copy stays in force.
    let env = Env::with_config(PERSON);
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "{r}");
    env.write_config(&PERSON.replace("\"system_status\"", "\"system_stauts\""));
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(
        outcome(&r),
        "refused",
        "the misspelt deny lifted the last good one: {r}"
    );
}

/// Attack 14 F2 (class: *an entry that cannot be applied is dropped and the rest applies*): a
/// `deny`/`ask` word one letter off a tool whose name has no `_` (`"proceses"`, `"jounral"`)
/// was taken for an Omarchy route and judged never, and a `[tools.timeouts]` key naming no tool
/// was never compared with the tools at all — `ok` everywhere, nothing restricted. Now each
/// keeps the file from applying, named with what it could have meant; the well-spelt ones and
/// route words still apply.
#[test]
fn a_misspelt_tool_without_underscore_or_timeout_key_keeps_the_file_from_applying() {
    for (config, entry, hint) in [
        (
            "[policy]\nask = [\"proceses\"]\n",
            "proceses",
            "did you mean \"processes\"",
        ),
        (
            "[policy]\ndeny = [\"jounral\"]\n",
            "jounral",
            "did you mean \"journal\"",
        ),
        (
            "[tools.timeouts]\nomarchy_rn = 5\n",
            "omarchy_rn",
            "did you mean \"omarchy_run\"",
        ),
        ("[tools.timeouts]\n\"aur_*\" = 5\n", "aur_*", "one tool"),
    ] {
        let env = Env::with_config(config);
        let out = env.run(&["config", "check"]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{config}: ok: {err}");
        assert!(err.contains(entry) && err.contains(hint), "{config}: {err}");
    }
    for good in [
        "[policy]\nask = [\"processes\", \"journal\", \"toggle nightlight\", \"reboot\"]\n",
        "[tools.timeouts]\nomarchy_run = 5\nhandoff = 600\n",
    ] {
        let env = Env::with_config(good);
        let out = env.run(&["config", "check"]);
        assert!(
            out.status.success(),
            "{good}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
