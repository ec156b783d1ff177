//! Attack 6 of issue 16 (part of `hostile.rs`): the person approved blind. `clipboard_write`
//! text was `[redacted]` in the question itself and arguments were cut at 512 bytes, so what the
//! person approved was not what would run. Now the question carries every argument whole: a
//! 2 KiB clipboard text and a 2 KiB search are shown in full by `archgate show`, under the row
//! in `archgate approvals`, and on the approval page — while the activity log still keeps the
//! clipboard text out (`[redacted: N bytes]`) and cuts long values.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

/// 2048 characters, none of them whitespace, all different enough to be found whole.
fn two_kib(tag: &str) -> String {
    let mut s = String::from(tag);
    let mut i = 0u32;
    while s.len() < 2048 {
        s.push_str(&format!("{i:05x}."));
        i += 1;
    }
    s.truncate(2048);
    s
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn recorder(bin: &std::path::Path, name: &str) {
    let p = bin.join(name);
    std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A page session from the short code `archgate ui --print` shows, typed into the login form.
pub(super) fn page_cookie(env: &Env, port: u16) -> String {
    let out = env.run(&["ui", "--print"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !text.contains("/login?t="),
        "a pasteable link was printed: {text}"
    );
    let code = text
        .split("type the code ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no code: {text}"))
        .to_owned();
    let r = send(
        port,
        &Request::post("/login", format!("code={code}"))
            .header("Content-Type", "application/x-www-form-urlencoded"),
    );
    assert_eq!(r.status, 303, "{}", r.text());
    r.header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn the_person_sees_every_argument_whole_while_the_log_keeps_its_redaction() {
    let env0 = Env::with_config("");
    let bin = env0.path("scratch/bin");
    std::fs::create_dir_all(&bin).unwrap();
    for p in ["wl-copy", "wl-paste", "setsid"] {
        recorder(&bin, p);
    }
    env0.write_config(&format!(
        "[approval]\npage = true\npage_port = 0\nnotifications = false\ntimeout_s = 120\n\
         [budgets]\nper_minute = 100000\nper_day = 10000000\n\
         [policy]\nask = [\"pkg_search\"]\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n",
        bin.display()
    ));
    let mut env = env0;
    env.vars
        .push(("WAYLAND_DISPLAY".into(), "wayland-test".into()));
    let d = HttpServer::start(&env);
    let port = page_port(&env);
    let token = env.token();
    let secret = two_kib("clipboard-");
    let query = two_kib("search-");

    for (tool, args, key, whole) in [
        (
            "clipboard_write",
            json!({ "text": secret }),
            "text",
            &secret,
        ),
        ("pkg_search", json!({ "query": query }), "query", &query),
    ] {
        let (p, t, a) = (d.port, token.clone(), args.clone());
        let call = std::thread::spawn(move || {
            send(p, &call_request(&t, tool, a, 1))
                .messages()
                .into_iter()
                .find(|m| m["id"] == 1)
                .unwrap_or(Value::Null)
        });
        let q = wait_for("the question", || {
            let out = env.run(&["approvals", "--json"]);
            let list: Vec<Value> = serde_json::from_slice(&out.stdout).ok()?;
            list.into_iter().find(|q| q["tool"] == tool)
        });
        let id = q["id"].as_str().unwrap().to_owned();
        assert_eq!(
            q["args"][key],
            whole.as_str(),
            "the question holds it whole"
        );

        let show = env.run(&["show", &id]);
        let shown = String::from_utf8_lossy(&show.stdout).into_owned();
        assert!(show.status.success(), "{shown}");
        assert!(
            squeeze(&shown).contains(whole.as_str()),
            "archgate show {tool}: not whole:\n{shown}"
        );
        assert!(shown.lines().all(|l| l.chars().count() <= 100), "wrapped");
        let listed = String::from_utf8_lossy(&env.run(&["approvals"]).stdout).into_owned();
        assert!(
            squeeze(&listed).contains(whole.as_str()),
            "archgate approvals {tool}: not whole:\n{listed}"
        );

        let cookie = page_cookie(&env, port);
        let state = send(port, &Request::get("/api/state").header("Cookie", cookie)).json();
        let on_page = state["pending"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id.as_str())
            .expect("on the page");
        assert_eq!(
            on_page["shown_args"],
            json!([[key, format!("\"{whole}\"")]]),
            "the page shows it whole"
        );
        // The page's own rendering: one text block whose one line is the whole value, and a
        // sentence that names what it is, never the value cut.
        assert_eq!(
            on_page["arguments"][0]["kind"], "text",
            "{}",
            on_page["arguments"]
        );
        assert_eq!(
            on_page["arguments"][0]["lines"],
            json!([whole]),
            "the page's text block holds it whole"
        );
        let sentence: String = on_page["sentence"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        assert!(sentence.contains(" wants to "), "{sentence}");

        assert!(env.run(&["deny", &id]).status.success());
        let _ = call.join().unwrap();
        let rec = wait_for("the record", || {
            env.calls().into_iter().find(|r| r["id"] == id.as_str())
        });
        let logged = rec["args"][key].as_str().unwrap();
        match tool {
            "clipboard_write" => assert_eq!(logged, "[redacted: 2048 bytes]"),
            _ => assert!(logged.ends_with("…[2048 bytes]"), "{logged:.80}"),
        }
    }
    let log = std::fs::read_to_string(env.audit_file()).unwrap();
    assert!(
        !log.contains(&secret[..100]),
        "clipboard text reached the log"
    );
}

/// The page's new renderings of an agent's text (issue 32): each line of a text block escaped
/// on its own, a line break only between lines, the sentence escaped where it was built.
#[test]
fn the_pages_text_blocks_and_sentence_carry_no_raw_control_or_bidi_character() {
    let env = Env::with_config("");
    let bin = env.path("scratch/bin");
    std::fs::create_dir_all(&bin).unwrap();
    for p in ["wl-copy", "wl-paste", "setsid"] {
        recorder(&bin, p);
    }
    env.write_config(&format!(
        "[approval]\npage = true\npage_port = 0\nnotifications = false\ntimeout_s = 120\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n",
        bin.display()
    ));
    let mut env = env;
    env.vars
        .push(("WAYLAND_DISPLAY".into(), "wayland-test".into()));
    let d = HttpServer::start(&env);
    let port = page_port(&env);
    let text = "ok line\n\u{1b}[1A\u{1b}[2Kfake row\r\n\u{202e}txt.exe\n";
    let (p, t) = (d.port, env.token());
    let call = std::thread::spawn(move || {
        send(
            p,
            &call_request(&t, "clipboard_write", json!({"text": text}), 1),
        )
        .messages()
    });
    let q = wait_for("the question", || {
        let out = env.run(&["approvals", "--json"]);
        let list: Vec<Value> = serde_json::from_slice(&out.stdout).ok()?;
        list.into_iter().find(|q| q["tool"] == "clipboard_write")
    });
    let id = q["id"].as_str().unwrap().to_owned();
    let cookie = page_cookie(&env, port);
    let state = send(port, &Request::get("/api/state").header("Cookie", cookie)).json();
    let on_page = state["pending"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id.as_str())
        .expect("on the page")
        .clone();
    assert_eq!(
        on_page["arguments"][0]["lines"],
        json!(["ok line", "\\x1b[1A\\x1b[2Kfake row\\r", "\\u{202e}txt.exe"])
    );
    assert_eq!(on_page["arguments"][0]["size"], "3 lines (37 bytes)");
    let raw = |c: char| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c);
    let shown = on_page["arguments"].to_string() + &on_page["sentence"].to_string();
    for v in [&on_page["arguments"], &on_page["sentence"]] {
        let mut strings = Vec::new();
        collect_strings(v, &mut strings);
        for s in strings {
            assert!(!s.contains(raw), "raw character in {s:?} ({shown})");
        }
    }
    assert!(env.run(&["deny", &id]).status.success());
    let _ = call.join().unwrap();
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}
