//! Tools written for the gate's tests: each stands for a kind of real tool (one that runs a
//! program, one with private text, one whose command comes from a file, one with a route word).

use super::*;

/// Runs /usr/bin/printf with the given words, literally.
pub(crate) struct Echo;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EchoArgs {
    /// Words to print.
    words: Vec<String>,
}
static ECHO: ToolSpec = ToolSpec {
    long_running: false,
    name: "echo",
    title: "Echo",
    description: "prints words",
    tier: Tier::Read,
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for Echo {
    type Args = EchoArgs;
    type Run = EchoArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &ECHO
    }
    fn plan(&self, a: &EchoArgs) -> Plan {
        let mut p = Plan::simple(&ECHO);
        p.argv = std::iter::once("printf".to_owned())
            .chain(a.words.iter().cloned())
            .collect();
        p
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        a: EchoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let out = permit
                .run(CommandSpec::new("printf").arg("%s\\n").args(a.words))
                .await?;
            Ok(ToolOutput::text(out.stdout_lossy()))
        })
    }
}

/// Holds private text (like the clipboard) and can panic on request.
pub(crate) struct Secret;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SecretArgs {
    /// Private text.
    text: String,
    /// Panic inside the tool.
    #[serde(default)]
    panic: bool,
}
static SECRET: ToolSpec = ToolSpec {
    long_running: false,
    name: "secret",
    title: "Secret",
    description: "keeps a secret",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &["text"],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for Secret {
    type Args = SecretArgs;
    type Run = SecretArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &SECRET
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        a: SecretArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            assert!(!a.panic, "asked to panic");
            Ok(ToolOutput::text(format!("output {}", a.text)))
        })
    }
}

/// Resolves its command from a file the test rewrites, as a desktop entry's `Exec=` line is
/// read: one word a line. Asked to `drift`, it runs another command than it resolved — the
/// permit must refuse that.
pub(crate) struct FromFile(pub(crate) std::path::PathBuf);
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FromFileArgs {
    /// Run another command than the resolved one.
    #[serde(default)]
    drift: bool,
}
static FROM_FILE: ToolSpec = ToolSpec {
    long_running: false,
    name: "from_file",
    title: "From a file",
    description: "runs the command a file names",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for FromFile {
    type Args = FromFileArgs;
    type Run = (CommandSpec, bool);
    fn spec(&self) -> &'static ToolSpec {
        &FROM_FILE
    }
    fn plan(&self, _a: &FromFileArgs) -> Plan {
        // What the words say: an "app"; the command is only known after reading the file.
        let mut p = Plan::with_tier(&FROM_FILE, Tier::Act, &["app"]);
        p.argv = vec!["app".into()];
        p
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: FromFileArgs,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>> {
        Box::pin(async move {
            let text = std::fs::read_to_string(&self.0)
                .map_err(|e| ToolError::new(ErrorKind::NotFound, e.to_string()))?;
            let words: Vec<&str> = text.lines().collect();
            let spec = CommandSpec::new(words[0]).args(words[1..].iter().copied());
            let mut r = Resolved::planned(plan, (spec.clone(), a.drift));
            r.action.commands = vec![spec];
            Ok(r)
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        (spec, drift): Self::Run,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let spec = if drift {
                CommandSpec::new("printf").arg("drifted")
            } else {
                spec
            };
            let out = permit.run(spec).await?;
            Ok(ToolOutput::text(out.stdout_lossy()))
        })
    }
}

/// Takes one route word from the agent (as `toggle NAME` or `omarchy_run ROUTE` do).
pub(crate) struct RouteWord;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteWordArgs {
    /// A route word.
    word: String,
}
static ROUTE_WORD: ToolSpec = ToolSpec {
    long_running: false,
    name: "secret_route",
    title: "Route word",
    description: "acts on a named thing",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for RouteWord {
    type Args = RouteWordArgs;
    type Run = RouteWordArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &ROUTE_WORD
    }
    fn plan(&self, a: &RouteWordArgs) -> Plan {
        Plan::with_tier(&ROUTE_WORD, Tier::Act, &[&a.word])
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        _a: RouteWordArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::default()) })
    }
}
