//! `Wiki`: one front for the offline index and the online wiki, chosen by preference; every
//! answer carries its source and age.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use time::OffsetDateTime;

use crate::args::WikiPageArgs;
use crate::config::{Preference, WikiConfig};
use crate::error::WikiError;
use crate::news::NewsClient;
use crate::offline::OfflineWiki;
use crate::online::OnlineWiki;
use crate::types::{NewsResult, SearchResults, WikiPage};

/// The ArchWiki, offline and online, and the Arch news.
#[derive(Debug)]
pub struct Wiki {
    online: OnlineWiki,
    news: NewsClient,
    index_dir: PathBuf,
    preference: Preference,
    page_bytes: usize,
    offline: Mutex<Option<Arc<OfflineWiki>>>,
}

impl Wiki {
    /// A facade over the wiki at `config.api_url` and the offline index in `index_dir`
    /// (which may not exist yet).
    pub fn new(
        config: WikiConfig,
        index_dir: &Path,
        preference: Preference,
    ) -> Result<Self, WikiError> {
        Ok(Wiki {
            news: NewsClient::new(&config)?,
            page_bytes: config.page_bytes,
            online: OnlineWiki::new(config)?,
            index_dir: index_dir.to_owned(),
            preference,
            offline: Mutex::new(None),
        })
    }

    /// The online client.
    pub fn online(&self) -> &OnlineWiki {
        &self.online
    }

    /// The preference in force.
    pub fn preference(&self) -> Preference {
        self.preference
    }

    /// The offline index directory.
    pub fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    /// The offline index, opened on first use and kept; `NoIndex` when none is built.
    pub fn offline(&self) -> Result<Arc<OfflineWiki>, WikiError> {
        let mut slot = self.offline.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = slot.as_ref() {
            return Ok(o.clone());
        }
        let opened = Arc::new(OfflineWiki::open(&self.index_dir)?.with_page_bytes(self.page_bytes));
        *slot = Some(opened.clone());
        Ok(opened)
    }

    /// Forgets the opened index so the next answer sees a fresh build.
    pub fn reload_offline(&self) {
        let mut slot = self.offline.lock().unwrap_or_else(|p| p.into_inner());
        *slot = None;
    }

    async fn offline_search(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        let off = self.offline()?;
        let q = query.to_owned();
        run_blocking(move || off.search(&q, limit)).await
    }

    async fn offline_page(&self, args: &WikiPageArgs) -> Result<WikiPage, WikiError> {
        let off = self.offline()?;
        let a = args.clone();
        run_blocking(move || off.page(&a)).await
    }

    /// Searches the wiki. Offline-first: the index answers when it exists and finds something;
    /// online-first: the network answers unless it cannot be reached.
    pub async fn search(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        match self.preference {
            Preference::OfflineOnly => self.offline_search(query, limit).await,
            Preference::OnlineOnly => self.online.search(query, limit).await,
            Preference::OfflineFirst => match self.offline_search(query, limit).await {
                Ok(r) if !r.hits.is_empty() => Ok(r),
                Ok(empty) => match self.online.search(query, limit).await {
                    Ok(r) => Ok(r),
                    Err(e) => {
                        tracing::info!(error = %e, "online wiki search failed; the offline index found nothing");
                        Ok(empty)
                    }
                },
                Err(off @ WikiError::NoIndex { .. }) => self
                    .online
                    .search(query, limit)
                    .await
                    .map_err(|e| e.or_no_index(&off)),
                Err(e) => {
                    tracing::warn!(error = %e, "offline wiki search failed; asking online");
                    self.online.search(query, limit).await
                }
            },
            Preference::OnlineFirst => match self.online.search(query, limit).await {
                Err(e) if e.is_transport() => match self.offline_search(query, limit).await {
                    Ok(mut r) => {
                        r.origin.instead_of_online = Some(instead(&e));
                        Ok(r)
                    }
                    Err(off) => Err(e.or_no_index(&off)),
                },
                other => other,
            },
        }
    }

    /// A page as Markdown. Offline-first: the index answers when it has the page, the network
    /// otherwise; when both fail, the offline "not found" (with its suggestions) is the answer
    /// if the network could not be reached.
    pub async fn page(&self, args: &WikiPageArgs) -> Result<WikiPage, WikiError> {
        match self.preference {
            Preference::OfflineOnly => self.offline_page(args).await,
            Preference::OnlineOnly => self.online.page(args).await,
            Preference::OfflineFirst => match self.offline_page(args).await {
                Ok(p) => Ok(p),
                Err(off @ WikiError::NotFound { .. }) => match self.online.page(args).await {
                    Err(e) if e.is_transport() => Err(off),
                    other => other,
                },
                Err(off @ (WikiError::NoSuchSection { .. } | WikiError::PageOutOfRange { .. })) => {
                    Err(off)
                }
                Err(off) => self
                    .online
                    .page(args)
                    .await
                    .map_err(|e| e.or_no_index(&off)),
            },
            Preference::OnlineFirst => match self.online.page(args).await {
                Err(e) if e.is_transport() => match self.offline_page(args).await {
                    Ok(mut p) => {
                        p.origin.instead_of_online = Some(instead(&e));
                        Ok(p)
                    }
                    Err(off) => Err(e.or_no_index(&off)),
                },
                other => other,
            },
        }
    }

    /// Arch news from `feed_url`, newest first, after `since`, at most `limit` items.
    pub async fn news(
        &self,
        feed_url: &str,
        limit: usize,
        since: Option<OffsetDateTime>,
    ) -> Result<NewsResult, WikiError> {
        self.news.news(feed_url, limit, since).await
    }
}

/// What an offline answer says about the online failure it stands in for.
fn instead(online: &WikiError) -> String {
    format!("{online}; answered from the offline index meanwhile")
}

async fn run_blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, WikiError> + Send + 'static,
) -> Result<T, WikiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(join) => Err(WikiError::Index {
            path: PathBuf::new(),
            source: tantivy::TantivyError::InternalError(format!(
                "offline wiki task failed: {join}"
            )),
        }),
    }
}
