//! MCP prompts: the person's common Arch tasks as ready-made instructions that name the tools to
//! use, in order. Prompts read nothing themselves: what the machine holds (`.pacnew` files…) is
//! found by the tools they name, through the gate.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Map, Value};

struct Def {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static [(&'static str, &'static str)],
}

const PROMPTS: [Def; 4] = [
    Def {
        name: "troubleshoot",
        title: "Troubleshoot a problem",
        description: "Find the cause of a problem on this Arch machine with its units, journal and boots, the ArchWiki and pacman's history.",
        args: &[("symptom", "What is wrong, in the person's words.")],
    },
    Def {
        name: "audit_aur_package",
        title: "Audit an AUR package before installing",
        description: "Decide whether an AUR package is safe to build, before anything runs.",
        args: &[("name", "The AUR package name.")],
    },
    Def {
        name: "safe_system_update",
        title: "Update the system safely",
        description: "Everything to check before a system update (news, snapshot, .pacnew, AUR), the update handed off to the person, then the .pacnew files and restarts it left.",
        args: &[],
    },
    Def {
        name: "explain_package",
        title: "Explain a package",
        description: "What a package is, why it is installed, and what depends on it.",
        args: &[("name", "The package name.")],
    },
];

pub fn list() -> ListPromptsResult {
    ListPromptsResult::with_all_items(
        PROMPTS
            .iter()
            .map(|d| {
                let args: Vec<PromptArgument> = d
                    .args
                    .iter()
                    .map(|(n, desc)| {
                        PromptArgument::new(*n)
                            .with_description(*desc)
                            .with_required(true)
                    })
                    .collect();
                let mut p = Prompt::new(
                    d.name,
                    Some(d.description),
                    (!args.is_empty()).then_some(args),
                );
                p.title = Some(d.title.to_owned());
                p
            })
            .collect(),
    )
}

fn arg(args: &Option<Map<String, Value>>, name: &str) -> Result<String, McpError> {
    args.as_ref()
        .and_then(|a| a.get(name))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| McpError::invalid_params(format!("argument `{name}` is required"), None))
}

pub fn get(name: &str, args: &Option<Map<String, Value>>) -> Result<GetPromptResult, McpError> {
    let (description, text) = match name {
        "troubleshoot" => {
            let symptom = arg(args, "symptom")?;
            (
                "Troubleshoot with the units, the journal, the wiki and package history",
                format!(
                    "The person reports: \"{symptom}\".\n\nWork it out on this Arch Linux machine with archgate, step by step:\n\
                     1. `system_status` — failed units, full disks, memory pressure.\n\
                     2. `units` — the failed units (system, and `user: true` for the session's); then `units` with \
                     `unit` on each suspect: its state, last exit, unit file and last log lines.\n\
                     3. `journal` with `priority: \"err\"` (and `boot: 0`, or `since` when it began; `kernel: true` for \
                     drivers and hardware; `unit` or `grep` to narrow); page on with `cursor`.\n\
                     4. `boots` — did errors start with a particular boot? `boots` with `crashes: true` for core dumps.\n\
                     5. `wiki_search` for the symptom, then `wiki_page` on the best hit (a section at a time).\n\
                     6. `pacman_log` (since a few days ago) — did an upgrade or removal happen just before it began?\n\
                     7. `pkg_info` / `pkg_owner` on the packages or files involved; `arch_news` for known breakage.\n\
                     Explain the most likely cause with the evidence, and give the fix as commands the person runs \
                     themselves (archgate never elevates privilege)."
                ),
            )
        }
        "audit_aur_package" => {
            let pkg = arg(args, "name")?;
            (
                "Audit an AUR package before installing it",
                format!(
                    "Before anyone builds the AUR package `{pkg}`:\n\
                     1. `pkg_search` — is there an official package that does the same? Prefer it.\n\
                     2. `aur_info` with names [\"{pkg}\"] — votes, popularity, maintainer or orphaned, last modified, out-of-date.\n\
                     3. `aur_audit` with name \"{pkg}\" — read every finding of medium severity or more; quote the line.\n\
                     4. `aur_diff` — what the latest change added (a new install script or source is a warning sign).\n\
                     Give a verdict the person can act on: install, read first (say what), or do not install. Remind \
                     them that AUR packages are user-made and unreviewed."
                ),
            )
        }
        "safe_system_update" => {
            (
                "Check everything before a system update",
                "Prepare a safe full system update:\n\
                     0. `upkeep` check `snapshots` — whether snapper, Timeshift or btrfs is set up; checks `mirrors` \
                     and `keyring` — fix a stale mirror or keyring first.\n\
                     1. `arch_news` (defaults to items since the last full upgrade) — any item that requires manual \
                     intervention comes first, with its steps.\n\
                     2. `pkg_updates` — pending official updates; call out kernels, glibc, systemd, the bootloader and \
                     graphics drivers.\n\
                     3. `aur_review_updates` — pending AUR updates with the audit of what each change adds; list any \
                     `dangerous` verdict before anything else.\n\
                     4. `pkg_pacnew` — the .pacnew/.pacsave files already waiting, with their diffs: merge them \
                     before adding new ones.\n\
                     5. Summarise what you found and ask the person in chat whether to update now; any manual \
                     intervention the news names comes first (they do it themselves). With snapper or Timeshift set \
                     up, `handoff` op \"snapshot_snapper\" or \"snapshot_timeshift\" takes the snapshot first.\n\
                     6. `handoff` with op \"system_update\" and a reason naming what the review \
                     found — a terminal opens on their desktop showing the exact `pacman -Syu`; it runs only after \
                     their Enter and their sudo password there. Read the answer: ran (exit status, the output's tail), \
                     cancelled, refused (why), or unknown (check pacman's log before anything else). Without a desktop \
                     the answer gives the `archgate handoff ID` to run in their own terminal.\n\
                     7. Afterwards: `pkg_pacnew` for the .pacnew files the update left, with their diffs; once the \
                     person merged one, `handoff` op \"pacnew_adopt\" (or \"pacnew_discard\" to keep theirs) with its \
                     path. `upkeep` check `restart` — the services to restart, each a `handoff` op \"unit_restart\", \
                     and whether a reboot is needed (a new kernel); the AUR updates they chose to trust, built by \
                     their helper."
                    .to_owned(),
            )
        }
        "explain_package" => {
            let pkg = arg(args, "name")?;
            (
                "Explain a package",
                format!(
                    "Explain the package `{pkg}` to the person:\n\
                     1. `pkg_info` with name \"{pkg}\" — what it is, its version, whether it is installed and why \
                     (explicitly or as a dependency).\n\
                     2. `pkg_deps` with reverse true — what needs it; and without reverse — what it pulls in.\n\
                     3. `pkg_files` if they ask where it put things.\n\
                     Say plainly whether removing it would break anything."
                ),
            )
        }
        other => {
            return Err(McpError::invalid_params(
                format!("no prompt named {other:?}"),
                None,
            ));
        }
    };
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(description),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_need_their_arguments_and_name_real_tools() {
        assert!(get("troubleshoot", &None).is_err());
        let mut a = Map::new();
        a.insert("symptom".into(), Value::String("wifi drops".into()));
        let r = get("troubleshoot", &Some(a)).unwrap();
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("wifi drops") && text.contains("wiki_search"));
        for tool in ["`units`", "`journal`", "`boots`", "crashes: true"] {
            assert!(text.contains(tool), "{tool}");
        }
        assert!(get("nope", &None).is_err());
        assert_eq!(list().prompts.len(), 4);
    }

    #[test]
    fn the_update_prompt_sends_pacnew_through_the_gate() {
        let text = serde_json::to_string(&get("safe_system_update", &None).unwrap()).unwrap();
        assert!(text.contains("pkg_pacnew"), "{text}");
        assert!(!text.contains("under /etc"), "{text}");
    }

    #[test]
    fn the_update_prompt_ends_in_a_hand_off_and_checks_pacnew_and_restarts_after() {
        let text = serde_json::to_string(&get("safe_system_update", &None).unwrap()).unwrap();
        let handoff = text.find("`handoff`").expect("the update is handed off");
        let news = text.find("`arch_news`").unwrap();
        let aur = text.find("`aur_review_updates`").unwrap();
        let snap = text.find("`snapshots`").unwrap();
        assert!(news < handoff && aur < handoff && snap < handoff, "{text}");
        let after = &text[handoff..];
        assert!(after.contains("system_update"), "{text}");
        assert!(
            after.contains("`pkg_pacnew`") && after.contains("`restart`"),
            "{text}"
        );
        assert!(
            !text.contains("sudo pacman -Syu"),
            "the person no longer retypes it: {text}"
        );
    }

    #[test]
    fn the_update_prompts_privileged_steps_before_and_after_are_hand_offs_too() {
        let text = serde_json::to_string(&get("safe_system_update", &None).unwrap()).unwrap();
        let update = text.find("\\\"system_update\\\"").expect("the update's op");
        let (before, after) = text.split_at(update);
        // The snapshot before; the .pacnew merges and the restarts after: each a hand-off op,
        // nothing for the person to retype.
        assert!(
            before.contains("snapshot_snapper") && before.contains("snapshot_timeshift"),
            "{text}"
        );
        for op in ["pacnew_adopt", "pacnew_discard", "unit_restart"] {
            assert!(after.contains(op), "{op}: {text}");
        }
        assert!(
            !text.contains("command is the first one the person runs"),
            "{text}"
        );
    }
}
