//! `pacman_conf`: pacman.conf with its Includes, as the kept snapshot holds it. The answer is
//! the same from call to call while pacman.conf is unchanged, so it is rendered once per
//! parsed pacman.conf (the snapshot's `Arc`) and shared by every call until pacman.conf changes
//! (issue 34: no JSON built and rendered again for each call).

use archgate_core::tool::{Rendered, ToolOutput};
use std::sync::Arc;

use super::packages::NoArgs;
use super::{Services, domain_err};

pub struct PacmanConf {
    svc: Arc<Services>,
    /// The answer for the pacman.conf parsed last: that parse (compared by pointer) and its
    /// rendering. Read without a lock all callers share.
    kept: arc_swap::ArcSwapOption<(Arc<archgate_pacman::conf::PacmanConf>, Arc<Rendered>)>,
}

impl PacmanConf {
    pub fn new(svc: Arc<Services>) -> PacmanConf {
        PacmanConf {
            svc,
            kept: arc_swap::ArcSwapOption::empty(),
        }
    }

    /// The answer for this parse of pacman.conf: the kept one when it was made from it.
    fn answer(&self, conf: Arc<archgate_pacman::conf::PacmanConf>) -> Arc<Rendered> {
        if let Some(k) = &*self.kept.load()
            && Arc::ptr_eq(&k.0, &conf)
        {
            return k.1.clone();
        }
        let r = Arc::new(Rendered::of(&*conf));
        self.kept.store(Some(Arc::new((conf, r.clone()))));
        r
    }
}

impl archgate_core::tool::Tool for PacmanConf {
    type Args = NoArgs;
    type Run = NoArgs;
    archgate_core::resolve_as_planned!();

    fn spec(&self) -> &'static archgate_core::tool::ToolSpec {
        read_spec!(static SPEC = "pacman_conf", "pacman configuration", open_world: false,
            provenance: archgate_core::provenance::Provenance::ArchgateOnly,
            "pacman.conf with its Includes: repositories, servers, architecture, paths, ignores, options.");
        &SPEC
    }

    fn execute<'a>(
        &'a self,
        cx: &'a archgate_core::tool::CallCx,
        _permit: archgate_core::exec::Permit,
        _args: NoArgs,
    ) -> futures::future::BoxFuture<'a, Result<ToolOutput, archgate_core::tool::ToolError>> {
        Box::pin(async move {
            let conf = self
                .svc
                .pacman(&cx.config)
                .conf()
                .await
                .map_err(domain_err)?;
            Ok(ToolOutput::rendered(&self.answer(conf)))
        })
    }
}
