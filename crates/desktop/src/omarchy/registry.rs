//! Omarchy's command registry, exactly as Omarchy 4's dispatcher prints it.
//!
//! # The shape
//!
//! Learned from the real program: `OMARCHY_PATH=DIR DIR/bin/omarchy commands --all --json` in
//! the public Omarchy repository (4.0.0.alpha, ~370 commands), which builds each entry from a
//! script's `# omarchy:…=` header lines:
//!
//! ```json
//! { "ok": true,
//!   "commands": [
//!     { "route": "omarchy theme set", "binary": "omarchy-theme-set", "group": "theme",
//!       "name": "set", "summary": "…", "requires_sudo": false, "hidden": false,
//!       "args": "<theme-name>", "examples": ["omarchy theme set tokyo-night"],
//!       "aliases": [], "filename_route": "omarchy theme set",
//!       "routes": ["omarchy theme set"] } ] }
//! ```
//!
//! `route` is the canonical spelling; `routes`, `aliases` and `filename_route` are other
//! spellings of the same command. `args` is a usage string (see [`Usage`]). There are no tiers:
//! [`classify`] gives them. The version is not in the listing; the caller passes the version it
//! read (`$OMARCHY_PATH/version`), which is also the cache key.
//!
//! archgate runs a route's `binary` itself (found in the trusted program directories), never
//! the dispatcher: what the person approves is the script that runs.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::{DesktopError, Result};
use crate::omarchy::classify::{RouteTier, classify};
use crate::omarchy::guard::{Invocation, targets_archgate};
use crate::omarchy::usage::Usage;

/// One command of the registry, with what policy needs to judge it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// The canonical route, e.g. `omarchy theme set`.
    pub route: String,
    /// Its words after `omarchy`, e.g. `["theme", "set"]`.
    pub words: Vec<String>,
    /// The script that runs (a file name in Omarchy's `bin/`).
    pub binary: String,
    /// Its group.
    pub group: String,
    /// What it does.
    pub summary: String,
    /// It needs root: policy blocks it, always.
    pub requires_sudo: bool,
    /// Omarchy hides it from its own listings (internal helpers); it can still be run by name.
    pub hidden: bool,
    /// The usage string as the registry gives it.
    pub args: String,
    /// The usage, read.
    pub usage: Usage,
    /// Examples from the registry.
    pub examples: Vec<String>,
    /// Every other spelling of this command (`omarchy background` for
    /// `omarchy theme bg-switcher`).
    pub aliases: Vec<String>,
    /// Its tier from the classification table; at least `act` when the usage is unreadable.
    pub tier: RouteTier,
    /// It would stop, restart, reconfigure or remove archgate or Omarchy's plugin machinery:
    /// policy blocks it.
    pub targets_archgate: bool,
}

impl Route {
    /// Whether this is one of Omarchy's toggles (`omarchy toggle …`, `… toggle`).
    pub fn is_toggle(&self) -> bool {
        self.group == "toggle" || self.words.iter().any(|w| w == "toggle")
    }

    /// The name a toggle goes by: its words without the group and without `toggle`, joined by
    /// dashes (`toggle nightlight` → `nightlight`, `hyprland window gaps toggle` →
    /// `window-gaps`).
    pub fn toggle_name(&self) -> String {
        let rest: Vec<&str> = self
            .words
            .iter()
            .map(String::as_str)
            .filter(|w| *w != "toggle" && *w != self.group)
            .collect();
        if rest.is_empty() {
            self.words.join("-")
        } else {
            rest.join("-").to_lowercase()
        }
    }

    /// Every name of this command: the canonical route and its aliases.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.route.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// The parsed registry.
#[derive(Debug, Clone, Serialize)]
pub struct Registry {
    /// Omarchy's version this listing was read under.
    pub version: Option<String>,
    /// Every command, sorted by canonical route.
    pub routes: Vec<Route>,
    /// Every spelling (words after `omarchy`, one space apart) → index in `routes`.
    #[serde(skip)]
    by_name: HashMap<String, usize>,
}

impl PartialEq for Registry {
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version && self.routes == other.routes
    }
}

/// The top of `omarchy commands --json`.
#[derive(Deserialize)]
struct Listing {
    ok: bool,
    #[serde(default)]
    commands: Option<Vec<serde_json::Value>>,
}

/// One entry as the dispatcher prints it. Fields Omarchy may add later are ignored.
#[derive(Deserialize)]
struct RawCommand {
    route: String,
    binary: String,
    #[serde(default)]
    group: String,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    requires_sudo: bool,
    #[serde(default)]
    hidden: bool,
    #[serde(default)]
    args: String,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    filename_route: String,
    #[serde(default)]
    routes: Vec<String>,
}

/// `omarchy theme  set` / `theme set` → `theme set`; `None` when it has no words or a word
/// that is not printable.
pub fn spelling(route: &str) -> Option<String> {
    let mut words: Vec<&str> = route.split_whitespace().collect();
    if words.first() == Some(&"omarchy") {
        words.remove(0);
    }
    let ok = !words.is_empty()
        && words
            .iter()
            .all(|w| !w.starts_with('-') && w.chars().all(|c| c.is_ascii_graphic()));
    ok.then(|| words.join(" ").to_ascii_lowercase())
}

fn bad_entry(version: Option<&str>, index: usize, route: Option<&str>, why: &str) -> String {
    format!(
        "Omarchy {}: entry {index}{}: {why}",
        version.unwrap_or("(unknown version)"),
        route.map(|r| format!(" ({r:?})")).unwrap_or_default()
    )
}

impl Registry {
    /// Parses `omarchy commands --all --json` as Omarchy `version` printed it. An entry that
    /// cannot be read is skipped with one warning for the whole listing; a listing that is not
    /// that JSON, says `ok: false`, or has no readable entry is `malformed`, naming the version
    /// and the first bad entry.
    pub fn parse(json: &[u8], version: Option<&str>) -> Result<Registry> {
        const WHAT: &str = "omarchy commands --json";
        let listing: Listing = serde_json::from_slice(json).map_err(|e| {
            DesktopError::malformed(
                WHAT,
                format!("Omarchy {}: {e}", version.unwrap_or("(unknown version)")),
            )
        })?;
        if !listing.ok {
            return Err(DesktopError::malformed(
                WHAT,
                format!(
                    "Omarchy {} answered ok: false",
                    version.unwrap_or("(unknown version)")
                ),
            ));
        }
        let Some(list) = listing.commands else {
            return Err(DesktopError::malformed(WHAT, "no `commands` array"));
        };
        let mut routes: Vec<Route> = Vec::with_capacity(list.len());
        let mut skipped = 0usize;
        let mut first_bad: Option<String> = None;
        for (i, entry) in list.into_iter().enumerate() {
            let shown = entry
                .get("route")
                .and_then(|r| r.as_str())
                .map(str::to_owned);
            match Self::route_from(entry) {
                Ok(r) => routes.push(r),
                Err(why) => {
                    skipped += 1;
                    first_bad.get_or_insert_with(|| bad_entry(version, i, shown.as_deref(), &why));
                }
            }
        }
        if routes.is_empty() {
            return Err(DesktopError::malformed(
                WHAT,
                first_bad.unwrap_or_else(|| "no commands listed".to_owned()),
            ));
        }
        if let Some(first) = &first_bad {
            tracing::warn!(skipped, first = %first, "skipped unreadable Omarchy registry entries");
        }
        routes.sort_by(|a, b| a.route.cmp(&b.route));
        routes.dedup_by(|a, b| a.route == b.route);
        let mut by_name = HashMap::with_capacity(routes.len() * 2);
        for (i, r) in routes.iter().enumerate() {
            for name in r.names() {
                if let Some(key) = spelling(name) {
                    // The first command to claim a spelling keeps it (as the dispatcher does).
                    by_name.entry(key).or_insert(i);
                }
            }
        }
        Ok(Registry {
            version: version.map(str::to_owned),
            routes,
            by_name,
        })
    }

    fn route_from(entry: serde_json::Value) -> std::result::Result<Route, String> {
        let raw: RawCommand = serde_json::from_value(entry).map_err(|e| e.to_string())?;
        let canonical = spelling(&raw.route).ok_or("the route has no usable words")?;
        let words: Vec<String> = canonical.split(' ').map(str::to_owned).collect();
        let binary_ok = raw.binary.starts_with("omarchy")
            && raw
                .binary
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && !raw.binary.starts_with('.');
        if !binary_ok {
            return Err(format!(
                "binary {:?} is not a script name in Omarchy's bin/",
                raw.binary
            ));
        }
        let route = format!("omarchy {canonical}");
        let mut aliases: Vec<String> = raw
            .routes
            .iter()
            .chain(&raw.aliases)
            .chain(std::iter::once(&raw.filename_route))
            .filter_map(|r| spelling(r))
            .map(|s| format!("omarchy {s}"))
            .filter(|r| *r != route)
            .collect();
        aliases.sort();
        aliases.dedup();
        let usage = Usage::parse(&raw.args);
        let mut tier = classify(&words);
        if !usage.is_readable() && tier == RouteTier::Read {
            tier = RouteTier::Act;
        }
        let targets = targets_archgate(Invocation::Route {
            words: &words,
            args: &[],
        }) || raw.binary.contains("archgate");
        Ok(Route {
            route,
            group: if raw.group.is_empty() {
                words[0].clone()
            } else {
                raw.group
            },
            summary: raw.summary,
            requires_sudo: raw.requires_sudo,
            hidden: raw.hidden,
            args: raw.args,
            usage,
            examples: raw.examples,
            aliases,
            tier,
            targets_archgate: targets,
            binary: raw.binary,
            words,
        })
    }

    /// The command any of whose spellings this is (`theme set`, `omarchy theme set`, an alias).
    pub fn get(&self, route: &str) -> Option<&Route> {
        self.by_name
            .get(&spelling(route)?)
            .map(|&i| &self.routes[i])
    }

    /// The command, or `not_found` with up to five near misses.
    pub fn resolve(&self, route: &str) -> Result<&Route> {
        self.get(route).ok_or_else(|| DesktopError::NotFound {
            what: "Omarchy route",
            name: route.to_owned(),
            near: self
                .search(route, 5)
                .into_iter()
                .map(|h| h.route.route.clone())
                .collect(),
        })
    }

    /// The routes Omarchy offers as toggles.
    pub fn toggles(&self) -> Vec<&Route> {
        self.routes.iter().filter(|r| r.is_toggle()).collect()
    }

    /// Checks `args` against the route's usage string (see [`Usage::check`]); NUL bytes are
    /// refused everywhere.
    pub fn check_args(route: &Route, args: &[String]) -> Result<()> {
        if let Some(bad) = args.iter().find(|a| a.contains('\0')) {
            return Err(DesktopError::invalid(
                "args",
                format!("argument {bad:?} contains a NUL byte"),
            ));
        }
        route.usage.check(args).map_err(|m| {
            DesktopError::invalid(
                "args",
                format!(
                    "`{}` {}; usage: {} {}",
                    route.route,
                    m.message,
                    route.route,
                    if route.args.is_empty() {
                        "(no arguments)"
                    } else {
                        route.args.as_str()
                    }
                ),
            )
        })
    }
}
