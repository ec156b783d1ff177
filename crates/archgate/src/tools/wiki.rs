//! The ArchWiki (offline index first, online otherwise; every answer says which and how old) and
//! the Arch news, by default since the last full system upgrade.

use archgate_core::gate::Catalogue;
use archgate_wiki::{ArchNewsArgs, WikiPageArgs, WikiSearchArgs};
use std::sync::Arc;

use super::{Services, domain_err, read_tool};

read_tool!(
    WikiSearch {
        name: "wiki_search",
        title: "Search the ArchWiki",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::WikiSearch
        ),
        args: WikiSearchArgs,
        description: "Search the ArchWiki, the first place to learn how things work on Arch (offline \
                  index, else online).",
    } | svc,
    cx,
    a | {
        let limit = a.limit.unwrap_or(10).clamp(1, 50) as usize;
        svc.wiki(&cx.config)?
            .search(&a.query, limit)
            .await
            .map_err(domain_err)
    }
);

read_tool!(
    WikiPage {
        name: "wiki_page",
        title: "Read an ArchWiki page",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::WikiPage
        ),
        args: WikiPageArgs,
        description: "An ArchWiki page (or one section) as clean Markdown; long pages come in pages (next_page).",
    } | svc,
    cx,
    a | svc.wiki(&cx.config)?.page(&a).await.map_err(domain_err)
);

read_tool!(
    ArchNews {
        name: "arch_news",
        title: "Arch news",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::ArchNews
        ),
        args: ArchNewsArgs,
        description: "Arch Linux news, flagging manual interventions; by default the items since the last \
                  full upgrade. Check it before any update.",
    } | svc,
    cx,
    a | {
        let since = match a.since.as_deref() {
            Some(s) => Some(archgate_wiki::parse_since(s).ok_or_else(|| {
                archgate_core::tool::ToolError::new(
                    archgate_core::tool::ErrorKind::InvalidArguments,
                    format!("since: {s:?} is not RFC 3339 or YYYY-MM-DD"),
                )
            })?),
            None => svc
                .pacman(&cx.config)
                .last_full_upgrade()
                .await
                .ok()
                .flatten()
                .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t.0).ok()),
        };
        let limit = a.limit.unwrap_or(10).clamp(1, 100) as usize;
        svc.wiki(&cx.config)?
            .news(&cx.config.arch.news_url, limit, since)
            .await
            .map_err(domain_err)
    }
);

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(WikiSearch(svc.clone()));
    c.add(WikiPage(svc.clone()));
    c.add(ArchNews(svc.clone()));
}
