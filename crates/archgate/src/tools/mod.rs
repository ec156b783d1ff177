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
use archgate_core::tool::ToolError;
use std::sync::Arc;

mod archgate;
mod aur;
mod desktop;
mod journal;
mod machine;
mod packages;
mod pkg_health;
pub mod services;
mod system;
mod upkeep;
mod wiki;

pub use services::Services;

/// Errors of the domain crates carry a stable snake_case kind, and some a next step more
/// precise than their kind's (the local fact that matters: no databases here, no index).
pub trait Kinded: std::fmt::Display {
    fn kind(&self) -> &'static str;
    fn next_step(&self) -> Option<&'static str> {
        None
    }
}

macro_rules! kinded {
    ($($t:ty),*) => {$(
        impl Kinded for $t {
            fn kind(&self) -> &'static str {
                <$t>::kind(self)
            }
        }
    )*};
    (with next: $($t:ty),*) => {$(
        impl Kinded for $t {
            fn kind(&self) -> &'static str {
                <$t>::kind(self)
            }
            fn next_step(&self) -> Option<&'static str> {
                <$t>::next_step(self)
            }
        }
    )*};
}
kinded!(archgate_aur::AurError, archgate_desktop::DesktopError);
kinded!(with next: archgate_pacman::PacmanError, archgate_wiki::WikiError);

/// What an agent can do about an error of this kind.
fn next_for(kind: &str) -> &'static str {
    match kind {
        "not_found" => "check the name (search first), then call again",
        "could_not_reach" | "timed_out" => {
            "the network or the service is unavailable: retry later, or answer from what is known \
             offline; `archgate doctor` shows the person what this machine reaches"
        }
        "rate_limited" => "wait a minute before asking the AUR again",
        "not_available" | "not_installed" => {
            "tell the person what to install (see `archgate doctor`)"
        }
        "too_large" => "narrow the request and call again",
        "malformed" | "corrupt" => "tell the person; a file or an answer is damaged",
        _ => "tell the person what happened",
    }
}

pub fn domain_err<E: Kinded>(e: E) -> ToolError {
    let kind = e.kind();
    let next = e.next_step().unwrap_or_else(|| next_for(kind));
    ToolError::new(kind, e.to_string()).next(next)
}

/// Declares a `read`-tier tool that is one domain call returning a serializable answer
/// (`Result<T, ToolError>`; domain errors go through `domain_err`).
macro_rules! read_tool {
    (
        $ty:ident {
            name: $name:literal,
            title: $title:literal,
            open_world: $ow:literal,
            args: $args:ty,
            description: $desc:expr,
        }
        |$svc:ident, $cx:ident, $a:ident| $body:expr
    ) => {
        pub struct $ty(pub std::sync::Arc<$crate::tools::Services>);

        impl archgate_core::tool::Tool for $ty {
            type Args = $args;
            type Run = $args;
            archgate_core::resolve_as_planned!();

            fn spec(&self) -> &'static archgate_core::tool::ToolSpec {
                static SPEC: archgate_core::tool::ToolSpec = archgate_core::tool::ToolSpec {
                    name: $name,
                    title: $title,
                    description: $desc,
                    tier: archgate_core::policy::Tier::Read,
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: $ow,
                    private_args: &[],
                };
                &SPEC
            }

            fn execute<'a>(
                &'a self,
                cx: &'a archgate_core::tool::CallCx,
                _permit: archgate_core::exec::Permit,
                args: $args,
            ) -> futures::future::BoxFuture<
                'a,
                Result<archgate_core::tool::ToolOutput, archgate_core::tool::ToolError>,
            > {
                let $svc = &*self.0;
                let $cx = cx;
                let $a = args;
                Box::pin(async move {
                    let v = $body?;
                    Ok(archgate_core::tool::ToolOutput::json(v))
                })
            }
        }
    };
}
pub(crate) use read_tool;

pub fn catalogue(paths: &Paths, config: &Config) -> Catalogue {
    let svc = Arc::new(Services::new(paths.clone()));
    let desktop_env = session_env(config);
    let mut c = Catalogue::default();
    c.add(system::SystemStatus::new(desktop_env.clone()));
    machine::register(&mut c);
    journal::register(&mut c);
    packages::register(&mut c, &svc);
    pkg_health::register(&mut c, &svc);
    aur::register(&mut c, &svc);
    wiki::register(&mut c, &svc);
    upkeep::register(&mut c, &svc);
    desktop::register(&mut c, desktop_env);
    // Last: the policy view lists every tool registered before it.
    archgate::register(&mut c, &svc);
    c
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
