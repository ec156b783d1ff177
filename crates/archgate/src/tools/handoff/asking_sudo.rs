//! archgate's asking `sudo`: the `sudo` an Omarchy route's script finds first on its search path
//! when it is handed off. It shows what it is asked to run, then runs root's `sudo -k` with the
//! same arguments, so every `sudo` of the script asks the person's password in the terminal
//! and keeps none (sudo(8): `-k` with a command ignores the cached credentials and does not
//! update them).
//!
//! Why (attack 8 F3, F4; class: *the person's password, once sudo keeps it for the hand-off's
//! terminal, used by code of the person's uid the script runs after it*): Omarchy's scripts run
//! the person's hooks (`omarchy-hook` → `~/.config/omarchy/hooks/…`) and read their
//! configuration after their first `sudo`, and all of it is the agent's to write. With a
//! credential cached for the terminal, a hook's `sudo -n …` ran as root on an Enter and a
//! password given for something else. With the asking sudo no credential ever exists: a hook's
//! `sudo` asks again, naming its command. Scripts that elevate past it (`/usr/bin/sudo`,
//! `pkexec`, a search path of their own) are not handed off
//! (`archgate_desktop::omarchy::past_sudo`).
//!
//! It is this very binary, installed by archgate's package as a link named `sudo` in [`DIR`]
//! (root's, like every file that decides what runs as root: `pinned.rs`); `main` runs it when it
//! is started by that name. A hand-off uses the directory only when the link leads,
//! root's all the way, to the archgate that is running (`installed`) — a `sudo` of another kind
//! there would not ask. The process itself is `commands/handoff/as_sudo.rs`.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::pinned;

/// Where archgate's package installs the asking `sudo` (`DIR/sudo` → `/usr/bin/archgate`).
pub const DIR: &str = "/usr/lib/archgate/sudo-asks";

/// The name `main` answers as the asking sudo.
pub const NAME: &str = "sudo";

/// Whether this process was started as the asking sudo (by a link named [`NAME`]).
pub fn started_as_sudo() -> bool {
    std::env::args_os()
        .next()
        .as_deref()
        .map(Path::new)
        .and_then(Path::file_name)
        .is_some_and(|n| n == NAME)
}

/// [`DIR`] when it holds the asking sudo of this archgate: `DIR/sudo` root's all the way (links
/// followed, every hop) and the very file this process runs from. The reason when not.
pub fn installed() -> Result<PathBuf, String> {
    installed_in(Path::new(DIR))
}

fn installed_in(dir: &Path) -> Result<PathBuf, String> {
    let link = dir.join(NAME);
    let not = |why: String| {
        format!(
            "archgate's asking sudo is not usable at {}: {why}. archgate's package installs it \
             (a link to /usr/bin/archgate); without it every sudo inside a route's script would \
             not ask for your password each time",
            link.display()
        )
    };
    let real = pinned::root_file(&link).map_err(not)?;
    let file = std::fs::metadata(&real).map_err(|e| not(e.to_string()))?;
    let me = std::fs::metadata("/proc/self/exe").map_err(|e| not(format!("this archgate: {e}")))?;
    if (file.dev(), file.ino()) != (me.dev(), me.ino()) {
        return Err(not(format!(
            "it leads to {}, which is not the archgate running",
            real.display()
        )));
    }
    Ok(dir.to_owned())
}

/// The command the asking sudo runs for `args`: root's `sudo`, `-k`, then `args` as given.
pub fn command(sudo: &Path, args: &[OsString]) -> Vec<OsString> {
    let mut argv = vec![sudo.as_os_str().to_owned(), OsString::from("-k")];
    argv.extend(args.iter().cloned());
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sudo_it_runs_ignores_and_keeps_no_credential() {
        let argv = command(
            Path::new("/usr/bin/sudo"),
            &["-n".into(), "tee".into(), "/etc/x".into()],
        );
        assert_eq!(argv, ["/usr/bin/sudo", "-k", "-n", "tee", "/etc/x"]);
    }

    #[test]
    fn a_directory_whose_sudo_is_not_this_archgate_is_not_used() {
        // Root's own sudo in a root-owned directory is no asking sudo: it would keep the
        // password for the hook that runs next.
        let e = installed_in(Path::new("/usr/bin")).unwrap_err();
        assert!(e.contains("not the archgate running"), "{e}");
        // Nothing installed.
        let d = tempfile::tempdir().unwrap();
        assert!(installed_in(d.path()).is_err());
    }

    #[test]
    fn a_link_to_this_archgate_root_owned_all_the_way_is_used_and_one_the_person_holds_is_not() {
        let me = std::fs::read_link("/proc/self/exe").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&me, d.path().join(NAME)).unwrap();
        let root_all_the_way = nix::unistd::geteuid().is_root()
            && pinned::root_file(&me).is_ok()
            && pinned::root_dir(d.path()).is_ok();
        let got = installed_in(d.path());
        if !root_all_the_way {
            // A normal user's test directory is theirs to repoint.
            assert!(got.is_err(), "{got:?}");
            return;
        }
        assert_eq!(got.unwrap(), d.path());
        // The same link in a directory another uid holds is that uid's to repoint.
        nix::unistd::chown(d.path(), Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        let e = installed_in(d.path()).unwrap_err();
        assert!(e.contains("owned by uid"), "{e}");
    }
}
