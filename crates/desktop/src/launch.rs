//! Launching applications and opening URLs, detached from archgate (their own process group,
//! no output, not waited for).

use archgate_exec::{CommandSpec, Permit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::app_entries::{AppSource, LaunchPlan};
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
pub use crate::exec_line::desktop_entry_exec;
pub use crate::url_check::check_url;

/// What to launch.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LaunchTarget {
    /// An application: a desktop-entry id (`org.gnome.Nautilus`, with or without `.desktop`)
    /// or a program name found in the trusted program directories. Only what root's desktop
    /// entries declare launches, and the person's own entries only as Omarchy web apps
    /// (`app_entries`); what it would start is judged by what it is (`launch_door`): an Omarchy
    /// route's script is that route, a power or session command is refused.
    App {
        /// Desktop-entry id or program name.
        app: String,
    },
    /// A web or mail address, opened with the default handler.
    Url {
        /// An `http://`, `https://` or `mailto:` address.
        url: String,
    },
}

/// What was launched.
#[derive(Debug, Clone, Serialize)]
pub struct Launched {
    /// The command started.
    pub command: String,
    /// Its process id.
    pub pid: u32,
}

fn check_app(app: &str) -> Result<()> {
    let ok = !app.is_empty()
        && app.len() <= 255
        && !app.starts_with(['-', '.'])
        && app
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c));
    if ok {
        Ok(())
    } else {
        Err(DesktopError::invalid(
            "app",
            "a desktop-entry id or program name (letters, digits, . _ - +)",
        ))
    }
}

impl Desktop {
    /// The command a launch would start, resolved: a URL through its root-owned default handler,
    /// a desktop entry through its `Exec=` line, else the program itself (see
    /// [`Desktop::plan_app_launch`]).
    pub fn plan_launch(&self, target: &LaunchTarget) -> Result<CommandSpec> {
        self.plan_app_launch(target).map(|p| p.spec)
    }

    /// The command a launch would start and where it came from: a URL through its root-owned
    /// default handler ([`crate::url_handler`]); a desktop entry through its `Exec=` line — an
    /// entry that is not root's only when that line is an Omarchy web app's, refused otherwise
    /// (`app_entries`); else the program itself.
    pub fn plan_app_launch(&self, target: &LaunchTarget) -> Result<LaunchPlan> {
        match target {
            LaunchTarget::Url { url } => {
                // Not `xdg-open URL`: the handler it would pick is configured in files the agent
                // may write (attack 18 F5), so archgate resolves it and runs only a root-owned
                // entry's Exec= (`url_handler`).
                let dirs = crate::url_handler::MimeDirs::for_env(&self.env);
                let handler = dirs.resolve(url, &crate::url_handler::root_owned)?;
                let argv = handler.argv;
                Ok(LaunchPlan {
                    spec: self.env.apply_to(
                        CommandSpec::new(argv[0].clone()).args(argv[1..].iter().cloned()),
                    ),
                    source: AppSource::Url,
                })
            }
            LaunchTarget::App { app } => {
                check_app(app)?;
                self.plan_app(Self::app_id(app))
            }
        }
    }

    /// The one name of an application target, whatever the spelling: a desktop-entry id
    /// without `.desktop` (`org.gnome.Nautilus.desktop` and `org.gnome.Nautilus` are one app).
    pub fn app_id(app: &str) -> &str {
        app.strip_suffix(".desktop").unwrap_or(app)
    }

    /// `launch`: starts what [`Desktop::plan_launch`] resolved, detached.
    pub fn launch(
        &self,
        permit: &Permit,
        target: &LaunchTarget,
        spec: CommandSpec,
    ) -> Result<Launched> {
        let command = spec.display();
        // An Omarchy web app's launcher is Omarchy's script: its tree is judged as for any of
        // Omarchy's programs (`programs::run_any`).
        let name = spec.program().rsplit('/').next().unwrap_or_default();
        if name.starts_with("omarchy") {
            crate::omarchy::tree::judge_given(permit.executor(), &spec)?;
        }
        let pid = permit.spawn_detached(spec).map_err(|e| match (target, e) {
            (LaunchTarget::App { app }, archgate_exec::ExecError::NotInstalled { .. }) => {
                DesktopError::NotFound {
                    what: "application",
                    name: app.clone(),
                    near: Vec::new(),
                }
            }
            (LaunchTarget::Url { .. }, e) => DesktopError::Exec(e),
            (LaunchTarget::App { .. }, e) => DesktopError::Exec(e),
        })?;
        Ok(Launched { command, pid })
    }

    /// `launch` of an Omarchy route's script ([`crate::launch_door::LaunchDoor::Route`]):
    /// exactly the route call resolved as `omarchy_run` resolves it, started detached. A route
    /// that needs root or reaches archgate is refused here too, as [`Desktop::run_route`] does:
    /// a second lock behind policy.
    pub fn launch_route(
        &self,
        permit: &Permit,
        call: &crate::omarchy::RouteCall,
    ) -> Result<Launched> {
        if call.route.requires_sudo {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route needs root; run it yourself in a terminal",
            });
        }
        if call.targets_archgate {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route would stop, restart, reconfigure or remove archgate or its supervisor",
            });
        }
        self.check_picks(call)?;
        // As `run_route` does, at the start: the tree and the values' files again.
        crate::omarchy::tree::judge_given(permit.executor(), &call.spec)?;
        crate::omarchy::files_still_the_persons(&call.route, &call.script, call.spec.arg_list())?;
        let command = call.spec.display();
        let pid = permit
            .spawn_detached(call.spec.clone())
            .map_err(DesktopError::Exec)?;
        Ok(Launched { command, pid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_names_are_checked() {
        assert!(check_app("org.gnome.Nautilus").is_ok());
        for bad in ["", "-rf", "../x", "a b", "a/b"] {
            assert!(check_app(bad).is_err(), "{bad}");
        }
    }
}
