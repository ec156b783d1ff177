//! The catalogue as agents and people see it: TOOLS.md is current, and the complete tools/list of
//! the `full` preset fits the context budget (6,000 tokens at four JSON bytes a token).

use std::process::Command;

use crate::support::{Env, StdioServer};

#[test]
fn tools_md_is_generated_from_the_definitions() {
    let env = Env::new();
    let out = env
        .command(&[])
        .args(["tools", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(crate::manifest_dir().join("../../TOOLS.md")).unwrap();
    assert!(
        generated == committed,
        "TOOLS.md is stale: regenerate it with `archgate tools --markdown > TOOLS.md`"
    );
    // Every tool is documented with its schema.
    let listed = env.command(&[]).args(["tools", "--json"]).output().unwrap();
    let tools: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(tools.len() >= 30);
    for t in tools {
        assert!(committed.contains(&format!("\n## {}\n", t["name"].as_str().unwrap())));
    }
}

#[test]
fn tools_md_documents_the_prompts_and_the_update_prompts_hand_off() {
    let committed = std::fs::read_to_string(crate::manifest_dir().join("../../TOOLS.md")).unwrap();
    let prompts = committed
        .split("\n## Prompts\n")
        .nth(1)
        .expect("TOOLS.md has a Prompts section");
    for name in [
        "troubleshoot",
        "audit_aur_package",
        "safe_system_update",
        "explain_package",
    ] {
        assert!(prompts.contains(&format!("`{name}`")), "{name}");
    }
    let update = prompts.split("`safe_system_update`").nth(1).unwrap();
    let update = update.split("\n- ").next().unwrap();
    assert!(update.contains("handed off"), "{update}");
}

/// tools/list as the stdio client `local` (the full preset) receives it.
fn full_tools_list() -> serde_json::Value {
    let env = Env::new();
    let mut s = StdioServer::initialized(&env);
    let list = s.request(2, "tools/list", serde_json::json!({}))["result"]["tools"].clone();
    s.close();
    list
}

/// The full preset's list as `local` gets it. Its cost in tokens is checked with Claude's real
/// BPE tokenizer by tests/run-ts-client.sh (bytes / 4 is no measure of tokens); here, its shape.
#[test]
fn full_tools_list_has_every_tool_each_with_an_object_schema() {
    let list = full_tools_list();
    let tools = list.as_array().unwrap();
    // The stdio client `local` has the full preset: every tool is listed, and the read-only
    // tools behind archgate's own resources are not.
    assert!(tools.len() >= 39, "{} tools", tools.len());
    assert!(
        !tools
            .iter()
            .any(|t| t["name"] == "archgate_policy" || t["name"] == "archgate_activity"),
        "resource-only tools are not listed"
    );
    for t in tools {
        assert_eq!(
            t["inputSchema"]["type"], "object",
            "{}: an object schema at the top",
            t["name"]
        );
        assert!(
            t["inputSchema"].get("oneOf").is_none() && t["inputSchema"].get("anyOf").is_none(),
            "{}",
            t["name"]
        );
    }
}

/// What several clients' schema validators reject (MCP Inspector reports them as portability
/// problems): a `type` array (nullable `["string", "null"]` included), a bare `true`/`false`
/// where a schema is expected, and a subschema that constrains nothing. None in any tool.
#[test]
fn every_tool_schema_is_portable() {
    fn walk(v: &serde_json::Value, at: &str, keyword: Option<&str>, found: &mut Vec<String>) {
        const BOOLEAN_OK: [&str; 4] = [
            "additionalProperties",
            "unevaluatedProperties",
            "additionalItems",
            "unevaluatedItems",
        ];
        const CONSTRAINS: [&str; 17] = [
            "type",
            "enum",
            "const",
            "$ref",
            "anyOf",
            "oneOf",
            "allOf",
            "not",
            "items",
            "properties",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "required",
        ];
        match v {
            serde_json::Value::Bool(_) if !keyword.is_some_and(|k| BOOLEAN_OK.contains(&k)) => {
                found.push(format!("{at}: a bare boolean schema"));
            }
            serde_json::Value::Object(m) => {
                if m.get("type").is_some_and(|t| t.is_array()) {
                    found.push(format!("{at}: type is an array {}", m["type"]));
                }
                if keyword.is_some_and(|k| k != "not")
                    && !m.keys().any(|k| CONSTRAINS.contains(&k.as_str()))
                {
                    found.push(format!("{at}: a schema that constrains nothing"));
                }
                for (k, c) in m {
                    match k.as_str() {
                        "properties" | "$defs" | "patternProperties" => {
                            for (name, s) in c.as_object().into_iter().flatten() {
                                walk(s, &format!("{at}.{k}.{name}"), Some(k), found);
                            }
                        }
                        "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                            for (i, s) in c.as_array().into_iter().flatten().enumerate() {
                                walk(s, &format!("{at}.{k}[{i}]"), Some(k), found);
                            }
                        }
                        "items" | "not" | "contains" | "additionalProperties" | "propertyNames" => {
                            walk(c, &format!("{at}.{k}"), Some(k), found)
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let list = full_tools_list();
    let mut found = Vec::new();
    for t in list.as_array().unwrap() {
        walk(
            &t["inputSchema"],
            t["name"].as_str().unwrap(),
            None,
            &mut found,
        );
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The MCP conformance suite's fixtures live in their own binary (`crates/conformance`,
/// `archgate-conformance`, which also supplies the suite's bearer token) and are not in the
/// shipped one: neither their tools' descriptions nor the function that runs them is linked into
/// `archgate` as built for these tests, nor into a release build found beside it.
#[test]
fn the_conformance_fixtures_are_not_in_the_shipped_binary() {
    let markers = ["Conformance fixture: ", "call_fixture"];
    // The markers are the fixtures' own words: a rename there cannot leave this test looking
    // for nothing.
    let src = crate::manifest_dir().join("../conformance/src");
    let mut fixtures = String::new();
    let mut dirs = vec![src];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("crates/conformance/src") {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                fixtures.push_str(&std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    for marker in markers {
        assert!(
            fixtures.contains(marker),
            "{marker:?} is not in the fixtures"
        );
    }
    let debug = std::path::PathBuf::from(env!("CARGO_BIN_EXE_archgate"));
    let release = debug
        .parent()
        .and_then(|d| d.parent())
        .map(|t| t.join("release/archgate"));
    // grep -a reads the binary as text: fast on a few hundred MB, where a byte loop in a test
    // build is not.
    let holds = |bin: &std::path::Path, needle: &str| {
        Command::new("grep")
            .args(["-q", "-a", "-F", "-e", needle])
            .arg(bin)
            .status()
            .expect("grep")
            .success()
    };
    // The check can see them: the conformance binary, built beside archgate by the workspace's
    // `cargo build` and `cargo test`, holds every marker.
    let conformance = debug.with_file_name("archgate-conformance");
    if conformance.exists() {
        for marker in markers {
            assert!(
                holds(&conformance, marker),
                "{} lacks {marker:?}",
                conformance.display()
            );
        }
    } else {
        eprintln!(
            "{} not built: the markers are checked against the shipped binary only",
            conformance.display()
        );
    }
    let mut checked = 0;
    for bin in std::iter::once(debug).chain(release.filter(|p| p.exists())) {
        // The check can see: a name every build links in is found.
        assert!(
            holds(&bin, "system_status"),
            "{} holds no tool names",
            bin.display()
        );
        for marker in markers {
            assert!(
                !holds(&bin, marker),
                "{} links in the conformance fixtures ({marker:?})",
                bin.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 1);
}

/// An agent choosing tools reads descriptions first (issue 36: `upkeep` said "Upgrade health
/// checks" and named none of them; `network` named neither `dns` nor `wifi`). A tool that does
/// one of several things by a `check` or `section` argument names each choice in its
/// description.
#[test]
fn a_tool_with_several_checks_names_each_in_its_description() {
    let list = full_tools_list();
    let mut seen = 0;
    for t in list.as_array().unwrap() {
        let desc = t["description"].as_str().unwrap_or("");
        for arg in ["check", "section"] {
            let Some(choices) = t["inputSchema"]["properties"][arg]["enum"].as_array() else {
                continue;
            };
            seen += 1;
            // `all` is every choice at once, not one to choose.
            for c in choices.iter().filter(|c| *c != "all") {
                let c = c.as_str().unwrap();
                assert!(
                    desc.contains(c),
                    "{}: the description does not name the {arg} {c:?}: {desc}",
                    t["name"]
                );
            }
        }
    }
    assert!(
        seen >= 3,
        "upkeep, hardware and network have such an argument"
    );
}
