//! Where a repository's `Server` / `CacheServer` downloads from, read as libcurl reads the URL
//! pacman hands it — so that every repository served **from this machine** is judged (attack 22
//! F4; class: *a repository the person's uid can serve*, attack 12 F1's). "On this machine" is
//! more than the literal prefix `file://`:
//! - `file:` in any case (libcurl takes the scheme case-insensitively), with an empty host or
//!   `localhost`, and `%XX` escapes in the path decoded: `FILE:///home/…` and
//!   `file://localhost/home/…` are the directory `/home/…` (judged root's all the way by the
//!   caller); a `file:` URL naming another host, or without `//`, refuses — the scheme being
//!   what precedes the first `:`, never a later `://` (attack 31 F6);
//! - a server on this machine — `localhost`, `*.localhost`, a loopback or unspecified address,
//!   one of the machine's own interface addresses (its LAN address too: attack 24 F2), in any
//!   numeric spelling (`127.1`, `2130706433`, `[::1%25lo]`), or a name `/etc/hosts` maps to
//!   one — is served by whoever holds its port: a user service of the person's (a local
//!   repository behind `python -m http.server`, darkhttpd, a pacoloco cache the agent can stop),
//!   or anyone first on it. It is accepted only when the repository's effective `SigLevel`
//!   requires packages to be signed (Arch's shipped `Required DatabaseOptional` does; pacman's own default, `Optional`, does not): then the
//!   server can hold updates back but cannot hand root a package the keyring did not sign.

use std::net::IpAddr;
use std::path::PathBuf;

use archgate_pacman::conf::{PacmanConf, RepoConf};

/// Where one server URL downloads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A directory of this machine (`file://`).
    Dir(PathBuf),
    /// A server on this machine's loopback interface.
    Loopback(String),
    /// Elsewhere, by its literal address, or by a name (the host, lowercase).
    Remote(String),
}

/// What "this machine" is, read once per judgement (not once per mirror): its interfaces'
/// addresses and `/etc/hosts`.
pub(crate) struct Here {
    addresses: Vec<IpAddr>,
    hosts: String,
}

impl Here {
    pub(crate) fn now() -> Here {
        Here {
            addresses: own_addresses(),
            hosts: std::fs::read_to_string("/etc/hosts").unwrap_or_default(),
        }
    }
}

/// Reads `url` as libcurl would; `Err` for a URL archgate cannot place.
#[cfg(test)]
pub(crate) fn source(url: &str) -> Result<Source, String> {
    source_here(url, &Here::now())
}

/// [`source`], with this machine read already.
pub(crate) fn source_here(url: &str, here: &Here) -> Result<Source, String> {
    // The scheme is what comes before the first `:`, in RFC 3986's letters, as libcurl reads it
    // — never the text before a later `://`: `file:/home/P/repo/http://192.0.2.7` is a `file:`
    // URL (one slash, which libcurl takes: RFC 8089) naming the person's directory, which a split
    // at `://` placed on the host 192.0.2.7 (attack 31 F6; class: *a URL parsed by a rule that
    // is not libcurl's*, attack 22 F4, 30 F6). Any scheme not followed by `//` is refused.
    let (scheme, rest) = match url.split_once(':') {
        Some((scheme, rest))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (scheme, rest)
        }
        _ => {
            return Err(format!(
                "the server `{url}` has no scheme:// archgate can place"
            ));
        }
    };
    let Some(rest) = rest.strip_prefix("//") else {
        return Err(format!(
            "the server `{url}` has no scheme:// archgate can place (`{scheme}:` without `//`)"
        ));
    };
    if scheme.eq_ignore_ascii_case("file") {
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) || path.is_empty() {
            return Err(format!(
                "the server `{url}` is a file URL archgate cannot place"
            ));
        }
        // libcurl removes the path's dot segments before it opens the file (RFC 3986 5.2.4, on
        // the path as written: `%2e` is not a dot to it), whatever exists on the way — the kernel
        // would refuse `/usr/nonexistent/..`, so a path judged as written named another
        // directory than the one pacman read (attack 30 F6).
        let decoded = archgate_desktop::url_check::percent_decode(&without_dot_segments(path));
        if decoded.contains('\u{FFFD}') && !path.contains('\u{FFFD}') {
            return Err(format!("the server `{url}` names a path that is not text"));
        }
        // A `..` left after decoding (`%2e%2e`) is walked by the kernel as root, through
        // directories the person may not search (`/root/..`): judged as the person, it would be
        // another directory again.
        if decoded.split('/').any(|seg| seg == ".." || seg == ".") {
            return Err(format!(
                "the server `{url}` names a path with `.` or `..` in it, which archgate does not place"
            ));
        }
        return Ok(Source::Dir(PathBuf::from(decoded)));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        // A zone (`[::1%25lo]`, libcurl takes `%lo` too) names an interface, not another host.
        let v6 = v6.split(']').next().unwrap_or("");
        v6.split('%').next().unwrap_or("")
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    let host = archgate_desktop::url_check::percent_decode(host).to_ascii_lowercase();
    // libcurl maps an international name to ASCII before it connects (`ｌｏｃａｌｈｏｓｔ`,
    // `127。0。0。1` are localhost to it under a UTF-8 locale: attack 25 F7); archgate does not
    // reimplement that mapping, so a host that is not ASCII is one it cannot place.
    if !host.is_ascii() {
        return Err(format!(
            "the server `{url}` names a host that is not ASCII, which archgate cannot place"
        ));
    }
    let host = host.trim_end_matches('.');
    if host.is_empty() {
        return Err(format!("the server `{url}` names no host"));
    }
    if host == "localhost" || host.ends_with(".localhost") || loopback(host, here) {
        return Ok(Source::Loopback(host.to_owned()));
    }
    Ok(Source::Remote(host.to_owned()))
}

/// RFC 3986's `remove_dot_segments` on an absolute path, as libcurl applies it to a URL's path:
/// `.` segments dropped, `..` removing the segment before it (never above `/`).
fn without_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

/// Whether `host`, a name, leads to this machine as libcurl would find it: the system's resolver
/// (`getaddrinfo`, NSS: `/etc/hosts`, and what `/etc/hosts` does not say — Arch's default
/// `hosts:` line answers the machine's own name through `myhostname` and `resolve`, and
/// `localhost.localdomain` with loopback: attack 26 F6). Asked only for a repository whose
/// packages need no signature; a name the resolver cannot answer is one archgate cannot place.
fn resolves_here(host: &str, here: &Here) -> Result<bool, String> {
    use std::net::ToSocketAddrs;
    if host.parse::<IpAddr>().is_ok() || ipv4_numbers(host).is_some() {
        return Ok(false); // a literal address, judged already
    }
    let addrs = (host, 80)
        .to_socket_addrs()
        .map_err(|e| format!("archgate could not tell where `{host}` is ({e})"))?;
    Ok(addrs
        .map(|a| a.ip().to_string())
        .any(|ip| loopback(&ip, here)))
}

/// Whether `host` is this machine — a loopback or unspecified address, or one of its interfaces'
/// — as an IP literal in any numeric spelling
/// libcurl normalizes (`127.1`, `0x7f.1`, `2130706433`), or a name `/etc/hosts` maps to one.
/// Not DNS: a hand-off does not wait on the network for every mirror, and root's configuration
/// naming a public name that points home is not the agent's doing.
fn loopback(host: &str, here: &Here) -> bool {
    let mine = &here.addresses;
    let local = |ip: IpAddr| {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        ip.is_loopback() || ip.is_unspecified() || mine.contains(&ip)
    };
    if let Ok(ip) = host.parse::<IpAddr>() {
        return local(ip);
    }
    if let Some(v4) = ipv4_numbers(host) {
        return local(IpAddr::V4(v4));
    }
    here.hosts.lines().any(|line| {
        let mut words = line.split('#').next().unwrap_or("").split_whitespace();
        let ip = words.next().and_then(|w| w.parse::<IpAddr>().ok());
        ip.is_some_and(local) && words.any(|name| name.eq_ignore_ascii_case(host))
    })
}

/// Every address of this machine's interfaces (attack 24 F2: `http://<the machine's LAN
/// address>:PORT` is served by whoever holds the port here, as loopback is).
fn own_addresses() -> Vec<IpAddr> {
    nix::ifaddrs::getifaddrs()
        .map(|addrs| {
            addrs
                .filter_map(|a| a.address)
                .filter_map(|sa| {
                    sa.as_sockaddr_in()
                        .map(|v4| IpAddr::V4(v4.ip()))
                        .or_else(|| sa.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// An IPv4 address in the forms `inet_aton` and libcurl's URL parser take: one to four parts,
/// each decimal, octal (`0…`) or hex (`0x…`), the last filling the remaining bytes.
fn ipv4_numbers(host: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        let n = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            u64::from_str_radix(h, 16).ok()?
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()?
        } else {
            p.parse::<u64>().ok()?
        };
        nums.push(n);
    }
    let (last, head) = nums.split_last()?;
    if head.iter().any(|&n| n > 255) || *last >= 1u64 << (8 * (4 - head.len())) {
        return None;
    }
    let mut v: u64 = 0;
    for (i, &n) in head.iter().enumerate() {
        v |= n << (8 * (3 - i));
    }
    Some(std::net::Ipv4Addr::from((v | last) as u32))
}

/// Whether `words` (a `SigLevel`, read in order over pacman's default) require packages signed.
/// pacman's compiled-in default is `Optional` (`pacman-conf` on a file with no `SigLevel` says
/// `PackageOptional`); Arch's shipped pacman.conf writes `Required DatabaseOptional`, but a file
/// without that line signs nothing (attack 28 F2: a loopback repository was accepted as signed).
fn packages_must_be_signed(words: &[String]) -> bool {
    let mut required = false;
    for w in words {
        match w.as_str() {
            "Required" | "PackageRequired" => required = true,
            "Never" | "Optional" | "PackageNever" | "PackageOptional" => required = false,
            _ => {}
        }
    }
    required
}

/// The directories of the repositories pacman reads from this machine; a loopback server of a
/// repository whose packages need no signature refuses.
pub(crate) fn on_this_machine(c: &PacmanConf) -> Result<Vec<PathBuf>, String> {
    let here = Here::now();
    let mut dirs = Vec::new();
    for r in &c.repos {
        for url in r.servers.iter().chain(&r.cache_servers) {
            match source_here(url, &here).map_err(|e| format!("[{}]: {e}", r.name))? {
                Source::Dir(d) => dirs.push(d),
                Source::Loopback(host) if !signed(c, r) => {
                    return Err(format!(
                        "[{}] downloads from `{url}`, a server on this machine ({host}): whoever holds its port serves what pacman installs as root, and the repository's SigLevel does not require packages to be signed",
                        r.name
                    ));
                }
                Source::Remote(host) if !signed(c, r) => {
                    let here_too = resolves_here(&host, &here).map_err(|e| {
                        format!(
                            "[{}] downloads from `{url}`: {e}, and the repository's SigLevel does not require packages to be signed",
                            r.name
                        )
                    })?;
                    if here_too {
                        return Err(format!(
                            "[{}] downloads from `{url}`, a name this machine's resolver gives to this machine ({host}): whoever holds its port serves what pacman installs as root, and the repository's SigLevel does not require packages to be signed",
                            r.name
                        ));
                    }
                }
                Source::Loopback(_) | Source::Remote(_) => {}
            }
        }
    }
    Ok(dirs)
}

/// The repository's effective `SigLevel`: pacman's default, the global words over it, the
/// repository's over those (attack 24 F1: `SigLevel = Never` globally and `DatabaseOptional` in
/// the repository is `PackageNever` to pacman — `pacman-conf` shows it).
fn signed(c: &PacmanConf, r: &RepoConf) -> bool {
    let words: Vec<String> = c.sig_level.iter().chain(&r.sig_level).cloned().collect();
    packages_must_be_signed(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attack 30 F6: a `file://` path through a directory that does not exist and `..` is the
    /// directory libcurl opens after removing the dot segments, not the one the kernel would
    /// walk to; `%2e%2e` is not a dot segment to libcurl.
    #[test]
    fn a_file_servers_dot_segments_are_removed_as_libcurl_removes_them() {
        let dir = |u: &str| match source(u).unwrap() {
            Source::Dir(d) => d,
            other => panic!("{u}: {other:?}"),
        };
        assert_eq!(
            dir("file:///usr/nonexistent/../../home/alice/repo"),
            PathBuf::from("/home/alice/repo")
        );
        assert_eq!(dir("file:///srv/./repo/x/.."), PathBuf::from("/srv/repo/"));
        assert_eq!(dir("file:///../../home/a"), PathBuf::from("/home/a"));
        assert!(source("file:///root/%2e%2e/home/alice/repo").is_err());
        assert!(source("file:///srv/%2E/repo").is_err());
        assert_eq!(dir("file:///srv/repo"), PathBuf::from("/srv/repo"));
    }

    /// Attack 22 F4: `file:` in every spelling libcurl takes is a directory; other `file:` forms
    /// refuse.
    #[test]
    fn a_file_url_is_a_directory_in_every_spelling_libcurl_takes() {
        for url in [
            "file:///home/alice/repo",
            "FILE:///home/alice/repo",
            "File://localhost/home/alice/repo",
            "file://LOCALHOST/home/alice/repo",
            "file:///home/%61lice/repo",
        ] {
            assert_eq!(
                source(url),
                Ok(Source::Dir(PathBuf::from("/home/alice/repo"))),
                "{url}"
            );
        }
        for url in [
            "file://host.example/srv",
            "file:/home/alice",
            "/srv/repo",
            // Attack 31 F6: one slash, and a later `://` in the path — a `file:` URL still.
            "file:/home/alice/repo/http://192.0.2.7",
            "fIlE:/home/alice/repo/ftp://192.0.2.9",
            "file:home/alice/repo/https://mirror.example",
            "http:/192.0.2.7/repo",
            "x y://192.0.2.7/repo",
            // Attack 25 F7: names libcurl maps to localhost (fullwidth, ideographic full stop).
            "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}:8080/x",
            "http://127\u{3002}0\u{3002}0\u{3002}1/x",
        ] {
            assert!(source(url).is_err(), "{url}");
        }
    }

    /// This machine's own interface addresses are on this machine too (attack 24 F2).
    #[test]
    fn a_server_on_one_of_the_machines_own_addresses_is_on_this_machine() {
        for ip in own_addresses() {
            let host = match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            };
            let url = format!("http://{host}:8080/repo");
            assert!(matches!(source(&url), Ok(Source::Loopback(_))), "{url}");
        }
        assert!(!own_addresses().is_empty(), "loopback at least");
    }

    /// Attack 24 F1: the repository's `SigLevel` goes over the global one, as pacman merges them.
    #[test]
    fn a_repositorys_siglevel_goes_over_the_global_one() {
        let c = archgate_pacman::conf::PacmanConf::parse(
            std::path::Path::new("/x/pacman.conf"),
            "[options]\nSigLevel = Never\n[custom]\nSigLevel = DatabaseOptional\nServer = http://127.0.0.1/x\n",
        )
        .unwrap();
        assert!(on_this_machine(&c).is_err());
    }

    /// Attack 22 F4: a server on a loopback address, in any spelling, is on this machine.
    #[test]
    fn a_server_on_a_loopback_address_is_on_this_machine() {
        for url in [
            "http://127.0.0.1:8080/$repo",
            "HTTP://localhost/repo",
            "https://repo.localhost/x",
            "http://user:pw@127.0.0.1/x",
            "http://[::1]:9129/repo",
            "http://[::1%25lo]:9129/repo",
            "http://127.1/x",
            "http://2130706433/x",
            "http://0x7f.1/x",
            "http://0177.0.0.1/x",
            "http://0.0.0.0/x",
            "http://localhost./x",
            "ftp://127.9.9.9/x",
        ] {
            assert!(
                matches!(source(url), Ok(Source::Loopback(_))),
                "{url}: {:?}",
                source(url)
            );
        }
        for url in [
            "https://geo.mirror.pkgbuild.com/$repo/os/$arch",
            "http://192.0.2.7/repo",
            "http://3221225991/repo",
            "http://127.0.0.1.example/x",
        ] {
            assert!(matches!(source(url), Ok(Source::Remote(_))), "{url}");
        }
    }

    #[test]
    fn package_signatures_are_required_by_pacmans_default_and_by_required_words() {
        let w = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert!(
            !packages_must_be_signed(&[]),
            "pacman's own default is Optional"
        );
        assert!(packages_must_be_signed(&w("Required DatabaseOptional")));
        assert!(packages_must_be_signed(&w("Optional PackageRequired")));
        assert!(!packages_must_be_signed(&w("Optional TrustAll")));
        assert!(!packages_must_be_signed(&w("Never")));
        assert!(!packages_must_be_signed(&w("Required PackageOptional")));
        assert!(!packages_must_be_signed(&w("DatabaseNever")));
        assert!(packages_must_be_signed(&w("Required DatabaseNever")));
    }
}
