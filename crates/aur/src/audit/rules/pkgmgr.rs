//! Language package managers (npm, bun, pip, cargo install …): fine in build() of a package
//! built with them, dangerous in install scripts, hooks and package(), and suspicious as
//! runtime dependencies of a package that is not built with them.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for (idx, cmd) in ctx.an.cmds.iter().enumerate() {
        let Some(pm) = names::pkg_manager(cmd) else {
            continue;
        };
        let fam = names::family(pm);
        match cmd.phase {
            Phase::Install | Phase::Hook | Phase::Global | Phase::Runtime => sink.cmd(
                "AUR-PKGMGR-INSTALL",
                Severity::Critical,
                cmd,
                format!(
                    "runs {pm} {}: it fetches and runs code from a package registry that nobody reviewed, outside pacman's control",
                    cmd.phase.label()
                ),
            ),
            Phase::Package => {
                if let Some(venv) = package_venv(ctx, idx, cmd, pm) {
                    let within = if venv.starts_with("$pkgdir") {
                        "the package"
                    } else {
                        "the build folder"
                    };
                    sink.cmd(
                        "AUR-PKGMGR-PACKAGE",
                        Severity::Low,
                        cmd,
                        format!(
                            "runs the {pm} of the virtualenv {venv}, made earlier inside {within} and first on PATH: it installs into {within}, not the system. What it installs is fetched from the package index (or a git branch) at build time, outside makepkg's checksums"
                        ),
                    );
                } else if !contained(cmd, pm) {
                    sink.cmd(
                        "AUR-PKGMGR-PACKAGE",
                        Severity::High,
                        cmd,
                        format!("runs {pm} in package() without installing into $pkgdir: it changes the system, not the package"),
                    );
                }
            }
            _ => {
                if !ctx.built_with.contains(fam) {
                    sink.cmd(
                        "AUR-PKGMGR-UNDECLARED",
                        Severity::Medium,
                        cmd,
                        format!("runs {pm} {} although nothing in makedepends says the package is built with it", cmd.phase.label()),
                    );
                } else if installs_globally(cmd, pm) {
                    sink.cmd(
                        "AUR-PKGMGR-GLOBAL",
                        Severity::Medium,
                        cmd,
                        format!("{pm} installs into the builder's home or system, not into $srcdir"),
                    );
                }
            }
        }
    }
    depends(ctx, sink);
}

/// The install goes into `$pkgdir` (or `$srcdir`): prefix/root/target options or DESTDIR.
/// Does the package manager write only into the package or the build folder? It names
/// `$pkgdir`, or it installs locally (not globally) from a working directory under `$srcdir`
/// or `$pkgdir` (`cd package; yarn install --production` writes `./node_modules`).
fn contained(cmd: &Cmd, pm: &str) -> bool {
    let build_folder = |p: &str| {
        ["$srcdir", "${srcdir}", "$pkgdir", "${pkgdir}"]
            .iter()
            .any(|d| p.starts_with(d))
    };
    cmd.argv.iter().any(|a| a.text.contains("$pkgdir"))
        || cmd.env.iter().any(|(_, w)| w.text.contains("$pkgdir"))
        || cmd.exported.iter().any(|(_, v)| v.starts_with("$pkgdir"))
        || (!installs_globally(cmd, pm)
            && cmd.cwd.as_deref().is_some_and(build_folder)
            && destination(cmd, pm).is_none_or(|d| !d.starts_with('/')))
}

/// The directory a destination option names (`pip install --prefix=/usr`, `--target DIR`,
/// `gem install -i DIR`, `cargo install --root DIR`, `npm install --prefix DIR`): where the
/// files go, whatever directory the command runs in.
fn destination<'a>(cmd: &'a Cmd, pm: &str) -> Option<&'a str> {
    let opts: &[&str] = match pm {
        "pip" | "pip3" => &["--prefix", "--target", "-t", "--root", "--home"],
        "gem" => &["--install-dir", "-i", "--build-root"],
        "cargo" => &["--root"],
        "npm" | "pnpm" | "yarn" | "bun" => &["--prefix"],
        _ => return None,
    };
    let (_, args) = names::program(cmd);
    args.iter().enumerate().find_map(|(i, a)| {
        opts.iter().find_map(|o| {
            if a.text == *o {
                args.get(i + 1).map(|v| v.text.as_str())
            } else {
                a.text.strip_prefix(&format!("{o}="))
            }
        })
    })
}

/// The virtualenv whose `pip` (or `python -m pip`) runs here, when it lies inside the package
/// or the build folder and the install stays in it: the bare program name is looked up on
/// PATH, whose first entry is the `bin` of a virtualenv made by an earlier command
/// (`python -m venv DIR`, `virtualenv DIR`, `uv venv DIR`) — put there by `export`,
/// `declare -x` or `source DIR/bin/activate`. Not through sudo, doas, pkexec, run0 or
/// `env -i` (they reset PATH, so the system's pip runs), not with an option or a `PIP_…`
/// setting that sends the files elsewhere (`--prefix`, `--target`, `--root`, `--user`,
/// `PIP_PREFIX`), and not a virtualenv outside `$pkgdir` and `$srcdir` (that is a directory
/// of the live system).
fn package_venv(ctx: &Ctx, idx: usize, cmd: &Cmd, pm: &str) -> Option<String> {
    if !matches!(pm, "pip" | "pip3") {
        return None;
    }
    let i = names::effective(&cmd.argv);
    if cmd.argv[i].text.contains('/') {
        return None;
    }
    let resets = |w: &Word| {
        matches!(
            names::basename(&w.text),
            "sudo" | "doas" | "pkexec" | "run0" | "su" | "runuser"
        ) || w.text == "-i"
            || w.text == "--ignore-environment"
    };
    if cmd.argv[..i].iter().any(resets) {
        return None;
    }
    let (_, args) = names::program(cmd);
    // pip's own settings of where to install, as options or in its environment.
    let set_by_env = cmd
        .env
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(cmd.exported.iter().map(|(k, _)| k.as_str()))
        .any(|k| k.starts_with("PIP_") || k == "PYTHONUSERBASE");
    if destination(cmd, pm).is_some() || args.iter().any(|a| a.text == "--user") || set_by_env {
        return None;
    }
    let first = cmd.path.as_deref()?.split(':').next()?;
    let dir = first.trim_end_matches('/').strip_suffix("/bin")?;
    let inside = ["$pkgdir/", "$srcdir/"].iter().any(|d| dir.starts_with(d));
    if !inside || dir.contains("..") {
        return None;
    }
    ctx.an.cmds[..idx]
        .iter()
        .filter(|c| c.phase == Phase::Package || c.phase.is_build())
        .any(|c| makes_venv(c).iter().any(|d| d.trim_end_matches('/') == dir))
        .then(|| dir.to_owned())
}

/// The directories a command makes virtualenvs in: `python -m venv [OPTIONS] DIR…`,
/// `python -m virtualenv DIR`, `virtualenv DIR`, `uv venv DIR`.
fn makes_venv(cmd: &Cmd) -> Vec<String> {
    let (name, args) = names::program(cmd);
    let rest: &[Word] = if matches!(name, "python" | "python3") || name.starts_with("python3.") {
        match args.iter().position(|a| a.text == "-m") {
            Some(m)
                if args
                    .get(m + 1)
                    .is_some_and(|a| a.text == "venv" || a.text == "virtualenv") =>
            {
                &args[m + 2..]
            }
            _ => return Vec::new(),
        }
    } else if name == "virtualenv" {
        args
    } else if name == "uv" && args.first().is_some_and(|a| a.text == "venv") {
        &args[1..]
    } else {
        return Vec::new();
    };
    rest.iter()
        .filter(|a| !a.text.starts_with('-'))
        .map(|a| a.text.clone())
        .collect()
}

fn installs_globally(cmd: &Cmd, pm: &str) -> bool {
    let (_, args) = names::program(cmd);
    let has = |o: &str| {
        args.iter()
            .any(|a| a.text == o || a.text.starts_with(&format!("{o}=")))
    };
    let inside = args
        .iter()
        .chain(cmd.env.iter().map(|(_, w)| w))
        .any(|a| a.text.contains("$srcdir") || a.text.contains("$pkgdir"));
    // `export GOPATH="$srcdir"` (or `declare -x`) earlier: the install goes where it says.
    let exported_inside = |vars: &[&str]| {
        cmd.exported.iter().any(|(k, v)| {
            vars.contains(&k.as_str()) && (v.starts_with("$srcdir") || v.starts_with("$pkgdir"))
        })
    };
    match pm {
        "npm" | "pnpm" | "yarn" | "bun" => {
            (has("-g") || has("--global") || has("global"))
                && !inside
                && !exported_inside(&["npm_config_prefix", "NPM_CONFIG_PREFIX"])
        }
        "cargo" => !has("--root") && !inside && !exported_inside(&["CARGO_INSTALL_ROOT"]),
        "go" => {
            !inside
                && !cmd.env.iter().any(|(k, _)| k == "GOBIN" || k == "GOPATH")
                && !exported_inside(&["GOBIN", "GOPATH"])
        }
        "pip" | "pip3" => {
            has("--user")
                || (!has("--target")
                    && !has("--prefix")
                    && !has("--root")
                    && !inside
                    && !exported_inside(&["PIP_TARGET", "PIP_PREFIX", "PIP_ROOT"]))
        }
        // `--build-root DIR` is an install root (like pip's `--root`); `--user-install` is ~/.gem.
        "gem" => {
            has("--user-install")
                || (!has("--install-dir")
                    && !has("-i")
                    && !has("--build-root")
                    && !inside
                    && !exported_inside(&["GEM_HOME"]))
        }
        _ => false,
    }
}

fn depends(ctx: &Ctx, sink: &mut Sink) {
    // A meta package ships no file of its own (no command in package(), nothing built): no
    // code of it can run the package manager; it only hands the tool to the person, as a
    // development environment's list of tools does. An install script that runs it is judged
    // by AUR-PKGMGR-INSTALL.
    let ships_nothing = !ctx
        .an
        .cmds
        .iter()
        .any(|c| c.phase == Phase::Package || c.phase.is_build());
    if ships_nothing {
        return;
    }
    let mut seen = Vec::new();
    for key in ["depends", "depends_x86_64"] {
        for d in ctx.an.all_values(key) {
            if !names::is_pkg_manager_package(&d.text) || seen.contains(&d.text) {
                continue;
            }
            let fam = match d.text.split(['>', '<', '=']).next().unwrap_or("") {
                "npm" | "yarn" | "pnpm" | "bun" | "bun-bin" | "deno" => "node",
                "python-pip" | "python-pipx" | "pipx" | "uv" => "python",
                "composer" => "php",
                "rubygems" => "ruby",
                "luarocks" => "lua",
                _ => "perl",
            };
            if ctx.built_with.contains(fam) {
                continue;
            }
            seen.push(d.text.clone());
            let (pos, snippet) = ctx
                .value_pos(&["depends", "depends_x86_64"], &d.text)
                .unwrap_or_default();
            sink.at(
                "AUR-DEPENDS-PKGMGR",
                Severity::Medium,
                0,
                pos,
                &snippet,
                format!(
                    "depends on the package manager `{}` although the package is not built with it; at run time it only serves to fetch more code",
                    d.text
                ),
            );
        }
    }
}
