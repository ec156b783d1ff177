//! What archgate's asking sudo checks on the exact command a route's script gives it, after the
//! person's Enter and before root's sudo asks the password (`as_sudo.rs`):
//!
//! - **sudo asks for this very argv.** Class (attack 12 F2): *sudo's decision for a command
//!   predicted from a query about another command* — the helper's probes before the Enter ask
//!   about each program without its arguments, and a command-specific `Defaults!ALIAS
//!   !authenticate` (or a `NOPASSWD` rule) whose alias carries arguments matches only the
//!   script's real line. Here the arguments are known: sudo is asked with `tools/handoff/sudo.rs`'s
//!   probe (`-n -D /nonexistent/…`) about the script's options and command exactly as given, and
//!   anything but "a password is required" runs nothing.
//! - **pacman's configuration is the one this pacman reads.** Class (attack 13 F2): *the check
//!   reads a different object than the privileged command uses* — the routes' check read the
//!   file archgate's (agent-writable) config names, while the script's pacman read
//!   `/etc/pacman.conf`. Here a command that runs pacman (or `pacman-key`), directly, through
//!   `env` or in a shell's text, has the file its own `--config` names (else pacman's default)
//!   judged with everything it names (`tools/handoff/pacman_reads.rs`), and every directory its
//!   own path options name root's alone.
//!
//! sudo's options are split as sudo 1.9 does (`+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`);
//! a script that changes sudo's directory or root itself (`-D`, `-R`) is refused: the probe's
//! own `-D` must be the one sudo judges.

use crate::tools::handoff::pinned;
use crate::tools::handoff::sudo::{self, Asks, PROBE_DIR};

/// sudo's short options that take a value (the next argument when last in a cluster).
const VALUE_SHORT: &str = "aCcDgpRrTtUu";
/// sudo's long options that take a value as the next argument when not given with `=`.
const VALUE_LONG: &[&str] = &[
    "auth-type",
    "close-from",
    "login-class",
    "chdir",
    "group",
    "prompt",
    "chroot",
    "role",
    "type",
    "command-timeout",
    "other-user",
    "user",
];

/// Every long option sudo 1.9 knows, spelled in full. sudo (getopt_long) also takes any unique
/// abbreviation (`--pro` is `--prompt`); archgate reads only these spellings and refuses any
/// other, so the probe's options are split exactly as the run's (attack 17 F2).
const LONG: &[&str] = &[
    "askpass",
    "auth-type",
    "background",
    "bell",
    "chdir",
    "chroot",
    "close-from",
    "command-timeout",
    "edit",
    "group",
    "help",
    "host",
    "list",
    "login",
    "login-class",
    "no-update",
    "non-interactive",
    "other-user",
    "preserve-env",
    "preserve-groups",
    "prompt",
    "remove-timestamp",
    "reset-timestamp",
    "role",
    "set-home",
    "shell",
    "stdin",
    "type",
    "user",
    "validate",
    "version",
];
/// sudo's short options (`+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`).
const SHORT: &str = "AaBbCcDEegHhiKklNnPpRrSsTtUuVv";

/// A sudo invocation split: sudo's own options (with their values) and the command.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct SudoCall {
    pub options: Vec<String>,
    pub command: Vec<String>,
    /// Whether root runs something: a command, a shell (`-s`, `-i`) or an editor (`-e`).
    pub runs: bool,
}

/// Splits `args` (what the script gave sudo) as sudo does; the reason when the script moves
/// sudo's directory or root.
pub(super) fn split(args: &[String]) -> Result<SudoCall, String> {
    let mut options = Vec::new();
    let mut runs = false;
    let mut i = 0;
    let moves = |o: &str| {
        Err(format!(
            "the script gives sudo {o}, which archgate does not hand off"
        ))
    };
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            if !LONG.contains(&name) {
                return Err(format!(
                    "the script gives sudo `{a}`, which is not one of sudo's options spelled in \
                     full: archgate reads sudo's command line only so"
                ));
            }
            if matches!(name, "chdir" | "chroot") {
                return moves(a);
            }
            runs |= matches!(name, "shell" | "login" | "edit");
            options.push(a.clone());
            if !long.contains('=') && VALUE_LONG.contains(&name) {
                options.extend(args.get(i + 1).cloned());
                i += 1;
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            options.push(a.clone());
            let cluster: Vec<char> = a[1..].chars().collect();
            for (j, ch) in cluster.iter().enumerate() {
                if !SHORT.contains(*ch) {
                    return Err(format!(
                        "the script gives sudo `{a}`, with `-{ch}`, which sudo does not know"
                    ));
                }
                if matches!(ch, 'D' | 'R') {
                    return moves(a);
                }
                runs |= matches!(ch, 's' | 'i' | 'e');
                if VALUE_SHORT.contains(*ch) {
                    if j + 1 == cluster.len() {
                        options.extend(args.get(i + 1).cloned());
                        i += 1;
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    let command = args[i.min(args.len())..].to_vec();
    runs |= !command.is_empty();
    Ok(SudoCall {
        options,
        command,
        runs,
    })
}

/// The exact probe for `call`: root's sudo with the script's own options, then `-k -n -D
/// PROBE_DIR`, then the command as given (`tools/handoff/sudo.rs` says what sudo answers).
pub(super) fn probe_argv(sudo: &str, call: &SudoCall) -> Vec<String> {
    let mut v = vec![sudo.to_owned()];
    v.extend(call.options.iter().cloned());
    v.extend(["-k", "-n", "-D", PROBE_DIR].map(str::to_owned));
    if !call.command.is_empty() {
        v.push("--".into());
        v.extend(call.command.iter().cloned());
    }
    v
}

/// Asks root's `sudo` (at `sudo_path`) the exact probe for `call`, in the C locale with the
/// script's search path (where sudo finds a command named without one when sudoers sets no
/// `secure_path`). Runs nothing as root: the probe stops before it would.
pub(super) async fn sudo_asks_for(sudo_path: &std::path::Path, call: &SudoCall) -> Asks {
    use archgate_core::exec::{CommandSpec, ExecConfig, Executor};
    if !call.runs {
        return Asks::Yes;
    }
    let argv = probe_argv(&sudo_path.to_string_lossy(), call);
    let search_dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_else(|| pinned::DIRS.iter().map(Into::into).collect());
    let exec = Executor::new(ExecConfig {
        search_dirs,
        require_root_owned: true,
        person_uid: None,
        ..ExecConfig::default()
    });
    let spec = CommandSpec::new(argv[0].clone())
        .args(argv[1..].iter().cloned())
        .clear_env()
        .env("LC_ALL", "C")
        .timeout(std::time::Duration::from_secs(10));
    let spec = match exec.pin(spec) {
        Ok(s) => s,
        Err(e) => return Asks::Unknown(format!("sudo cannot be asked: {e}")),
    };
    match archgate_core::exec::run_for_person(spec).await {
        Ok(o) => sudo::judge(o.status.code, &o.stderr_lossy()),
        Err(e) => Asks::Unknown(e.to_string()),
    }
}

/// pacman's (and pacman-key's) long options that name a file or a directory it reads, in full.
const PATH_LONG: &[&str] = &[
    "config", "root", "dbpath", "cachedir", "gpgdir", "hookdir", "logfile",
];

/// A pacman's configuration, the directories its path options name, and the database
/// directories among them (`-b`/`--dbpath`: their contents are judged too).
type PacmanRun = (
    std::path::PathBuf,
    Vec<std::path::PathBuf>,
    Vec<std::path::PathBuf>,
);

/// The pacman runs in `command` (by name or path, through `env`, or inside a shell's text): for
/// each, the configuration it reads (its `--config`, else pacman's default) and the directories
/// its own path options name. pacman parses with getopt_long, which takes any unique
/// abbreviation of a long option (`--hookd`) and a short option's value attached (`-r/x`,
/// `-Syb/x`): an abbreviation of a path option and `--sysroot` (pacman then reads another
/// root's configuration) refuse; attached values are read (attack 17 F1, F3; class: *a command
/// line judged by a parser other than the one the privileged program uses*).
pub(super) fn pacman_runs(command: &[String]) -> Result<Vec<PacmanRun>, String> {
    let tokens: Vec<&str> = command
        .iter()
        .flat_map(|w| w.split(|c: char| c.is_whitespace() || "'\";|&()<>`".contains(c)))
        .filter(|t| !t.is_empty())
        .collect();
    let mut runs = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let base = t.rsplit('/').next().unwrap_or(t);
        if !matches!(base, "pacman" | "pacman-key") {
            continue;
        }
        let mut conf = std::path::PathBuf::from(crate::tools::handoff::pacman_reads::DEFAULT_CONF);
        let mut dirs = Vec::new();
        let mut dbs = Vec::new();
        let rest = &tokens[i + 1..];
        let mut j = 0;
        while j < rest.len() {
            let a = rest[j];
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v)),
                _ => (a, None),
            };
            let value = || inline.or_else(|| rest.get(j + 1).copied());
            if let Some(long) = name.strip_prefix("--") {
                if !long.is_empty() && "sysroot".starts_with(long) {
                    return Err(format!(
                        "pacman is given `{a}`: it would read another root's configuration, \
                         which archgate does not hand off"
                    ));
                }
                if let Some(full) = PATH_LONG
                    .iter()
                    .find(|full| !long.is_empty() && full.starts_with(long) && **full != long)
                {
                    return Err(format!(
                        "pacman is given `{a}`, an abbreviation of `--{full}`: archgate judges \
                         pacman's path options only spelled in full"
                    ));
                }
            } else if name.len() > 2 && name.starts_with('-') {
                // A cluster of short options: `r` and `b` take the rest, or the next word.
                if let Some(at) = name[1..].find(['r', 'b']) {
                    let attached = &name[at + 2..];
                    let v = if attached.is_empty() {
                        rest.get(j + 1).copied().unwrap_or("")
                    } else {
                        attached
                    };
                    dirs.push(std::path::PathBuf::from(v));
                    if name.as_bytes()[at + 1] == b'b' {
                        dbs.push(std::path::PathBuf::from(v));
                    }
                    j += if attached.is_empty() { 2 } else { 1 };
                    continue;
                }
            }
            match name {
                "--config" => conf = value().unwrap_or("").into(),
                "-r" | "--root" | "-b" | "--dbpath" | "--cachedir" | "--gpgdir" | "--hookdir"
                | "--logfile" => {
                    let v = std::path::PathBuf::from(value().unwrap_or(""));
                    if name == "-b" || name == "--dbpath" {
                        dbs.push(v.clone());
                    }
                    dirs.push(if name == "--logfile" {
                        v.parent()
                            .map(std::path::Path::to_path_buf)
                            .unwrap_or_default()
                    } else {
                        v
                    });
                }
                _ => {
                    j += 1;
                    continue;
                }
            }
            j += if inline.is_some() { 1 } else { 2 };
        }
        runs.push((conf, dirs, dbs));
    }
    Ok(runs)
}

/// Whether every pacman in `command` reads a configuration root's alone, all it names included,
/// and its path options name places root's alone. The reason when not.
pub(super) fn pacman_reads_roots_alone(command: &[String]) -> Result<(), String> {
    for (conf, dirs, dbs) in pacman_runs(command)? {
        let c = archgate_pacman::conf::PacmanConf::load(&conf)
            .map_err(|e| format!("pacman's configuration {}: {e}", conf.display()))?;
        crate::tools::handoff::pacman::check_conf(&c).map_err(|e| e.message)?;
        for d in dirs {
            if !d.is_absolute() {
                return Err(format!(
                    "pacman is given {} by a relative path: it is judged only by an absolute one",
                    d.display()
                ));
            }
            let existing = d
                .ancestors()
                .find(|a| a.exists())
                .unwrap_or(std::path::Path::new("/"));
            pinned::root_dir(existing)?;
        }
        // The database pacman reads instead of its configuration's (attack 29 F8's class).
        for d in dbs {
            crate::tools::handoff::pacman_reads::database_roots_alone(&d)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn sudos_options_are_split_from_the_command_as_sudo_splits_them() {
        let c = split(&v(&["-E", "-u", "root", "env", "X=1", "pacman", "-Syu"])).unwrap();
        assert_eq!(c.options, v(&["-E", "-u", "root"]));
        assert_eq!(c.command, v(&["env", "X=1", "pacman", "-Syu"]));
        let c = split(&v(&["-uroot", "--prompt", "p:", "--", "-weird"])).unwrap();
        assert_eq!(c.options, v(&["-uroot", "--prompt", "p:"]));
        assert_eq!(c.command, v(&["-weird"]));
        // Validation alone runs nothing as root; a shell does.
        assert!(!split(&v(&["-v"])).unwrap().runs);
        assert!(split(&v(&["-s"])).unwrap().runs);
        // The probe's directory must be the one sudo judges.
        for moved in [
            &["-D", "/", "id"][..],
            &["-ED/", "id"],
            &["--chdir=/", "id"],
            &["-R", "/x", "id"],
        ] {
            assert!(split(&v(moved)).is_err(), "{moved:?}");
        }
    }

    /// Attack 17 F2: sudo takes `--pro` as `--prompt`, which would swallow the probe's `-k`; only
    /// options spelled in full are read, and an unknown short one refuses too.
    #[test]
    fn sudos_abbreviated_or_unknown_options_refuse() {
        for bad in [
            &["--pro", "pacman", "/usr/bin/id"][..],
            &["--chd=/", "id"],
            &["--chr=/x", "id"],
            &["--us", "root", "id"],
            &["-Z", "id"],
        ] {
            assert!(split(&v(bad)).is_err(), "{bad:?}");
        }
        assert!(split(&v(&["--preserve-env=PATH", "--user=root", "id"])).is_ok());
    }

    /// Attack 17 F1, F3: pacman's abbreviations of its path options, attached short values and
    /// `--sysroot`.
    #[test]
    fn pacman_is_read_as_getopt_long_reads_it() {
        for bad in [
            "pacman --hookd=/home/p/hooks -U x",
            "pacman --roo /home/p -S x",
            "pacman --conf /home/p/c -S x",
            "pacman --sysroot /srv/r -Syu",
            "pacman --sysr=/srv/r -Syu",
        ] {
            assert!(pacman_runs(&v(&["sh", "-c", bad])).is_err(), "{bad}");
        }
        assert_eq!(
            pacman_runs(&v(&["pacman", "-Syr/home/p", "x"])).unwrap(),
            [("/etc/pacman.conf".into(), vec!["/home/p".into()], vec![])]
        );
        assert_eq!(
            pacman_runs(&v(&["pacman", "-Sb", "/home/q", "x"])).unwrap(),
            [(
                "/etc/pacman.conf".into(),
                vec!["/home/q".into()],
                vec!["/home/q".into()]
            )]
        );
        // Options that name no path pass as they are.
        assert!(pacman_runs(&v(&["pacman", "-Syu", "--noconfirm", "--needed"])).is_ok());
    }

    /// Attack 12 F2: `Cmnd_Alias X = /usr/bin/pacman … handoff-hello` + `Defaults!X
    /// !authenticate` matched only the script's real line; the probe is that very line.
    #[test]
    fn the_probe_is_the_scripts_own_line_with_never_prompt_and_a_directory_that_is_not() {
        let c = split(&v(&[
            "-E",
            "pacman",
            "-S",
            "--noconfirm",
            "--needed",
            "handoff-hello",
        ]))
        .unwrap();
        assert_eq!(
            probe_argv("/usr/bin/sudo", &c),
            v(&[
                "/usr/bin/sudo",
                "-E",
                "-k",
                "-n",
                "-D",
                PROBE_DIR,
                "--",
                "pacman",
                "-S",
                "--noconfirm",
                "--needed",
                "handoff-hello"
            ])
        );
    }

    /// Attack 29 F8's class in a route's line: a database pacman is pointed at with `--dbpath`
    /// is judged to its files, as the configuration's `DBPath` is.
    #[test]
    fn a_database_a_routes_pacman_is_pointed_at_is_judged_to_its_files() {
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("pacman.conf");
        std::fs::write(&conf, "[options]\n").unwrap();
        let pkg = d.path().join("db/local/foo-1-1");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("install"), "pre_remove() { :; }\n").unwrap();
        let line = |db: &str| {
            v(&[
                "pacman",
                "--config",
                &conf.display().to_string(),
                db,
                &d.path().join("db").display().to_string(),
                "-R",
                "foo",
            ])
        };
        if nix::unistd::geteuid().is_root() {
            pacman_reads_roots_alone(&line("--dbpath")).unwrap();
            let nobody = Some(nix::unistd::Uid::from_raw(65534));
            nix::unistd::chown(&pkg.join("install"), nobody, None).unwrap();
        }
        for db in ["--dbpath", "-b"] {
            let e = pacman_reads_roots_alone(&line(db)).unwrap_err();
            assert!(
                e.contains("foo-1-1") || !nix::unistd::geteuid().is_root(),
                "{db}: {e}"
            );
        }
    }

    /// Attack 13 F2: the file judged is the one this pacman reads, not archgate's setting.
    #[test]
    fn the_configuration_judged_is_the_one_this_pacman_reads() {
        let default = std::path::PathBuf::from("/etc/pacman.conf");
        assert_eq!(
            pacman_runs(&v(&["pacman", "-S", "x"])).unwrap(),
            [(default.clone(), vec![], vec![])]
        );
        assert_eq!(
            pacman_runs(&v(&[
                "env",
                "OMARCHY_UPDATE_PACMAN=1",
                "/usr/bin/pacman",
                "--config",
                "/t/p.conf",
                "-Syu"
            ]))
            .unwrap(),
            [("/t/p.conf".into(), vec![], vec![])]
        );
        assert_eq!(
            pacman_runs(&v(&[
                "bash",
                "-c",
                "pacman --config=/t/q.conf --hookdir /h --logfile /l/x.log -Syu"
            ]))
            .unwrap(),
            [("/t/q.conf".into(), vec!["/h".into(), "/l".into()], vec![])]
        );
        assert!(
            pacman_runs(&v(&["tee", "/etc/pacman-mirrors"]))
                .unwrap()
                .is_empty()
        );
        // A configuration that is not root's alone (the person's file) runs nothing.
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("pacman.conf");
        std::fs::write(&conf, "[options]\n").unwrap();
        if nix::unistd::geteuid().is_root() {
            let nobody = Some(nix::unistd::Uid::from_raw(65534));
            nix::unistd::chown(&conf, nobody, None).unwrap();
        }
        let e =
            pacman_reads_roots_alone(&v(&["pacman", "--config", conf.to_str().unwrap(), "-Syu"]))
                .unwrap_err();
        assert!(e.contains("owned by uid"), "{e}");
    }
}
