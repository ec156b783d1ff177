//! MCP tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension of the 2026-07-28
//! revision): a call that must wait is answered with a task handle at once, and the client polls
//! `tasks/get` instead of holding a request open.
//!
//! Only for a request that declares the extension (in its `_meta` client capabilities, or at
//! `initialize` on the handshake era); every other request is answered inline exactly as before.
//! A declared call runs detached from its request (`call.rs`) and becomes a task when it must
//! wait: the gate routes its question to the person (`archgate_core::gate::task`), a trusted
//! relay is to bring the answer (then the question is the task's `input_required`, answered
//! through `tasks/update`, `relay.rs`), or a `long_running` tool is still running after
//! [`call::INLINE_MOMENT`]. Calls that finish sooner answer inline.
//!
//! Tasks live in [`TaskStore`]: rmcp's `TaskManager` runs and reports them; here each belongs to
//! the identity that made it ([`owner`]: the bearer token itself, a bridged or stdio client's own
//! grant — never a name, which a revoked client's successor or a renamed client's namesake
//! reuses: attack 4 F2); to anyone else its id is an unknown task. An owner has at most
//! `approval.max_tasks` open. A dropped connection does not end a task: it runs, or its question
//! waits, until its deadline. Across a restart of the daemon (a stop, a SIGKILL, a crash) a task
//! is not resumed, but its owner's `tasks/get` answers `failed` with what became of it
//! (`app/task_table.rs`), and its call's one audit record — `unreachable` for a question that was
//! waiting, `unknown` (from its `started` line) for a run that was under way, written by the next
//! start when the daemon was killed — names the task in its `task` field.

pub mod call;
pub mod relay;

pub use crate::app::tasks::TaskStore;

pub use call::{become_task, request_input};

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The poll interval (`pollIntervalMs`) a task suggests, by what it is doing now — the hint
/// follows the task from one to the next (`tasks/get` carries the current one).
///
/// While a question waits for the person (or the client's input): people answer in seconds to
/// minutes, and a yes should not wait long for the next poll.
pub const POLL_QUESTION_MS: u64 = 2_000;
/// While work that takes minutes runs (a `long_running` tool: a hand-off the person runs in a
/// terminal, every package's files checked): polling each second would only add load.
pub const POLL_LONG_RUN_MS: u64 = 5_000;
/// While any other work runs after the person's yes: it usually ends within a second or two.
pub const POLL_RUN_MS: u64 = 1_000;
/// How long a task stays readable after its deadline (rmcp keeps a finished task one more such
/// window, so a client that polls late still reads the outcome).
pub const KEEP_AFTER_DEADLINE_MS: u64 = 3_600_000;

/// Whether this request declared the tasks extension (in its `_meta`, or at `initialize`).
pub fn declared(cx: &rmcp::service::RequestContext<rmcp::service::RoleServer>) -> bool {
    cx.client_capabilities().is_some_and(|c| c.supports_tasks())
}

/// The identity a task belongs to: a digest of what made the request — `("token", the bearer
/// token)` over HTTP, `("grant", the stored client's token digest)` for a bridged client of
/// `archgate clients`, `(transport, name)` for `local` and a config-named client, which have no
/// grant a re-add could replace. Kept on disk (the tasks' table), so never the token itself.
pub fn owner(kind: &str, secret: &str) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in ["archgate task owner", kind, secret] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

/// What a declared call of `tool` by `client` (made by `owner`) needs, from the catalogue and
/// live config.
pub fn declared_call(
    app: &crate::app::App,
    owner: String,
    client: &str,
    tool: &str,
) -> call::Declared {
    let config = app.gate.config().current();
    let shape = app
        .gate
        .catalogue()
        .get(tool)
        .map(|t| {
            let s = t.spec();
            call::Shape {
                long_running: s.long_running,
                read_only: s.read_only,
            }
        })
        .unwrap_or_default();
    call::Declared {
        store: app.tasks.clone(),
        broker: app.gate.broker().clone(),
        owner,
        client: client.to_owned(),
        tool: tool.to_owned(),
        shape,
        task_timeout: config.approval.task_timeout,
        max_tasks: config.approval.max_tasks,
    }
}
