//! An Omarchy route's hand-off as this helper judges it itself: from root's files, never from
//! the archgate process that asks (attack 9 F1; class: *the helper's decision about what runs
//! taken from the same-uid process it stopped trusting* — attack 8 F1, F2 closed it for the
//! operations of the closed set and left the route's `script` branch open: any root-owned
//! program, `/usr/bin/bash -c …` included, ran as a "route script" with the daemon's own
//! environment and no program probed).
//!
//! From the other end the helper takes only the script's path and the arguments — what the
//! person is shown — and the files the server pinned. Then it checks, itself: the path is an
//! Omarchy script (`…/bin/omarchy-NAME`, root's all the way, the file itself and not a link
//! elsewhere); the script's own header says it needs root (or it is seen elevating); the
//! arguments fit the usage its header gives (`# omarchy:args=`, the text Omarchy's registry
//! stores as written: `archgate_desktop::omarchy::usage`) and the script's judgement of them;
//! the script and the scripts it calls (read by this helper, under root alone) ask nothing of
//! their own, run no argument as code, and reach root only through `sudo` by name; an argument
//! that names a file is one the server pinned, the person's or root's all the way. The
//! environment (`OMARCHY_PATH`, the script's own Omarchy), the programs sudo is asked about and
//! the words for what it changes are the helper's own.

use archgate_desktop::omarchy::classify::{self, RouteTier};
use archgate_desktop::omarchy::registry::Route;
use archgate_desktop::omarchy::usage::Usage;
use archgate_desktop::omarchy::{judge_by_script, judge_call, route_command, script};
use std::path::{Path, PathBuf};

use crate::tools::handoff::pinned;
use crate::tools::handoff::registry::{Prepared, RouteScript};

/// Largest script header read, in bytes.
const MAX_SCRIPT: u64 = 256 * 1024;

/// The route's hand-off rebuilt by this helper (see the module documentation): the same argv,
/// with the helper's own script facts, environment and words. The reason when it is refused.
pub(super) fn rebuilt_route(p: &Prepared, pacman_conf: &Path) -> Result<Prepared, String> {
    if p.op.is_some() {
        return Err("the hand-off names both an operation and a route's script".into());
    }
    let given = p.script.as_ref().ok_or("the hand-off names no route")?;
    let [first, args @ ..] = p.argv.as_slice() else {
        return Err("an empty command".into());
    };
    let path = Path::new(first);
    let (dir, name) = omarchy_script(path)?;
    let text = header_text(path)?;
    let header = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("# omarchy:"))
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().to_owned())
    };
    let usage_text = header("args").unwrap_or_default();
    let words: Vec<String> = name
        .trim_start_matches("omarchy-")
        .split('-')
        .map(str::to_owned)
        .collect();
    let mut route = Route {
        route: format!("omarchy {}", words.join(" ")),
        words: words.clone(),
        binary: name.clone(),
        group: words.first().cloned().unwrap_or_default(),
        summary: header("summary").unwrap_or_default(),
        requires_sudo: header("requires-sudo").as_deref() == Some("true"),
        hidden: false,
        usage: Usage::parse(&usage_text),
        args: usage_text,
        examples: Vec::new(),
        aliases: Vec::new(),
        tier: RouteTier::Act,
        targets_archgate: false,
    };
    route_command(&route, args).map_err(|e| e.to_string())?;
    // Read as the server reads it, but by this helper, under root alone, in the script's own
    // directory (where it finds the scripts it calls).
    let exec = archgate_core::exec::Executor::new(archgate_core::exec::ExecConfig {
        search_dirs: vec![dir.clone()],
        require_root_owned: true,
        person_uid: None,
        ..archgate_core::exec::ExecConfig::default()
    });
    // The tree is the install the script lies in (`bin/`'s parent), judged under root alone.
    let facts = script::scan(&exec, dir.parent(), &name);
    judge_by_script(&mut route, &facts);
    judge_call(&mut route, &facts, args).map_err(|e| e.to_string())?;
    let refused = |why: String| Err(format!("{first}: {why}; it is not handed off"));
    if facts.unread {
        return refused("the script cannot be read".into());
    }
    if !route.requires_sudo {
        return refused("it needs no root (run it with omarchy_run)".into());
    }
    if let Some(at) = &facts.runs_values {
        return refused(format!("it runs its arguments as code ({at})"));
    }
    if classify::runs_values(&words) || classify::runs_route(&words, args) {
        return refused("its arguments name what runs".into());
    }
    if let Some(why) = crate::tools::handoff::route::script_refusal(&facts) {
        return refused(format!("it {why}"));
    }
    files_are_pinned(args, given)?;
    let script = RouteScript {
        sha256: given.sha256.clone(),
        env: Vec::new(),
        files: given.files.clone(),
        sudo_programs: facts.sudo_programs.iter().cloned().collect(),
    };
    if crate::tools::handoff::route::runs_pacman(&script) {
        let c = archgate_pacman::conf::PacmanConf::load(pacman_conf)
            .map_err(|e| format!("pacman's configuration: {e}"))?;
        crate::tools::handoff::pacman::check_conf(&c).map_err(|e| e.message)?;
    }
    let omarchy = dir
        .parent()
        .map(Path::to_path_buf)
        .ok_or("the script's directory has no parent")?;
    pinned::root_dir(&omarchy)?;
    Ok(Prepared {
        changes: format!(
            "runs Omarchy's `{}`{}. Its script runs sudo itself: each sudo inside names its \
             command and asks your password",
            route.route,
            if route.summary.is_empty() {
                String::new()
            } else {
                format!(": {}", route.summary)
            }
        ),
        lock: None,
        script: Some(RouteScript {
            env: vec![(
                "OMARCHY_PATH".to_owned(),
                omarchy.to_string_lossy().into_owned(),
            )],
            ..script
        }),
        ..p.clone()
    })
}

/// `path` as an Omarchy script: `…/bin/omarchy-NAME`, root's all the way and the very file named
/// (no link to another). Its directory and file name.
fn omarchy_script(path: &Path) -> Result<(PathBuf, String), String> {
    let not = |why: &str| {
        Err(format!(
            "{} is not an Omarchy script: {why}",
            path.display()
        ))
    };
    if !path.is_absolute() {
        return not("not an absolute path");
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return not("no file name");
    };
    let well_named = name.strip_prefix("omarchy-").is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    if !well_named {
        return not("its name is not omarchy-NAME");
    }
    let Some(dir) = path
        .parent()
        .filter(|d| d.file_name() == Some("bin".as_ref()))
    else {
        return not("it is not in an Omarchy bin/ directory");
    };
    let real = pinned::root_file(path)?;
    if real != path {
        return not(&format!("it is a link to {}", real.display()));
    }
    pinned::root_dir(dir)?;
    Ok((dir.to_path_buf(), name.to_owned()))
}

/// The script's text, bounded.
fn header_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCRIPT).read_to_string(&mut text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text)
}

/// Every argument that names a file is one the server pinned (the helper checks it unchanged
/// after the Enter) and the person's or root's all the way: a path another uid controls could
/// be any file by the time the script reads it.
fn files_are_pinned(args: &[String], script: &RouteScript) -> Result<(), String> {
    let me = nix::unistd::getuid().as_raw();
    for a in args.iter().filter(|a| a.starts_with('/')) {
        if !script
            .files
            .iter()
            .any(|(f, _)| f.as_os_str() == a.as_str())
        {
            return Err(format!(
                "the argument {a:?} names a file archgate did not pin when it showed the command"
            ));
        }
        archgate_core::exec::trusted_path(Some(me), Path::new(a))
            .map_err(|e| format!("the argument {a:?}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in Omarchy tree with `bin/omarchy-NAME` holding `body` after the header lines of
    /// Omarchy 4's bin/omarchy-pkg-add (our own text in its shape).
    fn tree(name: &str, args: &str, body: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = bin.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/bash\n\n# omarchy:summary=Install packages\n# omarchy:args={args}\n# omarchy:requires-sudo=true\n\n{body}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        (d, script)
    }

    /// The rebuild with a pacman.conf of pacman's defaults in a directory of the test's (root's
    /// when the tests run as root, as in CI).
    fn rebuilt_route_here(p: &Prepared) -> Result<Prepared, String> {
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("pacman.conf");
        std::fs::write(&conf, "[options]\nArchitecture = auto\n").unwrap();
        rebuilt_route(p, &conf)
    }

    /// What the other end sends: the argv, and a script part of its choosing.
    fn sent(argv: &[&str], env: &[(&str, &str)]) -> Prepared {
        Prepared {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            changes: "installs nothing, honestly".into(),
            script: Some(RouteScript {
                sha256: "0".repeat(64),
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                files: Vec::new(),
                sudo_programs: Vec::new(),
            }),
            ..Prepared::for_tests("1-2-3")
        }
    }

    /// Whether this test's temporary directories are root's all the way (the tests run as root
    /// in CI; as a normal user every stand-in is the person's, and refused for that).
    fn roots_alone(d: &Path) -> bool {
        pinned::root_dir(d).is_ok()
    }

    #[test]
    fn a_program_that_is_no_omarchy_script_is_never_run_as_one() {
        // Attack 9 F1: the agent's own archgate sent `/usr/bin/bash -c …` as a route's script.
        for argv in [
            vec!["/usr/bin/bash", "-c", "sudo -n id"],
            vec!["bin/omarchy-pkg-add", "x"],
            vec!["/usr/share/omarchy-pkg-add", "x"],
        ] {
            let e = rebuilt_route_here(&sent(&argv, &[])).unwrap_err();
            assert!(e.contains("not an Omarchy script"), "{argv:?}: {e}");
        }
        let mut both = sent(&["/usr/bin/bash"], &[]);
        both.op = Some(crate::tools::handoff::ops::Op::Install);
        assert!(rebuilt_route_here(&both).unwrap_err().contains("both"));
    }

    #[test]
    fn the_helper_judges_the_script_and_its_arguments_itself_and_builds_its_environment() {
        let (d, script) = tree(
            "omarchy-pkg-add",
            "<packages...>",
            "sudo pacman -S --noconfirm --needed \"$@\" || exit 1",
        );
        let path = script.to_string_lossy().into_owned();
        let p = sent(
            &[&path, "handoff-hello"],
            &[("OMARCHY_PATH", "/elsewhere"), ("BASH_ENV", "/tmp/x")],
        );
        if !roots_alone(d.path()) {
            let e = rebuilt_route_here(&p).unwrap_err();
            assert!(e.contains("owned by uid"), "{e}");
            return;
        }
        let own = rebuilt_route_here(&p).unwrap();
        let s = own.script.unwrap();
        // The environment and the programs sudo is asked about are the helper's, not the other
        // end's; so are the words shown for what it changes.
        assert_eq!(
            s.env,
            [(
                "OMARCHY_PATH".to_owned(),
                d.path().to_string_lossy().into_owned()
            )]
        );
        assert_eq!(s.sudo_programs, ["pacman"]);
        assert!(
            own.changes.contains("`omarchy pkg add`: Install packages")
                && !own.changes.contains("honestly"),
            "{}",
            own.changes
        );
        // An option the usage does not list is refused here too (`--config` would hand pacman
        // the agent's configuration).
        let e = rebuilt_route_here(&sent(&[&path, "--config", "/tmp/evil.conf"], &[])).unwrap_err();
        assert!(e.contains("usage"), "{e}");
    }

    #[test]
    fn a_script_that_asks_or_reaches_root_past_sudo_by_name_is_refused_by_the_helper() {
        for (body, why) in [
            (
                "gum confirm \"Reboot?\" && sudo reboot",
                "asks its own questions",
            ),
            ("/usr/bin/sudo pacman -S --noconfirm \"$@\"", "past a sudo"),
            ("pkexec pacman -S --noconfirm \"$@\"", "past a sudo"),
            (
                "d=$(mktemp -d)\nsudo cp -a \"$d/.\" /usr/share/x/",
                "makes or changes files as you",
            ),
        ] {
            let (d, script) = tree("omarchy-pkg-add", "<packages...>", body);
            let path = script.to_string_lossy().into_owned();
            let e = rebuilt_route_here(&sent(&[&path, "x"], &[])).unwrap_err();
            if roots_alone(d.path()) {
                assert!(e.contains(why), "{body}: {e}");
            } else {
                assert!(e.contains("owned by uid"), "{e}");
            }
        }
    }
}
