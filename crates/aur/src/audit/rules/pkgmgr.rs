//! Language package managers (npm, bun, pip, cargo install …): fine in build() of a package
//! built with them, dangerous in install scripts, hooks and package(), and suspicious as
//! runtime dependencies of a package that is not built with them.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
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
                if !contained(cmd, pm) {
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
        || (!installs_globally(cmd, pm) && cmd.cwd.as_deref().is_some_and(build_folder))
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
    match pm {
        "npm" | "pnpm" | "yarn" | "bun" => {
            (has("-g") || has("--global") || has("global")) && !inside
        }
        "cargo" => !has("--root") && !inside,
        "go" => !inside && !cmd.env.iter().any(|(k, _)| k == "GOBIN" || k == "GOPATH"),
        "pip" | "pip3" => {
            has("--user") || (!has("--target") && !has("--prefix") && !has("--root") && !inside)
        }
        // `--build-root DIR` is an install root (like pip's `--root`); `--user-install` is ~/.gem.
        "gem" => {
            has("--user-install")
                || (!has("--install-dir") && !has("-i") && !has("--build-root") && !inside)
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
