//! Integration tests of archgate-aur (the one test binary of this crate).

mod support;

mod blind_spots;
mod client;
mod commit_binding;
mod corpus_eval;
mod garbage;
mod git_repo;
mod helpers;
mod misfires;
mod misfires_landing2;
mod misfires_landing3;
mod misfires_unseen;
mod ops;
mod rules;
mod scriptlet_paths;
