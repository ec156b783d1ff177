//! The `network` diagnostics — local facts only, nothing is sent anywhere: links
//! (`/sys/class/net`), their addresses (IPv4 from `getifaddrs`, IPv6 with scope and flags from
//! `/proc/net/if_inet6`), the main routing table (`/proc/net/route`, `/proc/net/ipv6_route`),
//! DNS servers and the resolver in use (`dns.rs`), NetworkManager or iwd over the system bus
//! (`wifi.rs`), and rfkill (`/sys/class/rfkill`). No netlink and no program: every read works
//! in the caller's network namespace.

mod dns;
mod routes;
mod wifi;

use std::path::Path;

use serde::Serialize;

use crate::machine::{Field, MachineError, attr, attr_num, entries, link_name};

pub use dns::{Dns, dns};
pub use routes::{Route, routes};
pub use wifi::{Wifi, WifiDevice, WifiNetwork, wifi};

/// One part of the network report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// Interfaces with state and addresses.
    Links,
    /// The main routing table, IPv4 and IPv6.
    Routes,
    /// DNS servers and the resolver in use.
    Dns,
    /// NetworkManager or iwd: state, current Wi-Fi network and signal.
    Wifi,
    /// Radio kill switches.
    Rfkill,
}

/// The whole report (no section asked): each part on its own, a failed part says why.
#[derive(Debug, Serialize)]
pub struct Network {
    /// See [`links`].
    pub links: Field<Vec<Link>>,
    /// See [`routes`].
    pub routes: Field<Vec<Route>>,
    /// See [`dns`].
    pub dns: Field<Dns>,
    /// See [`wifi`].
    pub wifi: Field<Wifi>,
    /// See [`rfkill`].
    pub rfkill: Field<Vec<Rfkill>>,
}

/// One section, or (`None`) every section with its own errors in place.
pub async fn network(
    section: Option<Section>,
    root: &Path,
) -> Result<serde_json::Value, MachineError> {
    fn json(v: impl Serialize) -> Result<serde_json::Value, MachineError> {
        Ok(serde_json::to_value(v).unwrap_or(serde_json::Value::Null))
    }
    match section {
        Some(Section::Links) => json(links(root)?),
        Some(Section::Routes) => json(routes(root)?),
        Some(Section::Dns) => json(dns(root)?),
        Some(Section::Wifi) => json(wifi().await?),
        Some(Section::Rfkill) => json(rfkill(root)),
        None => json(Network {
            links: links(root).into(),
            routes: routes(root).into(),
            dns: dns(root).into(),
            wifi: wifi().await.into(),
            rfkill: Ok(rfkill(root)).into(),
        }),
    }
}

/// One network interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// Its name (`wlan0`, `enp3s0`).
    pub name: String,
    /// Its index.
    pub index: u32,
    /// `loopback`, `ethernet`, `wlan`, `bridge`, `bond`, `vlan`, `wireguard`, `tun`, `virtual`
    /// (an ethernet-like device without hardware: veth, dummy, macvlan) or udev's `DEVTYPE`.
    pub kind: String,
    /// `operstate`: `up`, `down`, `dormant` (Wi-Fi not associated), `unknown`.
    pub state: String,
    /// Whether a cable or an association is there; absent while the link is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carrier: Option<bool>,
    /// MTU.
    pub mtu: u32,
    /// Hardware address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// The bridge or bond it is part of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master: Option<String>,
    /// The driver of its hardware.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Negotiated speed, Mbit/s (wired links that are up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// Its addresses.
    pub addresses: Vec<Address>,
}

/// One address of a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Address {
    /// `inet` or `inet6`.
    pub family: &'static str,
    /// The address (`192.168.1.20`, `fe80::1`).
    pub address: String,
    /// Prefix length.
    pub prefix: u8,
    /// `global`, `link`, `host`, `site`.
    pub scope: &'static str,
    /// IPv6 flags that matter: `temporary`, `deprecated`, `tentative`, `dadfailed`, `dynamic`
    /// (not permanent: from SLAAC or DHCPv6).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<&'static str>,
}

/// Every interface of this network namespace, by index.
pub fn links(root: &Path) -> Result<Vec<Link>, MachineError> {
    let dir = root.join("sys/class/net");
    let list = entries(&dir)
        .ok_or_else(|| MachineError::not_available("no /sys/class/net on this machine"))?;
    let v4 = ipv4_addresses();
    let v6 = ipv6_addresses(root);
    let mut out: Vec<Link> = list
        .into_iter()
        .filter_map(|(name, path)| {
            let index = u32::try_from(attr_num(&path, "ifindex")?).ok()?;
            let kind = kind(&path);
            let mac = attr(&path, "address")
                .filter(|m| kind != "loopback" && m.chars().any(|c| c != '0' && c != ':'));
            let mut addresses: Vec<Address> = v4
                .iter()
                .filter(|(n, _)| n.split(':').next() == Some(name.as_str()))
                .map(|(_, a)| a.clone())
                .collect();
            addresses.extend(
                v6.iter()
                    .filter(|(i, _)| *i == index)
                    .map(|(_, a)| a.clone()),
            );
            Some(Link {
                state: attr(&path, "operstate").unwrap_or_else(|| "unknown".into()),
                carrier: attr(&path, "carrier").map(|c| c == "1"),
                mtu: attr_num(&path, "mtu")
                    .and_then(|m| u32::try_from(m).ok())
                    .unwrap_or(0),
                mac,
                master: link_name(&path.join("master")),
                driver: link_name(&path.join("device/driver")),
                speed_mbps: attr(&path, "speed")
                    .and_then(|s| s.parse::<i64>().ok())
                    .and_then(|s| u64::try_from(s).ok())
                    .filter(|s| *s > 0),
                kind,
                name,
                index,
                addresses,
            })
        })
        .collect();
    out.sort_by_key(|l| l.index);
    Ok(out)
}

fn kind(path: &Path) -> String {
    let uevent = std::fs::read_to_string(path.join("uevent")).unwrap_or_default();
    if let Some(t) = uevent.lines().find_map(|l| l.strip_prefix("DEVTYPE=")) {
        return t.to_owned();
    }
    if path.join("wireless").is_dir() || path.join("phy80211").exists() {
        return "wlan".into();
    }
    match attr_num(path, "type") {
        Some(772) => "loopback".into(),
        Some(1) if path.join("device").exists() => "ethernet".into(),
        Some(1) => "virtual".into(),
        Some(65534) if path.join("tun_flags").exists() => "tun".into(),
        Some(t) => format!("arphrd {t}"),
        None => "unknown".into(),
    }
}

/// IPv4 addresses by interface label (`eth0`, `eth0:1`), from `getifaddrs`.
fn ipv4_addresses() -> Vec<(String, Address)> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    addrs
        .filter_map(|a| {
            let ip = a.address.as_ref()?.as_sockaddr_in()?.ip();
            let prefix = a
                .netmask
                .as_ref()
                .and_then(|m| m.as_sockaddr_in())
                .map_or(32, |m| u32::from(m.ip()).count_ones());
            let scope = if ip.is_loopback() {
                "host"
            } else if ip.is_link_local() {
                "link"
            } else {
                "global"
            };
            Some((
                a.interface_name,
                Address {
                    family: "inet",
                    address: ip.to_string(),
                    prefix: u8::try_from(prefix).unwrap_or(32),
                    scope,
                    flags: Vec::new(),
                },
            ))
        })
        .collect()
}

/// IPv6 addresses by interface index, from `/proc/net/if_inet6`
/// (`ADDR IFINDEX PREFIX SCOPE FLAGS NAME`, all hex).
fn ipv6_addresses(root: &Path) -> Vec<(u32, Address)> {
    let text = std::fs::read_to_string(root.join("proc/net/if_inet6")).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let addr = u128::from_str_radix(f.first()?, 16).ok()?;
            let index = u32::from_str_radix(f.get(1)?, 16).ok()?;
            let prefix = u8::from_str_radix(f.get(2)?, 16).ok()?;
            let scope = match u8::from_str_radix(f.get(3)?, 16).ok()? & 0xf0 {
                0x00 => "global",
                0x10 => "host",
                0x20 => "link",
                0x40 => "site",
                _ => "other",
            };
            let bits = u32::from_str_radix(f.get(4)?, 16).ok()?;
            let flags = [
                (0x01, "temporary"),
                (0x08, "dadfailed"),
                (0x20, "deprecated"),
                (0x40, "tentative"),
            ]
            .into_iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, n)| n)
            .chain((bits & 0x80 == 0).then_some("dynamic"))
            .collect();
            Some((
                index,
                Address {
                    family: "inet6",
                    address: std::net::Ipv6Addr::from(addr).to_string(),
                    prefix,
                    scope,
                    flags,
                },
            ))
        })
        .collect()
}

/// One radio kill switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rfkill {
    /// `rfkillN`'s number (what `rfkill unblock N` takes).
    pub id: u32,
    /// `wlan`, `bluetooth`, `wwan`, `nfc` …
    #[serde(rename = "type")]
    pub kind: String,
    /// The device (`phy0`, `hci0`).
    pub name: String,
    /// Blocked in software (`rfkill block`, airplane mode): the person can lift it.
    pub soft_blocked: bool,
    /// Blocked in hardware (a switch or key): software cannot lift it.
    pub hard_blocked: bool,
}

/// Every rfkill switch; empty when the machine has none.
pub fn rfkill(root: &Path) -> Vec<Rfkill> {
    let mut out: Vec<Rfkill> = entries(&root.join("sys/class/rfkill"))
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(n, p)| {
            Some(Rfkill {
                id: n.strip_prefix("rfkill")?.parse().ok()?,
                kind: attr(&p, "type").unwrap_or_default(),
                name: attr(&p, "name").unwrap_or_default(),
                soft_blocked: attr(&p, "soft").as_deref() == Some("1"),
                hard_blocked: attr(&p, "hard").as_deref() == Some("1"),
            })
        })
        .collect();
    out.sort_by_key(|r| r.id);
    out
}
