//! The `hardware` diagnostics, one section at a time: CPU and microcode, PCI devices and GPUs
//! with the driver in use and the modules that could drive them, USB devices, loaded kernel
//! modules, firmware (boot mode, Secure Boot, DMI), temperatures and fans (hwmon), block devices
//! with filesystem, mounts and free space, and SMART health from `smartctl`.
//!
//! Everything but `smart` is read in Rust from `/proc`, `/sys`, `/run/udev/data` and the ID
//! databases (`pci.ids`, `usb.ids`, `modules.alias`) under a root (`/` on a real machine).
//! `smart` runs `smartctl` once per disk through the caller's permit, never elevated.

mod block;
mod pci;
mod sensors;
mod usb;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::machine::{MachineError, attr, entries, read};

pub use block::{BlockDevice, Mount, Partition, SmartDisk, parse_smart, smart, smart_commands};
pub use pci::{PciDevice, fnmatch, pci_devices};
pub use sensors::{Fan, Sensors, Temperature, sensors};
pub use usb::{UsbDevice, usb_devices};

/// One part of the hardware report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Section {
    /// CPU model, topology, microcode, frequency scaling, vulnerabilities.
    Cpu,
    /// Display controllers (PCI class 03) with driver and alternatives.
    Gpu,
    /// Every PCI device with driver and alternatives.
    Pci,
    /// USB devices with the drivers bound to their interfaces.
    Usb,
    /// Loaded kernel modules and the kernel's taint.
    Modules,
    /// Boot mode, Secure Boot, DMI (vendor, product, BIOS).
    Firmware,
    /// hwmon temperatures and fans.
    Temperatures,
    /// Disks and partitions: filesystem, mounts, free space.
    Block,
    /// SMART health from `smartctl` (what it answers without privilege).
    Smart,
}

impl Section {
    /// The section's name as arguments spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Cpu => "cpu",
            Section::Gpu => "gpu",
            Section::Pci => "pci",
            Section::Usb => "usb",
            Section::Modules => "modules",
            Section::Firmware => "firmware",
            Section::Temperatures => "temperatures",
            Section::Block => "block",
            Section::Smart => "smart",
        }
    }
}

/// Reads one section other than `smart` (which runs a program: see [`smart`]).
pub async fn read_section(
    section: Section,
    root: &Path,
    statvfs_timeout: std::time::Duration,
) -> Result<serde_json::Value, MachineError> {
    fn json(v: impl Serialize) -> Result<serde_json::Value, MachineError> {
        Ok(serde_json::to_value(v).unwrap_or(serde_json::Value::Null))
    }
    match section {
        Section::Cpu => json(cpu(root)?),
        Section::Gpu => json(pci::gpus(root)?),
        Section::Pci => json(pci_devices(root)?),
        Section::Usb => json(usb_devices(root)?),
        Section::Modules => json(modules(root)?),
        Section::Firmware => json(firmware(root)),
        Section::Temperatures => json(sensors(root)),
        Section::Block => json(block::block_devices(root, statvfs_timeout).await?),
        Section::Smart => Err(MachineError::Invalid {
            what: "the smart section runs smartctl: use hardware::smart".into(),
        }),
    }
}

/// The CPU, from `/proc/cpuinfo` and `/sys/devices/system/cpu`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpu {
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// `model name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The microcode revision the CPU runs (`microcode` in cpuinfo, e.g. `0xf0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
    /// Distinct physical packages.
    pub sockets: usize,
    /// Distinct cores.
    pub cores: usize,
    /// Logical CPUs listed in cpuinfo.
    pub threads: usize,
    /// `vmx` (Intel VT-x), `svm` (AMD-V), when the flag is there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<&'static str>,
    /// cpufreq of CPU 0: driver, governor, limits in MHz.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// Every vulnerability the kernel reports other than "Not affected", with its text.
    pub vulnerabilities: BTreeMap<String, String>,
}

/// Frequency scaling of CPU 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scaling {
    /// `scaling_driver` (`intel_pstate`, `amd-pstate-epp`, `acpi-cpufreq`).
    pub driver: Option<String>,
    /// `scaling_governor` (`powersave`, `schedutil`, `performance`).
    pub governor: Option<String>,
    /// `cpuinfo_min_freq`, MHz.
    pub min_mhz: Option<u64>,
    /// `cpuinfo_max_freq`, MHz.
    pub max_mhz: Option<u64>,
}

pub fn cpu(root: &Path) -> Result<Cpu, MachineError> {
    let text = read(&root.join("proc/cpuinfo"))?;
    let blocks: Vec<BTreeMap<&str, &str>> = text
        .split("\n\n")
        .map(|b| {
            b.lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect::<BTreeMap<_, _>>()
        })
        .filter(|m| m.contains_key("processor"))
        .collect();
    let first = blocks.first();
    let get = |k: &str| first.and_then(|m| m.get(k)).map(|v| (*v).to_owned());
    let sockets: BTreeSet<&str> = blocks
        .iter()
        .map(|m| m.get("physical id").copied().unwrap_or("0"))
        .collect();
    let cores: BTreeSet<(&str, &str)> = blocks
        .iter()
        .filter_map(|m| {
            Some((
                m.get("physical id").copied().unwrap_or("0"),
                m.get("core id").copied()?,
            ))
        })
        .collect();
    let flags = get("flags").unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let virtualization = if has("vmx") {
        Some("vmx")
    } else if has("svm") {
        Some("svm")
    } else {
        None
    };
    let freq = root.join("sys/devices/system/cpu/cpu0/cpufreq");
    let mhz = |name| {
        attr(&freq, name)
            .and_then(|s| s.parse::<u64>().ok())
            .map(|k| k / 1000)
    };
    let scaling = freq.is_dir().then(|| Scaling {
        driver: attr(&freq, "scaling_driver"),
        governor: attr(&freq, "scaling_governor"),
        min_mhz: mhz("cpuinfo_min_freq"),
        max_mhz: mhz("cpuinfo_max_freq"),
    });
    let mut vulnerabilities = BTreeMap::new();
    for (name, path) in
        entries(&root.join("sys/devices/system/cpu/vulnerabilities")).unwrap_or_default()
    {
        if let Ok(t) = std::fs::read_to_string(&path) {
            let t = t.trim();
            if t != "Not affected" {
                vulnerabilities.insert(name, t.to_owned());
            }
        }
    }
    Ok(Cpu {
        vendor: get("vendor_id"),
        model: get("model name"),
        microcode: get("microcode"),
        sockets: sockets.len(),
        cores: if cores.is_empty() {
            blocks.len()
        } else {
            cores.len()
        },
        threads: blocks.len(),
        virtualization,
        scaling,
        vulnerabilities,
    })
}

/// Loaded kernel modules and the kernel's taint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Modules {
    /// `/proc/sys/kernel/tainted`: 0 is a clean kernel.
    pub tainted: u64,
    /// What the set taint bits mean (`proprietary module`, `out-of-tree module` …).
    pub taint: Vec<&'static str>,
    /// Every module in `/proc/modules`, by name.
    pub modules: Vec<Module>,
}

/// One loaded module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Module {
    /// Its name (`amdgpu`).
    pub name: String,
    /// Memory it takes, bytes.
    pub size_bytes: u64,
    /// The modules that use it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub used_by: Vec<String>,
    /// Its state when not `Live` (`Loading`, `Unloading`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// The kernel's taint bits (Documentation/admin-guide/tainted-kernels.rst), by bit.
const TAINT: &[(u32, &str)] = &[
    (0, "proprietary module"),
    (1, "module force-loaded"),
    (2, "kernel running on an out-of-specification system"),
    (3, "module force-unloaded"),
    (4, "machine check exception"),
    (5, "bad page"),
    (6, "taint requested by userspace"),
    (7, "kernel died recently (oops or BUG)"),
    (8, "ACPI table overridden"),
    (9, "kernel warning"),
    (10, "staging driver"),
    (11, "firmware bug workaround"),
    (12, "out-of-tree module"),
    (13, "unsigned module"),
    (14, "soft lockup"),
    (15, "kernel live patched"),
    (16, "auxiliary taint"),
    (17, "built with struct randomization"),
    (18, "in-kernel test"),
];

pub fn modules(root: &Path) -> Result<Modules, MachineError> {
    let path = root.join("proc/modules");
    if !path.exists() {
        return Err(MachineError::not_available(
            "this kernel has no loadable modules (/proc/modules is absent: built without module support)",
        ));
    }
    let text = read(&path)?;
    let mut modules: Vec<Module> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.to_owned();
            let size_bytes = f.next()?.parse().ok()?;
            let _refs = f.next()?;
            let used_by = f
                .next()
                .unwrap_or("-")
                .split(',')
                .filter(|s| !s.is_empty() && *s != "-")
                .map(str::to_owned)
                .collect();
            let state = f.next().filter(|s| *s != "Live").map(str::to_owned);
            Some(Module {
                name,
                size_bytes,
                used_by,
                state,
            })
        })
        .collect();
    modules.sort_by(|a, b| a.name.cmp(&b.name));
    let tainted = attr(&root.join("proc/sys/kernel"), "tainted")
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let taint = TAINT
        .iter()
        .filter(|(bit, _)| tainted & (1u64 << bit) != 0)
        .map(|(_, what)| *what)
        .collect();
    Ok(Modules {
        tainted,
        taint,
        modules,
    })
}

/// How the machine booted and what its firmware says it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Firmware {
    /// `uefi` when `/sys/firmware/efi` exists, else `bios`.
    pub boot: &'static str,
    /// Secure Boot as the `SecureBoot` EFI variable says; absent on BIOS or when unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<bool>,
    /// `/sys/class/dmi/id`: sys_vendor, product_name, board_name, bios_vendor, bios_version,
    /// bios_date — those the firmware fills in.
    pub dmi: BTreeMap<&'static str, String>,
}

const DMI: &[&str] = &[
    "sys_vendor",
    "product_name",
    "product_version",
    "board_vendor",
    "board_name",
    "bios_vendor",
    "bios_version",
    "bios_date",
];

/// The EFI global variable GUID that holds `SecureBoot`.
const SECURE_BOOT: &str = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

pub fn firmware(root: &Path) -> Firmware {
    let efi = root.join("sys/firmware/efi");
    let secure_boot = std::fs::read(efi.join("efivars").join(SECURE_BOOT))
        .ok()
        // efivarfs: 4 bytes of attributes, then the value.
        .and_then(|b| b.get(4).copied())
        .map(|v| v == 1);
    let dmi_dir = root.join("sys/class/dmi/id");
    let dmi = DMI
        .iter()
        .filter_map(|k| Some((*k, attr(&dmi_dir, k)?)))
        .collect();
    Firmware {
        boot: if efi.is_dir() { "uefi" } else { "bios" },
        secure_boot,
        dmi,
    }
}
