//! Version comparison against the real `vercmp` binary.

use std::cmp::Ordering;
use std::process::Command;

fn real_vercmp(a: &str, b: &str) -> Ordering {
    let out = Command::new("vercmp")
        .arg(a)
        .arg(b)
        .output()
        .expect("run vercmp");
    match String::from_utf8_lossy(&out.stdout).trim() {
        "-1" => Ordering::Less,
        "0" => Ordering::Equal,
        "1" => Ordering::Greater,
        other => panic!("vercmp printed {other:?}"),
    }
}

const PAIRS: &[(&str, &str)] = &[
    ("1.0", "1.0"),
    ("1.0", "1.0.0"),
    ("1.0.0", "1.0"),
    ("1.0", "1.0-1"),
    ("1.0-1", "1.0-2"),
    ("1.0-10", "1.0-9"),
    ("1.0-1.1", "1.0-1"),
    ("1.0-1.1", "1.0-1.01"),
    ("1:1.0", "2.0"),
    ("1:1.0", "1.0"),
    ("0:1.0", "1.0"),
    ("2:0.1", "1:9.9"),
    (":1.0", "1.0"),
    ("1.0a", "1.0"),
    ("1.0a", "1.0b"),
    ("1.0alpha", "1.0beta"),
    ("1.0beta", "1.0rc1"),
    ("1.0rc1", "1.0"),
    ("1.0rc1", "1.0rc2"),
    ("1.0rc10", "1.0rc9"),
    ("1.0pre", "1.0"),
    ("1.0.pre", "1.0"),
    ("1.0", "1.0.a"),
    ("1.0+x", "1.0"),
    ("1.0+x", "1.0.x"),
    ("1.0+1", "1.0.1"),
    ("1.0", "1.0+"),
    ("1..0", "1.0"),
    ("1.0.", "1.0"),
    ("1_0", "1.0"),
    ("1.01", "1.1"),
    ("1.001", "1.1"),
    ("1.0.0", "1.0.0.0"),
    ("2.0", "10.0"),
    ("a", "1"),
    ("abc", "abd"),
    ("1.2.3", "1.2.3a"),
    ("1.2.3a", "1.2.3.1"),
    ("20240101", "2024.01.01"),
    ("0.9.1-3", "0.10.0-1"),
    ("7.88.1-1", "7.88.1-2"),
    ("1.5rc1-1", "1.5-1"),
    ("r123.abcdef", "r124.000000"),
    ("1.0~rc1", "1.0"),
    ("1", ""),
    ("", ""),
    ("1.0-", "1.0"),
    ("1:", "1:0"),
    ("99999999999999999999999", "99999999999999999999998"),
    ("1.99999999999999999999", "1.100000000000000000000"),
    ("1.0-1", "1.0-1-1"),
    ("1.0 a", "1.0"),
];

#[test]
fn vercmp_table_matches_the_real_binary() {
    assert!(PAIRS.len() >= 40);
    for (a, b) in PAIRS {
        assert_eq!(
            archgate_pacman::vercmp(a, b),
            real_vercmp(a, b),
            "vercmp {a:?} {b:?}"
        );
        assert_eq!(
            archgate_pacman::vercmp(b, a),
            real_vercmp(b, a),
            "vercmp {b:?} {a:?}"
        );
    }
}

/// A deterministic pseudo-random sample of version-shaped strings, also checked against the
/// binary (catches what a hand-written table misses).
#[test]
fn vercmp_random_sample_matches_the_real_binary() {
    let alphabet: &[u8] = b"0123456789ab.-_+:";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..150 {
        let mut make = || {
            let len = 1 + (next() % 7) as usize;
            (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                .collect::<String>()
        };
        let (a, b) = (make(), make());
        assert_eq!(
            archgate_pacman::vercmp(&a, &b),
            real_vercmp(&a, &b),
            "vercmp {a:?} {b:?}"
        );
    }
}
