//! `hardware`: trees written in the exact shape sysfs, procfs and the ID databases have (our own
//! words and numbers), and this machine checked against `lspci`, `lsusb` and `lscpu`. Disks are
//! in `storage.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use archgate_sysinfo::hardware::{self, Section, fnmatch};
use serde_json::Value;

use crate::{tool, write};

pub(crate) fn symlink(target: &str, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

pub(crate) async fn section(
    root: &Path,
    s: Section,
) -> Result<Value, archgate_sysinfo::MachineError> {
    hardware::read_section(s, root, Duration::from_secs(2)).await
}

/// Two PCI functions (a GPU bound to amdgpu, an unbound network card), the running kernel's
/// modules.alias and a pci.ids, as an Arch machine has them.
fn pci_tree(root: &Path) {
    write(root, "proc/sys/kernel/osrelease", "6.12.9-arch1-1\n");
    let gpu = "sys/bus/pci/devices/0000:03:00.0";
    write(root, &format!("{gpu}/class"), "0x030000\n");
    write(root, &format!("{gpu}/vendor"), "0x1002\n");
    write(root, &format!("{gpu}/device"), "0x73bf\n");
    write(root, &format!("{gpu}/boot_vga"), "1\n");
    write(
        root,
        &format!("{gpu}/modalias"),
        "pci:v00001002d000073BFsv00001DA2sd0000E437bc03sc00i00\n",
    );
    std::fs::create_dir_all(root.join("sys/bus/pci/drivers/amdgpu")).unwrap();
    symlink(
        "../../../bus/pci/drivers/amdgpu",
        &root.join(gpu).join("driver"),
    );
    let nic = "sys/bus/pci/devices/0000:04:00.0";
    write(root, &format!("{nic}/class"), "0x028000\n");
    write(root, &format!("{nic}/vendor"), "0x8086\n");
    write(root, &format!("{nic}/device"), "0x2725\n");
    write(
        root,
        &format!("{nic}/modalias"),
        "pci:v00008086d00002725sv00008086sd00000024bc02sc80i00\n",
    );
    write(
        root,
        "usr/lib/modules/6.12.9-arch1-1/modules.alias",
        "# Aliases extracted from modules themselves.\n\
         alias pci:v00001002d000073BFsv*sd*bc*sc*i* amdgpu\n\
         alias pci:v00001002d*sv*sd*bc03sc*i* radeon\n\
         alias pci:v00001002d000073B[0-9A-F]sv*sd*bc03sc00i* amdgpu\n\
         alias pci:v000010DEd*sv*sd*bc03sc*i* nouveau\n\
         alias pci:v00008086d00002725sv*sd*bc*sc*i* iwlwifi\n\
         alias usb:v1D6Bp0002d*dc*dsc*dp*ic*isc*ip*in* ehci_like\n",
    );
    write(
        root,
        "usr/share/hwdata/pci.ids",
        "# pci.ids, our excerpt\n\
         1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\
         \t73bf  Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]\n\
         \t\t1da2 e437  Example board\n\
         8086  Intel Corporation\n\
         \t2725  Wi-Fi 6E(802.11ax) AX210/AX1675* 2x2 [Typhoon Peak]\n\
         C 02  Network controller\n\
         \t80  Network controller\n\
         C 03  Display controller\n\
         \t00  VGA compatible controller\n\
         \t\t00  VGA controller\n",
    );
}

#[tokio::test]
async fn a_gpu_shows_the_driver_in_use_and_every_module_that_could_drive_it() {
    let dir = tempfile::tempdir().unwrap();
    pci_tree(dir.path());
    let gpus = section(dir.path(), Section::Gpu).await.unwrap();
    let gpus = gpus.as_array().unwrap();
    assert_eq!(gpus.len(), 1, "only class 03 is a GPU: {gpus:?}");
    let g = &gpus[0];
    assert_eq!(g["slot"], "0000:03:00.0");
    assert_eq!(g["id"], "1002:73bf");
    assert_eq!(g["class"], "030000");
    assert_eq!(g["class_name"], "VGA compatible controller");
    assert_eq!(g["vendor"], "Advanced Micro Devices, Inc. [AMD/ATI]");
    assert_eq!(g["device"], "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]");
    assert_eq!(g["driver"], "amdgpu");
    assert_eq!(g["boot_vga"], true);
    // amdgpu twice (plain and bracket patterns) is one module; nouveau's vendor differs.
    assert_eq!(g["modules"], serde_json::json!(["amdgpu", "radeon"]));

    let all = section(dir.path(), Section::Pci).await.unwrap();
    let nic = &all.as_array().unwrap()[1];
    assert_eq!(nic["slot"], "0000:04:00.0");
    assert!(nic.get("driver").is_none(), "no driver bound: {nic}");
    assert_eq!(nic["modules"], serde_json::json!(["iwlwifi"]));
    assert!(nic.get("boot_vga").is_none());
}

#[tokio::test]
async fn without_modules_alias_the_alternatives_are_absent_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    pci_tree(dir.path());
    // A kernel updated but not rebooted into: its modules are gone.
    write(dir.path(), "proc/sys/kernel/osrelease", "6.11.0-old\n");
    let gpus = section(dir.path(), Section::Gpu).await.unwrap();
    assert!(gpus[0].get("modules").is_none(), "{gpus}");
    assert_eq!(gpus[0]["driver"], "amdgpu");
    // No PCI bus at all is not "no devices".
    let empty = tempfile::tempdir().unwrap();
    let e = section(empty.path(), Section::Pci).await.unwrap_err();
    assert_eq!(e.kind(), "not_available");
    assert!(e.to_string().contains("/sys/bus/pci/devices"), "{e}");
}

#[test]
fn alias_patterns_match_as_kmod_matches_them() {
    let cases: &[(&str, &str, bool)] = &[
        (
            "pci:v00001002d*sv*",
            "pci:v00001002d000073BFsv00001DA2",
            true,
        ),
        (
            "pci:v00001002d*sv*",
            "pci:v000010DEd000073BFsv00001DA2",
            false,
        ),
        ("usb:v0BDAp8179d0[0-1]*", "usb:v0BDAp8179d0100dc00", true),
        ("usb:v0BDAp8179d0[0-1]*", "usb:v0BDAp8179d0200dc00", false),
        ("a[!x]c", "abc", true),
        ("a[!x]c", "axc", false),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("*", "", true),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("[", "[", false),
    ];
    for (p, s, want) in cases {
        assert_eq!(fnmatch(p.as_bytes(), s.as_bytes()), *want, "{p} vs {s}");
    }
}

#[tokio::test]
async fn the_real_pci_bus_agrees_with_lspci() {
    let ours = section(Path::new("/"), Section::Pci).await.unwrap();
    let ours: BTreeMap<String, &Value> = ours
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["slot"].as_str().unwrap().to_owned(), d))
        .collect();
    // `lspci -D -n -k`: `SLOT CLASS: VENDOR:DEVICE …`, then indented `Kernel driver in use:`.
    let text = tool("lspci", &["-D", "-n", "-k"]).await;
    let mut theirs: BTreeMap<String, (String, String, Option<String>)> = BTreeMap::new();
    let mut last = String::new();
    for line in text.lines() {
        if let Some(d) = line.trim().strip_prefix("Kernel driver in use: ") {
            theirs.get_mut(&last).unwrap().2 = Some(d.to_owned());
        } else if !line.starts_with(char::is_whitespace) {
            let f: Vec<&str> = line.split_whitespace().collect();
            last = f[0].to_owned();
            theirs.insert(
                last.clone(),
                (f[1].trim_end_matches(':').to_owned(), f[2].to_owned(), None),
            );
        }
    }
    assert!(!theirs.is_empty(), "lspci listed nothing: {text}");
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (slot, (class, id, driver)) in &theirs {
        let d = ours[slot];
        assert_eq!(&d["class"].as_str().unwrap()[..4], class, "{slot}");
        assert_eq!(d["id"], id.as_str(), "{slot}");
        assert_eq!(d["driver"].as_str(), driver.as_deref(), "{slot}");
    }
    let gpus = section(Path::new("/"), Section::Gpu).await.unwrap();
    let want = theirs.values().filter(|t| t.0.starts_with("03")).count();
    assert_eq!(gpus.as_array().unwrap().len(), want);
}

fn usb_tree(root: &Path) {
    let d = "sys/bus/usb/devices";
    for (dev, bus, num, vid, pid, product) in [
        (
            "usb1",
            "1",
            "1",
            "1d6b",
            "0002",
            Some("EHCI Host Controller"),
        ),
        ("1-1", "1", "3", "046d", "c52b", None),
    ] {
        write(root, &format!("{d}/{dev}/busnum"), &format!("{bus}\n"));
        write(root, &format!("{d}/{dev}/devnum"), &format!("{num}\n"));
        write(root, &format!("{d}/{dev}/idVendor"), &format!("{vid}\n"));
        write(root, &format!("{d}/{dev}/idProduct"), &format!("{pid}\n"));
        write(root, &format!("{d}/{dev}/speed"), "480\n");
        if let Some(p) = product {
            write(root, &format!("{d}/{dev}/product"), &format!("{p}\n"));
        }
    }
    std::fs::create_dir_all(root.join("sys/bus/usb/drivers/usbhid")).unwrap();
    std::fs::create_dir_all(root.join("sys/bus/usb/drivers/hub")).unwrap();
    for (iface, drv) in [
        ("1-1:1.0", "usbhid"),
        ("1-1:1.1", "usbhid"),
        ("1-1:1.2", ""),
    ] {
        std::fs::create_dir_all(root.join(d).join(iface)).unwrap();
        if !drv.is_empty() {
            symlink(
                &format!("../../../bus/usb/drivers/{drv}"),
                &root.join(d).join(iface).join("driver"),
            );
        }
    }
    symlink(
        "../../../bus/usb/drivers/hub",
        &root.join(d).join("usb1:1.0/driver"),
    );
    write(
        root,
        "usr/share/misc/usb.ids",
        "046d  Logitech, Inc.\n\tc52b  Unifying Receiver\n1d6b  Linux Foundation\n\t0002  2.0 root hub\nC 00  (Defined at Interface level)\n",
    );
}

#[test]
fn usb_devices_carry_their_own_names_else_usb_ids_and_their_interface_drivers() {
    let dir = tempfile::tempdir().unwrap();
    usb_tree(dir.path());
    let v = hardware::usb_devices(dir.path()).unwrap();
    assert_eq!(v.len(), 2, "interfaces are not devices: {v:?}");
    assert_eq!(
        (v[0].bus, v[0].device, v[0].id.as_str()),
        (1, 1, "1d6b:0002")
    );
    assert_eq!(v[0].product.as_deref(), Some("EHCI Host Controller"));
    assert_eq!(v[0].vendor.as_deref(), Some("Linux Foundation"));
    assert_eq!(v[0].drivers, ["hub"]);
    assert_eq!(v[1].product.as_deref(), Some("Unifying Receiver"));
    assert_eq!(v[1].vendor.as_deref(), Some("Logitech, Inc."));
    assert_eq!(v[1].drivers, ["usbhid"], "each driver once");
    assert_eq!(v[1].speed_mbps.as_deref(), Some("480"));
}

#[tokio::test]
async fn the_real_usb_bus_agrees_with_lsusb() {
    let ours = hardware::usb_devices(Path::new("/"));
    if !Path::new("/sys/bus/usb/devices").is_dir() {
        let e = ours.unwrap_err();
        assert_eq!(e.kind(), "not_available", "{e}");
        return;
    }
    let text = tool("lsusb", &[]).await;
    // `Bus 001 Device 002: ID 046d:c52b …`
    let theirs: BTreeSet<(u32, u32, String)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.get(1)?.parse().ok()?,
                f.get(3)?.trim_end_matches(':').parse().ok()?,
                (*f.get(5)?).to_owned(),
            ))
        })
        .collect();
    let ours: BTreeSet<(u32, u32, String)> = ours
        .unwrap()
        .into_iter()
        .map(|d| (d.bus, d.device, d.id))
        .collect();
    assert_eq!(ours, theirs);
}

#[tokio::test]
async fn hwmon_temperatures_and_fans_in_degrees_and_rpm() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "sys/class/hwmon/hwmon2/name", "k10temp\n");
    write(r, "sys/class/hwmon/hwmon2/temp1_input", "45125\n");
    write(r, "sys/class/hwmon/hwmon2/temp1_label", "Tctl\n");
    write(r, "sys/class/hwmon/hwmon10/name", "nvme\n");
    write(r, "sys/class/hwmon/hwmon10/temp1_input", "38850\n");
    write(r, "sys/class/hwmon/hwmon10/temp1_crit", "84850\n");
    write(r, "sys/class/hwmon/hwmon10/temp1_max", "81850\n");
    write(r, "sys/class/hwmon/hwmon10/fan1_input", "1200\n");
    // A sensor that cannot be read right now is left out, not reported as 0 °C.
    write(r, "sys/class/hwmon/hwmon10/temp2_input", "");
    let s = hardware::sensors(r);
    assert_eq!(s.temperatures.len(), 2, "{s:?}");
    assert_eq!(
        s.temperatures[0].chip, "k10temp",
        "hwmon2 sorts before hwmon10"
    );
    assert_eq!(s.temperatures[0].sensor, "Tctl");
    assert_eq!(s.temperatures[0].celsius, 45.125);
    assert_eq!(s.temperatures[1].sensor, "temp1");
    assert_eq!(s.temperatures[1].critical, Some(84.85));
    assert_eq!(s.temperatures[1].high, Some(81.85));
    assert_eq!((s.fans[0].fan.as_str(), s.fans[0].rpm), ("fan1", 1200));

    // This machine: as many temperatures as readable tempN_input files.
    let real = hardware::sensors(Path::new("/"));
    let mut files = 0;
    for e in std::fs::read_dir("/sys/class/hwmon")
        .into_iter()
        .flatten()
        .flatten()
    {
        for f in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
            let n = f.file_name().to_string_lossy().into_owned();
            if n.starts_with("temp")
                && n.ends_with("_input")
                && std::fs::read_to_string(f.path()).is_ok_and(|t| t.trim().parse::<i64>().is_ok())
            {
                files += 1;
            }
        }
    }
    assert_eq!(real.temperatures.len(), files);
}

#[test]
fn modules_with_users_and_the_taint_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "proc/modules",
        "nvidia_drm 126976 4 - Live 0x0000000000000000 (POE)\n\
         nvidia 62885888 47 nvidia_uvm,nvidia_drm, Live 0x0000000000000000 (POE)\n\
         btusb 77824 0 - Loading 0x0000000000000000\n",
    );
    write(r, "proc/sys/kernel/tainted", "12289\n");
    let m = hardware::modules(r).unwrap();
    assert_eq!(m.tainted, 12289);
    assert_eq!(
        m.taint,
        [
            "proprietary module",
            "out-of-tree module",
            "unsigned module"
        ]
    );
    let names: Vec<&str> = m.modules.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["btusb", "nvidia", "nvidia_drm"]);
    assert_eq!(m.modules[1].used_by, ["nvidia_uvm", "nvidia_drm"]);
    assert_eq!(m.modules[1].size_bytes, 62885888);
    assert_eq!(m.modules[0].state.as_deref(), Some("Loading"));
    assert_eq!(m.modules[2].state, None);

    // This machine: every line of /proc/modules, or not_available when the kernel has none.
    match std::fs::read_to_string("/proc/modules") {
        Ok(t) => assert_eq!(
            hardware::modules(Path::new("/")).unwrap().modules.len(),
            t.lines().count()
        ),
        Err(_) => {
            let e = hardware::modules(Path::new("/")).unwrap_err();
            assert_eq!(e.kind(), "not_available");
            assert!(e.to_string().contains("/proc/modules"), "{e}");
        }
    }
}

#[tokio::test]
async fn the_real_cpu_agrees_with_lscpu() {
    let cpu = hardware::cpu(Path::new("/")).unwrap();
    let v: Value = serde_json::from_str(&tool("lscpu", &["-J"]).await).unwrap();
    let field = |name: &str| {
        v["lscpu"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == name)
            .and_then(|f| f["data"].as_str())
            .map(str::to_owned)
    };
    assert_eq!(cpu.model, field("Model name:"));
    assert_eq!(cpu.vendor, field("Vendor ID:"));
    let n = |name| field(name).and_then(|s| s.parse::<usize>().ok()).unwrap();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    if online.trim() == format!("0-{}", n("CPU(s):") - 1) || n("CPU(s):") == 1 {
        assert_eq!(cpu.threads, n("CPU(s):"));
    }
    assert_eq!(cpu.sockets, n("Socket(s):"));
    assert_eq!(cpu.cores, n("Core(s) per socket:") * n("Socket(s):"));
    let microcode = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("microcode")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        });
    assert_eq!(cpu.microcode, microcode);
}

#[test]
fn a_two_socket_cpuinfo_counts_sockets_cores_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (i, (phys, core)) in [
        (0, 0),
        (0, 0),
        (0, 1),
        (0, 1),
        (1, 0),
        (1, 0),
        (1, 1),
        (1, 1),
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "processor\t: {i}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC Example\nmicrocode\t: 0xa0011d1\nphysical id\t: {phys}\ncore id\t\t: {core}\nflags\t\t: fpu sse2 svm\n\n"
        ));
    }
    write(dir.path(), "proc/cpuinfo", &text);
    write(
        dir.path(),
        "sys/devices/system/cpu/vulnerabilities/meltdown",
        "Not affected\n",
    );
    write(
        dir.path(),
        "sys/devices/system/cpu/vulnerabilities/spectre_v2",
        "Mitigation: Retpolines\n",
    );
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver",
        "amd-pstate-epp\n",
    );
    write(
        dir.path(),
        "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
        "4672070\n",
    );
    let c = hardware::cpu(dir.path()).unwrap();
    assert_eq!((c.sockets, c.cores, c.threads), (2, 4, 8));
    assert_eq!(c.microcode.as_deref(), Some("0xa0011d1"));
    assert_eq!(c.virtualization, Some("svm"));
    assert_eq!(c.vulnerabilities.len(), 1, "{:?}", c.vulnerabilities);
    assert_eq!(c.vulnerabilities["spectre_v2"], "Mitigation: Retpolines");
    let s = c.scaling.unwrap();
    assert_eq!(s.driver.as_deref(), Some("amd-pstate-epp"));
    assert_eq!(s.max_mhz, Some(4672));
}

#[test]
fn firmware_reads_boot_mode_secure_boot_and_dmi() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    // efivarfs: four attribute bytes, then the value.
    let var = r.join("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
    std::fs::create_dir_all(var.parent().unwrap()).unwrap();
    std::fs::write(&var, [6, 0, 0, 0, 1]).unwrap();
    write(r, "sys/class/dmi/id/sys_vendor", "LENOVO\n");
    write(r, "sys/class/dmi/id/bios_version", "N3HET88W (1.60 )\n");
    write(r, "sys/class/dmi/id/product_name", "\n");
    let f = hardware::firmware(r);
    assert_eq!(f.boot, "uefi");
    assert_eq!(f.secure_boot, Some(true));
    assert_eq!(f.dmi["sys_vendor"], "LENOVO");
    assert_eq!(f.dmi["bios_version"], "N3HET88W (1.60 )");
    assert!(
        !f.dmi.contains_key("product_name"),
        "empty fields are left out"
    );
    std::fs::write(&var, [6, 0, 0, 0, 0]).unwrap();
    assert_eq!(hardware::firmware(r).secure_boot, Some(false));

    let real = hardware::firmware(Path::new("/"));
    assert_eq!(real.boot == "uefi", Path::new("/sys/firmware/efi").is_dir());
}
