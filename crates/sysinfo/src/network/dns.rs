//! DNS as this machine resolves names: `/etc/resolv.conf` (servers, search domains), what
//! manages it (its symlink target and its header comment: systemd-resolved's stub or direct
//! file, NetworkManager, resolvconf/openresolv, netconfig, or a static file), the upstream
//! servers systemd-resolved uses behind its stub (`/run/systemd/resolve/resolv.conf`), and the
//! `hosts:` line of `/etc/nsswitch.conf` (whether `resolve`, `mdns` or `files` come first).

use std::path::Path;

use serde::Serialize;

use crate::machine::{MachineError, read};

/// How names are resolved here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dns {
    /// What manages `/etc/resolv.conf`: `systemd-resolved (stub)`, `systemd-resolved`,
    /// `NetworkManager`, `resolvconf`, `netconfig`, `a local resolver`, or `static file`.
    pub resolver: &'static str,
    /// Where `/etc/resolv.conf` points when it is a symlink.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolv_conf_link: Option<String>,
    /// The `nameserver` lines, in order.
    pub nameservers: Vec<String>,
    /// The `search` (or `domain`) domains.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// systemd-resolved's upstream servers, when it runs behind its stub.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Vec<String>>,
    /// The `hosts:` sources of `/etc/nsswitch.conf` (`files mymachines resolve dns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nsswitch_hosts: Option<String>,
}

struct ResolvConf {
    nameservers: Vec<String>,
    search: Vec<String>,
    header: String,
}

fn parse(text: &str) -> ResolvConf {
    let mut r = ResolvConf {
        nameservers: Vec::new(),
        search: Vec::new(),
        header: String::new(),
    };
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') {
            r.header.push_str(line);
            r.header.push('\n');
            continue;
        }
        let mut words = line.split_whitespace();
        match words.next() {
            Some("nameserver") => r.nameservers.extend(words.next().map(str::to_owned)),
            // The last search/domain line wins, as in glibc.
            Some("search" | "domain") => r.search = words.map(str::to_owned).collect(),
            _ => {}
        }
    }
    r
}

pub fn dns(root: &Path) -> Result<Dns, MachineError> {
    let path = root.join("etc/resolv.conf");
    let link = std::fs::read_link(&path)
        .ok()
        .map(|t| t.to_string_lossy().into_owned());
    let text = match read(&path) {
        Ok(t) => t,
        Err(MachineError::Unreadable { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Err(MachineError::not_available(match &link {
                Some(t) => format!(
                    "/etc/resolv.conf points to {t}, which does not exist (is the service that writes it running?)"
                ),
                None => "there is no /etc/resolv.conf".to_owned(),
            }));
        }
        Err(e) => return Err(e),
    };
    let conf = parse(&text);
    let l = link.as_deref().unwrap_or("");
    let h = conf.header.as_str();
    let stub = conf
        .nameservers
        .iter()
        .any(|n| n == "127.0.0.53" || n == "127.0.0.54");
    let resolver = if l.ends_with("systemd/resolve/stub-resolv.conf")
        || (stub && h.contains("systemd-resolved"))
    {
        "systemd-resolved (stub)"
    } else if l.ends_with("systemd/resolve/resolv.conf") || h.contains("systemd-resolved") {
        "systemd-resolved"
    } else if l.contains("NetworkManager") || h.contains("NetworkManager") {
        "NetworkManager"
    } else if h.contains("resolvconf") {
        "resolvconf"
    } else if h.contains("netconfig") {
        "netconfig"
    } else if conf
        .nameservers
        .iter()
        .any(|n| n.starts_with("127.") || n == "::1")
    {
        "a local resolver"
    } else {
        "static file"
    };
    let upstream = (resolver == "systemd-resolved (stub)")
        .then(|| std::fs::read_to_string(root.join("run/systemd/resolve/resolv.conf")).ok())
        .flatten()
        .map(|t| parse(&t).nameservers);
    let nsswitch_hosts = std::fs::read_to_string(root.join("etc/nsswitch.conf"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.trim().strip_prefix("hosts:").map(|v| v.trim().to_owned()))
        });
    Ok(Dns {
        resolver,
        resolv_conf_link: link,
        nameservers: conf.nameservers,
        search: conf.search,
        upstream,
        nsswitch_hosts,
    })
}
