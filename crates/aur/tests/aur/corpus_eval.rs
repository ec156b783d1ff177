//! The evaluation corpus meets its targets: every malicious sample `dangerous`, at most 5% of
//! benign samples `dangerous`.

use std::path::Path;

#[test]
fn corpus_meets_detection_and_false_positive_targets() {
    let dir = crate::manifest_dir().join("corpus");
    let r = archgate_aur::corpus::evaluate_corpus(&dir);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(r.malicious >= 20, "only {} malicious samples", r.malicious);
    assert!(r.benign >= 40, "only {} benign samples", r.benign);
    assert_eq!(r.detected, r.malicious, "{}", r.to_text());
    assert!(r.false_positive_rate <= 0.05, "{}", r.to_text());
}

#[test]
fn load_path_reads_a_directory_or_a_file() {
    let dir = crate::manifest_dir().join("corpus/malicious/m08-ansi-c-hex-escapes");
    let a = archgate_aur::load_path(&dir).expect("dir");
    let b = archgate_aur::load_path(&dir.join("PKGBUILD")).expect("file");
    assert_eq!(a, b);
    assert_eq!(a.install_scripts.len(), 1);
    assert_eq!(a.install_scripts[0].name, ".wl-screenrec.install");
    let e = archgate_aur::load_path(Path::new("/nonexistent/dir")).expect_err("missing");
    assert_eq!(e.kind(), "not_found");
}
