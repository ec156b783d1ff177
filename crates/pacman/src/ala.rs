//! The Arch Linux Archive: every package version Arch ever shipped, one directory per package,
//! `{base}/packages/<first letter>/<name>/`, served as nginx's HTML directory listing
//! (`<pre>` with one `<a href="FILE">FILE</a>  DATE  SIZE` line per file; a name with a `:`,
//! an epoch, gets a `./` in front of its href).
//!
//! Base URL, timeout and size cap are configurable (`arch.archive_url`, `arch.http_timeout_s`);
//! listings are cached in a directory with a TTL. A 404 is the archive's answer "no such
//! package"; an answer that is not a listing is an error naming what is missing.

use crate::error::PacmanError;
use crate::http::{self, HttpError};
use crate::pkg_file::parse_file_name;
use crate::remote::RemoteSettings;

/// The archive's public address.
pub const DEFAULT_URL: &str = "https://archive.archlinux.org";

/// Settings for the archive client: the packages API's shape, with the archive's base URL.
pub fn default_settings() -> RemoteSettings {
    RemoteSettings {
        base_url: DEFAULT_URL.to_owned(),
        ..RemoteSettings::default()
    }
}

/// A package name as pacman allows it (`[a-z0-9@._+-]`, not starting with `-` or `.`): it is put
/// into a URL and a file name.
pub fn check_name(name: &str) -> Result<(), PacmanError> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && !name.starts_with(['-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"@._+-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(PacmanError::InvalidArgument {
            argument: "name",
            problem: format!("{name:?} is not a package name"),
        })
    }
}

/// One package file in the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// `[epoch:]version-release`.
    pub version: String,
    /// Architecture.
    pub arch: String,
    /// Its URL.
    pub url: String,
}

/// A package's directory in the archive.
#[derive(Debug, Clone, Default)]
pub struct ArchiveListing {
    /// The package files (signatures left out), in listing order.
    pub files: Vec<ArchiveFile>,
}

/// Client for the archive.
#[derive(Debug, Clone)]
pub struct ArchiveClient {
    settings: RemoteSettings,
    client: reqwest::Client,
}

impl ArchiveClient {
    /// Builds a client.
    pub fn new(settings: RemoteSettings) -> Result<ArchiveClient, HttpError> {
        let client = http::client(&settings.base_url, settings.timeout)?;
        Ok(ArchiveClient { settings, client })
    }

    /// `{base}/packages/<first letter>/<name>/` (`name` already checked).
    pub fn listing_url(&self, name: &str) -> String {
        format!(
            "{}/packages/{}/{name}/",
            self.settings.base_url.trim_end_matches('/'),
            name.chars().next().unwrap_or('_')
        )
    }

    /// The package's directory; empty when the archive has no such package (HTTP 404).
    pub async fn listing(&self, name: &str) -> Result<ArchiveListing, HttpError> {
        let url = self.listing_url(name);
        let cache_file = self
            .settings
            .cache_dir
            .as_ref()
            .map(|d| d.join(format!("ala-{name}.html")));
        if let Some(file) = &cache_file
            && http::age_s(file).is_some_and(|age| age < self.settings.ttl.as_secs())
            && let Some(bytes) = http::read_cache(file)
            && let Ok(listing) = parse_listing(&String::from_utf8_lossy(&bytes), &url, name)
        {
            return Ok(listing);
        }
        let body = match http::get(
            &self.client,
            &url,
            self.settings.timeout,
            self.settings.max_bytes,
        )
        .await
        {
            Ok(body) => body,
            Err(HttpError::Status { status: 404, .. }) => return Ok(ArchiveListing::default()),
            Err(e) => return Err(e),
        };
        let listing =
            parse_listing(&String::from_utf8_lossy(&body), &url, name).map_err(|problem| {
                HttpError::NotAListing {
                    url: url.clone(),
                    problem: problem_text(problem),
                }
            })?;
        if let Some(file) = cache_file {
            http::write_cache(&file, &body);
        }
        Ok(listing)
    }
}

/// What is wrong with a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListingProblem {
    /// No `<pre>` … `</pre>` block.
    NoPre,
    /// An `<a href="` without its closing quote.
    UnterminatedHref,
}

fn problem_text(p: ListingProblem) -> &'static str {
    match p {
        ListingProblem::NoPre => "no <pre> block of links",
        ListingProblem::UnterminatedHref => "an <a href=\" without its closing quote",
    }
}

/// Parses nginx's directory listing of `dir_url`; keeps the package files of `name`.
pub fn parse_listing(
    html: &str,
    dir_url: &str,
    name: &str,
) -> Result<ArchiveListing, ListingProblem> {
    let start = html.find("<pre>").ok_or(ListingProblem::NoPre)?;
    let end = html[start..]
        .find("</pre>")
        .map(|i| start + i)
        .ok_or(ListingProblem::NoPre)?;
    let mut rest = &html[start..end];
    let mut files = Vec::new();
    while let Some(i) = rest.find("<a href=\"") {
        rest = &rest[i + "<a href=\"".len()..];
        let close = rest.find('"').ok_or(ListingProblem::UnterminatedHref)?;
        let href = &rest[..close];
        rest = &rest[close..];
        let file = percent_decode(&unescape_html(href.strip_prefix("./").unwrap_or(href)));
        if file.contains('/') {
            continue;
        }
        let Some((n, version, arch)) = parse_file_name(&file) else {
            continue;
        };
        if n != name {
            continue;
        }
        files.push(ArchiveFile {
            version,
            arch: arch.to_owned(),
            url: format!("{dir_url}{file}"),
        });
    }
    Ok(ArchiveListing { files })
}

fn unescape_html(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_the_url_are_refused() {
        for bad in ["", "../x", "a/b", "-x", ".x", "A", "a b", "a?b", "a%2f"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["glibc", "lib32-gcc-libs", "gtk2+extra", "python3.12", "0ad"] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn damaged_listings_are_named() {
        assert_eq!(
            parse_listing("<html>nothing</html>", "u/", "x").unwrap_err(),
            ListingProblem::NoPre
        );
        assert_eq!(
            parse_listing("<pre><a href=\"x-1-1-any.pkg.tar.zst</pre>", "u/", "x").unwrap_err(),
            ListingProblem::UnterminatedHref
        );
        let l = parse_listing("<pre><a href=\"../\">../</a>\r\n</pre>", "u/", "x").unwrap();
        assert!(l.files.is_empty());
    }
}
