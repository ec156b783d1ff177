//! A call whose output the person may see before answering (a screenshot's shape): the gate runs
//! it once, on the person's request, while the question waits; a yes gives the agent that
//! output and runs nothing again; a no drops it. The tool here counts its runs and returns a
//! different image each time, so a second run could not pass for the first.

use super::*;
use archgate_core::preview::Preview;
use archgate_core::tool::Content;
use std::sync::atomic::{AtomicU32, Ordering};

static RUNS: AtomicU32 = AtomicU32::new(0);

pub(crate) struct Camera;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CameraArgs {}
static CAMERA: ToolSpec = ToolSpec {
    long_running: false,
    name: "camera",
    title: "Camera",
    description: "takes a picture",
    tier: Tier::Act,
    read_only: true,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for Camera {
    type Args = CameraArgs;
    type Run = CameraArgs;
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: CameraArgs,
    ) -> BoxFuture<'a, Result<Resolved<CameraArgs>, ToolError>> {
        Box::pin(async move {
            let mut r = Resolved::planned(plan, a);
            r.action.preview = true;
            Ok(r)
        })
    }
    fn spec(&self) -> &'static ToolSpec {
        &CAMERA
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _permit: Permit,
        _a: CameraArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let n = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(ToolOutput {
                content: vec![Content::Image {
                    data: format!("picture {n}").into_bytes(),
                    mime: "image/png",
                }],
                ..ToolOutput::default()
            })
        })
    }
}

/// The call's question once it waits; a call that ended without asking fails the test.
async fn waiting(
    e: &Env,
    t: &mut tokio::task::JoinHandle<archgate_core::gate::CallResult>,
) -> Question {
    loop {
        if let Some(q) = e.gate.broker().pending().first() {
            return q.clone();
        }
        if t.is_finished() {
            let r = t.await.unwrap();
            panic!(
                "the call did not wait: {:?} {:?}",
                r.outcome,
                r.output.err().map(|x| x.message)
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn image_of(o: &ToolOutput) -> Vec<u8> {
    o.content
        .iter()
        .find_map(|c| match c {
            Content::Image { data, .. } => Some(data.clone()),
            Content::Text(_) => None,
        })
        .expect("an image")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_person_saw_is_what_the_agent_receives_and_a_no_drops_it() {
    // An act call asks by default.
    let loaded = load_str("");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let e = env_with(
        ConfigHandle::fixed(loaded.config),
        Arc::new(archgate_core::clock::SystemClock),
        |c| c.add(Camera),
    );
    let _channel = e.gate.broker().register_pull_channel();
    let previews = e.gate.previews().clone();

    // Seen, then allowed: one run, and the agent gets the bytes the person saw.
    let g = e.gate.clone();
    let mut t = tokio::spawn(async move { g.call(&client(), "camera", json!({})).await });
    let q = waiting(&e, &mut t).await;
    assert_eq!(previews.request(&q.id, false).await, Ok(Preview::NotTaken));
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "a look takes nothing");
    let Ok(Preview::Image { data: seen, .. }) = previews.request(&q.id, true).await else {
        panic!("an image");
    };
    let Ok(Preview::Image { data: again, .. }) = previews.request(&q.id, true).await else {
        panic!("an image");
    };
    assert_eq!(seen, again, "taken once, held");
    assert_eq!(RUNS.load(Ordering::SeqCst), 1);
    e.gate
        .broker()
        .answer(&q.id, Answer::Allow, "page")
        .unwrap();
    let r = t.await.unwrap();
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(image_of(&r.output.unwrap()), seen.to_vec());
    assert_eq!(RUNS.load(Ordering::SeqCst), 1, "the yes ran nothing again");
    assert!(!previews.is_open(&q.id), "nothing held after the call");

    // Not seen: a yes runs the call as always, once.
    let before = RUNS.load(Ordering::SeqCst);
    let g = e.gate.clone();
    let mut t = tokio::spawn(async move { g.call(&client(), "camera", json!({})).await });
    let q = waiting(&e, &mut t).await;
    e.gate
        .broker()
        .answer(&q.id, Answer::Allow, "page")
        .unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    assert_eq!(RUNS.load(Ordering::SeqCst), before + 1);

    // Seen, then denied: the agent gets no image and the slot is gone.
    let g = e.gate.clone();
    let mut t = tokio::spawn(async move { g.call(&client(), "camera", json!({})).await });
    let q = waiting(&e, &mut t).await;
    assert!(matches!(
        previews.request(&q.id, true).await,
        Ok(Preview::Image { .. })
    ));
    e.gate.broker().answer(&q.id, Answer::Deny, "page").unwrap();
    let r = t.await.unwrap();
    assert_eq!(r.outcome, Outcome::Declined);
    assert!(r.output.is_err());
    assert!(previews.request(&q.id, false).await.is_err());
}
