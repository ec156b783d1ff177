//! Tests of archgate-sysinfo: parsing and failure isolation on trees written by the test, and
//! plausible values on the real machine checked against the system's own tools.

mod journal;

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};
use archgate_sysinfo::{SysinfoOptions, SystemStatus, system_status};
use serde_json::{Value, json};

// The hardware, network and processes diagnostics, in this one test binary.

mod hardware;

mod network;

mod processes;

mod storage;

mod upkeep;

pub(crate) fn write(root: &Path, rel: &str, contents: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn opts(root: &Path) -> SysinfoOptions {
    SysinfoOptions {
        root: root.to_owned(),
        ..SysinfoOptions::default()
    }
}

/// A permit whose only program directory is `bin` (which may hold a fake `systemctl`).
fn permit_with_bin(bin: &Path) -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![bin.to_owned()],
        // The test's files belong to whoever runs the tests.
        require_root_owned: false,
        ..ExecConfig::default()
    })
}

fn real_permit() -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/bin")],
        ..ExecConfig::default()
    })
}

fn to_json(status: &SystemStatus) -> Value {
    serde_json::to_value(status).expect("serializes")
}

/// A complete fake machine: two CPUs, 8 GiB memory, 1 GiB swap, one battery, one AC adapter.
fn full_tree(root: &Path) {
    write(root, "proc/sys/kernel/ostype", "Linux\n");
    write(root, "proc/sys/kernel/osrelease", "6.9.1-arch1-1\n");
    write(root, "proc/sys/kernel/hostname", "testbox\n");
    write(root, "proc/uptime", "12345.67 23456.78\n");
    write(root, "proc/loadavg", "0.52 0.41 0.30 2/345 6789\n");
    write(
        root,
        "proc/meminfo",
        "MemTotal:        8388608 kB\nMemFree:         1000000 kB\nMemAvailable:    6291456 kB\n\
         Buffers:          100 kB\nSwapTotal:       1048576 kB\nSwapFree:         786432 kB\n",
    );
    write(root, "sys/devices/system/cpu/online", "0-1\n");
    write(root, "sys/class/power_supply/BAT0/type", "Battery\n");
    write(root, "sys/class/power_supply/BAT0/capacity", "87\n");
    write(root, "sys/class/power_supply/BAT0/status", "Discharging\n");
    write(root, "sys/class/power_supply/BAT0/scope", "System\n");
    write(root, "sys/class/power_supply/AC/type", "Mains\n");
    write(root, "sys/class/power_supply/AC/online", "1\n");
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("run/systemd/system")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_written_tree_is_read_exactly() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("root");
    full_tree(&root);
    // A stand-in systemctl that records its arguments and answers in systemd's JSON format.
    let bin = tree.path().join("bin");
    let args_file = tree.path().join("args");
    write(
        &bin,
        "systemctl",
        &format!(
            // `show --property=Id,Transient` answers in systemctl's `Key=value` blocks; a
            // transient unit's description is its command line (attack 14 F3).
            "#!/usr/bin/sh\n\
             if [ \"$2\" = show ]; then printf 'Id=backup.service\\nTransient=no\\n\\nId=run-u7.service\\nTransient=yes\\n\\nId=dump.service\\nTransient=yes\\n'; exit 0; fi\n\
             printf '%s\\n' \"$@\" > {}\n\
             printf '%s' '[{{\"unit\":\"backup.service\",\"load\":\"loaded\",\"active\":\"failed\",\"sub\":\"failed\",\"description\":\"Nightly backup\"}},\
             {{\"unit\":\"run-u7.service\",\"load\":\"loaded\",\"active\":\"failed\",\"sub\":\"failed\",\"description\":\"/usr/bin/mysql -pS3cret\"}},\
             {{\"unit\":\"dump.service\",\"load\":\"loaded\",\"active\":\"failed\",\"sub\":\"failed\",\"description\":\"pg_dump --password=S3cret\"}}]'\n",
            args_file.display()
        ),
    );
    set_mode(&bin.join("systemctl"), 0o755);

    let status = system_status(&permit_with_bin(&bin), &opts(&root)).await;
    let v = to_json(&status);
    assert_eq!(
        v["kernel"],
        json!({"name": "Linux", "release": "6.9.1-arch1-1"})
    );
    assert_eq!(v["hostname"], json!("testbox"));
    assert_eq!(v["uptime_seconds"], json!(12345));
    assert_eq!(
        v["load"],
        json!({"one": 0.52, "five": 0.41, "fifteen": 0.30})
    );
    assert_eq!(v["cpus"], json!(2));
    assert_eq!(
        v["memory"],
        json!({"total_bytes": 8u64 << 30, "available_bytes": 6u64 << 30, "used_bytes": 2u64 << 30})
    );
    assert_eq!(
        v["swap"],
        json!({"total_bytes": 1u64 << 30, "available_bytes": 768u64 << 20, "used_bytes": 256u64 << 20})
    );
    assert_eq!(
        v["batteries"],
        json!([{"name": "BAT0", "capacity_percent": 87, "status": "Discharging", "scope": "System"}])
    );
    assert_eq!(
        v["failed_units"],
        json!([
            {"unit": "backup.service", "load": "loaded", "active": "failed", "sub": "failed", "description": "Nightly backup"},
            {"unit": "run-u7.service", "load": "loaded", "active": "failed", "sub": "failed",
             "description": "/usr/bin/mysql [arguments withheld: a command line may hold secrets]"},
            {"unit": "dump.service", "load": "loaded", "active": "failed", "sub": "failed",
             "description": "pg_dump [arguments withheld: a command line may hold secrets]"},
        ])
    );
    let recorded = std::fs::read_to_string(&args_file).unwrap();
    assert_eq!(
        recorded.lines().collect::<Vec<_>>(),
        archgate_sysinfo::SYSTEMCTL_ARGS
    );
    let disks = v["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 2);
    assert_eq!(disks[0]["path"], "/");
    assert_eq!(disks[1]["path"], "/home");
    for d in disks {
        let total = d["total_bytes"].as_u64().expect("total");
        let used = d["used_bytes"].as_u64().expect("used");
        let avail = d["available_bytes"].as_u64().expect("available");
        assert!(total > 0 && used + avail <= total, "{d}");
    }
    assert_eq!(status.failed_probes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_probe_spoils_only_its_own_field() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("root");
    full_tree(&root);
    // Broken: memory (no MemTotal), load (missing), uptime (garbage), cpus (garbage).
    write(&root, "proc/meminfo", "SwapTotal: 0 kB\nSwapFree: 0 kB\n");
    std::fs::remove_file(root.join("proc/loadavg")).unwrap();
    write(&root, "proc/uptime", "soon\n");
    write(&root, "sys/devices/system/cpu/online", "zero-one\n");
    // systemd runs, but there is no systemctl in the (empty) program directory.
    let bin = tree.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();

    let status = system_status(&permit_with_bin(&bin), &opts(&root)).await;
    let v = to_json(&status);
    let kind = |field: &str| v[field]["error"]["kind"].as_str().map(str::to_owned);
    assert_eq!(kind("memory").as_deref(), Some("malformed"));
    assert_eq!(kind("load").as_deref(), Some("could_not_read"));
    assert_eq!(kind("uptime_seconds").as_deref(), Some("malformed"));
    assert_eq!(kind("cpus").as_deref(), Some("malformed"));
    assert_eq!(kind("failed_units").as_deref(), Some("not_installed"));
    let message = v["failed_units"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("systemctl") && message.contains(&bin.display().to_string()));
    assert!(
        v["memory"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MemTotal")
    );
    // The rest is intact.
    assert_eq!(v["kernel"]["release"], "6.9.1-arch1-1");
    assert_eq!(v["hostname"], "testbox");
    assert_eq!(
        v["swap"],
        json!({"total_bytes": 0, "available_bytes": 0, "used_bytes": 0})
    );
    assert_eq!(v["batteries"][0]["capacity_percent"], 87);
    assert!(v["disks"][0]["total_bytes"].as_u64().is_some());
    assert_eq!(status.failed_probes(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_systemd_battery_and_home_are_normal_answers() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("root");
    full_tree(&root);
    std::fs::remove_dir_all(root.join("run")).unwrap();
    std::fs::remove_dir_all(root.join("home")).unwrap();
    std::fs::remove_dir_all(root.join("sys/class/power_supply/BAT0")).unwrap();
    write(&root, "proc/1/comm", "init\n");
    let bin = tree.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();

    let status = system_status(&permit_with_bin(&bin), &opts(&root)).await;
    let v = to_json(&status);
    assert_eq!(v["failed_units"]["error"]["kind"], "not_available");
    assert_eq!(v["batteries"], json!([]));
    assert_eq!(v["disks"].as_array().unwrap().len(), 1);

    // PID 1 named systemd is enough to look (and here, to find no systemctl).
    write(&root, "proc/1/comm", "systemd\n");
    let v = to_json(&system_status(&permit_with_bin(&bin), &opts(&root)).await);
    assert_eq!(v["failed_units"]["error"]["kind"], "not_installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_root_fails_every_probe_without_panicking() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path().join("nothing-here");
    let status = system_status(&real_permit(), &opts(&root)).await;
    let v = to_json(&status);
    for field in [
        "kernel",
        "hostname",
        "uptime_seconds",
        "load",
        "cpus",
        "memory",
        "swap",
    ] {
        assert_eq!(v[field]["error"]["kind"], "could_not_read", "{field}: {v}");
    }
    assert_eq!(v["disks"][0]["error"]["kind"], "could_not_read");
    assert_eq!(v["batteries"], json!([]));
}

/// stdout of a real tool, run the way archgate runs programs.
pub(crate) async fn tool(program: &str, args: &[&str]) -> String {
    let out = real_permit()
        .run(
            CommandSpec::new(program)
                .args(args.iter().copied())
                .env("LC_ALL", "C"),
        )
        .await
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(out.success(), "{program}: {}", out.stderr_lossy());
    out.stdout_lossy()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_machine_agrees_with_its_own_tools() {
    let status = system_status(&real_permit(), &SysinfoOptions::default()).await;
    let v = to_json(&status);

    let release = tool("uname", &["-r"]).await;
    assert_eq!(v["kernel"]["release"], release.trim());
    assert_eq!(v["kernel"]["name"], tool("uname", &["-s"]).await.trim());
    assert_eq!(v["hostname"], tool("uname", &["-n"]).await.trim());

    let online: u64 = tool("getconf", &["_NPROCESSORS_ONLN"])
        .await
        .trim()
        .parse()
        .unwrap();
    assert_eq!(v["cpus"], online);

    // `free -b` reads the same /proc/meminfo totals.
    let free = tool("free", &["-b"]).await;
    let total_of = |row: &str| -> u64 {
        free.lines()
            .find(|l| l.starts_with(row))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {row} row in {free}"))
    };
    assert_eq!(v["memory"]["total_bytes"], total_of("Mem:"));
    assert_eq!(v["swap"]["total_bytes"], total_of("Swap:"));
    let mem = status.memory.value().unwrap();
    assert!(mem.total_bytes > 0 && mem.available_bytes <= mem.total_bytes);
    assert_eq!(mem.used_bytes, mem.total_bytes - mem.available_bytes);

    // `df` asks statvfs too: sizes agree exactly (use moves while tests run, so only sizes).
    let df = tool("df", &["-B1", "--output=size", "/"]).await;
    let size: u64 = df.lines().nth(1).unwrap().trim().parse().unwrap();
    assert_eq!(v["disks"][0]["path"], "/");
    assert_eq!(v["disks"][0]["total_bytes"], size);
    assert_eq!(
        v["disks"].as_array().unwrap().len(),
        if Path::new("/home").is_dir() { 2 } else { 1 }
    );

    assert!(status.uptime_seconds.value().is_some_and(|s| *s > 0));
    assert!(status.load.value().is_some_and(|l| l.one >= 0.0));
    if Path::new("/run/systemd/system").is_dir() {
        assert!(status.failed_units.value().is_some(), "{v}");
    } else {
        assert_eq!(v["failed_units"]["error"]["kind"], "not_available");
    }
    let on_battery = std::fs::read_dir("/sys/class/power_supply")
        .map(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path().join("type")).is_ok_and(|t| t.trim() == "Battery")
            })
        })
        .unwrap_or(false);
    assert_eq!(
        status.batteries.value().map(|b| !b.is_empty()),
        Some(on_battery)
    );
}
