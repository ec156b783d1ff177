//! USB devices from `/sys/bus/usb/devices`: bus and device numbers (as `lsusb` prints them),
//! ids, the names the device gives (or usb.ids' names), speed, and the drivers bound to its
//! interfaces.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::pci::read_ids;
use crate::machine::{MachineError, attr, attr_num, entries, link_name};

/// One USB device (root hubs included, as `lsusb` lists them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsbDevice {
    /// Bus number.
    pub bus: u32,
    /// Device number on the bus.
    pub device: u32,
    /// `vendor:product`, 4 hex digits each (`046d:c52b`).
    pub id: String,
    /// The manufacturer string the device reports, else usb.ids' vendor name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The product string the device reports, else usb.ids' product name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// Negotiated speed in Mbit/s (1.5, 12, 480, 5000 …), as sysfs gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<String>,
    /// The drivers bound to its interfaces (`usbhid`, `btusb`, `hub`).
    pub drivers: Vec<String>,
}

const USB_IDS: &[&str] = &[
    "usr/share/hwdata/usb.ids",
    "usr/share/misc/usb.ids",
    "var/lib/usbutils/usb.ids",
];

/// Every USB device, by bus and device number. `not_available` when there is no USB bus.
pub fn usb_devices(root: &Path) -> Result<Vec<UsbDevice>, MachineError> {
    let dir = root.join("sys/bus/usb/devices");
    let list = entries(&dir).ok_or_else(|| {
        MachineError::not_available("no USB bus on this machine (/sys/bus/usb/devices is absent)")
    })?;
    let ids = read_ids(root, USB_IDS);
    let mut out = Vec::new();
    for (name, path) in &list {
        if name.contains(':') {
            continue; // an interface, not a device
        }
        let (Some(bus), Some(device)) = (attr_num(path, "busnum"), attr_num(path, "devnum")) else {
            continue;
        };
        let hex = |a| attr(path, a).unwrap_or_default().to_ascii_lowercase();
        let (vid, pid) = (hex("idVendor"), hex("idProduct"));
        let (id_vendor, id_product) = ids
            .as_ref()
            .map(|t| t.vendor_product(&vid, &pid))
            .unwrap_or_default();
        let prefix = format!("{name}:");
        let drivers: BTreeSet<String> = list
            .iter()
            .filter(|(n, _)| n.starts_with(&prefix))
            .filter_map(|(_, p)| link_name(&p.join("driver")))
            .collect();
        out.push(UsbDevice {
            bus: u32::try_from(bus).unwrap_or(u32::MAX),
            device: u32::try_from(device).unwrap_or(u32::MAX),
            id: format!("{vid}:{pid}"),
            vendor: attr(path, "manufacturer").or(id_vendor),
            product: attr(path, "product").or(id_product),
            speed_mbps: attr(path, "speed"),
            drivers: drivers.into_iter().collect(),
        });
    }
    out.sort_by_key(|d| (d.bus, d.device));
    Ok(out)
}
