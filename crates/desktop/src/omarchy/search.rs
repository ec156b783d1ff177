//! Ranking Omarchy's routes against a query by name, description and group.

use serde::Serialize;

use super::registry::{Registry, Route};

/// One search result.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// Relevance; higher is better.
    pub score: u32,
    /// The route, with its tier and whether it is blocked.
    pub route: Route,
}

/// What an agent reads of a hit: enough to call it (route, usage) and to know what it needs
/// (tier, blocked and why), in few tokens.
#[derive(Serialize)]
struct HitView<'a> {
    route: &'a str,
    summary: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    args: &'a str,
    tier: super::classify::RouteTier,
    #[serde(skip_serializing_if = "Option::is_none")]
    blocked: Option<&'static str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    aliases: &'a [String],
}

impl Serialize for SearchHit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = &self.route;
        HitView {
            route: &r.route,
            summary: &r.summary,
            args: &r.args,
            tier: r.tier,
            blocked: if r.requires_sudo {
                Some("needs root: `handoff` op omarchy hands it to the person")
            } else if r.targets_archgate {
                Some("reaches archgate or its supervisor")
            } else {
                None
            },
            aliases: &r.aliases,
        }
        .serialize(s)
    }
}

fn tokens(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric()))
        .filter(|t| !t.is_empty() && *t != "omarchy")
        .map(str::to_owned)
        .collect()
}

fn score_token(route: &Route, desc_words: &[String], token: &str) -> u32 {
    let mut best = 0;
    for w in &route.words {
        let w = w.to_lowercase();
        let parts: Vec<&str> = w.split('-').collect();
        let s = if w == token {
            12
        } else if parts.contains(&token) {
            10
        } else if w.starts_with(token) {
            8
        } else if w.contains(token) {
            5
        } else {
            0
        };
        best = best.max(s);
    }
    if route.group.to_lowercase() == token {
        best = best.max(6);
    }
    if desc_words.iter().any(|d| d == token) {
        best += 3;
    } else if token.len() >= 3 && desc_words.iter().any(|d| d.starts_with(token)) {
        best += 2;
    }
    best
}

impl Registry {
    /// The routes matching `query`, best first, at most `limit`. Every word of the query counts;
    /// a route matching all of them ranks above one matching some. An exact route (any of its
    /// spellings) ranks first. Routes Omarchy hides are left out unless named exactly.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let toks = tokens(query);
        if toks.is_empty() {
            return Vec::new();
        }
        let exact = toks.join(" ");
        let mut scored: Vec<(u32, &Route)> = self
            .routes
            .iter()
            .filter_map(|route| {
                let named = route.names().any(|n| {
                    n.trim_start_matches("omarchy ").replace('-', " ") == exact.replace('-', " ")
                });
                if route.hidden && !named {
                    return None;
                }
                let desc_words = tokens(&route.summary);
                let per: Vec<u32> = toks
                    .iter()
                    .map(|t| score_token(route, &desc_words, t))
                    .collect();
                let matched = per.iter().filter(|s| **s > 0).count();
                if matched == 0 && !named {
                    return None;
                }
                let mut score: u32 = per.iter().sum();
                if matched == toks.len() {
                    score += 20;
                }
                if named {
                    score += 100;
                }
                Some((score, route))
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.words.len().cmp(&b.1.words.len()))
                .then(a.1.route.cmp(&b.1.route))
        });
        scored
            .into_iter()
            .take(limit)
            .map(|(score, route)| SearchHit {
                score,
                route: route.clone(),
            })
            .collect()
    }
}
