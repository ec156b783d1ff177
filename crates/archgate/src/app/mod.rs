//! Assembling archgate: paths, config, audit, person state, clients, the catalogue, the gate.

use anyhow::Context;
use archgate_core::audit::{AuditLog, AuditSettings};
use archgate_core::clients::ClientStore;
use archgate_core::config::ConfigHandle;
use archgate_core::gate::Gate;
use archgate_core::paths::{PathEnv, Paths};
use archgate_core::person::{PersonChannel, PersonState};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::tools;

pub mod bridge_stats;
pub mod extension;
pub mod last_seen;
pub mod listener_stats;
pub mod sessions;
pub mod task_table;
pub mod tasks;
pub mod ticket_owners;

pub struct App {
    pub paths: Paths,
    pub gate: Arc<Gate>,
    /// The person's setters (developer mode, acknowledgements, standing rules), taken from the
    /// gate once: only the person's channels use it (commands/, channels/, person/
    /// — a tidy test holds that).
    pub person_channel: PersonChannel,
    pub clients: Arc<ClientStore>,
    pub sessions: Arc<sessions::Sessions>,
    pub started: std::time::Instant,
    /// The port `serve --http` listens on, once it does (none in stdio mode).
    pub http_port: std::sync::OnceLock<u16>,
    /// The daemon's bridge socket for stdio clients (`server/bridge.rs`).
    pub bridge: Arc<bridge_stats::BridgeStats>,
    /// What the approval page's listener did with its connections (`/health`'s
    /// `page_connections`; `/mcp`'s own are its `connections`).
    pub page_connections: Arc<listener_stats::Stats>,
    /// What another binary built on the library added (`extension.rs`); archgate's own: none.
    pub extension: Option<Arc<dyn extension::Extension>>,
    /// MCP tasks of this process, each its client's (`server/tasks`).
    pub tasks: Arc<tasks::TaskStore>,
    /// Who each trusted relay's ticket was handed to (`ticket_owners.rs`).
    pub ticket_owners: Arc<ticket_owners::TicketOwners>,
    /// The hand-offs waiting for the person (`tools/handoff/`); the control socket's helper
    /// claims them.
    pub handoffs: Arc<tools::handoff::Handoffs>,
}

/// Logs go to stderr only: stdout belongs to the protocol (stdio) or to frames (HTTP). By
/// default rmcp's service lifecycle is left out below warnings: it speaks at info for every
/// stateless request ("Service initialized as server", with the client's whole info, then "serve
/// finished"), two lines to format and write per call that say nothing.
pub fn init_logging(level: Option<&str>) {
    let filter = tracing_subscriber::EnvFilter::try_new(level.unwrap_or("info,rmcp::service=warn"))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(false)
        .finish()
        .with(QuietDrain)
        .try_init();
}

/// rmcp logs at ERROR when a response cannot be delivered while a session drains — the client
/// has gone (closed its stream, ended the session), which is how sessions end, not a fault.
/// Those two events are kept out of the log (at debug, under `archgate::drain`, they remain).
struct QuietDrain;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for QuietDrain {
    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _cx: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        let m = event.metadata();
        if *m.level() != tracing::Level::ERROR || m.target() != "rmcp::service" {
            return true;
        }
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                use std::fmt::Write;
                let _ = write!(self.0, " {}={v:?}", f.name());
            }
        }
        let mut said = Message(String::new());
        event.record(&mut said);
        if said.0.contains("during drain") {
            tracing::debug!(target: "archgate::drain", "rmcp:{}", said.0);
            return false;
        }
        true
    }
}

/// Where the last good copy of `file` is kept: the default state directory, whatever
/// `[paths] state_dir` says (so a broken file can still find it; `guard.rs`).
pub fn last_good_path(env: &PathEnv, file: &std::path::Path) -> anyhow::Result<PathBuf> {
    let defaults = Paths::resolve(env, None, &Default::default())?;
    Ok(archgate_core::config::guard::last_good_for(
        &defaults.state_dir,
        file,
        &defaults.config_file,
    ))
}

pub fn config_path(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match explicit {
        Some(p) => Ok(p),
        None => Ok(Paths::config_dir(&PathEnv::from_process())?.join("config.toml")),
    }
}

/// The config and the paths, without starting anything (for commands that only read files).
pub fn config_and_paths(
    explicit: Option<PathBuf>,
) -> anyhow::Result<(archgate_core::config::Config, Paths)> {
    let env = PathEnv::from_process();
    let file = config_path(explicit)?;
    // What the daemon runs on (the last good copy when the file does not apply), so a
    // command finds the daemon's paths and port, never those of a config that is not in force.
    let last_good = last_good_path(&env, &file)?;
    let config = archgate_core::config::in_force(&file, &last_good, env.uid);
    let paths = Paths::resolve(&env, Some(file), &config.paths)?;
    Ok((config, paths))
}

impl App {
    /// Everything a command that touches state needs. Directories are created 0700; a
    /// symlinked one stops the start with a clear error.
    pub fn open(
        config_file: Option<PathBuf>,
        observer: Option<archgate_core::gate::Observer>,
    ) -> anyhow::Result<App> {
        App::open_extended(config_file, observer, None)
    }

    /// [`App::open`] for a command that makes no call (`tools`, `policy`, `client-config`,
    /// `clients`): its activity log is opened, and created, only if it writes something (an
    /// event), so a command that only reads leaves no empty log behind. A process that calls or
    /// serves uses `open`, whose log is open before its first call, so that record never lags.
    pub fn open_without_calls(config_file: Option<PathBuf>) -> anyhow::Result<App> {
        App::assemble(config_file, None, None, false)
    }

    /// [`App::open`] with an extension's tools in the catalogue and its handlers at hand.
    pub fn open_extended(
        config_file: Option<PathBuf>,
        observer: Option<archgate_core::gate::Observer>,
        extension: Option<Arc<dyn extension::Extension>>,
    ) -> anyhow::Result<App> {
        App::assemble(config_file, observer, extension, true)
    }

    /// `calls`: whether this process makes calls (and so opens its activity log at once).
    fn assemble(
        config_file: Option<PathBuf>,
        observer: Option<archgate_core::gate::Observer>,
        extension: Option<Arc<dyn extension::Extension>>,
        calls: bool,
    ) -> anyhow::Result<App> {
        let env = PathEnv::from_process();
        let file = config_path(config_file)?;
        // Fail closed: a config file that cannot be applied, or one missing after a config
        // applied, gives the last one that applied (kept in the default state directory), never
        // defaults; with none, nothing starts.
        let last_good = last_good_path(&env, &file)?;
        let (handle, loaded) = ConfigHandle::open_guarded(file.clone(), last_good, env.uid)?;
        for p in &loaded.problems {
            tracing::warn!(config = %file.display(), "{p}");
        }
        let config = handle.current();
        let paths = Paths::resolve(&env, Some(file), &config.paths)?;
        paths
            .prepare(env.uid)
            .context("preparing archgate's private directories")?;
        let settings = AuditSettings {
            path: paths.audit_log(),
            queue: config.audit.queue,
            max_bytes: config.audit.max_bytes,
            keep: config.audit.keep,
        };
        let tasks = Arc::new(tasks::TaskStore::open(paths.state_dir.join("tasks")));
        let audit = if calls {
            let log = AuditLog::start(settings);
            // A call an archgate killed mid-run left started (or asking) and unrecorded gets its
            // one record, `unknown` (or `unreachable`), before this process makes calls of its
            // own (`audit::orphans`); the tasks from before are then told what became of them.
            let task_of = |call: &str| tasks.table.task_of_call(call);
            archgate_core::audit::orphans::record_orphans(&log, &paths.audit_log(), &task_of);
            tasks
                .table
                .settle(&archgate_core::audit::orphans::read_tail(
                    &paths.audit_log(),
                ));
            log
        } else {
            AuditLog::start_unopened(settings)
        };
        let person = Arc::new(PersonState::load(
            paths.standing_rules_file(),
            paths.acknowledged_file(),
        ));
        let clients = Arc::new(ClientStore::open(
            &paths.token_file(),
            &paths.clients_file(),
        )?);
        // One hand-off at a time across every archgate process of the person (attack 5b, F8).
        let handoffs = Arc::new(tools::handoff::Handoffs::new(
            paths.runtime_dir.join("handoff.lock"),
        ));
        let mut catalogue = tools::catalogue_with(&paths, &config, handoffs.clone());
        if let Some(x) = &extension {
            x.add_tools(&mut catalogue);
        }
        let mut gate = Gate::new(handle, paths.clone(), audit, person, catalogue);
        // A question asked with a token that no longer authenticates when it is listed (revoked
        // after the call was let in) is never put to the person (attack 23 F1); one listed
        // before goes with the next refresh (`Sessions::withdraw_orphans`).
        let holder = clients.clone();
        gate.broker()
            .set_admit(move |q| q.token.is_none_or(|t| holder.holds(&t)));
        // The catalogue's names are always counted by name; others fold into `other`.
        gate.count_known_tools();
        if let Some(o) = observer {
            gate.set_observer(o);
        }
        let person_channel = gate
            .take_person_channel()
            .context("the person's channel is taken once, here")?;
        let sessions = Arc::new(sessions::Sessions::default());
        sessions.note_stored(&clients);
        // A rename, whichever process made it (the CLI, the page), moves what this process
        // counts under the old name before the new name authenticates (attack 23 F3).
        let (budgets, seen) = (person_channel.clone(), sessions.clone());
        clients.on_renamed(move |from, to| {
            budgets.client_budget_follows(from, to);
            seen.renamed(from, to);
        });
        Ok(App {
            paths,
            gate: Arc::new(gate),
            person_channel,
            clients,
            sessions,
            started: std::time::Instant::now(),
            http_port: std::sync::OnceLock::new(),
            bridge: Arc::default(),
            page_connections: Arc::default(),
            extension,
            tasks,
            ticket_owners: Arc::default(),
            handoffs,
        })
    }

    /// Recomputes live sessions against the config and clients in force now (a revoked
    /// client's sessions end; changed tool sets get `tools/list_changed`).
    pub async fn refresh_sessions(&self) {
        let config = self.gate.config().current();
        self.sessions
            .refresh(self.gate.catalogue(), &config, &self.clients)
            .await;
    }

    /// Re-reads the clients file if another process changed it, and then refreshes live
    /// sessions. Whoever notices a change must refresh: the next poll will not see it again.
    pub async fn sync_clients(&self) {
        if self.clients.reload_if_changed() {
            self.refresh_sessions().await;
        }
    }

    /// Flushes the audit log within a bounded wait.
    pub fn shutdown(&self) {
        self.gate.summarise_floods();
        if !self.gate.audit().shutdown(Duration::from_secs(2)) {
            tracing::warn!("audit log not fully flushed at shutdown");
        }
    }
}

#[cfg(test)]
mod quiet_drain_tests {
    use super::QuietDrain;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    /// Keeps the message of every event that reaches it.
    struct Seen(Arc<Mutex<Vec<String>>>);
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_event(&self, e: &tracing::Event<'_>, _cx: tracing_subscriber::layer::Context<'_, S>) {
            struct M(String);
            impl tracing::field::Visit for M {
                fn record_debug(&mut self, _f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                    self.0.push_str(&format!("{v:?} "));
                }
            }
            let mut m = M(String::new());
            e.record(&mut m);
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {}", e.metadata().target(), m.0));
        }
    }

    #[test]
    fn rmcp_drain_errors_are_kept_out_and_other_errors_are_not() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sub = tracing_subscriber::registry()
            .with(QuietDrain)
            .with(Seen(seen.clone()));
        tracing::subscriber::with_default(sub, || {
            let error = "Transport closed";
            tracing::error!(target: "rmcp::service", %error, "failed to send pending response during drain");
            tracing::error!(target: "rmcp::service", %error, "response send task failed during drain");
            tracing::error!(target: "rmcp::service", %error, "fail to close sink");
            tracing::error!(target: "archgate", "during drain, but ours");
        });
        let seen = seen.lock().unwrap();
        assert!(
            !seen
                .iter()
                .any(|l| l.starts_with("rmcp::service") && l.contains("during drain")),
            "{seen:?}"
        );
        assert!(
            seen.iter().any(|l| l.contains("fail to close sink")),
            "{seen:?}"
        );
        assert!(seen.iter().any(|l| l.contains("but ours")), "{seen:?}");
    }
}
