//! The tool catalogue: every tool archgate offers, each declared once.
//!
//! A tool is a type implementing `archgate_core::tool::Tool` in one of the family modules below.
//! Its `ToolSpec` gives the name, description, tier and annotations; its argument type's doc
//! comments become the JSON schema. tools/list, `archgate tools`, TOOLS.md and the policy tier all
//! derive from those definitions. Most read tools are one domain call; `read_tool!` declares
//! those in one place each.

use archgate_core::config::Config;
use archgate_core::gate::Catalogue;
use archgate_core::paths::Paths;
use std::sync::Arc;

/// Declares the `ToolSpec` of a read tool: `read` tier, read-only, idempotent, never
/// destructive, no private arguments — the shape every read tool's spec has. `long_running`
/// (a task for a client that declares tasks, `ToolSpec::long_running`) is false unless given.
macro_rules! read_spec {
    ($vis:vis static $id:ident = $name:literal, $title:literal, open_world: $ow:literal, provenance: $prov:expr, $(@long_running $lr:literal,)? $desc:expr $(,)?) => {
        $vis static $id: archgate_core::tool::ToolSpec = archgate_core::tool::ToolSpec {
            name: $name,
            title: $title,
            description: $desc,
            tier: archgate_core::policy::Tier::Read,
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: $ow,
            private_args: &[],
            provenance: $prov,
            long_running: false $(|| $lr)?,
            says: archgate_core::sentence::Phrase::READS,
        };
    };
}

mod archgate;
mod aur;
mod desktop;
mod errors;
pub mod handoff;
mod journal;
mod machine;
mod packages;
mod pacman_conf;
mod pkg_health;
#[cfg(test)]
mod provenance;
#[cfg(test)]
mod says;
pub mod services;
mod system;
mod upkeep;
mod wiki;

pub use errors::domain_err;
pub use services::Services;

/// Declares a `read`-tier tool that is one domain call returning a serializable answer
/// (`Result<T, ToolError>`; domain errors go through `domain_err`).
macro_rules! read_tool {
    (
        $ty:ident {
            name: $name:literal,
            title: $title:literal,
            open_world: $ow:literal,
            provenance: $prov:expr,
            $(long_running: $lr:literal,)?
            args: $args:ty,
            description: $desc:expr,
        }
        |$svc:ident, $cx:ident, $a:ident $(, $permit:ident)?| $body:expr
    ) => {
        pub struct $ty(pub std::sync::Arc<$crate::tools::Services>);

        impl archgate_core::tool::Tool for $ty {
            type Args = $args;
            type Run = $args;
            archgate_core::resolve_as_planned!();

            fn spec(&self) -> &'static archgate_core::tool::ToolSpec {
                read_spec!(static SPEC = $name, $title, open_world: $ow, provenance: $prov, $(@long_running $lr,)? $desc);
                &SPEC
            }

            fn execute<'a>(
                &'a self,
                cx: &'a archgate_core::tool::CallCx,
                permit: archgate_core::exec::Permit,
                args: $args,
            ) -> futures::future::BoxFuture<
                'a,
                Result<archgate_core::tool::ToolOutput, archgate_core::tool::ToolError>,
            > {
                let $svc = &*self.0;
                let $cx = cx;
                let $a = args;
                Box::pin(async move {
                    // A read tool that reads through a program (the AUR's git) names the permit.
                    let permit = permit;
                    $(let $permit = &permit;)?
                    let _ = &permit;
                    let v = $body?;
                    Ok(archgate_core::tool::ToolOutput::json(v))
                })
            }
        }
    };
}
pub(crate) use read_tool;

#[cfg(test)]
pub fn catalogue(paths: &Paths, config: &Config) -> Catalogue {
    catalogue_with(paths, config, Arc::default())
}

/// The catalogue, its `handoff` tool holding its hand-offs in `handoffs` (the control socket's
/// helper claims them there).
pub fn catalogue_with(
    paths: &Paths,
    config: &Config,
    handoffs: Arc<handoff::Handoffs>,
) -> Catalogue {
    let svc = Arc::new(Services::new(paths.clone()));
    let desktop_env = session_env(config);
    let mut c = Catalogue::default();
    c.add(system::SystemStatus::new(desktop_env.clone()));
    machine::register(&mut c);
    journal::register(&mut c);
    c.add(pacman_conf::PacmanConf::new(svc.clone()));
    packages::register(&mut c, &svc);
    pkg_health::register(&mut c, &svc);
    aur::register(&mut c, &svc);
    wiki::register(&mut c, &svc);
    upkeep::register(&mut c, &svc);
    let desktop = Arc::new(desktop::DesktopService::new(desktop_env));
    handoff::register(&mut c, &svc, desktop.clone(), handoffs);
    desktop::register(&mut c, desktop);
    // Last: the policy view lists every tool registered before it.
    archgate::register(&mut c, &svc);
    c
}

/// The names of every tool of the catalogue (whatever this machine has installed: the
/// catalogue's tools do not depend on it), for judging the config's lists of tools
/// (`archgate_core::config::known`). Builds a catalogue on placeholder paths: nothing is read or
/// written through them.
pub fn known_names() -> std::collections::BTreeSet<String> {
    let nowhere = std::path::PathBuf::from("/nonexistent/archgate");
    let paths = Paths {
        config_dir: nowhere.clone(),
        config_file: nowhere.join("config.toml"),
        state_dir: nowhere.clone(),
        runtime_dir: nowhere.clone(),
        cache_dir: nowhere,
    };
    catalogue_with(&paths, &Config::default(), Arc::default())
        .all()
        .map(|t| t.spec().name.to_owned())
        .collect()
}

/// The person's desktop session as archgate sees it at start: the process environment completed
/// from the runtime directory (see `archgate_desktop::DesktopEnv::from_process`), with Omarchy
/// where `Config::omarchy_install` finds it (`[desktop] omarchy_path` first).
pub fn session_env(config: &Config) -> archgate_desktop::DesktopEnv {
    let mut env = archgate_desktop::DesktopEnv::from_process();
    if let Some((path, _)) = config.omarchy_install_from_process() {
        env.omarchy_path = Some(path);
    }
    env
}
