//! Audits a local package: `cargo run -p archgate-aur --example audit -- PATH [--json]`.
#![allow(clippy::print_stdout)]

fn main() {
    let mut path = None;
    let mut json = false;
    for a in std::env::args().skip(1) {
        if a == "--json" {
            json = true;
        } else {
            path = Some(std::path::PathBuf::from(a));
        }
    }
    let Some(path) = path else {
        eprintln!("usage: audit PATH [--json]");
        std::process::exit(2);
    };
    let report = match archgate_aur::corpus::judge_sample(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        );
    } else {
        print!("{}", report.to_text());
    }
}
