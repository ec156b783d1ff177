//! The call path's own promises, with tools written to watch it: one config snapshot per call
//! (a reload mid-call reaches neither its context nor its permit), and arguments parsed once.

use super::*;

/// A read tool that, while its call resolves, rewrites the config file and reloads it; its
/// answer says what the call saw: its `CallCx` snapshot and its permit's timeout.
struct Reloads {
    handle: ConfigHandle,
    file: std::path::PathBuf,
    at_resolve: std::sync::Mutex<Option<usize>>,
}
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}
static RELOADS: ToolSpec = read_spec("reloads", "reloads the config mid-call");
impl Tool for Reloads {
    type Args = NoArgs;
    type Run = NoArgs;
    fn spec(&self) -> &'static ToolSpec {
        &RELOADS
    }
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: NoArgs,
    ) -> BoxFuture<'a, Result<Resolved<NoArgs>, ToolError>> {
        Box::pin(async move {
            *self.at_resolve.lock().unwrap() = Some(Arc::as_ptr(&cx.config) as usize);
            std::fs::write(&self.file, "[tools.timeouts]\nreloads = 9\n").unwrap();
            let (outcome, _) = self.handle.reload();
            assert_eq!(outcome, archgate_core::config::ReloadOutcome::Applied);
            Ok(Resolved::planned(plan, a))
        })
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let same = *self.at_resolve.lock().unwrap() == Some(Arc::as_ptr(&cx.config) as usize);
            Ok(ToolOutput::json(json!({
                "same_snapshot": same,
                "cx_timeout": cx.config.tools.timeouts.get("reloads").map(|d| d.as_secs()),
                "permit_timeout": permit.timeout().map(|d| d.as_secs()),
            })))
        })
    }
}

/// ARCHITECTURE.md ("One call is decided under one config snapshot"): one call is decided and run under one config snapshot. A reload
/// while the call is under way reaches neither its `CallCx` nor its permit; the next call reads
/// the new snapshot.
#[tokio::test]
async fn a_reload_mid_call_does_not_reach_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "[tools.timeouts]\nreloads = 5\n").unwrap();
    let (handle, loaded) = ConfigHandle::open(file.clone());
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let tool = Reloads {
        handle: handle.clone(),
        file,
        at_resolve: Default::default(),
    };
    let e = env_with(handle, Arc::new(archgate_core::clock::SystemClock), |c| {
        c.add(tool)
    });
    let out = e.gate.call(&client(), "reloads", json!({})).await;
    let v = out.output.unwrap().structured.unwrap();
    assert_eq!(
        v,
        json!({"same_snapshot": true, "cx_timeout": 5, "permit_timeout": 5})
    );
    // The reload did happen: the next call is under the new snapshot.
    let next = e.gate.config().current();
    assert_eq!(
        next.tools.timeouts.get("reloads"),
        Some(&Duration::from_secs(9))
    );
}

/// How often `Counted`'s arguments were deserialized.
static PARSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn counted_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    PARSED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    String::deserialize(d)
}

/// A tool whose arguments count their own parsing; `execute` takes the typed value resolution
/// settled.
struct Counted;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CountedArgs {
    #[serde(deserialize_with = "counted_word")]
    word: String,
}
static COUNTED: ToolSpec = read_spec("counted", "counts its parsing");
impl Tool for Counted {
    type Args = CountedArgs;
    type Run = String;
    fn spec(&self) -> &'static ToolSpec {
        &COUNTED
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: CountedArgs,
    ) -> BoxFuture<'a, Result<Resolved<String>, ToolError>> {
        Box::pin(async move { Ok(Resolved::planned(plan, a.word.to_uppercase())) })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _permit: Permit,
        word: String,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(ToolOutput::text(word)) })
    }
}

/// The arguments are parsed once, at admission; every later stage, execution too, takes the
/// typed value (here: what resolution made of it).
#[tokio::test]
async fn a_calls_arguments_are_parsed_once() {
    let e = env_with(
        ConfigHandle::fixed(load_str("").config),
        Arc::new(archgate_core::clock::SystemClock),
        |c| c.add(Counted),
    );
    let before = PARSED.load(std::sync::atomic::Ordering::SeqCst);
    let r = e
        .gate
        .call(&client(), "counted", json!({"word": "once"}))
        .await;
    let out = r.output.unwrap();
    assert!(
        matches!(&out.content[..], [archgate_core::tool::Content::Text(t)] if t == "ONCE"),
        "{out:?}"
    );
    assert_eq!(PARSED.load(std::sync::atomic::Ordering::SeqCst) - before, 1);
}

/// The spec of a test's read tool.
const fn read_spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        long_running: false,
        name,
        title: name,
        description,
        tier: Tier::Read,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        private_args: &[],
        provenance: archgate_core::provenance::Provenance::ArchgateOnly,
        says: archgate_core::sentence::Phrase::READS,
    }
}

/// An answer is rendered as text once, when the gate measures it against the output cap, and
/// that text is what the transports send; past the cap it is only counted, never held whole.
#[test]
fn an_answer_is_rendered_once_within_the_cap_and_only_counted_past_it() {
    let v = json!({"name": "caf\u{e9} \"quoted\"", "n": [1, 2, 3], "none": null});
    let text = v.to_string();
    let mut fits = ToolOutput::json(v.clone());
    assert_eq!(fits.measure(text.len()), text.len());
    assert_eq!(fits.structured_text.as_deref(), Some(text.as_str()));
    let mut over = ToolOutput::json(v.clone());
    assert_eq!(
        over.measure(text.len() - 1),
        text.len(),
        "counted to its end"
    );
    assert_eq!(over.structured_text, None, "too large: not kept");
    // Other content counts against the same cap.
    let mut both = ToolOutput::json(v);
    both.content
        .push(archgate_core::tool::Content::Text("12345".into()));
    assert_eq!(both.measure(text.len() + 5), text.len() + 5);
    assert_eq!(both.structured_text.as_deref(), Some(text.as_str()));
    let mut both_over = both.clone();
    assert_eq!(both_over.measure(text.len() + 4), text.len() + 5);
    assert_eq!(both_over.structured_text, None);
    // A text a tool left beside its value is not what is sent: the value is rendered again.
    let mut lying = ToolOutput::json(json!({"ok": true}));
    lying.structured_text = Some("{\"ok\":false}".into());
    assert_eq!(lying.measure(1000), r#"{"ok":true}"#.len());
    assert_eq!(lying.structured_text.as_deref(), Some(r#"{"ok":true}"#));
}

/// A kept answer (`ToolOutput::rendered`) is sent as the text it was rendered to once, counted
/// against the cap like any; a value changed after it was kept is rendered again, so the text
/// sent is always the value's.
#[test]
fn a_kept_answer_is_sent_as_its_text_and_a_changed_value_is_rendered_again() {
    let v = json!({"name": "caf\u{e9} \"quoted\"", "n": [1, 2, 3]});
    let text = v.to_string();
    let kept = std::sync::Arc::new(archgate_core::tool::Rendered::of(&v));
    assert_eq!(kept.text(), text);
    assert_eq!(kept.value(), &v);
    let mut fits = ToolOutput::rendered(&kept);
    assert_eq!(fits.structured.as_ref(), Some(&v));
    assert_eq!(fits.measure(text.len()), text.len());
    assert_eq!(fits.structured_text.as_deref(), Some(text.as_str()));
    let mut over = ToolOutput::rendered(&kept);
    assert_eq!(over.measure(text.len() - 1), text.len(), "counted");
    assert_eq!(over.structured_text, None, "too large: not kept");
    let mut changed = ToolOutput::rendered(&kept);
    changed.structured = Some(json!({"ok": true}));
    assert_eq!(changed.measure(1000), r#"{"ok":true}"#.len());
    assert_eq!(changed.structured_text.as_deref(), Some(r#"{"ok":true}"#));
}
