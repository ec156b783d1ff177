//! pacman's version comparison (`[epoch:]pkgver[-pkgrel]`, rpmvercmp segments), so "is the AUR
//! version newer than the installed one" agrees with `vercmp`.

use std::cmp::Ordering;

fn split(v: &str) -> (&str, &str, Option<&str>) {
    let (epoch, rest) = match v.split_once(':') {
        Some((e, r)) if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => (e, r),
        _ => ("0", v),
    };
    match rest.rsplit_once('-') {
        Some((ver, rel)) => (epoch, ver, Some(rel)),
        None => (epoch, rest, None),
    }
}

/// Compares two full versions the way `vercmp` does.
pub fn vercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (ea, va, ra) = split(a);
    let (eb, vb, rb) = split(b);
    rpmvercmp(ea, eb)
        .then_with(|| rpmvercmp(va, vb))
        .then_with(|| match (ra, rb) {
            (Some(x), Some(y)) => rpmvercmp(x, y),
            _ => Ordering::Equal,
        })
}

/// rpmvercmp on one component.
pub fn rpmvercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let a = a.as_bytes();
    let b = b.as_bytes();
    let (mut one, mut two) = (0usize, 0usize);
    let (mut p1, mut p2) = (0usize, 0usize);
    while one < a.len() && two < b.len() {
        while one < a.len() && !a[one].is_ascii_alphanumeric() {
            one += 1;
        }
        while two < b.len() && !b[two].is_ascii_alphanumeric() {
            two += 1;
        }
        if one >= a.len() || two >= b.len() {
            break;
        }
        if one - p1 != two - p2 {
            return if one - p1 < two - p2 {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        p1 = one;
        p2 = two;
        let isnum = a[p1].is_ascii_digit();
        if isnum {
            while p1 < a.len() && a[p1].is_ascii_digit() {
                p1 += 1;
            }
            while p2 < b.len() && b[p2].is_ascii_digit() {
                p2 += 1;
            }
        } else {
            while p1 < a.len() && a[p1].is_ascii_alphabetic() {
                p1 += 1;
            }
            while p2 < b.len() && b[p2].is_ascii_alphabetic() {
                p2 += 1;
            }
        }
        if p2 == two {
            return if isnum {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        let (mut s1, mut s2) = (&a[one..p1], &b[two..p2]);
        if isnum {
            while s1.first() == Some(&b'0') {
                s1 = &s1[1..];
            }
            while s2.first() == Some(&b'0') {
                s2 = &s2[1..];
            }
            match s1.len().cmp(&s2.len()) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        match s1.cmp(s2) {
            Ordering::Equal => {}
            o => return o,
        }
        one = p1;
        two = p2;
    }
    let rest1 = one < a.len();
    let rest2 = two < b.len();
    if !rest1 && !rest2 {
        return Ordering::Equal;
    }
    if (!rest1 && !b[two].is_ascii_alphabetic()) || (rest1 && a[one].is_ascii_alphabetic()) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_pacman_examples() {
        use Ordering::*;
        let cases = [
            ("1.0", "1.0", Equal),
            ("1.0", "1.1", Less),
            ("1.0a", "1.0", Less),
            ("1.0alpha", "1.0", Less),
            ("1.0", "1.0.1", Less),
            ("1.0.a", "1.0", Greater),
            ("1:1.0", "2.0", Greater),
            ("1.0-2", "1.0-10", Less),
            ("1.0-1", "1.0", Equal),
            ("20240101", "20231231", Greater),
            ("1.0.r12.gabc", "1.0.r9.gdef", Greater),
            ("0.9.1", "0.10.0", Less),
            ("1.001", "1.1", Equal),
        ];
        for (a, b, want) in cases {
            assert_eq!(vercmp(a, b), want, "{a} vs {b}");
            assert_eq!(vercmp(b, a), want.reverse(), "{b} vs {a}");
        }
    }
}
