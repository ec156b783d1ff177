//! `network wifi` through the real binary against python-dbusmock on a private bus played as the
//! system bus: NetworkManager's template (a Wi-Fi device on an access point, an ethernet device,
//! then the Wi-Fi gone), an iwd station built from iwd's documented objects, no manager, no bus.

use std::process::{Child, Command, Stdio};

use super::machine::{call, err, ok};
use crate::support::{Env, wait_for};

struct Bus {
    daemon: Child,
    mock: Option<Child>,
    address: String,
    _dir: tempfile::TempDir,
}

impl Drop for Bus {
    fn drop(&mut self) {
        if let Some(m) = &mut self.mock {
            let _ = m.kill();
            let _ = m.wait();
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

const PYTHON: &str = "/usr/bin/python3";

fn python(address: &str, script: &str) -> String {
    let out = Command::new(PYTHON)
        .args(["-c", script, address])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A private bus (a session-configured dbus-daemon on a socket of its own) with `mock` — python
/// -m dbusmock and its arguments — on it as the system bus, once it owns `name`.
fn mock_bus(mock_args: &[&str], name: &str) -> Bus {
    let dir = tempfile::tempdir().unwrap();
    let address = format!("unix:path={}", dir.path().join("bus").display());
    let daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", &format!("--address={address}")])
        .stdout(Stdio::null())
        .spawn()
        .expect("dbus-daemon (scripts/test-deps.sh installs dbus)");
    wait_for("dbus-daemon to start", || {
        dir.path().join("bus").exists().then_some(())
    });
    let mock = Command::new(PYTHON)
        .args(["-m", "dbusmock", "--system"])
        .args(mock_args)
        .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 -m dbusmock (scripts/test-deps.sh installs python3-dbusmock)");
    let mut bus = Bus {
        daemon,
        mock: Some(mock),
        address,
        _dir: dir,
    };
    let probe = format!(
        "import dbus,sys; b=dbus.bus.BusConnection(sys.argv[1]); print(b.name_has_owner('{name}'))"
    );
    wait_for("the mock to take its name", || {
        if let Some(Ok(Some(s))) = bus.mock.as_mut().map(Child::try_wait) {
            panic!("dbusmock exited: {s}");
        }
        (python(&bus.address, &probe) == "True").then_some(())
    });
    bus
}

const SETUP: &str = r#"
import dbus, sys
b = dbus.bus.BusConnection(sys.argv[1])
m = dbus.Interface(b.get_object('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager'), 'org.freedesktop.DBus.Mock')
wifi = m.AddWiFiDevice('mock_wlan0', 'wlan0', 30)
ap = m.AddAccessPoint(wifi, 'ap1', 'Café 5G', '02:11:22:33:44:55', dbus.UInt32(2), dbus.UInt32(5180), dbus.UInt32(866000), dbus.Byte(72), dbus.UInt32(0))
con = m.AddWiFiConnection(wifi, 'con1', 'Café 5G', 'wpa-psk')
m.AddActiveConnection([wifi], con, ap, 'active1', dbus.UInt32(2))
m.AddEthernetDevice('mock_eth0', 'eth0', 20)
m.SetConnectivity(dbus.UInt32(3))
print(wifi)
"#;

#[test]
fn network_manager_state_and_the_current_wifi_come_from_the_bus() {
    let mut bus = mock_bus(
        &["--template", "networkmanager"],
        "org.freedesktop.NetworkManager",
    );
    let wifi_path = python(&bus.address, SETUP);
    let env = Env::new();
    let bus_env = [("DBUS_SYSTEM_BUS_ADDRESS", bus.address.as_str())];
    let v = call(&env, None, &bus_env, "network", r#"{"section":"wifi"}"#);
    let w = ok(&v);
    assert_eq!(w["manager"], "NetworkManager");
    assert_eq!(w["state"], "connected_global");
    assert_eq!(w["connectivity"], "limited");
    assert_eq!(w["wireless_enabled"], true);
    let devices = w["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{w}");
    let wlan = &devices[0];
    assert_eq!(wlan["interface"], "wlan0");
    assert_eq!(wlan["type"], "wifi");
    assert_eq!(wlan["state"], "activated");
    assert_eq!(wlan["connection"], "Café 5G");
    assert_eq!(wlan["network"]["ssid"], "Café 5G");
    assert_eq!(wlan["network"]["signal_percent"], 72);
    assert_eq!(wlan["network"]["frequency_mhz"], 5180);
    assert_eq!(wlan["network"]["bssid"], "02:11:22:33:44:55");
    let eth = &devices[1];
    assert_eq!(
        (
            eth["interface"].as_str(),
            eth["type"].as_str(),
            eth["state"].as_str()
        ),
        (Some("eth0"), Some("ethernet"), Some("unavailable"))
    );
    assert!(eth.get("network").is_none());

    // "Why is my Wi-Fi gone": the device disconnects, the radio is switched off.
    python(
        &bus.address,
        &format!(
            "import dbus,sys; b=dbus.bus.BusConnection(sys.argv[1]); m=dbus.Interface(b.get_object('org.freedesktop.NetworkManager','/org/freedesktop/NetworkManager'),'org.freedesktop.DBus.Mock'); m.SetDeviceDisconnected('{wifi_path}'); m.SetProperty('/org/freedesktop/NetworkManager','org.freedesktop.NetworkManager','WirelessEnabled',dbus.Boolean(False,variant_level=1)); m.SetGlobalConnectionState(dbus.UInt32(20))"
        ),
    );
    let v = call(&env, None, &bus_env, "network", r#"{"section":"wifi"}"#);
    let w = ok(&v);
    assert_eq!(w["state"], "disconnected");
    assert_eq!(w["wireless_enabled"], false);
    assert_eq!(w["devices"][0]["state"], "disconnected");
    assert!(w["devices"][0].get("network").is_none(), "{w}");
    assert!(w["devices"][0].get("connection").is_none(), "{w}");

    // NetworkManager gone: not an empty success.
    let mut m = bus.mock.take().unwrap();
    m.kill().unwrap();
    m.wait().unwrap();
    let v = call(&env, None, &bus_env, "network", r#"{"section":"wifi"}"#);
    let e = err(&v);
    assert_eq!(e["kind"], "not_available");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("neither NetworkManager nor iwd"),
        "{e}"
    );
    // No bus at all says so, and the other sections still answer in the all-sections report.
    let nowhere = [(
        "DBUS_SYSTEM_BUS_ADDRESS",
        "unix:path=/nonexistent/archgate-bus",
    )];
    let v = call(&env, None, &nowhere, "network", r#"{"section":"wifi"}"#);
    let e = err(&v);
    assert_eq!(e["kind"], "not_available");
    assert!(
        e["message"].as_str().unwrap().contains("no system bus"),
        "{e}"
    );
    let v = call(&env, None, &nowhere, "network", "{}");
    let all = ok(&v);
    assert_eq!(all["wifi"]["error"]["kind"], "not_available");
    assert!(all["links"].is_array(), "{all}");

    let log = std::fs::read_to_string(env.state_dir().join("activity.jsonl")).unwrap();
    assert!(!log.contains("Café") && !log.contains("02:11:22"), "{log}");
}

/// iwd's objects as its D-Bus API documents them (our own values): an adapter's device with a
/// station connected to a network, and the station's diagnostics.
const IWD_SETUP: &str = r#"
import dbus, sys
b = dbus.bus.BusConnection(sys.argv[1])
mock = lambda p: dbus.Interface(b.get_object('net.connman.iwd', p), 'org.freedesktop.DBus.Mock')
dev = '/net/connman/iwd/0/4'
net = dev + '/486f6d65_psk'
mock('/').AddObject(dev, 'net.connman.iwd.Device', {'Name': 'wlan0', 'Powered': True, 'Mode': 'station'}, [])
d = mock(dev)
d.AddProperties('net.connman.iwd.Station', {'State': 'connected', 'ConnectedNetwork': dbus.ObjectPath(net), 'Scanning': False})
d.AddMethod('net.connman.iwd.StationDiagnostic', 'GetDiagnostics', '', 'a{sv}',
            'ret = {"RSSI": dbus.Int16(-58, variant_level=1), "Frequency": dbus.UInt32(2412, variant_level=1), "ConnectedBss": dbus.String("02:aa:bb:cc:dd:ee", variant_level=1)}')
mock('/').AddObject(net, 'net.connman.iwd.Network', {'Name': 'Home', 'Connected': True, 'Device': dbus.ObjectPath(dev), 'Type': 'psk'}, [])
"#;

#[test]
fn without_network_manager_iwd_answers_with_its_station_and_rssi() {
    let bus = mock_bus(
        &["-m", "net.connman.iwd", "/", "net.connman.iwd.HttpServer"],
        "net.connman.iwd",
    );
    python(&bus.address, IWD_SETUP);
    let env = Env::new();
    let v = call(
        &env,
        None,
        &[("DBUS_SYSTEM_BUS_ADDRESS", bus.address.as_str())],
        "network",
        r#"{"section":"wifi"}"#,
    );
    let w = ok(&v);
    assert_eq!(w["manager"], "iwd");
    assert_eq!(w["state"], "connected");
    let d = &w["devices"][0];
    assert_eq!(d["interface"], "wlan0");
    assert_eq!(d["state"], "connected");
    assert_eq!(d["network"]["ssid"], "Home");
    assert_eq!(d["network"]["rssi_dbm"], -58);
    assert_eq!(d["network"]["frequency_mhz"], 2412);
    assert_eq!(d["network"]["bssid"], "02:aa:bb:cc:dd:ee");
    assert_eq!(w["devices"].as_array().unwrap().len(), 1, "{w}");
}
