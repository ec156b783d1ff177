//! URLs in sources and commands: parsing, forge owners, and hosts that honest packages do not
//! fetch from (raw IPs, .onion, paste and file-drop sites, shorteners, dynamic DNS, webhooks).

use std::sync::LazyLock;

use regex::Regex;

use super::Severity;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    pub scheme: String,
    pub host: String,
    pub path: String,
}

/// Parses `scheme://[user@]host[:port]/path`; the scheme may be absent (`host/path`).
pub(crate) fn parse(url: &str) -> Option<ParsedUrl> {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s.to_ascii_lowercase(), r),
        None => (String::new(), url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let path = &rest[end..];
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        format!("[{}]", v6.split(']').next().unwrap_or(""))
    } else {
        hostport.split(':').next().unwrap_or("").to_owned()
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || !host.contains(['.', '[']) && host != "localhost" {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or("").to_owned();
    Some(ParsedUrl { scheme, host, path })
}

static URL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b(?:https?|ftps?|wss?|git|ssh|rsync)://[^\s'"<>|;)\\`]+"#)
        .expect("constant regex is valid")
});

/// Every `scheme://…` URL in a text.
pub(crate) fn find_urls(text: &str) -> Vec<&str> {
    URL_RE.find_iter(text).map(|m| m.as_str()).collect()
}

const PASTE: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "pastes.io",
    "hastebin.com",
    "hastebin.skyra.pw",
    "ghostbin.co",
    "ghostbin.com",
    "rentry.co",
    "rentry.org",
    "termbin.com",
    "ix.io",
    "sprunge.us",
    "dpaste.com",
    "dpaste.org",
    "paste.rs",
    "0x0.st",
    "transfer.sh",
    "paste.c-net.org",
    "controlc.com",
    "justpaste.it",
    "pastebin.pl",
    "bpa.st",
    "privatebin.net",
    "ptpb.pw",
    "clbin.com",
    "paste.gg",
    "hst.sh",
    "katb.in",
    "pastie.org",
    "telegra.ph",
    "files.catbox.moe",
    "litter.catbox.moe",
    "catbox.moe",
    "gofile.io",
    "temp.sh",
    "file.io",
    "bashupload.com",
    "oshi.at",
    "uguu.se",
    "pixeldrain.com",
    "anonfiles.com",
    "paste.sh",
    "pastebin.ubuntu.com",
    "paste.debian.net",
    "paste.centos.org",
    "snippet.host",
    "pastecode.io",
    "paste.mozilla.org",
    "p.ip.fi",
];

const SHORTENERS: &[&str] = &[
    "bit.ly",
    "bitly.com",
    "tinyurl.com",
    "t.co",
    "goo.gl",
    "is.gd",
    "v.gd",
    "cutt.ly",
    "rb.gy",
    "shorturl.at",
    "tiny.cc",
    "ow.ly",
    "rebrand.ly",
    "s.id",
    "t.ly",
    "buff.ly",
    "shorte.st",
    "adf.ly",
    "bl.ink",
    "lnkd.in",
    "u.to",
    "qr.ae",
    "git.io",
    "tiny.one",
    "urlz.fr",
    "short.io",
    "clck.ru",
    "soo.gd",
    "shorturl.gg",
    "surl.li",
    "tinu.be",
    "2no.co",
    "iplogger.org",
];

const DYNDNS: &[&str] = &[
    "duckdns.org",
    "no-ip.org",
    "no-ip.com",
    "no-ip.biz",
    "no-ip.info",
    "noip.me",
    "ddns.net",
    "hopto.org",
    "zapto.org",
    "sytes.net",
    "serveftp.com",
    "servehttp.com",
    "myftp.org",
    "myftp.biz",
    "redirectme.net",
    "servebeer.com",
    "dynu.net",
    "dynu.com",
    "freedns.afraid.org",
    "mooo.com",
    "chickenkiller.com",
    "strangled.net",
    "dyndns.org",
    "dyndns.info",
    "dynv6.net",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "serveo.net",
    "loca.lt",
    "localtunnel.me",
    "pagekite.me",
    "portmap.io",
    "3utilities.com",
    "bounceme.net",
    "ddnsking.com",
    "gotdns.ch",
    "kozow.com",
    "ooguy.com",
    "theworkpc.com",
    "webhop.me",
    "duckdns.com",
    "dyn.com",
    "changeip.com",
    "dnsalias.com",
    "dnsalias.net",
    "homeip.net",
    "publicvm.com",
    "ydns.eu",
    "afraid.org",
    "pinggy.link",
    "bore.pub",
    "playit.gg",
];

fn host_in(host: &str, list: &[&str]) -> bool {
    list.iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

fn is_ip_literal(host: &str) -> bool {
    // The loopback and unspecified addresses (`[::1]`, `[::]`, `127.…`, `0.0.0.0`) are this
    // machine: nothing is fetched from anyone there.
    if host.starts_with('[') {
        return !matches!(host, "[::1]" | "[::]");
    }
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
        && !host.starts_with("127.")
        && host != "0.0.0.0"
}

/// A host no honest package needs: (finding id, severity, why).
pub(crate) fn classify(u: &ParsedUrl) -> Option<(&'static str, Severity, String)> {
    let h = u.host.as_str();
    let path = u.path.to_ascii_lowercase();
    if (host_in(h, &["discord.com", "discordapp.com"]) && path.contains("/api/webhooks"))
        || host_in(
            h,
            &[
                "hooks.slack.com",
                "webhook.site",
                "pipedream.net",
                "requestbin.net",
                "interact.sh",
                "oast.fun",
                "oast.live",
                "oast.me",
                "oast.pro",
                "burpcollaborator.net",
                "canarytokens.com",
            ],
        )
        || (h == "api.telegram.org" && path.starts_with("/bot"))
    {
        return Some((
            "AUR-URL-WEBHOOK",
            Severity::Critical,
            format!(
                "{h} is a chat webhook or collection endpoint: the usual way stolen data leaves a machine"
            ),
        ));
    }
    if h.ends_with(".onion") {
        return Some((
            "AUR-URL-ONION",
            Severity::Critical,
            "a Tor hidden service: nothing a package needs lives there".into(),
        ));
    }
    if is_ip_literal(h) {
        return Some((
            "AUR-URL-RAW-IP",
            Severity::High,
            format!("fetches from a bare IP address ({h}) instead of a named project host"),
        ));
    }
    if host_in(h, PASTE) {
        return Some((
            "AUR-URL-PASTE",
            Severity::High,
            format!("{h} is a paste or anonymous file-drop site; anyone can change what it serves"),
        ));
    }
    if host_in(h, SHORTENERS) {
        return Some((
            "AUR-URL-SHORTENER",
            Severity::High,
            format!("{h} is a URL shortener: it hides where the download really comes from"),
        ));
    }
    if host_in(h, DYNDNS) {
        return Some((
            "AUR-URL-DYNDNS",
            Severity::High,
            format!(
                "{h} is a dynamic-DNS or tunnel domain, typical for throwaway attacker servers"
            ),
        ));
    }
    None
}

/// Code forges where the first path segment names the owner.
const FORGES: &[&str] = &[
    "github.com",
    "gitlab.com",
    "codeberg.org",
    "bitbucket.org",
    "git.sr.ht",
    "gitee.com",
    "gitea.com",
    "framagit.org",
    "salsa.debian.org",
    "gitlab.gnome.org",
    "invent.kde.org",
    "gitlab.freedesktop.org",
    "sr.ht",
    "notabug.org",
    "pagure.io",
    "raw.githubusercontent.com",
    "objects.githubusercontent.com",
    "codeload.github.com",
];

/// (host, owner, repo) for forge URLs; GitHub's raw/codeload hosts count as github.com.
pub(crate) fn forge_owner(u: &ParsedUrl) -> Option<(String, String, String)> {
    let host = match u.host.trim_start_matches("www.") {
        "raw.githubusercontent.com" | "codeload.github.com" | "objects.githubusercontent.com" => {
            "github.com"
        }
        h => h,
    };
    if let Some(owner) = host.strip_suffix(".github.io") {
        return Some(("github.com".into(), owner.into(), String::new()));
    }
    if !FORGES.contains(&host) {
        return None;
    }
    let mut segs = u.path.split('/').filter(|s| !s.is_empty());
    let owner = segs.next()?.trim_start_matches('~').to_ascii_lowercase();
    let rest: Vec<&str> = segs.collect();
    // GitLab-style forges nest groups (`/qt/qt/qtsvg`, `/group/sub/repo/-/archive/…`): the
    // repository is the last segment before `/-/`. GitHub and the others: the second one.
    let gitlabish = host.starts_with("gitlab.")
        || matches!(host, "invent.kde.org" | "salsa.debian.org" | "framagit.org");
    let repo = if gitlabish {
        rest.iter()
            .take_while(|s| **s != "-")
            .last()
            .copied()
            .unwrap_or("")
    } else {
        rest.first().copied().unwrap_or("")
    };
    let repo = repo.trim_end_matches(".git").to_ascii_lowercase();
    Some((host.to_owned(), owner, repo))
}

/// The last two labels of a host (`dl.example.org` → `example.org`).
pub(crate) fn registrable(host: &str) -> String {
    let h = host.trim_start_matches("www.");
    let labels: Vec<&str> = h.split('.').collect();
    if labels.len() <= 2 {
        return h.to_owned();
    }
    labels[labels.len() - 2..].join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_hosts() {
        let c = |u: &str| parse(u).and_then(|p| classify(&p)).map(|c| c.0);
        assert_eq!(c("https://pastebin.com/raw/x"), Some("AUR-URL-PASTE"));
        assert_eq!(c("http://45.13.2.9:8080/a"), Some("AUR-URL-RAW-IP"));
        assert_eq!(c("https://x.duckdns.org/p"), Some("AUR-URL-DYNDNS"));
        assert_eq!(
            c("https://discord.com/api/webhooks/1/2"),
            Some("AUR-URL-WEBHOOK")
        );
        assert_eq!(c("https://github.com/foo/bar"), None);
        assert_eq!(c("http://127.0.0.1:8000/"), None);
        let p = parse("git+https://github.com/Foo/bar.git#tag=v1").and_then(|p| forge_owner(&p));
        assert_eq!(p, Some(("github.com".into(), "foo".into(), "bar".into())));
    }
}
