//! `hardware block` and `hardware smart`: a tree in the shape sysfs, mountinfo, udev and
//! /proc/swaps have (btrfs subvolumes on LUKS, an EFI partition, zram swap), this machine
//! against `lsblk` and `df`, and `smartctl`'s real answers and JSON shapes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use archgate_exec::{CommandSpec, ExecConfig, Permit};
use archgate_sysinfo::hardware::{self, Section};
use serde_json::Value;

use super::hardware::section;
use crate::{tool, write};

#[tokio::test]
async fn btrfs_subvolumes_luks_and_swap_are_matched_to_their_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let disk = "sys/block/nvme0n1";
    write(r, &format!("{disk}/size"), "1000215216\n");
    write(r, &format!("{disk}/dev"), "259:0\n");
    write(r, &format!("{disk}/queue/rotational"), "0\n");
    write(
        r,
        &format!("{disk}/device/model"),
        "Example NVMe 1TB                        \n",
    );
    for (p, dev, size) in [
        ("nvme0n1p1", "259:1", "2097152"),
        ("nvme0n1p2", "259:2", "998115328"),
    ] {
        write(r, &format!("{disk}/{p}/partition"), "1\n");
        write(r, &format!("{disk}/{p}/dev"), &format!("{dev}\n"));
        write(r, &format!("{disk}/{p}/size"), &format!("{size}\n"));
    }
    std::fs::create_dir_all(r.join(format!("{disk}/nvme0n1p2/holders/dm-0"))).unwrap();
    write(r, "sys/block/dm-0/size", "998082560\n");
    write(r, "sys/block/dm-0/dev", "254:0\n");
    write(r, "sys/block/dm-0/dm/name", "cryptroot\n");
    write(r, "sys/block/zram0/size", "16777216\n");
    write(r, "sys/block/zram0/dev", "253:0\n");
    write(r, "sys/block/loop0/size", "0\n");
    write(
        r,
        "run/udev/data/b259:1",
        "S:disk/by-uuid/ABCD\nE:ID_FS_TYPE=vfat\nE:ID_FS_LABEL=EFI\n",
    );
    write(r, "run/udev/data/b259:2", "E:ID_FS_TYPE=crypto_LUKS\n");
    write(
        r,
        "run/udev/data/b254:0",
        "E:ID_FS_TYPE=btrfs\nE:ID_FS_LABEL=arch\n",
    );
    // btrfs mounts carry an anonymous device number (0:27): they match by source.
    write(
        r,
        "proc/self/mountinfo",
        "26 1 0:27 /@ / rw,noatime shared:1 - btrfs /dev/mapper/cryptroot rw,compress=zstd:3,subvol=/@\n\
         30 26 0:27 /@home /home rw,noatime shared:2 - btrfs /dev/mapper/cryptroot rw,subvol=/@home\n\
         31 26 259:1 / /boot ro,relatime shared:3 - vfat /dev/nvme0n1p1 rw,fmask=0022\n\
         40 26 0:40 / /mnt/my\\040disk rw - tmpfs tmpfs rw\n",
    );
    write(
        r,
        "proc/swaps",
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t8388604\t\t0\t\t100\n",
    );
    // Mount points exist in the tree, so free space is read for them (statvfs of the tree).
    for m in ["boot", "home"] {
        std::fs::create_dir_all(r.join(m)).unwrap();
    }
    let v = section(r, Section::Block).await.unwrap();
    let by: BTreeMap<&str, &Value> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap(), d))
        .collect();
    assert_eq!(
        by.keys().copied().collect::<Vec<_>>(),
        ["dm-0", "nvme0n1", "zram0"],
        "unused loop left out"
    );
    let nvme = by["nvme0n1"];
    assert_eq!(nvme["size_bytes"], 1000215216u64 * 512);
    assert_eq!(nvme["model"], "Example NVMe 1TB");
    assert_eq!(nvme["transport"], "nvme");
    let p1 = &nvme["partitions"][0];
    assert_eq!(p1["filesystem"], "vfat");
    assert_eq!(p1["label"], "EFI");
    assert_eq!(p1["mounts"][0]["path"], "/boot");
    assert_eq!(p1["mounts"][0]["read_only"], true);
    assert!(p1["usage"]["total_bytes"].as_u64().is_some(), "{p1}");
    let p2 = &nvme["partitions"][1];
    assert_eq!(p2["filesystem"], "crypto_LUKS");
    assert_eq!(p2["holders"], serde_json::json!(["dm-0"]));
    assert!(p2.get("mounts").is_none());
    let dm = by["dm-0"];
    assert_eq!(dm["mapper"], "cryptroot");
    assert_eq!(dm["filesystem"], "btrfs");
    let mounts: Vec<(&str, &str)> = dm["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap(), m["root"].as_str().unwrap()))
        .collect();
    assert_eq!(mounts, [("/", "/@"), ("/home", "/@home")]);
    assert_eq!(by["zram0"]["swap"], true);
}

#[tokio::test]
async fn the_real_block_devices_agree_with_lsblk_and_df() {
    let v = section(Path::new("/"), Section::Block).await.unwrap();
    let ours: BTreeMap<String, &Value> = v
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| std::iter::once(d).chain(d["partitions"].as_array().into_iter().flatten()))
        .map(|d| (d["name"].as_str().unwrap().to_owned(), d))
        .collect();
    let lsblk: Value = serde_json::from_str(
        &tool(
            "lsblk",
            &["-J", "-b", "-o", "NAME,KNAME,SIZE,MOUNTPOINTS,TYPE"],
        )
        .await,
    )
    .unwrap();
    fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        for d in v.as_array().into_iter().flatten() {
            out.push(d);
            walk(&d["children"], out);
        }
    }
    let mut theirs = Vec::new();
    walk(&lsblk["blockdevices"], &mut theirs);
    assert!(!theirs.is_empty());
    for t in theirs {
        let name = t["kname"].as_str().unwrap();
        let Some(o) = ours.get(name) else {
            // lsblk lists an unused loop device; we leave those out.
            assert!(
                name.starts_with("loop") && t["size"] == 0,
                "{name} missing: {v}"
            );
            continue;
        };
        assert_eq!(o["size_bytes"], t["size"], "{name}");
        let want: BTreeSet<&str> = t["mountpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str())
            .collect();
        let got: BTreeSet<&str> = o["mounts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["path"].as_str().unwrap())
            .collect();
        // lsblk shows each filesystem once per mount point; bind mounts of the same device
        // appear in both.
        assert!(want.is_subset(&got), "{name}: lsblk {want:?}, ours {got:?}");
    }
    // The device holding / has df's size for it.
    let root = ours
        .values()
        .find(|d| {
            d["mounts"]
                .as_array()
                .is_some_and(|m| m.first().is_some_and(|m| m["path"] == "/"))
        })
        .expect("a device mounted on /");
    let df = tool("df", &["-B1", "--output=size", "/"]).await;
    let size: u64 = df.lines().nth(1).unwrap().trim().parse().unwrap();
    assert_eq!(root["usage"]["total_bytes"], size);
}

#[tokio::test]
async fn smart_answers_what_smartctl_says_never_a_silent_success() {
    // Real smartctl on this machine's disks, the way the tool runs it.
    let permit = Permit::for_tests(ExecConfig {
        search_dirs: vec!["/usr/sbin".into(), "/usr/bin".into()],
        ..ExecConfig::default()
    });
    let commands = hardware::smart_commands(Path::new("/"));
    let devices: Vec<String> = commands
        .iter()
        .map(|c| c.arg_list().last().unwrap().clone())
        .collect();
    assert!(
        devices
            .iter()
            .all(|d| !d.contains("loop") && !d.contains("zram")),
        "{devices:?}"
    );
    for c in &commands {
        assert!(
            c.arg_list().contains(&"standby".to_owned()),
            "never wake a sleeping disk"
        );
    }
    let disks = hardware::smart(&permit, commands).await.unwrap();
    assert_eq!(disks.len(), devices.len());
    for d in &disks {
        let out = permit
            .run(CommandSpec::new("smartctl").args(["--json=c", "-H", "-n", "standby", &d.device]))
            .await
            .unwrap();
        let v: Value = serde_json::from_str(&out.stdout_lossy()).unwrap();
        assert_eq!(
            d.passed,
            v.pointer("/smart_status/passed").and_then(Value::as_bool),
            "{d:?}"
        );
        // No health answer always says why.
        assert_eq!(d.passed.is_none(), d.problem.is_some(), "{d:?}");
    }

    // smartctl's JSON shapes (7.3), our own values: a healthy NVMe, a disk it may not open.
    let nvme = r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":0},"device":{"name":"/dev/nvme0","type":"nvme"},"model_name":"Example SSD 1TB","smart_status":{"passed":true,"nvme":{"value":0}},"nvme_smart_health_information_log":{"critical_warning":0,"temperature":41,"percentage_used":3,"power_on_hours":5120,"media_errors":0},"temperature":{"current":41},"power_on_time":{"hours":5120}}"#;
    let d = hardware::parse_smart("/dev/nvme0n1".into(), nvme);
    assert_eq!(d.passed, Some(true));
    assert_eq!(
        (d.temperature_c, d.power_on_hours, d.percentage_used),
        (Some(41), Some(5120), Some(3))
    );
    assert!(d.problem.is_none() && !d.needs_privilege);
    let denied = r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"messages":[{"string":"Smartctl open device: /dev/sda failed: Permission denied","severity":"error"}],"exit_status":2}}"#;
    let d = hardware::parse_smart("/dev/sda".into(), denied);
    assert_eq!(d.passed, None);
    assert!(d.needs_privilege, "{d:?}");
    assert!(d.problem.unwrap().contains("Permission denied"));
    let ata = r#"{"smartctl":{"exit_status":0},"model_name":"Old Disk","smart_status":{"passed":false},"ata_smart_attributes":{"table":[{"id":5,"name":"Reallocated_Sector_Ct","raw":{"value":8}},{"id":197,"name":"Current_Pending_Sector","raw":{"value":2}}]}}"#;
    let d = hardware::parse_smart("/dev/sdb".into(), ata);
    assert_eq!((d.passed, d.bad_sectors), (Some(false), Some(10)));
}
