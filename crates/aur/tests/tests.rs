//! Integration tests of archgate-aur (one test binary; modules under `it/`).

#[path = "it/support/mod.rs"]
mod support;

#[path = "it/blind_spots.rs"]
mod blind_spots;
#[path = "it/client.rs"]
mod client;
#[path = "it/commit_binding.rs"]
mod commit_binding;
#[path = "it/corpus_eval.rs"]
mod corpus_eval;
#[path = "it/garbage.rs"]
mod garbage;
#[path = "it/helpers.rs"]
mod helpers;
#[path = "it/misfires.rs"]
mod misfires;
#[path = "it/ops.rs"]
mod ops;
#[path = "it/rules.rs"]
mod rules;
