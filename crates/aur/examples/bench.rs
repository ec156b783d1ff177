//! Audit timing figures (not a test): `cargo run --release -p archgate-aur --example bench`.
//! Prints the mean time to audit a typical PKGBUILD and to evaluate the whole corpus.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::Instant;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let typical = archgate_aur::load_path(&root.join("benign/b05-paru-cargo")).unwrap_or_default();
    let big = archgate_aur::load_path(&root.join("benign/b02-chrome-bin-install-caches"))
        .unwrap_or_default();
    for (label, input) in [
        ("typical PKGBUILD (paru)", &typical),
        ("-bin PKGBUILD with install script (chrome)", &big),
    ] {
        let n = 200;
        let _ = archgate_aur::audit(input);
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(archgate_aur::audit(std::hint::black_box(input)));
        }
        let per = t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
        println!("{label}: {per:.3} ms per audit ({n} runs)");
    }
    let runs = 5;
    let t = Instant::now();
    let mut samples = 0;
    for _ in 0..runs {
        let r = archgate_aur::corpus::evaluate_corpus(&root);
        samples = r.malicious + r.benign;
    }
    let per = t.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    println!(
        "whole corpus ({samples} samples, files read from disk): {per:.1} ms per run ({runs} runs)"
    );
}
