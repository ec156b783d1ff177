//! The gate end to end inside one process: real config snapshots, a real audit file, real
//! programs through the real executor, tools written for the test.

use archgate_core::audit::{AuditLog, AuditSettings, Entry, Outcome, read_log};
use archgate_core::config::{ConfigHandle, load_str};
use archgate_core::exec::{CommandSpec, Permit};
use archgate_core::gate::{Catalogue, Client, Gate};
use archgate_core::paths::{PathEnv, PathOverrides, Paths};
use archgate_core::person::PersonState;
use archgate_core::policy::{Grant, Tier};
use archgate_core::tool::{CallCx, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Runs /usr/bin/printf with the given words, literally.
struct Echo;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// Words to print.
    words: Vec<String>,
}
static ECHO: ToolSpec = ToolSpec {
    name: "echo",
    title: "Echo",
    description: "prints words",
    tier: Tier::Read,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    private_args: &[],
};
impl Tool for Echo {
    type Args = EchoArgs;
    type Run = EchoArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &ECHO
    }
    fn plan(&self, a: &EchoArgs) -> Plan {
        let mut p = Plan::simple(&ECHO);
        p.argv = std::iter::once("printf".to_owned())
            .chain(a.words.iter().cloned())
            .collect();
        p
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        a: EchoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let out = permit
                .run(CommandSpec::new("printf").arg("%s\\n").args(a.words))
                .await?;
            Ok(ToolOutput::text(out.stdout_lossy()))
        })
    }
}

/// Holds private text (like the clipboard) and can panic on request.
struct Secret;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SecretArgs {
    /// Private text.
    text: String,
    /// Panic inside the tool.
    #[serde(default)]
    panic: bool,
}
static SECRET: ToolSpec = ToolSpec {
    name: "secret",
    title: "Secret",
    description: "keeps a secret",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &["text"],
};
impl Tool for Secret {
    type Args = SecretArgs;
    type Run = SecretArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &SECRET
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        a: SecretArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            assert!(!a.panic, "asked to panic");
            Ok(ToolOutput::text(format!("output {}", a.text)))
        })
    }
}

/// Resolves its command from a file the test rewrites, as a desktop entry's `Exec=` line is
/// read: one word a line. Asked to `drift`, it runs another command than it resolved — the
/// permit must refuse that.
struct FromFile(std::path::PathBuf);
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FromFileArgs {
    /// Run another command than the resolved one.
    #[serde(default)]
    drift: bool,
}
static FROM_FILE: ToolSpec = ToolSpec {
    name: "from_file",
    title: "From a file",
    description: "runs the command a file names",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
};
impl Tool for FromFile {
    type Args = FromFileArgs;
    type Run = (CommandSpec, bool);
    fn spec(&self) -> &'static ToolSpec {
        &FROM_FILE
    }
    fn plan(&self, _a: &FromFileArgs) -> Plan {
        // What the words say: an "app"; the command is only known after reading the file.
        let mut p = Plan::with_tier(&FROM_FILE, Tier::Act, &["app"]);
        p.argv = vec!["app".into()];
        p
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: FromFileArgs,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>> {
        Box::pin(async move {
            let text = std::fs::read_to_string(&self.0)
                .map_err(|e| ToolError::new("not_found", e.to_string()))?;
            let words: Vec<&str> = text.lines().collect();
            let spec = CommandSpec::new(words[0]).args(words[1..].iter().copied());
            let mut r = Resolved::planned(plan, (spec.clone(), a.drift));
            r.action.commands = vec![spec];
            Ok(r)
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        (spec, drift): Self::Run,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let spec = if drift {
                CommandSpec::new("printf").arg("drifted")
            } else {
                spec
            };
            let out = permit.run(spec).await?;
            Ok(ToolOutput::text(out.stdout_lossy()))
        })
    }
}

/// Takes one route word from the agent (as `toggle NAME` or `omarchy_run ROUTE` do).
struct RouteWord;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RouteWordArgs {
    /// A route word.
    word: String,
}
static ROUTE_WORD: ToolSpec = ToolSpec {
    name: "secret_route",
    title: "Route word",
    description: "acts on a named thing",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
};
impl Tool for RouteWord {
    type Args = RouteWordArgs;
    type Run = RouteWordArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &ROUTE_WORD
    }
    fn plan(&self, a: &RouteWordArgs) -> Plan {
        Plan::with_tier(&ROUTE_WORD, Tier::Act, &[&a.word])
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        _a: RouteWordArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::default()) })
    }
}

struct Env {
    _dir: tempfile::TempDir,
    gate: Arc<Gate>,
    log: std::path::PathBuf,
}

fn env(config: &str) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let penv = PathEnv {
        home: Some(home.clone()),
        uid: nix::unistd::getuid().as_raw(),
        ..Default::default()
    };
    let paths = Paths::resolve(&penv, None, &PathOverrides::default()).unwrap();
    paths.prepare(penv.uid).unwrap();
    let loaded = load_str(config);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let handle = ConfigHandle::fixed(loaded.config);
    let audit = AuditLog::start(AuditSettings {
        path: paths.audit_log(),
        queue: 4096,
        max_bytes: 1 << 30,
        keep: 2,
    });
    let person = Arc::new(PersonState::load(
        paths.standing_rules_file(),
        paths.acknowledged_file(),
    ));
    let mut cat = Catalogue::default();
    cat.add(Echo);
    cat.add(Secret);
    cat.add(FromFile(dir.path().join("entry")));
    cat.add(RouteWord);
    let log = paths.audit_log();
    Env {
        _dir: dir,
        gate: Arc::new(Gate::new(handle, paths, audit, person, cat)),
        log,
    }
}

fn client() -> Client {
    Client {
        name: "local".into(),
        grant: Grant::full(),
    }
}

fn records(e: &Env) -> Vec<archgate_core::audit::Record> {
    assert!(e.gate.audit.flush(Duration::from_secs(5)));
    let r = read_log(&e.log).unwrap();
    assert_eq!(r.skipped, 0);
    r.entries
        .into_iter()
        .filter_map(|x| match x {
            Entry::Call(c) => Some(*c),
            Entry::Event(_) => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_give_exactly_one_record_each() {
    let e = env("");
    let mut handles = Vec::new();
    for i in 0..40 {
        let g = e.gate.clone();
        handles.push(tokio::spawn(async move {
            g.call(&client(), "echo", json!({"words": [format!("w{i}")]}))
                .await
        }));
    }
    for h in handles {
        let r = h.await.unwrap();
        assert_eq!(r.outcome, Outcome::Ok);
    }
    let recs = records(&e);
    assert_eq!(recs.len(), 40);
    let mut ids: Vec<_> = recs.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 40);
}

#[tokio::test]
async fn shell_metacharacters_reach_the_program_literally() {
    let e = env("");
    let canary = e._dir.path().join("CANARY");
    let words = vec![
        format!("; touch {}", canary.display()),
        format!("$(touch {})", canary.display()),
        format!("`touch {}`", canary.display()),
        "a\nb".to_owned(),
        "*".to_owned(),
        "'\"".to_owned(),
    ];
    let r = e
        .gate
        .call(&client(), "echo", json!({ "words": words }))
        .await;
    let out = match r.output.unwrap().content.remove(0) {
        archgate_core::tool::Content::Text(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        out,
        words.iter().map(|w| format!("{w}\n")).collect::<String>()
    );
    assert!(!canary.exists());
}

#[tokio::test]
async fn privilege_elevation_is_refused_and_recorded_whatever_the_config() {
    let e = env("[policy]\nallow = [\"*\"]\n");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["hello", "sudo"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Refused);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, "refused");
    assert!(err.message.contains("sudo"), "{}", err.message);
    let recs = records(&e);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, Outcome::Refused);
    assert_eq!(recs[0].tier.as_deref(), Some("blocked"));
    assert_eq!(recs[0].decision.as_deref(), Some("deny"));
}

#[tokio::test]
async fn denied_routes_and_bad_arguments_are_refused_before_anything_runs() {
    let e = env("[policy]\ndeny = [\"echo\"]\n");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Refused);
    assert!(r.output.unwrap_err().message.contains("echo"));

    let e = env("");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"], "extra": 1}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    assert!(
        r.output.unwrap_err().message.contains("extra"),
        "the refusal names the field"
    );
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": "x".repeat(70_000)}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    let r = e.gate.call(&client(), "nope", json!({})).await;
    assert_eq!(r.outcome, Outcome::NotGranted);
    let recs = records(&e);
    assert_eq!(recs.len(), 3, "refusals are recorded too");
}

#[tokio::test]
async fn approval_needed_without_channels_is_unsupported_with_the_command() {
    let e = env("");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "hunter2"}))
        .await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, "unsupported");
    assert!(err.message.contains("run it themselves"), "{}", err.message);
}

#[tokio::test]
async fn private_arguments_and_outputs_never_reach_the_log() {
    let e = env("[policy]\nallow = [\"secret\"]\n");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "hunter2-very-private"}))
        .await;
    assert_eq!(r.outcome, Outcome::Ok, "{:?}", r.output);
    records(&e);
    let text = std::fs::read_to_string(&e.log).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("[redacted: 20 bytes]"));
}

#[tokio::test]
async fn a_panicking_tool_is_recorded_and_the_gate_keeps_serving() {
    let e = env("[policy]\nallow = [\"secret\"]\n");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "x", "panic": true}))
        .await;
    assert_eq!(r.outcome, Outcome::Panicked);
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["still here"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Ok);
    let recs = records(&e);
    assert_eq!(
        recs.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [Outcome::Panicked, Outcome::Ok]
    );
}

#[tokio::test]
async fn a_client_going_away_while_parked_is_unreachable_and_nothing_runs() {
    let e = env("");
    let _channel = e.gate.broker.register_pull_channel();
    let c = client();
    let fut = e.gate.call(&c, "secret", json!({"text": "x"}));
    tokio::select! {
        _ = fut => panic!("must park"),
        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
    }
    // The future was dropped: the question is withdrawn and the record says unreachable.
    assert!(e.gate.broker.pending().is_empty());
    let recs = records(&e);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, Outcome::Unreachable);
    assert_eq!(recs[0].approval.as_ref().unwrap().outcome, "unreachable");
}

#[tokio::test]
async fn an_approved_call_runs_once_and_a_declined_one_never() {
    let e = env("");
    let _channel = e.gate.broker.register_pull_channel();
    for (answer, expect) in [
        (archgate_core::approval::Answer::Allow, Outcome::Ok),
        (archgate_core::approval::Answer::Deny, Outcome::Declined),
    ] {
        let g = e.gate.clone();
        let t =
            tokio::spawn(async move { g.call(&client(), "secret", json!({"text": "x"})).await });
        let id = loop {
            if let Some(q) = e.gate.broker.pending().first() {
                break q.id.clone();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let q = e.gate.broker.pending().remove(0);
        assert_eq!(q.tool, "secret");
        // Issue 16, attack 6: the person approves what they see, private text included; the
        // audit record (below) keeps its redaction.
        assert_eq!(
            q.args["text"], "x",
            "the question shows the private text whole"
        );
        e.gate.broker.answer(&id, answer, "cli").unwrap();
        assert_eq!(t.await.unwrap().outcome, expect);
    }
    let recs = records(&e);
    assert_eq!(
        recs[0].approval.as_ref().unwrap().channel.as_deref(),
        Some("cli")
    );
    assert_eq!(recs[1].approval.as_ref().unwrap().outcome, "declined");
    assert!(
        !serde_json::to_string(&recs).unwrap().contains("\"x\""),
        "the log never has it"
    );
}

fn entry(e: &Env, words: &[&str]) {
    std::fs::write(e._dir.path().join("entry"), words.join("\n")).unwrap();
}

async fn parked(e: &Env) -> Question {
    loop {
        if let Some(q) = e.gate.broker.pending().first() {
            break q.clone();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Issue 16, attack 1: policy judges the command resolution built, not the plan's words. An
/// entry that resolves to `su …` is blocked under an allow-everything rule and developer mode.
#[tokio::test]
async fn elevation_through_resolution_is_blocked_whatever_allows_it() {
    let e = env("[policy]\nallow = [\"*\"]\n");
    e.gate
        .person
        .set_dev_mode(Some(600), archgate_core::person::now_secs())
        .unwrap();
    for argv in [
        &["su", "-c", "id", "root"][..],
        &["/usr/bin/pkexec", "id"],
        &["env", "sudo", "id"],
    ] {
        entry(&e, argv);
        let r = e.gate.call(&client(), "from_file", json!({})).await;
        assert_eq!(r.outcome, Outcome::Refused, "{argv:?}");
        let err = r.output.unwrap_err();
        assert!(
            err.message.contains("elevates privilege"),
            "{}",
            err.message
        );
    }
    // The honest path: the same tool with a harmless entry runs under the allow rule.
    entry(&e, &["printf", "fine"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok, "{:?}", r.output);
    let recs = records(&e);
    assert!(
        recs[0]
            .target
            .as_deref()
            .unwrap()
            .starts_with("su -c id root"),
        "{:?}",
        recs[0].target
    );
}

/// Issue 16, attack 2: a standing rule covers the resolved command. After "Always" for an entry
/// that ran `printf a`, the same words behind which the entry now runs `printf b` ask again.
#[tokio::test]
async fn a_standing_rule_does_not_cover_a_changed_command() {
    let e = env("");
    let _channel = e.gate.broker.register_pull_channel();
    entry(&e, &["printf", "a"]);
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "from_file", json!({})).await });
    let q = parked(&e).await;
    assert_eq!(
        q.summary, "/usr/bin/printf a",
        "the question shows the resolved command"
    );
    e.gate
        .broker
        .answer(&q.id, Answer::AllowAlways, "cli")
        .unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    // Same command: the rule approves without asking.
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok);
    // The entry changed: the same words ask again.
    entry(&e, &["printf", "b"]);
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "from_file", json!({})).await });
    let q = parked(&e).await;
    assert_eq!(q.summary, "/usr/bin/printf b");
    e.gate.broker.answer(&q.id, Answer::Deny, "cli").unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Declined);
    let recs = records(&e);
    assert_eq!(
        recs[1].approval.as_ref().unwrap().channel.as_deref(),
        Some("standing_rule")
    );
}

/// The program is judged as the file it is: a harmless name that is a symlink to `su` is `su`.
#[tokio::test]
async fn a_program_is_judged_as_the_file_it_resolves_to() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/usr/bin/su", dir.path().join("helper")).unwrap();
    let e = env(&format!(
        "[exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\nrequire_root_owned = false\n[policy]\nallow = [\"from_file app\"]\n",
        dir.path().display()
    ));
    entry(&e, &["helper", "-c", "id"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Refused, "{:?}", r.output);
    assert!(r.output.unwrap_err().message.contains("elevates privilege"));
    // A program that is not there is refused before anyone is asked.
    entry(&e, &["no-such-program-here"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Unresolved);
    assert_eq!(r.output.unwrap_err().kind, "not_installed");
}

/// What is approved is what runs: a tool that builds another command in `execute` than the one
/// resolution showed is refused by the permit, and nothing of it runs.
#[tokio::test]
async fn a_command_built_again_differently_is_refused() {
    let e = env("[policy]\nallow = [\"from_file app\"]\n");
    entry(&e, &["printf", "resolved"]);
    let r = e
        .gate
        .call(&client(), "from_file", json!({"drift": true}))
        .await;
    assert_eq!(r.outcome, Outcome::ToolError);
    assert_eq!(r.output.unwrap_err().kind, "not_approved");
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok);
}

/// `Gate::explain` (behind `archgate policy explain`) takes the gate's own decision: the
/// resolved command, the blocked elevation and the standing rule.
#[tokio::test]
async fn explain_is_the_gate_decision() {
    let e = env("[policy]\nallow = [\"from_file app\"]\n");
    entry(&e, &["su", "-c", "id"]);
    let x = e
        .gate
        .explain(&client(), "from_file", json!({}))
        .await
        .unwrap();
    assert_eq!(x.decision.tier, Tier::Blocked);
    assert_eq!(x.action.summary(), "su -c id");
    entry(&e, &["printf", "ok"]);
    let x = e
        .gate
        .explain(&client(), "from_file", json!({}))
        .await
        .unwrap();
    assert_eq!(x.decision.verdict, archgate_core::policy::Verdict::Allow);
    assert!(records(&e).is_empty(), "explaining is not a call");
}

/// Issue 16, attack 7: an unknown tool is charged to the client's budget like any call.
#[tokio::test]
async fn unknown_tools_are_charged() {
    let e = env("[budgets]\nper_minute = 3\n");
    for i in 0..3 {
        let r = e.gate.call(&client(), &format!("nope{i}"), json!({})).await;
        assert_eq!(r.output.unwrap_err().kind, "unknown_tool");
    }
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(r.output.unwrap_err().kind, "budget_exhausted");
}

/// Issue 16, attack 5: route words that would draw on the person's terminal are refused at
/// admission; nothing is resolved or asked.
#[tokio::test]
async fn route_words_that_draw_on_the_terminal_are_refused() {
    let e = env("");
    let _channel = e.gate.broker.register_pull_channel();
    for bad in ["x\u{1b}[1A\u{1b}[2K\rsu", "xdg\u{202e}nepo", "a\u{200b}b"] {
        entry(&e, &["printf", "never"]);
        let r = e
            .gate
            .call(&client(), "secret_route", json!({ "word": bad }))
            .await;
        assert_eq!(
            r.outcome,
            Outcome::InvalidArguments,
            "{bad:?}: {:?}",
            r.output
        );
        assert_eq!(r.output.unwrap_err().kind, "invalid_route");
    }
    assert!(e.gate.broker.pending().is_empty());
}

/// Issue 16, attack 7: a flood of refused calls is charged and summarised. Past the budget,
/// the first refusal of the minute is recorded and the rest counted in one `refused_flood`
/// event, so the log keeps the person's history; the client's next other call closes the count.
#[tokio::test]
async fn a_refused_flood_is_summarised_not_recorded_call_by_call() {
    let e = env("[budgets]\nper_minute = 3\n");
    for i in 0..20 {
        e.gate
            .call(&client(), &format!("flood{i}"), json!({}))
            .await;
    }
    e.gate.summarise_floods();
    assert!(e.gate.audit.flush(Duration::from_secs(5)));
    let log = read_log(&e.log).unwrap();
    let calls: Vec<_> = log
        .entries
        .iter()
        .filter_map(|x| match x {
            Entry::Call(c) => Some(c.outcome),
            Entry::Event(_) => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            Outcome::NotGranted,
            Outcome::NotGranted,
            Outcome::NotGranted,
            Outcome::BudgetExhausted
        ]
    );
    let events: Vec<&serde_json::Value> = log
        .entries
        .iter()
        .filter_map(|x| match x {
            Entry::Event(v) => Some(v),
            Entry::Call(_) => None,
        })
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["event"], "refused_flood");
    assert_eq!(events[0]["folded"], 16);
    assert_eq!(events[0]["client"], "local");
}

/// Issue 16, attack 7: a 4 MiB unknown tool name leaves a record of bounded size that still
/// identifies it (its digest), and the refusal does not echo it whole.
#[tokio::test]
async fn a_huge_unknown_name_leaves_a_small_record() {
    let e = env("");
    let name = "x".repeat(4 << 20);
    let r = e.gate.call(&client(), &name, json!({})).await;
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, "unknown_tool");
    assert!(err.message.len() < 1024, "{} bytes", err.message.len());
    let recs = records(&e);
    let line = serde_json::to_string(&recs[0]).unwrap();
    assert!(line.len() < 2048, "{} bytes", line.len());
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(name.as_bytes()));
    assert!(recs[0].tool.contains(&digest));
}

/// Under `approval.presence = "polkit"` a trusted relaying client is never asked: it cannot
/// show that the person is there. The question waits on the person's own channels.
#[tokio::test]
async fn a_relay_is_not_asked_where_presence_is_needed() {
    let e = env(&format!("{TRUSTED}[approval]\npresence = \"polkit\"\n"));
    let r = relayed(&e, &client(), "a", None, None).await;
    assert_ne!(
        r.outcome,
        Outcome::InputRequired,
        "no ticket is handed to the client"
    );
    let r = relayed(&e, &client(), "a", Some("made-up"), Some(Answer::Allow)).await;
    assert_ne!(
        r.outcome,
        Outcome::Ok,
        "a relayed yes does not run the call"
    );
}

use archgate_core::approval::{Answer, Broker, Channel, Question};
use archgate_core::gate::Relay;

/// The person trusts the client `local` (the tests' client) to relay their answer.
const TRUSTED: &str = "[clients.local]\ntrusted_relay = true\n";

fn resume(ticket: Option<&str>, answer: Option<Answer>) -> Relay {
    Relay::Resume {
        ticket: ticket.map(str::to_owned),
        answer,
    }
}

/// `secret {text}` from a relaying client on the stateless protocol, with `ticket` and `answer`.
async fn relayed(
    e: &Env,
    c: &Client,
    text: &str,
    ticket: Option<&str>,
    answer: Option<Answer>,
) -> archgate_core::gate::CallResult {
    e.gate
        .call_relayed(
            c,
            "secret",
            json!({ "text": text }),
            &resume(ticket, answer),
        )
        .await
}

/// The first request of a relaying client on the stateless protocol: `input_required` with the
/// ticket, the question parked.
async fn first_request(e: &Env, c: &Client, text: &str) -> String {
    let r = relayed(e, c, text, None, None).await;
    assert_eq!(r.outcome, Outcome::InputRequired);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, "input_required");
    let ticket = err.details.unwrap()["ticket"].as_str().unwrap().to_owned();
    assert!(e.gate.broker.pending().iter().any(|q| q.id == ticket));
    ticket
}

#[tokio::test]
async fn a_relaying_client_brings_the_answer_back_once_and_only_for_that_call() {
    // No channel of the person's is running: the relaying client is the only one. `other` is
    // trusted too, so only the ticket's binding can refuse it.
    let e = env(&format!("{TRUSTED}[clients.other]\ntrusted_relay = true\n"));
    let c = client();
    let ticket = first_request(&e, &c, "a").await;

    // Another client cannot use the ticket; the same client cannot use it for another call.
    let other = Client {
        name: "other".into(),
        grant: Grant::full(),
    };
    let r = relayed(&e, &other, "a", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, "ticket_unknown");
    let r = relayed(&e, &c, "b", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, "ticket_mismatch");
    assert!(
        e.gate.broker.pending().iter().any(|q| q.id == ticket),
        "still parked"
    );

    // The right call with the person's yes runs, once.
    let r = relayed(&e, &c, "a", Some(&ticket), Some(Answer::AllowAlways)).await;
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(
        matches!(&r.output.unwrap().content[..], [archgate_core::tool::Content::Text(t)] if t == "output a")
    );
    let r = relayed(&e, &c, "a", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.output.unwrap_err().kind, "ticket_unknown");

    let recs = records(&e);
    let outcomes: Vec<_> = recs.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::InputRequired,
            Outcome::Refused,
            Outcome::Refused,
            Outcome::Ok,
            Outcome::Refused
        ]
    );
    let first = recs[0].approval.as_ref().unwrap();
    assert_eq!(
        (first.outcome.as_str(), first.channel.as_deref()),
        ("input_required", Some("client"))
    );
    let ran = recs[3].approval.as_ref().unwrap();
    assert_eq!(
        (ran.outcome.as_str(), ran.channel.as_deref()),
        ("accepted", Some("client"))
    );
    // A relay never creates a standing rule, even when it says "always".
    assert_eq!(ran.rule_id, None);
    assert!(e.gate.person.rules().is_empty());
}

#[tokio::test]
async fn a_ticket_keeps_the_first_answer_whichever_channel_gave_it() {
    let e = env(TRUSTED);
    let _page = e.gate.broker.register_pull_channel();
    let c = client();
    // Coming back without an answer waits for the person's other channels.
    let ticket = first_request(&e, &c, "y").await;
    let g = e.gate.clone();
    let t2 = ticket.clone();
    let waiting = tokio::spawn(async move {
        g.call_relayed(
            &client(),
            "secret",
            json!({"text": "y"}),
            &resume(Some(&t2), None),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished());
    e.gate.broker.answer(&ticket, Answer::Allow, "cli").unwrap();
    assert_eq!(waiting.await.unwrap().outcome, Outcome::Ok);
    // The page's no came first: the client's later yes changes nothing.
    let ticket = first_request(&e, &c, "x").await;
    e.gate.broker.answer(&ticket, Answer::Deny, "page").unwrap();
    let r = relayed(&e, &c, "x", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.outcome, Outcome::Declined);
    let recs = records(&e);
    let a = recs[3].approval.as_ref().unwrap();
    assert_eq!(
        (a.outcome.as_str(), a.channel.as_deref()),
        ("declined", Some("page"))
    );
}

#[tokio::test]
async fn a_ticket_past_its_deadline_runs_nothing() {
    let e = env(&format!("{TRUSTED}[approval]\ntimeout_s = 5\n"));
    let c = client();
    let ticket = first_request(&e, &c, "late").await;
    tokio::time::sleep(Duration::from_millis(5_050)).await;
    let r = relayed(&e, &c, "late", Some(&ticket), Some(Answer::Allow)).await;
    assert_eq!(r.outcome, Outcome::TimedOut);
    assert!(e.gate.broker.pending().is_empty());
}

/// A client that answers its elicitation at once, and says when it was withdrawn.
struct Elicited(Answer, Arc<std::sync::atomic::AtomicUsize>);
impl Channel for Elicited {
    fn name(&self) -> &'static str {
        "client"
    }
    fn ask(&self, q: &Question, broker: Broker) {
        let (id, answer) = (q.id.clone(), self.0);
        tokio::spawn(async move { broker.answer(&id, answer, "client") });
    }
    fn withdraw(&self, _id: &str) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_live_relay_answers_while_the_call_waits_and_is_withdrawn_after() {
    let e = env(TRUSTED);
    let c = client();
    for (answer, expect) in [
        (Answer::Allow, Outcome::Ok),
        (Answer::Deny, Outcome::Declined),
    ] {
        let withdrawn = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let relay = Relay::Live(Arc::new(Elicited(answer, withdrawn.clone())));
        let r = e
            .gate
            .call_relayed(&c, "secret", json!({"text": "z"}), &relay)
            .await;
        assert_eq!(r.outcome, expect);
        assert_eq!(withdrawn.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
    let recs = records(&e);
    assert!(
        recs.iter()
            .all(|r| r.approval.as_ref().unwrap().channel.as_deref() == Some("client"))
    );
    // Without the relay, and with no channel of the person's, nobody can be asked.
    let r = e.gate.call(&c, "secret", json!({"text": "z"})).await;
    assert_eq!(r.outcome, Outcome::Unsupported);
}

#[tokio::test]
async fn a_client_the_person_does_not_trust_is_never_a_relay() {
    let e = env("");
    let c = client();
    // Offered by the transport, refused by the gate: nobody else can be asked.
    let r = relayed(&e, &c, "t", None, None).await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    let withdrawn = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let relay = Relay::Live(Arc::new(Elicited(Answer::Allow, withdrawn.clone())));
    let r = e
        .gate
        .call_relayed(&c, "secret", json!({"text": "t"}), &relay)
        .await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    assert_eq!(
        withdrawn.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "never asked"
    );
    assert!(e.gate.broker.pending().is_empty());
}
