//! Routes as `ip route` and `ip -6 route` show them, from `/proc/net/route` (IPv4, the main
//! table only) and `/proc/net/ipv6_route`. That file lists every table without naming it: the
//! local table's entries (local and anycast addresses, the multicast `ff00::/8` routes), cached
//! routes and the kernel's null entry are left out, so on a machine without policy routing what
//! remains is what `ip -6 route` prints; with extra tables (wg-quick's 51820) their IPv6 routes
//! are listed too.
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use serde::Serialize;

use crate::machine::{MachineError, read};

/// One route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// `inet` or `inet6`.
    pub family: &'static str,
    /// `default`, or the destination with its prefix (`192.168.1.0/24`, `fd00::/64`).
    pub destination: String,
    /// The next hop, when the route goes through one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    /// The interface.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dev: Option<String>,
    /// Its metric (lower wins).
    pub metric: u32,
    /// `unreachable` for a reject route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
}

const RTF_GATEWAY: u32 = 0x0002;
const RTF_REJECT: u32 = 0x0200;
const RTF_ANYCAST: u32 = 0x0010_0000;
const RTF_CACHE: u32 = 0x0100_0000;
const RTF_LOCAL: u32 = 0x8000_0000;

/// IPv4 then IPv6 routes of this network namespace (see the module's note on tables).
pub fn routes(root: &Path) -> Result<Vec<Route>, MachineError> {
    let mut out = ipv4(&read(&root.join("proc/net/route"))?);
    // A kernel without IPv6 has no ipv6_route: then there are no IPv6 routes.
    if let Ok(text) = std::fs::read_to_string(root.join("proc/net/ipv6_route")) {
        out.extend(ipv6(&text));
    }
    Ok(out)
}

/// `Iface Destination Gateway Flags RefCnt Use Metric Mask …`, addresses as the kernel's
/// native-endian hex of the network-order word.
fn ipv4(text: &str) -> Vec<Route> {
    let addr = |h: &str| {
        u32::from_str_radix(h, 16)
            .ok()
            .map(|v| Ipv4Addr::from(v.to_ne_bytes()))
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let dest = addr(f.get(1)?)?;
            let gw = addr(f.get(2)?)?;
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            let metric = f.get(6)?.parse().ok()?;
            let mask = addr(f.get(7)?)?;
            let prefix = u32::from(mask).count_ones();
            Some(Route {
                family: "inet",
                destination: if prefix == 0 && dest.is_unspecified() {
                    "default".into()
                } else if prefix == 32 {
                    dest.to_string()
                } else {
                    format!("{dest}/{prefix}")
                },
                gateway: (flags & RTF_GATEWAY != 0).then(|| gw.to_string()),
                dev: f.first().filter(|d| **d != "*").map(|d| (*d).to_owned()),
                metric,
                kind: (flags & RTF_REJECT != 0).then_some("unreachable"),
            })
        })
        .collect()
}

/// `DEST DESTLEN SRC SRCLEN NEXTHOP METRIC REFCNT USE FLAGS DEV`, all hex.
fn ipv6(text: &str) -> Vec<Route> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let dest = Ipv6Addr::from(u128::from_str_radix(f.first()?, 16).ok()?);
            let len = u8::from_str_radix(f.get(1)?, 16).ok()?;
            let hop = Ipv6Addr::from(u128::from_str_radix(f.get(4)?, 16).ok()?);
            let metric = u32::from_str_radix(f.get(5)?, 16).ok()?;
            let flags = u32::from_str_radix(f.get(8)?, 16).ok()?;
            let dev = (*f.get(9)?).to_owned();
            let null_entry = flags & RTF_REJECT != 0 && metric == u32::MAX && dev == "lo";
            let local_table = flags & (RTF_LOCAL | RTF_ANYCAST) != 0
                || (len == 8 && dest.segments()[0] == 0xff00);
            if null_entry || local_table || flags & RTF_CACHE != 0 {
                return None;
            }
            Some(Route {
                family: "inet6",
                destination: if len == 0 {
                    "default".into()
                } else if len == 128 {
                    dest.to_string()
                } else {
                    format!("{dest}/{len}")
                },
                gateway: (!hop.is_unspecified()).then(|| hop.to_string()),
                dev: Some(dev),
                metric,
                kind: (flags & RTF_REJECT != 0).then_some("unreachable"),
            })
        })
        .collect()
}
