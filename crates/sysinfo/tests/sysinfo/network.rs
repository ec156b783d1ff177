//! `network`: this machine's links and routes compared with `ip -j` (the e2e suite does the
//! same inside a network namespace it builds), resolver detection on trees in the shapes
//! systemd-resolved, NetworkManager and a static setup leave, and rfkill.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};
use archgate_sysinfo::network;
use serde_json::Value;

use crate::write;

async fn ip(args: &[&str]) -> Value {
    let permit = Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")],
        ..ExecConfig::default()
    });
    let out = permit
        .run(CommandSpec::new("ip").args(args.iter().copied()))
        .await
        .unwrap();
    assert!(out.success(), "ip {args:?}: {}", out.stderr_lossy());
    serde_json::from_str(&out.stdout_lossy()).unwrap()
}

/// (name, index, mtu, state, mac, {(family, address, prefix)}) for each `ip -j addr` entry.
type LinkKey = (
    String,
    u64,
    u64,
    String,
    Option<String>,
    BTreeSet<(String, String, u64)>,
);

pub fn ip_links(v: &Value) -> Vec<LinkKey> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let mac = l["address"]
                .as_str()
                .filter(|m| l["link_type"] != "loopback" && m.chars().any(|c| c != '0' && c != ':'))
                .map(str::to_owned);
            (
                l["ifname"].as_str().unwrap().to_owned(),
                l["ifindex"].as_u64().unwrap(),
                l["mtu"].as_u64().unwrap(),
                l["operstate"].as_str().unwrap().to_ascii_lowercase(),
                mac,
                l["addr_info"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            a["family"].as_str().unwrap().to_owned(),
                            a["local"].as_str().unwrap().to_owned(),
                            a["prefixlen"].as_u64().unwrap(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

pub fn our_links(v: &Value) -> Vec<LinkKey> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["index"].as_u64().unwrap(),
                l["mtu"].as_u64().unwrap(),
                l["state"].as_str().unwrap().to_owned(),
                l["mac"].as_str().map(str::to_owned),
                l["addresses"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            a["family"].as_str().unwrap().to_owned(),
                            a["address"].as_str().unwrap().to_owned(),
                            a["prefix"].as_u64().unwrap(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// (family, destination, gateway, dev, metric) of `ip -j route` / `ip -j -6 route` entries.
pub type RouteKey = (String, String, Option<String>, Option<String>, u64);

pub fn ip_routes(v4: &Value, v6: &Value) -> BTreeSet<RouteKey> {
    let mut out = BTreeSet::new();
    for (family, v) in [("inet", v4), ("inet6", v6)] {
        for r in v.as_array().unwrap() {
            out.insert((
                family.to_owned(),
                r["dst"].as_str().unwrap().to_owned(),
                r["gateway"].as_str().map(str::to_owned),
                r["dev"].as_str().map(str::to_owned),
                r["metric"].as_u64().unwrap_or(0),
            ));
        }
    }
    out
}

pub fn our_routes(v: &Value) -> BTreeSet<RouteKey> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["family"].as_str().unwrap().to_owned(),
                r["destination"].as_str().unwrap().to_owned(),
                r["gateway"].as_str().map(str::to_owned),
                r["dev"].as_str().map(str::to_owned),
                r["metric"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn this_machines_links_and_addresses_agree_with_ip() {
    let ours = serde_json::to_value(network::links(Path::new("/")).unwrap()).unwrap();
    let theirs = ip(&["-j", "addr"]).await;
    assert_eq!(our_links(&ours), ip_links(&theirs));
    assert!(
        ours.as_array()
            .unwrap()
            .iter()
            .any(|l| l["kind"] == "loopback"),
        "{ours}"
    );
}

#[tokio::test]
async fn this_machines_routes_agree_with_ip() {
    let ours = serde_json::to_value(network::routes(Path::new("/")).unwrap()).unwrap();
    let theirs = ip_routes(
        &ip(&["-j", "route"]).await,
        &ip(&["-j", "-6", "route"]).await,
    );
    assert_eq!(our_routes(&ours), theirs);
}

#[test]
fn the_resolver_in_use_is_named_from_its_link_and_header() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    // systemd-resolved's stub: the link, the stub address, the upstream servers behind it.
    write(
        r,
        "run/systemd/resolve/stub-resolv.conf",
        "# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\n\
         nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n",
    );
    write(
        r,
        "run/systemd/resolve/resolv.conf",
        "# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\n\
         nameserver 192.168.1.1\nnameserver fd00::1\nsearch lan\n",
    );
    std::fs::create_dir_all(r.join("etc")).unwrap();
    std::os::unix::fs::symlink(
        "../run/systemd/resolve/stub-resolv.conf",
        r.join("etc/resolv.conf"),
    )
    .unwrap();
    write(
        r,
        "etc/nsswitch.conf",
        "passwd: files systemd\nhosts: mymachines resolve [!UNAVAIL=return] files myhostname dns\n",
    );
    let d = network::dns(r).unwrap();
    assert_eq!(d.resolver, "systemd-resolved (stub)");
    assert_eq!(d.nameservers, ["127.0.0.53"]);
    assert_eq!(
        d.upstream.as_deref(),
        Some(&["192.168.1.1".to_owned(), "fd00::1".to_owned()][..])
    );
    assert_eq!(d.search, ["lan"]);
    assert_eq!(
        d.resolv_conf_link.as_deref(),
        Some("../run/systemd/resolve/stub-resolv.conf")
    );
    assert!(d.nsswitch_hosts.unwrap().starts_with("mymachines resolve"));

    // NetworkManager writing the file itself.
    std::fs::remove_file(r.join("etc/resolv.conf")).unwrap();
    write(
        r,
        "etc/resolv.conf",
        "# Generated by NetworkManager\nsearch home\nnameserver 10.0.0.1\nnameserver 10.0.0.2\n",
    );
    let d = network::dns(r).unwrap();
    assert_eq!(d.resolver, "NetworkManager");
    assert_eq!(d.nameservers, ["10.0.0.1", "10.0.0.2"]);
    assert_eq!(d.upstream, None);

    // A hand-written file; a local caching resolver.
    write(r, "etc/resolv.conf", "nameserver 9.9.9.9\n");
    assert_eq!(network::dns(r).unwrap().resolver, "static file");
    write(r, "etc/resolv.conf", "nameserver ::1\n");
    assert_eq!(network::dns(r).unwrap().resolver, "a local resolver");

    // A link to a file nobody writes any more: not an empty success.
    std::fs::remove_file(r.join("etc/resolv.conf")).unwrap();
    std::os::unix::fs::symlink("/run/NetworkManager/resolv.conf", r.join("etc/resolv.conf"))
        .unwrap();
    let e = network::dns(r).unwrap_err();
    assert_eq!(e.kind(), "not_available");
    assert!(
        e.to_string().contains("/run/NetworkManager/resolv.conf"),
        "{e}"
    );

    // This machine: the nameservers of its own /etc/resolv.conf, in order.
    let real = network::dns(Path::new("/")).unwrap();
    let want: Vec<String> = std::fs::read_to_string("/etc/resolv.conf")
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .map(|s| s.trim().to_owned())
        .collect();
    assert_eq!(real.nameservers, want);
}

#[test]
fn rfkill_switches_say_soft_from_hard() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    for (n, t, name, soft, hard) in [
        ("rfkill1", "bluetooth", "hci0", "0", "0"),
        ("rfkill0", "wlan", "phy0", "1", "0"),
        ("rfkill12", "wwan", "mhi0", "0", "1"),
    ] {
        write(r, &format!("sys/class/rfkill/{n}/type"), &format!("{t}\n"));
        write(
            r,
            &format!("sys/class/rfkill/{n}/name"),
            &format!("{name}\n"),
        );
        write(
            r,
            &format!("sys/class/rfkill/{n}/soft"),
            &format!("{soft}\n"),
        );
        write(
            r,
            &format!("sys/class/rfkill/{n}/hard"),
            &format!("{hard}\n"),
        );
    }
    let v = network::rfkill(r);
    let ids: Vec<u32> = v.iter().map(|x| x.id).collect();
    assert_eq!(ids, [0, 1, 12]);
    assert_eq!(
        (v[0].kind.as_str(), v[0].soft_blocked, v[0].hard_blocked),
        ("wlan", true, false)
    );
    assert_eq!(
        (v[2].kind.as_str(), v[2].soft_blocked, v[2].hard_blocked),
        ("wwan", false, true)
    );
    // This machine: one entry per rfkill device.
    let real = network::rfkill(Path::new("/"));
    let n = std::fs::read_dir("/sys/class/rfkill")
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(real.len(), n);
}
