//! Version comparison identical to pacman's `vercmp`, and dependency strings (`name>=1.0`).
//!
//! pacman compares `[epoch:]version[-release]` by splitting the string the way libalpm's
//! `parse_evr` does (a missing epoch is `0`; the release is compared only when both sides have
//! one) and comparing each part with `rpmvercmp`. The part comparison is the official
//! `alpm_types::PackageVersion` ordering. Two cases that type cannot take are handled here with
//! a direct port of `rpmvercmp`: parts with characters `PackageVersion` refuses (empty, non-ASCII,
//! `<>=/` or whitespace), and digit runs longer than 19 digits, where `alpm-types` 0.13 would
//! overflow `usize` and panic. A property test checks both paths agree where both apply, and the
//! tests compare the result with the real `vercmp` binary.

use std::cmp::Ordering;

/// Compares two full versions exactly like pacman's `vercmp` / `alpm_pkg_vercmp`.
pub fn vercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (e1, v1, r1) = parse_evr(a);
    let (e2, v2, r2) = parse_evr(b);
    let mut ret = part_cmp(e1, e2);
    if ret == Ordering::Equal {
        ret = part_cmp(v1, v2);
        if ret == Ordering::Equal
            && let (Some(r1), Some(r2)) = (r1, r2)
        {
            ret = part_cmp(r1, r2);
        }
    }
    ret
}

/// libalpm's `parse_evr`: epoch (default "0"), version, optional release after the last '-'.
fn parse_evr(evr: &str) -> (&str, &str, Option<&str>) {
    let digits = evr.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &evr[digits..];
    let (epoch, after_epoch) = if let Some(stripped) = rest.strip_prefix(':') {
        let epoch = &evr[..digits];
        (if epoch.is_empty() { "0" } else { epoch }, stripped)
    } else {
        ("0", evr)
    };
    // libalpm searches the last '-' after the epoch digits.
    match rest.rfind('-') {
        Some(pos) => {
            let dash = digits + pos;
            let start = evr.len() - after_epoch.len();
            let version = if dash >= start { &evr[start..dash] } else { "" };
            (epoch, version, Some(&evr[dash + 1..]))
        }
        None => (epoch, after_epoch, None),
    }
}

/// One part compared with `rpmvercmp`, via `alpm-types` whenever it can represent both sides.
fn part_cmp(a: &str, b: &str) -> Ordering {
    match (official_part(a), official_part(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => rpmvercmp(a, b),
    }
}

fn official_part(s: &str) -> Option<alpm_types::PackageVersion> {
    let mut run = 0usize;
    for c in s.chars() {
        if c.is_ascii_digit() {
            run += 1;
            if run > 19 {
                return None;
            }
        } else {
            run = 0;
        }
    }
    alpm_types::PackageVersion::new(s.to_owned()).ok()
}

/// A direct port of libalpm's `rpmvercmp` over bytes (C `isalnum`/`isdigit`/`isalpha` in the
/// C locale are ASCII-only).
pub(crate) fn rpmvercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let s1 = a.as_bytes();
    let s2 = b.as_bytes();
    let (mut one, mut two) = (0usize, 0usize);
    let (mut ptr1, mut ptr2) = (0usize, 0usize);
    while one < s1.len() && two < s2.len() {
        while one < s1.len() && !s1[one].is_ascii_alphanumeric() {
            one += 1;
        }
        while two < s2.len() && !s2[two].is_ascii_alphanumeric() {
            two += 1;
        }
        if one >= s1.len() || two >= s2.len() {
            break;
        }
        // Different separator lengths in front of this segment decide (more is newer).
        if one - ptr1 != two - ptr2 {
            return (one - ptr1).cmp(&(two - ptr2));
        }
        ptr1 = one;
        ptr2 = two;
        let isnum = s1[ptr1].is_ascii_digit();
        if isnum {
            while ptr1 < s1.len() && s1[ptr1].is_ascii_digit() {
                ptr1 += 1;
            }
            while ptr2 < s2.len() && s2[ptr2].is_ascii_digit() {
                ptr2 += 1;
            }
        } else {
            while ptr1 < s1.len() && s1[ptr1].is_ascii_alphabetic() {
                ptr1 += 1;
            }
            while ptr2 < s2.len() && s2[ptr2].is_ascii_alphabetic() {
                ptr2 += 1;
            }
        }
        if two == ptr2 {
            return if isnum {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        let (mut seg1, mut seg2) = (&s1[one..ptr1], &s2[two..ptr2]);
        if isnum {
            while seg1.first() == Some(&b'0') {
                seg1 = &seg1[1..];
            }
            while seg2.first() == Some(&b'0') {
                seg2 = &seg2[1..];
            }
            match seg1.len().cmp(&seg2.len()) {
                Ordering::Equal => {}
                other => return other,
            }
        }
        match seg1.cmp(seg2) {
            Ordering::Equal => {}
            other => return other,
        }
        one = ptr1;
        two = ptr2;
    }
    let one_end = one >= s1.len();
    let two_end = two >= s2.len();
    if one_end && two_end {
        return Ordering::Equal;
    }
    let one_alpha = !one_end && s1[one].is_ascii_alphabetic();
    let two_alpha = !two_end && s2[two].is_ascii_alphabetic();
    if (one_end && !two_alpha) || one_alpha {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// The comparison operator of a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DepOp {
    /// `=`
    #[serde(rename = "=")]
    Eq,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `<`
    #[serde(rename = "<")]
    Lt,
}

/// A dependency, provision, conflict or replacement: `name[op version][: description]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Depend {
    /// The package or virtual name.
    pub name: String,
    /// Operator and version, when constrained.
    pub constraint: Option<(DepOp, String)>,
    /// The text after `: ` (optional dependencies).
    pub description: Option<String>,
}

impl Depend {
    /// Parses like libalpm's `alpm_dep_from_string`.
    pub fn parse(s: &str) -> Depend {
        let (spec, description) = match s.find(": ") {
            Some(i) => (&s[..i], Some(s[i + 2..].to_owned())),
            None => (s, None),
        };
        // libalpm looks for '<', then '>', then '=' (first occurrence of each).
        let found = if let Some(i) = spec.find('<') {
            Some(if spec[i + 1..].starts_with('=') {
                (i, 2, DepOp::Le)
            } else {
                (i, 1, DepOp::Lt)
            })
        } else if let Some(i) = spec.find('>') {
            Some(if spec[i + 1..].starts_with('=') {
                (i, 2, DepOp::Ge)
            } else {
                (i, 1, DepOp::Gt)
            })
        } else {
            spec.find('=').map(|i| (i, 1, DepOp::Eq))
        };
        if let Some((i, len, op)) = found {
            return Depend {
                name: spec[..i].to_owned(),
                constraint: Some((op, spec[i + len..].to_owned())),
                description,
            };
        }
        Depend {
            name: spec.to_owned(),
            constraint: None,
            description,
        }
    }

    /// The dependency without its description, as pacman prints it.
    pub fn spec(&self) -> String {
        match &self.constraint {
            None => self.name.clone(),
            Some((op, v)) => format!("{}{}{}", self.name, op.as_str(), v),
        }
    }

    /// Does a package with this name, version and provides satisfy the dependency?
    /// (libalpm `_alpm_depcmp`: the name with the package version, or a provision by name with
    /// its own version; an unversioned dependency is satisfied by any provision of that name,
    /// a versioned one only by a provision with `=version`.)
    pub fn satisfied_by(&self, name: &str, version: &str, provides: &[Depend]) -> bool {
        if name == self.name && self.version_ok(Some(version)) {
            return true;
        }
        provides.iter().any(|p| {
            p.name == self.name
                && (self.constraint.is_none()
                    || matches!(&p.constraint, Some((DepOp::Eq, v)) if self.version_ok(Some(v))))
        })
    }

    fn version_ok(&self, version: Option<&str>) -> bool {
        let Some((op, want)) = &self.constraint else {
            return true;
        };
        let Some(have) = version else {
            return false;
        };
        let cmp = vercmp(have, want);
        match op {
            DepOp::Eq => cmp == Ordering::Equal,
            DepOp::Ge => cmp != Ordering::Less,
            DepOp::Le => cmp != Ordering::Greater,
            DepOp::Gt => cmp == Ordering::Greater,
            DepOp::Lt => cmp == Ordering::Less,
        }
    }
}

impl DepOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            DepOp::Eq => "=",
            DepOp::Ge => ">=",
            DepOp::Le => "<=",
            DepOp::Gt => ">",
            DepOp::Lt => "<",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evr_split_follows_libalpm() {
        assert_eq!(parse_evr("1:2.0-3"), ("1", "2.0", Some("3")));
        assert_eq!(parse_evr("2.0"), ("0", "2.0", None));
        assert_eq!(parse_evr(":2.0-1"), ("0", "2.0", Some("1")));
        assert_eq!(parse_evr("a:1-2"), ("0", "a:1", Some("2")));
        assert_eq!(parse_evr("1-2-3"), ("0", "1-2", Some("3")));
    }

    #[test]
    fn dependency_strings_parse_like_libalpm() {
        let d = Depend::parse("foo>=1.2-3");
        assert_eq!(d.name, "foo");
        assert_eq!(d.constraint, Some((DepOp::Ge, "1.2-3".into())));
        let o = Depend::parse("bar: needed for baz");
        assert_eq!(o.name, "bar");
        assert_eq!(o.description.as_deref(), Some("needed for baz"));
        assert_eq!(Depend::parse("libz.so=1-64").spec(), "libz.so=1-64");
    }

    #[test]
    fn provisions_satisfy_by_their_own_version() {
        let provides = vec![Depend::parse("zlib-api=1.2.13")];
        assert!(Depend::parse("zlib-api>=1.0").satisfied_by("zl", "9-1", &provides));
        assert!(!Depend::parse("zlib-api>=2").satisfied_by("zl", "9-1", &provides));
        let unversioned = vec![Depend::parse("editor")];
        assert!(Depend::parse("editor").satisfied_by("e", "1-1", &unversioned));
        assert!(!Depend::parse("editor>=1").satisfied_by("e", "1-1", &unversioned));
        // A release-less constraint ignores the release, as pacman does.
        assert!(Depend::parse("foo=1.0").satisfied_by("foo", "1.0-7", &[]));
    }

    proptest! {
        /// Where alpm-types can represent a part, its ordering and the rpmvercmp port agree.
        #[test]
        fn official_ordering_matches_the_port(a in "[0-9a-c._+]{1,8}", b in "[0-9a-c._+]{1,8}") {
            if let (Some(x), Some(y)) = (official_part(&a), official_part(&b)) {
                prop_assert_eq!(x.cmp(&y), rpmvercmp(&a, &b), "{} vs {}", a, b);
            }
        }

        /// Never panics, antisymmetric, on any input (including huge digit runs).
        #[test]
        fn vercmp_total_on_garbage(a in "\\PC{0,24}", b in "[0-9]{15,40}") {
            prop_assert_eq!(vercmp(&a, &b), vercmp(&b, &a).reverse());
        }
    }
}
