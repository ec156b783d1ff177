//! A tolerant reader for `.SRCINFO` (`key = value` lines; a `pkgbase` section, then one section
//! per `pkgname`). Only what the audit compares is kept.

use std::collections::BTreeMap;

/// `key → [(line, value)]` of one section.
pub(crate) type Section = BTreeMap<String, Vec<(u32, String)>>;

#[derive(Clone, Debug, Default)]
pub(crate) struct Srcinfo {
    pub base: Section,
    pub packages: Vec<(String, Section)>,
}

pub(crate) fn parse(text: &str) -> Srcinfo {
    let mut s = Srcinfo::default();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
        let lineno = i as u32 + 1;
        if k == "pkgname" {
            s.packages.push((v, BTreeMap::new()));
            continue;
        }
        let map = match s.packages.last_mut() {
            Some((_, m)) => m,
            None => &mut s.base,
        };
        map.entry(k).or_default().push((lineno, v));
    }
    s
}

impl Srcinfo {
    /// Every value of `key` in the base and all package sections.
    pub(crate) fn values(&self, key: &str) -> Vec<&(u32, String)> {
        let mut out: Vec<&(u32, String)> = self
            .base
            .get(key)
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        for (_, m) in &self.packages {
            if let Some(v) = m.get(key) {
                out.extend(v.iter());
            }
        }
        out
    }

    pub(crate) fn first(&self, key: &str) -> Option<&str> {
        self.base
            .get(key)
            .and_then(|v| v.first())
            .map(|(_, s)| s.as_str())
    }

    /// `[epoch:]pkgver-pkgrel` of the package base.
    pub(crate) fn version(&self) -> Option<String> {
        let ver = self.first("pkgver")?;
        let rel = self.first("pkgrel").unwrap_or("1");
        Some(
            match self.first("epoch").filter(|e| !e.is_empty() && *e != "0") {
                Some(e) => format!("{e}:{ver}-{rel}"),
                None => format!("{ver}-{rel}"),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sections_and_version() {
        let s = parse(
            "pkgbase = foo\n\tpkgver = 1.2\n\tpkgrel = 3\n\tepoch = 1\n\tdepends = a\n\npkgname = foo\n\tdepends = b\n",
        );
        assert_eq!(s.version().as_deref(), Some("1:1.2-3"));
        let d: Vec<&str> = s
            .values("depends")
            .iter()
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(d, ["a", "b"]);
    }
}
