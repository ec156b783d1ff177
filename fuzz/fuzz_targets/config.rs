//! cargo-fuzz target `config` (see `archgate_fuzz::config`); on stable, replays the files named on
//! the command line (a crash found by libFuzzer can be reproduced without nightly).

#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| archgate_fuzz::config(data));

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    archgate_fuzz::replay_main(archgate_fuzz::config)
}
