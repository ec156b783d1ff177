//! A client's budget counts follow its token through a rename made by the CLI while the daemon
//! runs (attack 23 F3; class: *state the daemon holds in memory, changed by the CLI in the CLI's
//! own memory*): the renamed token does not start a fresh budget, and the old name keeps no counts
//! for a later client of that name to inherit.

use super::bounds::add_client;
use crate::support::*;
use serde_json::{Value, json};

/// Three calls a day per client; the minute never matters.
const THREE_A_DAY: &str = "[approval]\npage = false\nnotifications = false\n\
                           [budgets]\nper_minute = 100000\nper_day = 3\n";

fn exhausted(r: &Value) -> bool {
    r["isError"] == true && r["structuredContent"]["error"]["kind"] == "budget_exhausted"
}

#[test]
fn a_cli_rename_moves_the_budget_counts_in_the_running_daemon() {
    let env = Env::with_config(THREE_A_DAY);
    let d = HttpServer::start(&env);
    let token = add_client(&env, "phone", "full");
    for _ in 0..3 {
        let r = d.call(&token, "system_status", json!({}));
        assert_ne!(r["isError"], true, "{r}");
    }
    let r = d.call(&token, "system_status", json!({}));
    assert!(exhausted(&r), "{r}");

    let out = env.run(&["clients", "rename", "phone", "phone2"]);
    assert!(out.status.success(), "{}", text(&out));
    // Until the daemon has the new name, the token is refused as phone; from then on as phone2:
    // every call of the same token stays refused.
    let renamed = wait_for("a call of the token under its new name", || {
        let r = d.call(&token, "system_status", json!({}));
        assert!(exhausted(&r), "the renamed token got a fresh budget: {r}");
        env.calls()
            .into_iter()
            .find(|c| c["tool"] == "system_status" && c["client"] == "phone2")
    });
    assert_eq!(renamed["outcome"], "budget_exhausted", "{renamed}");

    // The old name kept nothing: a new client given it starts with the whole budget.
    let newcomer = add_client(&env, "phone", "full");
    let r = d.call(&newcomer, "system_status", json!({}));
    assert_ne!(r["isError"], true, "the old name kept the counts: {r}");
}
