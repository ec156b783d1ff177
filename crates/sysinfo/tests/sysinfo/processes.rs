//! `processes`: the real /proc of this machine, with processes the test starts (a CPU burner,
//! a memory holder, one with many open files, a child with a secret on its command line),
//! compared with `ps`; hostile pids refused with typed errors.

// These tests start the processes they then look at.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use archgate_sysinfo::processes::{self, SortBy, TopOptions, unit_of_cgroup};

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(script: &str, arg0: &str) -> Kill {
    Kill(
        Command::new("/bin/sh")
            .args(["-c", script, arg0])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn ps(pid: u32, field: &str) -> String {
    let out = Command::new("ps")
        .args(["-o", &format!("{field}="), "-p", &pid.to_string()])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn opts(sort: SortBy, limit: usize, cmdline: bool) -> TopOptions {
    TopOptions {
        sort,
        limit,
        sample: Duration::from_millis(400),
        cmdline,
    }
}

#[tokio::test]
async fn a_busy_process_tops_the_cpu_list_and_a_big_one_the_memory_list() {
    let burner = spawn("while :; do :; done", "archgate-burner");
    let pid = burner.0.id();
    // Let it get going.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The test machine is shared with other builds: the burner must be near the top, and busy.
    let top = processes::top(Path::new("/"), &opts(SortBy::Cpu, 10, false))
        .await
        .unwrap();
    assert!(top.total > 10);
    assert_eq!(top.processes.len(), 10);
    assert!(
        top.processes.iter().all(|p| p.pid != std::process::id()),
        "the asking process is left out"
    );
    let me = top
        .processes
        .iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("the burner is not in the top 10: {:?}", top.processes));
    assert!(me.cpu_percent > 10.0, "{me:?}");
    assert!(me.cmdline.is_none(), "command lines only when asked");
    assert_eq!(me.name, "sh");
    let cpus: Vec<f64> = top.processes.iter().map(|p| p.cpu_percent).collect();
    assert!(cpus.windows(2).all(|w| w[0] >= w[1]), "{cpus:?}");

    let top = processes::top(Path::new("/"), &opts(SortBy::Memory, 3, false))
        .await
        .unwrap();
    let rss: Vec<u64> = top.processes.iter().map(|p| p.rss_bytes).collect();
    assert!(rss.windows(2).all(|w| w[0] >= w[1]), "{rss:?}");
    // The largest resident set is what ps says it is (ps counts KiB).
    let first = &top.processes[0];
    let ps_rss: u64 = ps(first.pid, "rss").parse().unwrap_or(0) * 1024;
    let diff = first.rss_bytes.abs_diff(ps_rss);
    assert!(
        diff <= first.rss_bytes / 10 + (1 << 20),
        "{first:?} vs ps {ps_rss}"
    );
}

#[tokio::test]
async fn one_process_in_detail_matches_proc_and_ps() {
    // Ten extra open files: fds 3-12.
    let holder = spawn(
        "exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8</dev/null 9</dev/null; sleep 30",
        "archgate-secret-token-5f3a",
    );
    let pid = holder.0.id();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let p = processes::process(Path::new("/"), pid, false).unwrap();
    assert_eq!(p.pid, pid);
    assert_eq!(p.ppid, std::process::id());
    assert_eq!(p.name, ps(pid, "comm"));
    assert_eq!(p.user, ps(pid, "user"));
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(
        p.exe.value().map(String::as_str),
        Some(exe.to_str().unwrap())
    );
    assert!(!p.exe_deleted);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    assert_eq!(p.open_files.value(), Some(&fds));
    assert!(fds >= 10, "{fds}");
    assert!(p.age_seconds < 60, "{p:?}");
    // ps's etimes: seconds since start, from the same start time.
    let etimes: u64 = ps(pid, "etimes").parse().unwrap();
    assert!(
        p.age_seconds.abs_diff(etimes) <= 1,
        "{} vs {etimes}",
        p.age_seconds
    );
    assert!(p.memory.rss_bytes > 0);
    assert!(p.cmdline.is_none());
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("archgate-secret-token"), "{json}");

    let p = processes::process(Path::new("/"), pid, true).unwrap();
    let cmd = p.cmdline.unwrap();
    assert_eq!(cmd[0], "/bin/sh");
    assert_eq!(cmd.last().unwrap(), "archgate-secret-token-5f3a");
    // The same with the top list: absent unless asked.
    let top = processes::top(Path::new("/"), &opts(SortBy::Memory, 100, false))
        .await
        .unwrap();
    assert!(top.processes.iter().all(|e| e.cmdline.is_none()));
}

#[test]
fn hostile_pids_are_refused_with_their_reason() {
    let root = Path::new("/");
    let e = processes::process(root, 0, false).unwrap_err();
    assert_eq!(e.kind(), "invalid_argument");
    let max = processes::pid_max(root).unwrap();
    for pid in [max + 1, u32::MAX] {
        let e = processes::process(root, pid, false).unwrap_err();
        assert_eq!(e.kind(), "invalid_argument", "{pid}");
        assert!(e.to_string().contains("pid_max"), "{e}");
    }
    // A pid that was a process and is one no longer.
    let mut c = Command::new("/bin/true").spawn().unwrap();
    let gone = c.id();
    c.wait().unwrap();
    let e = processes::process(root, gone, false).unwrap_err();
    assert_eq!(e.kind(), "not_found", "{e}");
    assert!(e.to_string().contains(&gone.to_string()));
}

#[test]
fn a_thread_id_is_not_a_process() {
    // This test binary's own threads: /proc/TID exists, but it is not a process.
    let me = std::process::id();
    let handle = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(500)));
    let tids: Vec<u32> = std::fs::read_dir(format!("/proc/{me}/task"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|t| *t != me)
        .collect();
    assert!(!tids.is_empty());
    let e = processes::process(Path::new("/"), tids[0], false).unwrap_err();
    assert_eq!(e.kind(), "not_found");
    handle.join().unwrap();
}

#[test]
fn the_unit_is_read_from_the_cgroup_path() {
    let cases: &[(&str, Option<(&str, bool)>)] = &[
        (
            "/system.slice/NetworkManager.service",
            Some(("NetworkManager.service", false)),
        ),
        ("/init.scope", Some(("init.scope", false))),
        (
            "/user.slice/user-1000.slice/session-2.scope",
            Some(("session-2.scope", false)),
        ),
        (
            "/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox@a1b2.service",
            Some(("app-firefox@a1b2.service", true)),
        ),
        (
            "/user.slice/user-1000.slice/user@1000.service/init.scope",
            Some(("init.scope", true)),
        ),
        (
            "/user.slice/user-1000.slice/user@1000.service",
            Some(("user@1000.service", false)),
        ),
        ("/", None),
        ("/system.slice", None),
    ];
    for (path, want) in cases {
        let got = unit_of_cgroup(path).map(|u| (u.name, u.user));
        assert_eq!(got, want.map(|(n, u)| (n.to_owned(), u)), "{path}");
    }
    // This process: the unit its own cgroup names, if any.
    let me = processes::process(Path::new("/"), std::process::id(), false).unwrap();
    let cg = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = cg
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_owned);
    assert_eq!(me.cgroup, path);
    assert_eq!(me.unit, path.as_deref().and_then(unit_of_cgroup));
}
