//! The machine diagnostics: `hardware` (one section at a time), `network` (local facts only:
//! nothing is sent), `processes` (the top N, or one pid). All `read` (but command lines, `act`), read-only, never
//! elevated; their outputs, like every tool's, never reach the activity log. The facts come from
//! `archgate_sysinfo::{hardware, network, processes}`; only `hardware smart` runs a program
//! (`smartctl`, once per disk), and those runs are the action's commands, so what is approved is
//! what runs. `processes` with `cmdline` is its own route (`processes cmdline`) and `act`: every
//! user's command lines may hold secrets (a password passed as an argument, a token in a URL),
//! so reading them asks the person — the question says command lines will be read — as
//! `clipboard_read` asks before the clipboard is read. A person's rule can allow or deny it.

use std::path::Path;
use std::time::Duration;

use archgate_core::exec::{CommandSpec, Permit};
use archgate_core::gate::Catalogue;
use archgate_core::policy::Tier;
use archgate_core::tool::{
    Action, CallCx, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_sysinfo::{MachineError, hardware, network, processes};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::domain_err;

pub fn register(c: &mut Catalogue) {
    c.add(Hardware);
    c.add(Network);
    c.add(Processes);
}

const ROOT: &str = "/";

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum HwSection {
    Cpu,
    Gpu,
    Pci,
    Usb,
    Modules,
    Firmware,
    Temperatures,
    Block,
    Smart,
}

impl From<HwSection> for hardware::Section {
    fn from(s: HwSection) -> Self {
        use hardware::Section as S;
        match s {
            HwSection::Cpu => S::Cpu,
            HwSection::Gpu => S::Gpu,
            HwSection::Pci => S::Pci,
            HwSection::Usb => S::Usb,
            HwSection::Modules => S::Modules,
            HwSection::Firmware => S::Firmware,
            HwSection::Temperatures => S::Temperatures,
            HwSection::Block => S::Block,
            HwSection::Smart => S::Smart,
        }
    }
}

/// Arguments of `hardware`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HardwareArgs {
    pub section: HwSection,
}

pub struct Hardware;

/// What `execute` takes: the section, and for `smart` the exact `smartctl` runs.
pub struct HardwareRun {
    section: hardware::Section,
    commands: Vec<CommandSpec>,
}

read_spec!(static HARDWARE = "hardware", "Hardware", open_world: false, provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::DeviceStrings), "Hardware by section: cpu (microcode, scaling), gpu/pci (driver, alternative \
                  modules), usb, modules (taint), firmware (UEFI, Secure Boot, DMI), \
                  temperatures, block (mounts, free space), smart.");

impl Tool for Hardware {
    type Args = HardwareArgs;
    type Run = HardwareRun;

    fn spec(&self) -> &'static ToolSpec {
        &HARDWARE
    }

    fn plan(&self, args: &HardwareArgs) -> Plan {
        let s: hardware::Section = args.section.into();
        Plan::with_tier(&HARDWARE, Tier::Read, &[s.as_str()])
    }

    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        args: HardwareArgs,
    ) -> BoxFuture<'a, Result<Resolved<HardwareRun>, ToolError>> {
        Box::pin(async move {
            let section: hardware::Section = args.section.into();
            let mut action = Action::from_plan(plan);
            let mut commands = Vec::new();
            if section == hardware::Section::Smart {
                if probe.permit.executor().resolve_program("smartctl").is_err() {
                    return Err(domain_err(MachineError::NotAvailable {
                        what: "smartctl is not in the program directories archgate runs \
                               from: install smartmontools (or add its directory to [exec] \
                               search_dirs); no SMART health can be read without it"
                            .into(),
                    }));
                }
                commands = hardware::smart_commands(Path::new(ROOT));
                action.commands = commands.clone();
            }
            Ok(Resolved {
                action,
                run: HardwareRun { section, commands },
            })
        })
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: Permit,
        run: HardwareRun,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let v = if run.section == hardware::Section::Smart {
                let disks = hardware::smart(&permit, run.commands)
                    .await
                    .map_err(domain_err)?;
                serde_json::to_value(disks).unwrap_or_default()
            } else {
                hardware::read_section(run.section, Path::new(ROOT), Duration::from_secs(2))
                    .await
                    .map_err(domain_err)?
            };
            Ok(ToolOutput::json(v))
        })
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum NetSection {
    #[default]
    All,
    Links,
    Routes,
    Dns,
    Wifi,
    Rfkill,
}

impl NetSection {
    fn section(self) -> Option<network::Section> {
        use network::Section as S;
        Some(match self {
            NetSection::All => return None,
            NetSection::Links => S::Links,
            NetSection::Routes => S::Routes,
            NetSection::Dns => S::Dns,
            NetSection::Wifi => S::Wifi,
            NetSection::Rfkill => S::Rfkill,
        })
    }
}

/// Arguments of `network`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkArgs {
    #[serde(default)]
    pub section: NetSection,
}

pub struct Network;

read_spec!(static NETWORK = "network", "Network", open_world: false, provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::NetworkNames), "Local network facts, nothing sent, by section: links with addresses, routes, \
                  dns (servers, the resolver in use), wifi (NetworkManager or iwd, current \
                  network, signal), rfkill.");

impl Tool for Network {
    type Args = NetworkArgs;
    type Run = NetworkArgs;
    archgate_core::resolve_as_planned!();

    fn spec(&self) -> &'static ToolSpec {
        &NETWORK
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _permit: Permit,
        args: NetworkArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let v = network::network(args.section.section(), Path::new(ROOT))
                .await
                .map_err(domain_err)?;
            Ok(ToolOutput::json(v))
        })
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Sort {
    #[default]
    Cpu,
    Memory,
}

/// Arguments of `processes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessesArgs {
    /// One process
    pub pid: Option<u32>,
    #[serde(default)]
    pub sort: Sort,
    /// Default 10, max 100
    pub limit: Option<u32>,
    /// Command lines too (they may hold secrets: asks the person first)
    pub cmdline: Option<bool>,
}

pub struct Processes;

read_spec!(static PROCESSES = "processes", "Processes", open_world: false, provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::ProcessCommandLines), "Top processes by cpu or memory, or one pid: exe, state, start, memory, open \
                  files, systemd unit. With cmdline, their command lines too: act, the person is \
                  asked first.");

const SAMPLE: Duration = Duration::from_millis(500);

/// What the person is asked when command lines are wanted.
const CMDLINE_TARGET: &str =
    "read the command lines of processes (every user's; they may hold passwords or tokens)";

impl Tool for Processes {
    type Args = ProcessesArgs;
    type Run = ProcessesArgs;

    fn spec(&self) -> &'static ToolSpec {
        &PROCESSES
    }

    fn plan(&self, args: &ProcessesArgs) -> Plan {
        if args.cmdline == Some(true) {
            Plan::with_tier(&PROCESSES, Tier::Act, &["cmdline"])
        } else {
            Plan::simple(&PROCESSES)
        }
    }

    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        args: ProcessesArgs,
    ) -> BoxFuture<'a, Result<Resolved<ProcessesArgs>, ToolError>> {
        Box::pin(async move {
            if let Some(l) = args.limit
                && !(1..=100).contains(&l)
            {
                return Err(domain_err(MachineError::Invalid {
                    what: format!("limit {l} is out of range: give 1 to 100"),
                }));
            }
            if args.pid.is_some() && args.limit.is_some() {
                return Err(domain_err(MachineError::Invalid {
                    what: "pid asks for one process; limit is for the top list: give one or \
                           the other"
                        .into(),
                }));
            }
            let mut resolved = Resolved::planned(plan, args);
            if resolved.run.cmdline == Some(true) {
                resolved.action.target = Some(CMDLINE_TARGET.to_owned());
            }
            Ok(resolved)
        })
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _permit: Permit,
        args: ProcessesArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let root = Path::new(ROOT);
            let cmdline = args.cmdline.unwrap_or(false);
            let v = match args.pid {
                Some(pid) => serde_json::to_value(
                    processes::process(root, pid, cmdline).map_err(domain_err)?,
                ),
                None => {
                    let opts = processes::TopOptions {
                        sort: match args.sort {
                            Sort::Cpu => processes::SortBy::Cpu,
                            Sort::Memory => processes::SortBy::Memory,
                        },
                        limit: args.limit.unwrap_or(10) as usize,
                        sample: SAMPLE,
                        cmdline,
                    };
                    serde_json::to_value(processes::top(root, &opts).await.map_err(domain_err)?)
                }
            };
            Ok(ToolOutput::json(v.unwrap_or_default()))
        })
    }
}
