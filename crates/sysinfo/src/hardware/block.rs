//! Block devices from `/sys/block`: size, model, transport, partitions, what holds them
//! (dm-crypt, LVM), the filesystem udev found (`/run/udev/data`), where each is mounted
//! (`/proc/self/mountinfo`, matched by device number and, for btrfs whose mounts carry an
//! anonymous device number, by source), swap (`/proc/swaps`) and free space (`statvfs`, bounded
//! in time). And SMART health: `smartctl --json` per disk, through the caller's permit.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::machine::{MachineError, attr, attr_num, entries, read};
use crate::procfs::Usage;

/// One disk (or loop, zram, device-mapper, md device).
#[derive(Debug, Serialize)]
pub struct BlockDevice {
    /// Kernel name (`nvme0n1`, `sda`, `dm-0`).
    pub name: String,
    /// Device-mapper name (`cryptroot`), for `dm-*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapper: Option<String>,
    /// Bytes.
    pub size_bytes: u64,
    /// `device/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `nvme`, `usb`, `sata`, `virtio`, `mmc`, or absent when it is virtual.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<&'static str>,
    /// Spinning disk (`queue/rotational`).
    pub rotational: bool,
    /// Removable medium.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub removable: bool,
    /// Read-only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    /// The filesystem on the whole device, its mounts and free space.
    #[serde(flatten)]
    pub contents: Contents,
    /// Its partitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
}

/// One partition.
#[derive(Debug, Serialize)]
pub struct Partition {
    /// Kernel name (`nvme0n1p2`).
    pub name: String,
    /// Bytes.
    pub size_bytes: u64,
    /// The filesystem on it, its mounts and free space.
    #[serde(flatten)]
    pub contents: Contents,
}

/// What is on a device or partition.
#[derive(Debug, Default, Serialize)]
pub struct Contents {
    /// Filesystem type (udev's `ID_FS_TYPE`, else the type it is mounted as).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    /// Filesystem label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Where it is mounted (a btrfs volume once per subvolume mount).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<Mount>,
    /// Size and use of its mounted filesystem (`statvfs` of the first mount).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::Probe<Usage>>,
    /// Used as swap now.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub swap: bool,
    /// Devices built on it (`dm-0` for a LUKS container).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
}

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// The mount point.
    pub path: String,
    /// The type it is mounted as.
    pub fstype: String,
    /// Mounted read-only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    /// The subvolume or bind root inside the filesystem, when not `/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

struct MountRow {
    dev: String,
    source: String,
    mount: Mount,
}

/// Every block device, sorted by name. `not_available` without `/sys/block`.
pub(crate) async fn block_devices(
    root: &Path,
    timeout: Duration,
) -> Result<Vec<BlockDevice>, MachineError> {
    let list = entries(&root.join("sys/block"))
        .ok_or_else(|| MachineError::not_available("no /sys/block on this machine"))?;
    let mounts = mountinfo(root)?;
    let swaps = swaps(root);
    let mut out = Vec::new();
    for (name, dir) in list {
        let size_bytes = attr_num(&dir, "size").unwrap_or(0).saturating_mul(512);
        // Unused loop and ram devices are noise, not disks.
        if size_bytes == 0 && (name.starts_with("loop") || name.starts_with("ram")) {
            continue;
        }
        let mut partitions = Vec::new();
        for (pname, pdir) in entries(&dir).unwrap_or_default() {
            if pdir.join("partition").is_file() {
                partitions.push(Partition {
                    size_bytes: attr_num(&pdir, "size").unwrap_or(0).saturating_mul(512),
                    contents: contents(root, &pname, &pdir, &mounts, &swaps, timeout).await,
                    name: pname,
                });
            }
        }
        let real = std::fs::canonicalize(&dir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(BlockDevice {
            mapper: attr(&dir.join("dm"), "name"),
            size_bytes,
            model: attr(&dir.join("device"), "model"),
            transport: transport(&name, &real),
            rotational: attr(&dir.join("queue"), "rotational").as_deref() == Some("1"),
            removable: attr(&dir, "removable").as_deref() == Some("1"),
            read_only: attr(&dir, "ro").as_deref() == Some("1"),
            contents: contents(root, &name, &dir, &mounts, &swaps, timeout).await,
            partitions,
            name,
        });
    }
    Ok(out)
}

fn transport(name: &str, real: &str) -> Option<&'static str> {
    if real.contains("/usb") {
        Some("usb")
    } else if name.starts_with("nvme") {
        Some("nvme")
    } else if name.starts_with("mmcblk") {
        Some("mmc")
    } else if real.contains("/virtio") {
        Some("virtio")
    } else if real.contains("/ata") {
        Some("sata")
    } else if real.contains("/host") {
        Some("scsi")
    } else {
        None
    }
}

async fn contents(
    root: &Path,
    name: &str,
    dir: &Path,
    mounts: &[MountRow],
    swaps: &[String],
    timeout: Duration,
) -> Contents {
    let dev = attr(dir, "dev").unwrap_or_default();
    let udev = udev_props(root, &dev);
    let mapper = attr(&dir.join("dm"), "name");
    let mine: Vec<Mount> = mounts
        .iter()
        .filter(|m| {
            m.dev == dev
                || m.source == format!("/dev/{name}")
                || mapper
                    .as_ref()
                    .is_some_and(|mn| m.source == format!("/dev/mapper/{mn}"))
        })
        .map(|m| m.mount.clone())
        .collect();
    let usage = match mine.first() {
        Some(m) => Some(
            crate::disk::probe(root.join(m.path.trim_start_matches('/')), timeout)
                .await
                .into(),
        ),
        None => None,
    };
    let holders = entries(&dir.join("holders"))
        .unwrap_or_default()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    Contents {
        filesystem: udev
            .get("ID_FS_TYPE")
            .cloned()
            .or_else(|| mine.first().map(|m| m.fstype.clone())),
        label: udev.get("ID_FS_LABEL").cloned(),
        swap: swaps.iter().any(|s| *s == format!("/dev/{name}"))
            || mapper
                .as_ref()
                .is_some_and(|mn| swaps.iter().any(|s| *s == format!("/dev/mapper/{mn}"))),
        mounts: mine,
        usage,
        holders,
    }
}

/// udev's properties of a block device (`E:KEY=VALUE` lines of `/run/udev/data/bMAJ:MIN`).
fn udev_props(root: &Path, dev: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(root.join(format!("run/udev/data/b{dev}")))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("E:")?.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS…] - TYPE SOURCE SUPER`.
fn mountinfo(root: &Path) -> Result<Vec<MountRow>, MachineError> {
    let text = read(&root.join("proc/self/mountinfo"))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (head, tail) = l.split_once(" - ")?;
            let h: Vec<&str> = head.split(' ').collect();
            let t: Vec<&str> = tail.split(' ').collect();
            let subroot = unescape(h.get(3)?);
            Some(MountRow {
                dev: (*h.get(2)?).to_owned(),
                source: unescape(t.get(1)?),
                mount: Mount {
                    path: unescape(h.get(4)?),
                    fstype: (*t.first()?).to_owned(),
                    read_only: h.get(5)?.split(',').any(|o| o == "ro"),
                    root: (subroot != "/").then_some(subroot),
                },
            })
        })
        .collect())
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 4 <= b.len()
            && let Ok(oct) = std::str::from_utf8(&b[i + 1..i + 4])
            && let Ok(v) = u8::from_str_radix(oct, 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn swaps(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("proc/swaps"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(unescape))
        .collect()
}

/// SMART health of one disk as `smartctl` answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmartDisk {
    /// `/dev/NAME`.
    pub device: String,
    /// The model smartctl read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The overall health self-assessment; absent when smartctl could not read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// °C now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<i64>,
    /// Power-on hours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
    /// NVMe: percentage of rated endurance used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_used: Option<u64>,
    /// ATA: reallocated (5) and pending (197) sectors, raw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bad_sectors: Option<u64>,
    /// Why smartctl gave no health answer (`Permission denied`, `in STANDBY mode`,
    /// `Unable to detect device type`), with `needs_privilege` when it was a permission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// smartctl could not open the device as this user (reading SMART needs root here).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_privilege: bool,
}

/// The `smartctl` runs that answer `smart`: one per whole disk that can carry SMART (not loop,
/// ram, zram, device-mapper, md). `-n standby` never wakes a sleeping disk.
pub fn smart_commands(root: &Path) -> Vec<CommandSpec> {
    const VIRTUAL: &[&str] = &["loop", "ram", "zram", "dm-", "md", "sr", "fd"];
    entries(&root.join("sys/block"))
        .unwrap_or_default()
        .into_iter()
        .filter(|(n, _)| !VIRTUAL.iter().any(|v| n.starts_with(v)))
        .map(|(n, _)| {
            CommandSpec::new("smartctl")
                .args(["--json=c", "-i", "-H", "-A", "-n", "standby"])
                .arg(format!("/dev/{n}"))
                .timeout(Duration::from_secs(15))
        })
        .collect()
}

/// Runs each of `commands` (from [`smart_commands`]) and reads its JSON answer.
pub async fn smart(
    permit: &Permit,
    commands: Vec<CommandSpec>,
) -> Result<Vec<SmartDisk>, MachineError> {
    let mut out = Vec::new();
    for spec in commands {
        let device = spec.arg_list().last().cloned().unwrap_or_default();
        let o = permit.run(spec).await?;
        out.push(parse_smart(device, &o.stdout_lossy()));
    }
    Ok(out)
}

/// One `smartctl --json` answer.
pub fn parse_smart(device: String, text: &str) -> SmartDisk {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let u = |p: &str| v.pointer(p).and_then(serde_json::Value::as_u64);
    let errors: Vec<String> = v
        .pointer("/smartctl/messages")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter(|m| m["severity"] != "information")
                .filter_map(|m| m["string"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let passed = v.pointer("/smart_status/passed").and_then(|b| b.as_bool());
    let raw = |id: u64| {
        v.pointer("/ata_smart_attributes/table")?
            .as_array()?
            .iter()
            .find(|a| a["id"].as_u64() == Some(id))?
            .pointer("/raw/value")?
            .as_u64()
    };
    let bad_sectors = match (raw(5), raw(197)) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    let problem = if v.is_null() {
        Some("smartctl gave no JSON answer".to_owned())
    } else if passed.is_none() {
        Some(if errors.is_empty() {
            "no SMART health answer".to_owned()
        } else {
            errors.join("; ")
        })
    } else {
        None
    };
    let needs_privilege = problem
        .as_deref()
        .is_some_and(|p| p.contains("Permission denied") || p.contains("Operation not permitted"));
    SmartDisk {
        device,
        model: v["model_name"].as_str().map(str::to_owned),
        passed,
        temperature_c: v.pointer("/temperature/current").and_then(|t| t.as_i64()),
        power_on_hours: u("/power_on_time/hours"),
        percentage_used: u("/nvme_smart_health_information_log/percentage_used"),
        bad_sectors,
        problem,
        needs_privilege,
    }
}
