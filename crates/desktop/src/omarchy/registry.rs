//! Omarchy's command registry, as `omarchy commands --json` prints it, parsed leniently.
//!
//! # The shape we expect
//!
//! Omarchy's own listing is the documentation of every route, so archgate never hard-codes
//! routes. The shape below is what this parser accepts (our snapshot files under
//! `crates/desktop/tests/data/` are written in it). Either a top-level array of commands or an
//! object with the array under `commands` (or `routes`), plus an optional `version`:
//!
//! ```json
//! { "version": "3.1.2",
//!   "commands": [
//!     { "route": ["theme", "set"],          // or "theme set"; alias: "name"
//!       "group": "theme",                    // default: the first route word
//!       "description": "Switch to an installed theme",
//!       "usage": "omarchy theme set <name>",
//!       "args": [{ "name": "name", "required": true, "description": "theme name" }],
//!       "bin": "omarchy-theme-set",          // the script behind the route (alias: "script")
//!       "sudo": false,                       // aliases: "needs_sudo", "requires_sudo", "root"
//!       "tier": "act",                       // read | act | destructive (alias: "safety")
//!       "interactive": false,                // opens a terminal UI or asks the person
//!       "tags": ["toggle"] } ] }
//! ```
//!
//! Every field but the route is optional. Where `sudo` is absent a route still counts as needing
//! privilege when its tags say `sudo`/`root`/`privileged` or its description mentions `sudo`.
//! Where `tier` is absent it is suggested from the route's verbs (see [`suggest_tier`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{DesktopError, Result};
use crate::omarchy::guard::{Invocation, targets_archgate};

/// How much a route can change, as Omarchy's metadata (or its verbs) suggest. Policy takes it as
/// a hint; `needs_sudo` routes are blocked whatever the tier says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestedTier {
    /// Only looks.
    Read,
    /// Changes something that is easy to change back.
    Act,
    /// Removes, resets or stops something.
    Destructive,
}

/// One argument a route takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteArg {
    /// Its name.
    pub name: String,
    /// Whether it must be given.
    pub required: bool,
    /// Whether it takes any number of values (must be last).
    pub variadic: bool,
    /// What it means.
    pub description: Option<String>,
}

/// One route of `omarchy`, with what policy needs to judge it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// The route words joined by spaces, e.g. `theme set`.
    pub route: String,
    /// The route words, e.g. `["theme", "set"]`.
    pub words: Vec<String>,
    /// Its group (first word unless the registry says otherwise).
    pub group: String,
    /// What it does.
    pub description: String,
    /// How it is called, as the registry says.
    pub usage: Option<String>,
    /// Its arguments, when the registry lists them.
    pub args: Vec<RouteArg>,
    /// The script behind it, when the registry names it.
    pub bin: Option<String>,
    /// It elevates privilege (sudo, pkexec…): policy blocks it, always.
    pub needs_sudo: bool,
    /// Suggested tier.
    pub tier: SuggestedTier,
    /// It opens an interactive terminal UI or asks the person.
    pub interactive: bool,
    /// Tags from the registry.
    pub tags: Vec<String>,
    /// It would stop, restart, reconfigure or remove archgate or Omarchy's plugin machinery:
    /// policy blocks it.
    pub targets_archgate: bool,
}

impl Route {
    /// Whether the registry marks this route as one of Omarchy's toggles.
    pub fn is_toggle(&self) -> bool {
        self.group == "toggle" || self.tags.iter().any(|t| t == "toggle")
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
            self.route.replace(' ', "-")
        } else {
            rest.join("-").to_lowercase()
        }
    }
}

/// The parsed registry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Registry {
    /// Omarchy's version, when the listing or the caller says.
    pub version: Option<String>,
    /// Every route, sorted by route.
    pub routes: Vec<Route>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawCommand {
    #[serde(alias = "name", alias = "command")]
    route: Option<Value>,
    group: Option<String>,
    #[serde(alias = "summary", alias = "help")]
    description: Option<String>,
    usage: Option<String>,
    #[serde(alias = "arguments")]
    args: Option<Vec<Value>>,
    #[serde(alias = "script", alias = "exec")]
    bin: Option<String>,
    #[serde(alias = "needs_sudo", alias = "requires_sudo", alias = "root")]
    sudo: Option<bool>,
    #[serde(alias = "safety", alias = "risk")]
    tier: Option<String>,
    interactive: Option<bool>,
    tags: Vec<String>,
}

/// Route verbs that only look.
const READ_VERBS: &[&str] = &[
    "list",
    "current",
    "show",
    "status",
    "get",
    "info",
    "version",
    "search",
    "present",
    "missing",
    "remaining",
    "check",
    "help",
    "print",
    "which",
    "debug",
    "keybindings",
    "commands",
];
/// Route verbs that remove, reset, stop or end something.
const DESTRUCTIVE_VERBS: &[&str] = &[
    "remove",
    "uninstall",
    "delete",
    "reset",
    "refresh",
    "reinstall",
    "wipe",
    "purge",
    "shutdown",
    "reboot",
    "logout",
    "password",
    "format",
    "clean",
    "kill",
    "close-all",
    "migrate",
    "update",
    "upgrade",
    "downgrade",
    "channel-set",
    "branch-set",
];

/// The tier suggested by a route's words when the registry gives none: read verbs read,
/// destructive verbs are destructive, everything else acts.
pub fn suggest_tier(words: &[String]) -> SuggestedTier {
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    if lower
        .iter()
        .any(|w| DESTRUCTIVE_VERBS.contains(&w.as_str()))
    {
        SuggestedTier::Destructive
    } else if lower
        .last()
        .is_some_and(|w| READ_VERBS.contains(&w.as_str()))
    {
        SuggestedTier::Read
    } else {
        SuggestedTier::Act
    }
}

fn parse_tier(s: &str) -> Option<SuggestedTier> {
    match s.to_ascii_lowercase().as_str() {
        "read" | "safe" | "readonly" | "read-only" | "read_only" => Some(SuggestedTier::Read),
        "act" | "write" | "change" | "normal" => Some(SuggestedTier::Act),
        "destructive" | "danger" | "dangerous" => Some(SuggestedTier::Destructive),
        _ => None,
    }
}

fn route_words(v: &Value) -> Option<Vec<String>> {
    let words: Vec<String> = match v {
        Value::String(s) => s
            .trim()
            .trim_start_matches("omarchy ")
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        Value::Array(a) => a
            .iter()
            .map(|w| w.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    let ok = !words.is_empty()
        && words
            .iter()
            .all(|w| !w.is_empty() && !w.starts_with('-') && !w.chars().any(char::is_whitespace));
    ok.then_some(words)
}

fn parse_arg(v: &Value) -> Option<RouteArg> {
    match v {
        Value::String(s) => {
            let variadic = s.contains("...") || s.contains('…');
            let required = !s.starts_with('[');
            let name = s.trim_matches(|c| "<>[].… ".contains(c)).to_owned();
            Some(RouteArg {
                name,
                required,
                variadic,
                description: None,
            })
        }
        Value::Object(o) => Some(RouteArg {
            name: o.get("name")?.as_str()?.to_owned(),
            required: o.get("required").and_then(Value::as_bool).unwrap_or(false),
            variadic: o.get("variadic").and_then(Value::as_bool).unwrap_or(false),
            description: o
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }),
        _ => None,
    }
}

fn mentions_sudo(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .any(|w| matches!(w, "sudo" | "pkexec" | "doas" | "run0" | "su"))
        || lower.contains("root privileges")
        || lower.contains("as root")
}

impl Registry {
    /// Parses the JSON of `omarchy commands --json`. Entries without a usable route are skipped
    /// (and logged); a listing that is not JSON, or has no routes at all, is `malformed`.
    pub fn parse(json: &[u8]) -> Result<Registry> {
        let top: Value = serde_json::from_slice(json)
            .map_err(|e| DesktopError::malformed("omarchy commands --json", e))?;
        let (version, list) = match top {
            Value::Array(a) => (None, a),
            Value::Object(mut o) => {
                let version = o.get("version").and_then(Value::as_str).map(str::to_owned);
                let list = ["commands", "routes"]
                    .iter()
                    .find_map(|k| match o.remove(*k) {
                        Some(Value::Array(a)) => Some(a),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        DesktopError::malformed("omarchy commands --json", "no `commands` array")
                    })?;
                (version, list)
            }
            _ => {
                return Err(DesktopError::malformed(
                    "omarchy commands --json",
                    "neither an array nor an object",
                ));
            }
        };
        let mut routes = Vec::with_capacity(list.len());
        for entry in list {
            let raw: RawCommand = match serde_json::from_value(entry) {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "skipping an unreadable Omarchy registry entry");
                    continue;
                }
            };
            let Some(words) = raw.route.as_ref().and_then(route_words) else {
                tracing::warn!("skipping an Omarchy registry entry without a usable route");
                continue;
            };
            routes.push(Self::route_from(raw, words));
        }
        if routes.is_empty() {
            return Err(DesktopError::malformed(
                "omarchy commands --json",
                "no routes listed",
            ));
        }
        routes.sort_by(|a, b| a.route.cmp(&b.route));
        routes.dedup_by(|a, b| a.route == b.route);
        Ok(Registry { version, routes })
    }

    fn route_from(raw: RawCommand, words: Vec<String>) -> Route {
        let description = raw.description.unwrap_or_default();
        let tags: Vec<String> = raw.tags.iter().map(|t| t.to_lowercase()).collect();
        let needs_sudo = raw.sudo.unwrap_or(false)
            || tags
                .iter()
                .any(|t| matches!(t.as_str(), "sudo" | "root" | "privileged"))
            || mentions_sudo(&description);
        let tier = raw
            .tier
            .as_deref()
            .and_then(parse_tier)
            .unwrap_or_else(|| suggest_tier(&words));
        let args: Vec<RouteArg> = raw
            .args
            .unwrap_or_default()
            .iter()
            .filter_map(parse_arg)
            .collect();
        let targets = targets_archgate(Invocation::Route {
            words: &words,
            args: &[],
        }) || description.to_lowercase().contains("archgate");
        Route {
            route: words.join(" "),
            group: raw
                .group
                .filter(|g| !g.is_empty())
                .unwrap_or_else(|| words[0].clone()),
            description,
            usage: raw.usage,
            args,
            bin: raw.bin,
            needs_sudo,
            tier,
            interactive: raw.interactive.unwrap_or(false),
            tags,
            targets_archgate: targets,
            words,
        }
    }

    /// The route with exactly these words (`theme set`, or `["theme","set"]` joined).
    pub fn get(&self, route: &str) -> Option<&Route> {
        let want: Vec<&str> = route
            .trim()
            .trim_start_matches("omarchy ")
            .split_whitespace()
            .collect();
        self.routes
            .iter()
            .find(|r| r.words.iter().map(String::as_str).eq(want.iter().copied()))
    }

    /// The route, or `not_found` with up to five near misses.
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

    /// The routes Omarchy offers as toggles, by the name after `toggle`.
    pub fn toggles(&self) -> Vec<&Route> {
        self.routes.iter().filter(|r| r.is_toggle()).collect()
    }

    /// Checks `args` against what the registry says the route takes: too few required values
    /// or too many values is `invalid_argument`. Routes without listed arguments take anything.
    pub fn check_args(route: &Route, args: &[String]) -> Result<()> {
        if route.args.is_empty() {
            return Ok(());
        }
        let required = route.args.iter().filter(|a| a.required).count();
        let variadic = route.args.last().is_some_and(|a| a.variadic);
        if args.len() < required {
            return Err(DesktopError::invalid(
                "args",
                format!(
                    "`omarchy {}` needs {required} argument(s): {}",
                    route.route,
                    route
                        .args
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if !variadic && args.len() > route.args.len() {
            return Err(DesktopError::invalid(
                "args",
                format!(
                    "`omarchy {}` takes at most {} argument(s), got {}",
                    route.route,
                    route.args.len(),
                    args.len()
                ),
            ));
        }
        if let Some(bad) = args.iter().find(|a| a.contains('\0')) {
            return Err(DesktopError::invalid(
                "args",
                format!("argument {bad:?} contains a NUL byte"),
            ));
        }
        Ok(())
    }
}
