//! The network manager's view, over the system bus (zbus): NetworkManager
//! (`org.freedesktop.NetworkManager`: global state, connectivity, radio switches, each device's
//! state and active connection, the current access point's SSID, signal, frequency) or, when it
//! is not there, iwd (`net.connman.iwd`: each station's state, network and RSSI). Neither on
//! the bus is `not_available` naming both; no bus at all says so.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use zbus::{Connection, OwnedObjectPath, OwnedVariant};

use crate::machine::MachineError;

/// What the network manager reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wifi {
    /// `NetworkManager` or `iwd`.
    pub manager: &'static str,
    /// NetworkManager's global state (`connected_global`, `disconnected`, `asleep` …); for iwd,
    /// `connected` when a station is.
    pub state: String,
    /// NetworkManager's connectivity check (`full`, `limited`, `portal`, `none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connectivity: Option<&'static str>,
    /// Networking switched on in NetworkManager.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub networking_enabled: Option<bool>,
    /// Wi-Fi switched on in software.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireless_enabled: Option<bool>,
    /// Wi-Fi allowed by the hardware switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireless_hardware_enabled: Option<bool>,
    /// Its devices.
    pub devices: Vec<WifiDevice>,
}

/// One device the manager handles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WifiDevice {
    /// Interface name.
    pub interface: String,
    /// `wifi`, `ethernet`, `bridge`, `wireguard` …
    #[serde(rename = "type")]
    pub kind: String,
    /// `activated`, `disconnected`, `unavailable`, `need_auth`, `failed` … (iwd: its station
    /// state).
    pub state: String,
    /// The active connection's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// The Wi-Fi network it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<WifiNetwork>,
}

/// The current Wi-Fi network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WifiNetwork {
    /// Its SSID (lossy UTF-8).
    pub ssid: String,
    /// NetworkManager's signal strength, 0–100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal_percent: Option<u8>,
    /// iwd's RSSI, dBm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rssi_dbm: Option<i16>,
    /// Channel frequency, MHz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_mhz: Option<u32>,
    /// The access point's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bssid: Option<String>,
}

const NM: &str = "org.freedesktop.NetworkManager";
const IWD: &str = "net.connman.iwd";
const PATIENCE: Duration = Duration::from_secs(5);

/// NetworkManager's view, else iwd's. The bus is `DBUS_SYSTEM_BUS_ADDRESS` or the standard
/// socket.
pub async fn wifi() -> Result<Wifi, MachineError> {
    match tokio::time::timeout(PATIENCE, ask()).await {
        Ok(r) => r,
        Err(_) => Err(MachineError::not_available(format!(
            "the system bus or the network manager did not answer within {PATIENCE:?}"
        ))),
    }
}

async fn ask() -> Result<Wifi, MachineError> {
    let conn = Connection::system()
        .await
        .map_err(|e| MachineError::not_available(format!("no system bus to ask ({e})")))?;
    if has_owner(&conn, NM).await {
        return network_manager(&conn)
            .await
            .map_err(|source| MachineError::Bus {
                service: "NetworkManager",
                source,
            });
    }
    if has_owner(&conn, IWD).await {
        return iwd(&conn).await.map_err(|source| MachineError::Bus {
            service: "iwd",
            source,
        });
    }
    Err(MachineError::not_available(
        "neither NetworkManager nor iwd is running on the system bus",
    ))
}

async fn has_owner(conn: &Connection, name: &str) -> bool {
    let Ok(reply) = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus"),
            "NameHasOwner",
            &(name,),
        )
        .await
    else {
        return false;
    };
    reply.body().deserialize::<bool>().unwrap_or(false)
}

async fn get(
    conn: &Connection,
    dest: &str,
    path: &str,
    iface: &str,
    name: &str,
) -> zbus::Result<OwnedVariant> {
    conn.call_method(
        Some(dest),
        path,
        Some("org.freedesktop.DBus.Properties"),
        "Get",
        &(iface, name),
    )
    .await?
    .body()
    .deserialize::<OwnedVariant>()
}

/// A property of a type, `None` when absent or of another type.
async fn prop<T: TryFrom<OwnedVariant>>(
    conn: &Connection,
    dest: &str,
    path: &str,
    iface: &str,
    name: &str,
) -> Option<T> {
    T::try_from(get(conn, dest, path, iface, name).await.ok()?).ok()
}

async fn network_manager(conn: &Connection) -> zbus::Result<Wifi> {
    let root = "/org/freedesktop/NetworkManager";
    let state: u32 = u32::try_from(get(conn, NM, root, NM, "State").await?)?;
    let devices: Vec<OwnedObjectPath> = Vec::try_from(get(conn, NM, root, NM, "Devices").await?)?;
    let mut out = Vec::new();
    for d in &devices {
        let d = d.as_str();
        let dev_iface = "org.freedesktop.NetworkManager.Device";
        let kind: u32 = prop(conn, NM, d, dev_iface, "DeviceType")
            .await
            .unwrap_or(0);
        let dstate: u32 = prop(conn, NM, d, dev_iface, "State").await.unwrap_or(0);
        let active: Option<OwnedObjectPath> = prop(conn, NM, d, dev_iface, "ActiveConnection")
            .await
            .filter(|p: &OwnedObjectPath| p.as_str() != "/");
        let ac_iface = "org.freedesktop.NetworkManager.Connection.Active";
        let connection = match &active {
            Some(a) => prop::<String>(conn, NM, a.as_str(), ac_iface, "Id").await,
            None => None,
        };
        let mut network = None;
        if kind == 2 {
            // The access point in use: the wireless device says it; an active connection's
            // specific object is the same access point for Wi-Fi.
            let mut ap: Option<OwnedObjectPath> = prop(
                conn,
                NM,
                d,
                "org.freedesktop.NetworkManager.Device.Wireless",
                "ActiveAccessPoint",
            )
            .await;
            if ap.as_ref().is_none_or(|p| p.as_str() == "/")
                && let Some(a) = &active
            {
                ap = prop(conn, NM, a.as_str(), ac_iface, "SpecificObject").await;
            }
            if let Some(ap) = ap.filter(|p| p.as_str() != "/") {
                network = access_point(conn, ap.as_str()).await;
            }
        }
        out.push(WifiDevice {
            interface: prop(conn, NM, d, dev_iface, "Interface")
                .await
                .unwrap_or_default(),
            kind: device_type(kind).to_owned(),
            state: device_state(dstate).to_owned(),
            connection,
            network,
        });
    }
    Ok(Wifi {
        manager: "NetworkManager",
        state: nm_state(state).to_owned(),
        connectivity: prop::<u32>(conn, NM, root, NM, "Connectivity")
            .await
            .map(connectivity),
        networking_enabled: prop(conn, NM, root, NM, "NetworkingEnabled").await,
        wireless_enabled: prop(conn, NM, root, NM, "WirelessEnabled").await,
        wireless_hardware_enabled: prop(conn, NM, root, NM, "WirelessHardwareEnabled").await,
        devices: out,
    })
}

async fn access_point(conn: &Connection, ap: &str) -> Option<WifiNetwork> {
    let i = "org.freedesktop.NetworkManager.AccessPoint";
    let ssid: Vec<u8> = prop(conn, NM, ap, i, "Ssid").await?;
    Some(WifiNetwork {
        ssid: String::from_utf8_lossy(&ssid).into_owned(),
        signal_percent: prop(conn, NM, ap, i, "Strength").await,
        rssi_dbm: None,
        frequency_mhz: prop(conn, NM, ap, i, "Frequency").await,
        bssid: prop(conn, NM, ap, i, "HwAddress").await,
    })
}

type Managed = HashMap<OwnedObjectPath, HashMap<String, HashMap<String, OwnedVariant>>>;

async fn iwd(conn: &Connection) -> zbus::Result<Wifi> {
    let objects: Managed = conn
        .call_method(
            Some(IWD),
            "/",
            Some("org.freedesktop.DBus.ObjectManager"),
            "GetManagedObjects",
            &(),
        )
        .await?
        .body()
        .deserialize()?;
    let text = |o: &HashMap<String, OwnedVariant>, k: &str| {
        o.get(k)
            .and_then(|v| v.try_clone().ok())
            .and_then(|v| String::try_from(v).ok())
    };
    let mut devices = Vec::new();
    for (path, ifaces) in &objects {
        let Some(dev) = ifaces.get("net.connman.iwd.Device") else {
            continue;
        };
        let station = ifaces.get("net.connman.iwd.Station");
        let state = station
            .and_then(|s| text(s, "State"))
            .unwrap_or_else(|| "no station".into());
        let net_path = station
            .and_then(|s| s.get("ConnectedNetwork"))
            .and_then(|v| v.try_clone().ok())
            .and_then(|v| OwnedObjectPath::try_from(v).ok());
        let mut network = None;
        if let Some(np) = net_path
            && let Some(name) = objects
                .get(&np)
                .and_then(|n| n.get("net.connman.iwd.Network"))
                .and_then(|n| text(n, "Name"))
        {
            let diag: HashMap<String, OwnedVariant> = match conn
                .call_method(
                    Some(IWD),
                    path.as_str(),
                    Some("net.connman.iwd.StationDiagnostic"),
                    "GetDiagnostics",
                    &(),
                )
                .await
            {
                Ok(r) => r.body().deserialize().unwrap_or_default(),
                Err(_) => HashMap::new(),
            };
            let take = |k: &str| diag.get(k).and_then(|v| v.try_clone().ok());
            network = Some(WifiNetwork {
                ssid: name,
                signal_percent: None,
                rssi_dbm: take("RSSI").and_then(|v| i16::try_from(v).ok()),
                frequency_mhz: take("Frequency").and_then(|v| u32::try_from(v).ok()),
                bssid: take("ConnectedBss").and_then(|v| String::try_from(v).ok()),
            });
        }
        devices.push(WifiDevice {
            interface: text(dev, "Name").unwrap_or_default(),
            kind: "wifi".into(),
            state,
            connection: network.as_ref().map(|n| n.ssid.clone()),
            network,
        });
    }
    devices.sort_by(|a, b| a.interface.cmp(&b.interface));
    let connected = devices.iter().any(|d| d.state == "connected");
    Ok(Wifi {
        manager: "iwd",
        state: if connected {
            "connected"
        } else {
            "disconnected"
        }
        .into(),
        connectivity: None,
        networking_enabled: None,
        wireless_enabled: None,
        wireless_hardware_enabled: None,
        devices,
    })
}

fn nm_state(s: u32) -> &'static str {
    match s {
        10 => "asleep",
        20 => "disconnected",
        30 => "disconnecting",
        40 => "connecting",
        50 => "connected_local",
        60 => "connected_site",
        70 => "connected_global",
        _ => "unknown",
    }
}

fn connectivity(c: u32) -> &'static str {
    match c {
        1 => "none",
        2 => "portal",
        3 => "limited",
        4 => "full",
        _ => "unknown",
    }
}

fn device_type(t: u32) -> &'static str {
    match t {
        1 => "ethernet",
        2 => "wifi",
        5 => "bluetooth",
        8 => "modem",
        10 => "bond",
        11 => "vlan",
        13 => "bridge",
        14 => "generic",
        16 => "tun",
        20 => "veth",
        22 => "dummy",
        23 => "ppp",
        29 => "wireguard",
        30 => "wifi-p2p",
        32 => "loopback",
        _ => "other",
    }
}

fn device_state(s: u32) -> &'static str {
    match s {
        10 => "unmanaged",
        20 => "unavailable",
        30 => "disconnected",
        40 => "prepare",
        50 => "config",
        60 => "need_auth",
        70 => "ip_config",
        80 => "ip_check",
        90 => "secondaries",
        100 => "activated",
        110 => "deactivating",
        120 => "failed",
        _ => "unknown",
    }
}
