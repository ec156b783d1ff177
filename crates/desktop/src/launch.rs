//! Launching applications and opening URLs, detached from archgate (their own process group,
//! no output, not waited for).

use archgate_exec::{CommandSpec, Permit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::app_entries::{AppSource, LaunchPlan};
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};

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

/// Checks a URL: `http`, `https` or `mailto`, no whitespace or control characters.
pub fn check_url(url: &str) -> Result<()> {
    let lower = url.to_ascii_lowercase();
    let ok_scheme = (lower.starts_with("https://") || lower.starts_with("http://"))
        && url.len() > 8
        || lower.starts_with("mailto:") && url.len() > 7;
    if !ok_scheme {
        return Err(DesktopError::invalid(
            "url",
            "only http, https and mailto addresses open",
        ));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) || url.len() > 8192 {
        return Err(DesktopError::invalid(
            "url",
            "contains whitespace or control characters",
        ));
    }
    Ok(())
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

/// The `Exec=` line of a desktop entry as argv, field codes (`%f`, `%U`…) dropped.
pub fn desktop_entry_exec(entry: &str) -> Option<Vec<String>> {
    let mut in_main = false;
    for line in entry.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_main = line == "[Desktop Entry]";
            continue;
        }
        if !in_main {
            continue;
        }
        if let Some(exec) = line.strip_prefix("Exec=") {
            let argv: Vec<String> = split_exec(exec)
                .into_iter()
                .filter(|a| !(a.len() == 2 && a.starts_with('%')))
                .map(|a| a.replace("%%", "%"))
                .collect();
            return (!argv.is_empty()).then_some(argv);
        }
    }
    None
}

/// Splits an `Exec=` value the way the desktop-entry spec quotes it (double quotes, backslash).
fn split_exec(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
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
    fn urls_are_checked() {
        assert!(check_url("https://archlinux.org/").is_ok());
        assert!(check_url("mailto:someone@example.invalid").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://a b",
            "https://",
            "-x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exec_lines_drop_field_codes_and_honour_quotes() {
        let entry = "[Desktop Entry]\nName=X\nExec=\"/opt/My App/run\" --new-window %U\n[Desktop Action new]\nExec=other\n";
        assert_eq!(
            desktop_entry_exec(entry).unwrap(),
            vec!["/opt/My App/run".to_owned(), "--new-window".to_owned()]
        );
        assert_eq!(desktop_entry_exec("[Other]\nExec=x\n"), None);
    }

    #[test]
    fn app_names_are_checked() {
        assert!(check_app("org.gnome.Nautilus").is_ok());
        for bad in ["", "-rf", "../x", "a b", "a/b"] {
            assert!(check_app(bad).is_err(), "{bad}");
        }
    }
}
