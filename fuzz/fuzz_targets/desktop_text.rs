//! cargo-fuzz target `desktop_text` (see `archgate_fuzz::desktop_text`); on stable, replays the files named on
//! the command line (a crash found by libFuzzer can be reproduced without nightly).

#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| archgate_fuzz::desktop_text(data));

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    archgate_fuzz::replay_main(archgate_fuzz::desktop_text)
}
