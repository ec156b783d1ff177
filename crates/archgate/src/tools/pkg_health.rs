//! Keeping the installed system healthy: files changed since their package installed them, the
//! `.pacnew`/`.pacsave` files waiting to be merged, and the package cache with the versions to go
//! back to. All read-only; where something should be done, the answer carries the person's
//! command (archgate never runs it).

use archgate_core::gate::Catalogue;
use archgate_pacman::args::{CacheArgs, VerifyArgs};
use std::sync::Arc;

use super::packages::NoArgs;
use super::{Services, domain_err, read_tool};

read_tool!(
    PkgVerify {
        name: "pkg_verify",
        title: "Check installed files",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::PackageContents
        ),
        // Every package's files can take minutes: a task for a client that speaks tasks (one
        // package answers within the inline moment and stays inline).
        long_running: true,
        args: VerifyArgs,
        description: "Installed files vs their package, like `pacman -Qk`/`-Qkk`: one package or all.",
    } | svc,
    cx,
    a | svc.pacman(&cx.config).verify(&a).await.map_err(domain_err)
);

read_tool!(
    PkgPacnew {
        name: "pkg_pacnew",
        title: ".pacnew and .pacsave files",
        open_world: false,
        provenance: archgate_core::provenance::Provenance::Untrusted(
            archgate_core::provenance::Source::Pacnew
        ),
        args: NoArgs,
        description: ".pacnew/.pacsave files waiting: owner, diff against the live file, commands to merge (or `handoff` one).",
    } | svc,
    cx,
    _a | svc.pacman(&cx.config).pacnew().await.map_err(domain_err)
);

read_tool!(
    PkgCache {
        name: "pkg_cache",
        title: "Package cache and downgrades",
        open_world: true,
        provenance: archgate_core::provenance::Provenance::ArchgateOnly,
        args: CacheArgs,
        description: "Package cache: size, versions, what `paccache -rk3` frees. With name: older versions (cache, Arch Linux Archive) and the `pacman -U` command (or `handoff` it).",
    } | svc,
    cx,
    a | svc
        .pacman(&cx.config)
        .cache_tool(&a)
        .await
        .map_err(domain_err)
);

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    c.add(PkgVerify(svc.clone()));
    c.add(PkgPacnew(svc.clone()));
    c.add(PkgCache(svc.clone()));
}
