//! Reboot/restart needed and snapshots (issue 22 items 6 and 8): the real kernel against
//! `uname -r` and the real /usr/lib/modules, a real process mapping a library the test deletes,
//! and snapshot trees in snapper's and Timeshift's on-disk layouts written here.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::{Command, Stdio};

use archgate_sysinfo::restart::{deleted_in_maps, restart_needed, unit_of};
use archgate_sysinfo::snapshots::snapshots;

use super::write;

#[test]
fn the_running_kernel_is_uname_and_the_modules_are_the_directory() {
    let r = restart_needed(Path::new("/"));
    let uname = Command::new("uname").arg("-r").output().unwrap();
    assert_eq!(
        r.kernel.running,
        String::from_utf8_lossy(&uname.stdout).trim()
    );
    let mut dirs: Vec<String> = std::fs::read_dir("/usr/lib/modules")
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    assert_eq!(r.kernel.installed, dirs);
    assert_eq!(r.kernel.reboot_needed, !dirs.contains(&r.kernel.running));
}

#[test]
fn a_kernel_without_its_modules_needs_a_reboot() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "proc/sys/kernel/osrelease", "6.9.1-arch1-1\n");
    write(root.path(), "usr/lib/modules/6.9.1-arch1-1/modules.dep", "");
    write(
        root.path(),
        "usr/lib/modules/6.10.2-arch1-1/modules.dep",
        "",
    );
    let r = restart_needed(root.path());
    assert!(!r.kernel.reboot_needed);
    assert!(r.commands.is_empty(), "{:?}", r.commands);
    std::fs::remove_dir_all(root.path().join("usr/lib/modules/6.9.1-arch1-1")).unwrap();
    let r = restart_needed(root.path());
    assert!(r.kernel.reboot_needed);
    assert_eq!(r.kernel.installed, ["6.10.2-arch1-1"]);
    assert_eq!(r.commands, ["systemctl reboot"]);
}

/// Kills the child when dropped.
struct Child(std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn a_shared_library() -> std::path::PathBuf {
    for p in [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/libz.so.1",
    ] {
        if Path::new(p).exists() {
            return p.into();
        }
    }
    panic!("no libz.so.1 to copy");
}

#[test]
fn a_process_mapping_a_deleted_library_is_found_with_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libarchgate-upkeep-test.so.1");
    std::fs::copy(a_shared_library(), &lib).unwrap();
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import ctypes, sys, time\nctypes.CDLL(sys.argv[1])\nprint('ready', flush=True)\ntime.sleep(60)",
        )
        .arg(&lib)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let child = Child(child);
    let pid = child.0.id();

    // Before the upgrade replaces it, nothing is reported for this process.
    let before = restart_needed(Path::new("/"));
    assert!(
        !before
            .units
            .iter()
            .any(|u| u.processes.iter().any(|p| p.pid == pid))
    );

    std::fs::remove_file(&lib).unwrap();
    let r = restart_needed(Path::new("/"));
    let group = r
        .units
        .iter()
        .find(|u| u.processes.iter().any(|p| p.pid == pid))
        .unwrap_or_else(|| panic!("pid {pid} not found in {:?}", r.units));
    assert!(
        group.libraries.contains(&lib.display().to_string()),
        "{:?}",
        group.libraries
    );
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    assert_eq!((group.unit.clone(), group.scope), unit_of(&cgroup));
    assert!(!group.command.is_empty());
    assert!(r.findings.iter().any(|f| f.contains("deleted libraries")));
    drop(child);
}

#[test]
fn units_from_cgroup_paths_and_their_commands() {
    let cases = [
        ("0::/system.slice/sshd.service\n", "sshd.service", "system"),
        (
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/pipewire.service\n",
            "pipewire.service",
            "user",
        ),
        (
            "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox-1234.scope\n",
            "app-firefox-1234.scope",
            "user",
        ),
        (
            "0::/user.slice/user-1000.slice/session-2.scope\n",
            "session-2.scope",
            "system",
        ),
        ("0::/init.scope\n", "init.scope", "system"),
        ("0::/\n", "none", "none"),
        (
            "12:pids:/system.slice/cron.service\n1:name=systemd:/system.slice/cron.service\n",
            "cron.service",
            "system",
        ),
    ];
    for (cg, unit, scope) in cases {
        assert_eq!(unit_of(cg), (unit.to_owned(), scope), "{cg}");
    }
}

#[test]
fn deleted_libraries_in_maps_and_what_is_not_one() {
    let maps = "\
55d0c0000000-55d0c0001000 r-xp 00000000 fe:01 123 /usr/bin/python3.11
7f0000000000-7f0000001000 r-xp 00000000 fe:01 456                        /usr/lib/libssl.so.3 (deleted)
7f0000001000-7f0000002000 r--p 00001000 fe:01 456                        /usr/lib/libssl.so.3 (deleted)
7f0000002000-7f0000003000 rw-s 00000000 00:01 789                        /memfd:wayland-shm (deleted)
7f0000003000-7f0000004000 rw-s 00000000 00:05 790                        /dev/shm/pulse-shm-1 (deleted)
7f0000004000-7f0000005000 r-xp 00000000 fe:01 791                        /opt/My App/libapp.so (deleted)
7f0000005000-7f0000006000 rw-p 00000000 fe:01 792                        /home/me/notes.txt (deleted)
7f0000006000-7f0000007000 r-xp 00000000 fe:01 793                        /usr/lib/libz.so.1
";
    assert_eq!(
        deleted_in_maps(maps),
        ["/usr/lib/libssl.so.3", "/opt/My App/libapp.so"]
    );
}

#[test]
fn snapper_snapshots_newest_first_and_the_command_before_upgrading() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "proc/self/mounts",
        "proc /proc proc rw 0 0\n/dev/vda2 / btrfs rw,subvol=/@ 0 0\n",
    );
    write(r, "usr/bin/snapper", "");
    write(r, "usr/bin/btrfs", "");
    write(
        r,
        "etc/snapper/configs/root",
        "# subvolume to snapshot\nSUBVOLUME=\"/\"\nFSTYPE=\"btrfs\"\n",
    );
    // snapper's info.xml, as snapper writes it for each snapshot.
    for (num, kind, date, desc) in [
        (1, "single", "2026-11-01 08:00:00", "first root filesystem"),
        (2, "pre", "2026-11-20 09:30:00", "pacman -Syu"),
        (3, "post", "2026-11-20 09:31:10", "pacman -Syu &amp; more"),
    ] {
        write(
            r,
            &format!(".snapshots/{num}/info.xml"),
            &format!(
                "<?xml version=\"1.0\"?>\n<snapshot>\n  <type>{kind}</type>\n  <num>{num}</num>\n  \
                 <date>{date}</date>\n  <description>{desc}</description>\n  <cleanup>number</cleanup>\n</snapshot>\n"
            ),
        );
    }
    write(r, "usr/share/libalpm/hooks/05-snap-pac-pre.hook", "");
    let s = snapshots(r);
    assert_eq!(s.root_fs, "btrfs");
    assert_eq!(s.programs, ["snapper", "btrfs"]);
    assert_eq!(s.setups.len(), 1);
    let root_cfg = &s.setups[0];
    assert_eq!(
        (
            root_cfg.tool,
            root_cfg.name.as_str(),
            root_cfg.path.as_str()
        ),
        ("snapper", "root", "/")
    );
    assert!(root_cfg.readable);
    assert_eq!(root_cfg.count, 3);
    let ids: Vec<&str> = root_cfg.recent.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, ["3", "2", "1"]);
    assert_eq!(root_cfg.recent[0].description, "pacman -Syu & more");
    assert_eq!(root_cfg.recent[1].kind, "pre");
    assert!(
        s.before_upgrade
            .as_deref()
            .unwrap()
            .starts_with("sudo snapper -c root create")
    );
    assert_eq!(s.pacman_hooks, ["05-snap-pac-pre.hook"]);

    // A snapshot directory that cannot be read is said so, with the command that lists it.
    std::fs::remove_dir_all(r.join(".snapshots")).unwrap();
    write(r, ".snapshots", "not a directory");
    let s = snapshots(r);
    assert!(!s.setups[0].readable);
    assert!(
        s.findings
            .iter()
            .any(|f| f.contains("sudo snapper -c root list")),
        "{:?}",
        s.findings
    );
}

/// The shapes are Timeshift's own (linuxmint/timeshift `src/Core/Snapshot.vala`,
/// `update_control_file`; `Main.vala` names the directory `dt_created.format("%Y-%m-%d_%H-%M-%S")`
/// in local time and mounts the backup device at `/run/timeshift/PID/backup`).
#[test]
fn timeshift_btrfs_alone_or_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "proc/self/mounts", "/dev/vda2 / ext4 rw 0 0\n");
    write(r, "usr/bin/timeshift", "");
    write(
        r,
        "etc/timeshift/timeshift.json",
        "{\"backup_device_uuid\": \"u\", \"btrfs_mode\": \"false\"}",
    );
    // 1795852801 is 2026-11-28 08:00:01 UTC; the directory says 10:00:01 local (UTC+2).
    write(
        r,
        "timeshift/snapshots/2026-11-28_10-00-01/info.json",
        "{\"created\": \"1795852801\", \"sys-uuid\": \"u\", \"sys-distro\": \"Arch Linux\", \
         \"app-version\": \"25.07.7\", \"file_count\": \"412345\", \"tags\": \"ondemand\", \
         \"comments\": \"before the kernel\", \"live\": \"false\", \"type\": \"rsync\"}",
    );
    // No info.json: the directory's local time, said so.
    std::fs::create_dir_all(r.join("timeshift/snapshots/2026-11-29_10-00-01")).unwrap();
    write(r, "timeshift/snapshots/not-a-snapshot/info.json", "{}");
    let s = snapshots(r);
    assert_eq!(s.setups.len(), 1);
    let t = &s.setups[0];
    assert_eq!((t.tool, t.name.as_str()), ("timeshift", "rsync"));
    assert_eq!(t.path, "/timeshift/snapshots");
    assert_eq!(t.count, 2);
    assert_eq!(t.recent[0].id, "2026-11-29_10-00-01");
    assert_eq!(t.recent[0].date, "2026-11-29 10:00:01 (local)");
    assert_eq!(t.recent[1].date, "2026-11-28 08:00:01");
    assert_eq!(t.recent[1].kind, "ondemand");
    assert_eq!(t.recent[1].description, "before the kernel");
    assert_eq!(
        s.before_upgrade.as_deref(),
        Some("sudo timeshift --create --comments \"before upgrade\"")
    );

    // btrfs mode while Timeshift runs: its backup device is mounted under its pid.
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "proc/self/mounts", "/dev/vda2 / btrfs rw 0 0\n");
    write(r, "usr/bin/timeshift", "");
    write(
        r,
        "etc/timeshift/timeshift.json",
        "{\"btrfs_mode\": \"true\"}",
    );
    write(
        r,
        "run/timeshift/4242/backup/timeshift-btrfs/snapshots/2026-11-30_21-15-00/info.json",
        "{\"created\": \"1796073300\", \"tags\": \"boot daily\", \"comments\": \"\", \"type\": \"btrfs\"}",
    );
    let s = snapshots(r);
    let t = &s.setups[0];
    assert_eq!(t.name, "btrfs");
    assert_eq!(
        t.path,
        "/run/timeshift/4242/backup/timeshift-btrfs/snapshots"
    );
    assert!(t.readable);
    assert_eq!(
        (t.recent[0].date.as_str(), t.recent[0].kind.as_str()),
        ("2026-11-30 21:15:00", "boot daily")
    );

    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "proc/self/mounts",
        "/dev/vda2 / btrfs rw 0 0\n",
    );
    write(root.path(), "usr/bin/btrfs", "");
    let s = snapshots(root.path());
    assert!(s.setups.is_empty());
    assert!(
        s.before_upgrade
            .as_deref()
            .unwrap()
            .starts_with("sudo btrfs subvolume snapshot -r / ")
    );

    let root = tempfile::tempdir().unwrap();
    write(root.path(), "proc/self/mounts", "/dev/vda2 / ext4 rw 0 0\n");
    let s = snapshots(root.path());
    assert_eq!(s.before_upgrade, None);
    assert!(s.findings.iter().any(|f| f.contains("no snapshot tool")));
}
