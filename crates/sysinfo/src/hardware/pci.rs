//! PCI devices from `/sys/bus/pci/devices`: ids, class, the kernel driver bound now (the
//! `driver` link), and every module that declares it can drive the device — the device's
//! `modalias` matched against `modules.alias` of the running kernel, what `lspci -k` calls
//! "Kernel modules". Names come from `pci.ids` (hwdata on Arch, pciutils on Debian).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::machine::{MachineError, attr, entries, kernel_release, link_name};

/// One PCI function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PciDevice {
    /// Domain:bus:device.function (`0000:01:00.0`), as `lspci -D` prints it.
    pub slot: String,
    /// Class, subclass and programming interface, 6 hex digits (`030000`).
    pub class: String,
    /// The class in words from pci.ids (`VGA compatible controller`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    /// `vendor:device`, 4 hex digits each (`1002:73bf`).
    pub id: String,
    /// Vendor name from pci.ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Device name from pci.ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The kernel driver bound to it now; absent when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Modules whose aliases match the device (the alternatives, the one in use included).
    /// Absent when the running kernel's `modules.alias` is not there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modules: Option<Vec<String>>,
    /// The firmware's boot display (`boot_vga`), for display controllers.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub boot_vga: bool,
}

/// Every PCI device. `not_available` when the machine has no PCI bus in sysfs.
pub fn pci_devices(root: &Path) -> Result<Vec<PciDevice>, MachineError> {
    devices(root, |_| true)
}

/// The display controllers (class 03: VGA, 3D, display).
pub(crate) fn gpus(root: &Path) -> Result<Vec<PciDevice>, MachineError> {
    devices(root, |class| class.starts_with("03"))
}

fn devices(root: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PciDevice>, MachineError> {
    let dir = root.join("sys/bus/pci/devices");
    let list = entries(&dir).ok_or_else(|| {
        MachineError::not_available("no PCI bus on this machine (/sys/bus/pci/devices is absent)")
    })?;
    let mut raw = Vec::new();
    for (slot, path) in list {
        let Some(class) = attr(&path, "class") else {
            continue;
        };
        let class = class.trim_start_matches("0x").to_ascii_lowercase();
        if !keep(&class) {
            continue;
        }
        let hex4 = |name| {
            attr(&path, name)
                .map(|v| v.trim_start_matches("0x").to_ascii_lowercase())
                .unwrap_or_default()
        };
        raw.push((slot, path.clone(), class, hex4("vendor"), hex4("device")));
    }
    let ids = read_ids(root, PCI_IDS);
    let aliases = Aliases::load(root, "pci:");
    Ok(raw
        .into_iter()
        .map(|(slot, path, class, vendor, device)| {
            let names = ids.as_ref().map(|t| t.names(&vendor, &device, &class));
            let (vendor_name, device_name, class_name) = names.unwrap_or_default();
            PciDevice {
                id: format!("{vendor}:{device}"),
                slot,
                class_name,
                vendor: vendor_name,
                device: device_name,
                driver: link_name(&path.join("driver")),
                modules: aliases
                    .as_ref()
                    .map(|a| attr(&path, "modalias").map_or_else(Vec::new, |m| a.matching(&m))),
                boot_vga: attr(&path, "boot_vga").as_deref() == Some("1"),
                class,
            }
        })
        .collect())
}

pub(crate) const PCI_IDS: &[&str] = &[
    "usr/share/hwdata/pci.ids",
    "usr/share/misc/pci.ids",
    "usr/share/pci.ids",
];

/// The first ID database of `candidates` that exists under `root`.
pub(crate) fn read_ids(root: &Path, candidates: &[&str]) -> Option<IdTable> {
    candidates
        .iter()
        .find_map(|c| std::fs::read(root.join(c)).ok())
        .map(|b| IdTable::parse(&String::from_utf8_lossy(&b)))
}

/// `pci.ids` / `usb.ids`: vendors with their devices, and (pci.ids) classes with subclasses.
#[derive(Default)]
pub(crate) struct IdTable {
    vendors: HashMap<String, (String, HashMap<String, String>)>,
    classes: HashMap<String, (String, HashMap<String, String>)>,
}

impl IdTable {
    fn parse(text: &str) -> IdTable {
        let mut t = IdTable::default();
        // Which table the indented lines below belong to, and under which key.
        let mut current: Option<(bool, String)> = None;
        for line in text.lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("C ") {
                let (id, name) = split_id(rest);
                t.classes
                    .insert(id.clone(), (name.to_owned(), HashMap::new()));
                current = Some((true, id));
            } else if !line.starts_with('\t') {
                let (id, name) = split_id(line);
                // Sections other than vendors and classes (usb.ids' `AT`, `HID` …) start with
                // a word, not 4 hex digits: they end the vendor list for our purposes.
                if id.len() == 4 && id.chars().all(|c| c.is_ascii_hexdigit()) {
                    t.vendors
                        .insert(id.clone(), (name.to_owned(), HashMap::new()));
                    current = Some((false, id));
                } else {
                    current = None;
                }
            } else if let Some(rest) = line.strip_prefix('\t') {
                if rest.starts_with('\t') {
                    continue; // subsystems and programming interfaces
                }
                let Some((is_class, key)) = &current else {
                    continue;
                };
                let (id, name) = split_id(rest);
                let table = if *is_class {
                    &mut t.classes
                } else {
                    &mut t.vendors
                };
                if let Some((_, sub)) = table.get_mut(key) {
                    sub.insert(id, name.to_owned());
                }
            }
        }
        t
    }

    /// Vendor, device and (for a 6-digit PCI class) class names.
    fn names(
        &self,
        vendor: &str,
        device: &str,
        class: &str,
    ) -> (Option<String>, Option<String>, Option<String>) {
        let v = self.vendors.get(vendor);
        let class_name = (class.len() >= 4)
            .then(|| self.classes.get(&class[..2]))
            .flatten()
            .map(|(name, subs)| subs.get(&class[2..4]).unwrap_or(name).clone());
        (
            v.map(|(n, _)| n.clone()),
            v.and_then(|(_, d)| d.get(device).cloned()),
            class_name,
        )
    }

    /// Vendor and product names (usb.ids).
    pub(crate) fn vendor_product(
        &self,
        vendor: &str,
        product: &str,
    ) -> (Option<String>, Option<String>) {
        let (v, d, _) = self.names(vendor, product, "");
        (v, d)
    }
}

fn split_id(s: &str) -> (String, &str) {
    let (id, name) = s.split_once("  ").unwrap_or((s, ""));
    (id.trim().to_ascii_lowercase(), name.trim())
}

/// The aliases of the running kernel's modules for one bus (`pci:`, `usb:`).
pub(crate) struct Aliases {
    rules: Vec<(String, String)>,
}

impl Aliases {
    /// `None` when the running kernel has no `modules.alias` under `root` (a container, a
    /// kernel whose modules were removed by an update not yet rebooted into).
    pub(crate) fn load(root: &Path, bus: &str) -> Option<Aliases> {
        let release = kernel_release(root)?;
        let file = ["usr/lib/modules", "lib/modules"]
            .iter()
            .map(|d| root.join(d).join(&release).join("modules.alias"))
            .find(|p: &PathBuf| p.is_file())?;
        let text = std::fs::read_to_string(file).ok()?;
        let rules = text
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix("alias ")?;
                let (pattern, module) = rest.rsplit_once(' ')?;
                pattern
                    .starts_with(bus)
                    .then(|| (pattern.to_owned(), module.to_owned()))
            })
            .collect();
        Some(Aliases { rules })
    }

    /// The modules whose alias patterns match `modalias`, sorted, each once.
    pub(crate) fn matching(&self, modalias: &str) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .rules
            .iter()
            .filter(|(p, _)| fnmatch(p.as_bytes(), modalias.as_bytes()))
            .map(|(_, m)| m.as_str())
            .collect();
        set.into_iter().map(str::to_owned).collect()
    }
}

/// Shell-style matching as kmod does it for aliases: `*`, `?`, `[...]` (ranges, `!`/`^`).
pub fn fnmatch(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class(&p[pi..], s[si])
                        && ok
                    {
                        pi += next;
                        si += 1;
                        continue;
                    }
                }
                c if c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

/// A bracket expression at the start of `p`: whether `c` is in it, and its length.
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let a = *p.get(i)?;
        if a == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|b| *b != b']') {
            let b = p[i + 2];
            hit |= a <= c && c <= b;
            i += 3;
        } else {
            hit |= a == c;
            i += 1;
        }
    }
}
