//! A page's Markdown as sections and output pages: table of contents, section selection,
//! and splitting into pages of bounded size that lose nothing.

use crate::args::SectionArg;
use crate::error::WikiError;
use crate::types::TocEntry;

/// One section of a Markdown page: its entry and its byte range (heading included,
/// subsections included, as MediaWiki counts them).
#[derive(Debug, Clone)]
struct Section {
    entry: TocEntry,
    start: usize,
    end: usize,
}

/// Markdown split into sections at its ATX headings (code fences respected).
#[derive(Debug, Clone)]
pub struct Outline {
    sections: Vec<Section>,
}

impl Outline {
    /// Reads the headings of `md`. Section 0 is the lead before the first heading.
    pub fn new(md: &str) -> Self {
        let mut heads: Vec<(usize, u8, String)> = Vec::new();
        let mut in_fence = false;
        let mut offset = 0;
        for line in md.split_inclusive('\n') {
            let t = line.trim_end();
            if t.trim_start().starts_with("```") || t.trim_start().starts_with("~~~") {
                in_fence = !in_fence;
            } else if !in_fence && let Some((level, title)) = atx_heading(t) {
                heads.push((offset, level, title));
            }
            offset += line.len();
        }
        let mut sections = Vec::with_capacity(heads.len() + 1);
        let lead_end = heads.first().map(|h| h.0).unwrap_or(md.len());
        sections.push(Section {
            entry: TocEntry {
                index: 0,
                level: 1,
                title: "(lead)".to_owned(),
            },
            start: 0,
            end: lead_end,
        });
        for (i, (start, level, title)) in heads.iter().enumerate() {
            let end = heads[i + 1..]
                .iter()
                .find(|h| h.1 <= *level)
                .map(|h| h.0)
                .unwrap_or(md.len());
            sections.push(Section {
                entry: TocEntry {
                    index: (i + 1) as u32,
                    level: *level,
                    title: title.clone(),
                },
                start: *start,
                end,
            });
        }
        Outline { sections }
    }

    /// The table of contents (the lead first, as index 0).
    pub fn toc(&self) -> Vec<TocEntry> {
        self.sections.iter().map(|s| s.entry.clone()).collect()
    }

    /// Finds a section by number or by heading (case-insensitive; `_` and blanks alike;
    /// a number written as a string is an index).
    pub fn find(&self, arg: &SectionArg) -> Option<(TocEntry, std::ops::Range<usize>)> {
        let by_index = |i: u32| self.sections.iter().find(|s| s.entry.index == i);
        let found = match arg {
            SectionArg::Index(i) => by_index(*i),
            SectionArg::Name(name) => {
                let want = fold(name);
                match name.trim().parse::<u32>() {
                    Ok(i) => by_index(i),
                    Err(_) => self
                        .sections
                        .iter()
                        .skip(1)
                        .find(|s| fold(&s.entry.title) == want)
                        .or_else(|| {
                            self.sections.iter().skip(1).find(|s| {
                                fold(&s.entry.title).starts_with(&want) && !want.is_empty()
                            })
                        }),
                }
            }
        };
        found.map(|s| (s.entry.clone(), s.start..s.end))
    }

    /// The section headings, for "not found" answers.
    pub fn headings(&self) -> Vec<String> {
        self.sections
            .iter()
            .skip(1)
            .map(|s| format!("{} {}", s.entry.index, s.entry.title))
            .collect()
    }
}

fn fold(s: &str) -> String {
    s.replace('_', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn atx_heading(line: &str) -> Option<(u8, String)> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.starts_with(' ') {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim().to_owned();
    Some((hashes as u8, title))
}

/// Splits `md` into pages of at most `page_bytes` bytes (at least 1 KiB), preferring to
/// cut between blocks, then between lines, then between characters. A code fence cut in two
/// is closed at the end of one page and reopened on the next; apart from those added fence
/// lines, the pages joined give back the input.
pub fn paginate(md: &str, page_bytes: usize) -> Vec<String> {
    let cap = page_bytes.max(1024);
    if md.len() <= cap {
        return vec![md.to_owned()];
    }
    let mut pages = Vec::new();
    let mut current = String::new();
    // Byte offset in `current` just after the last blank line outside a code fence.
    let mut last_break: Option<usize> = None;
    let mut fence: Option<String> = None;
    for line in md.split_inclusive('\n') {
        for piece in split_long_line(line, cap / 2) {
            let reserve = fence.as_ref().map(|f| f.len() + 2).unwrap_or(0);
            if !current.is_empty() && current.len() + piece.len() + reserve > cap {
                match last_break.filter(|&i| i >= cap / 2 && i < current.len()) {
                    Some(i) => {
                        let tail = current.split_off(i);
                        pages.push(std::mem::replace(&mut current, tail));
                    }
                    None => match &fence {
                        Some(f) => {
                            if !current.ends_with('\n') {
                                current.push('\n');
                            }
                            current.push_str(fence_closer(f));
                            current.push('\n');
                            pages.push(std::mem::take(&mut current));
                            current.push_str(f);
                            current.push('\n');
                        }
                        None => pages.push(std::mem::take(&mut current)),
                    },
                }
                last_break = None;
            }
            current.push_str(piece);
        }
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = match fence {
                Some(_) => None,
                None => Some(t.to_owned()),
            };
        } else if t.is_empty() && fence.is_none() {
            last_break = Some(current.len());
        }
    }
    if !current.is_empty() {
        pages.push(current);
    }
    pages
}

fn fence_closer(opener: &str) -> &str {
    let ch = opener.chars().next().unwrap_or('`');
    let n = opener.chars().take_while(|c| *c == ch).count();
    &opener[..n * ch.len_utf8()]
}

fn split_long_line(line: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Some(space) = rest[..cut].rfind(' ').filter(|&s| s > max / 2) {
            cut = space + 1;
        }
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.push(rest);
    out
}

/// Picks the section and the output page of a page's Markdown.
pub(crate) struct Selected {
    pub section: Option<TocEntry>,
    pub markdown: String,
    pub page: u32,
    pub pages: u32,
    pub total_bytes: usize,
    pub toc: Option<Vec<TocEntry>>,
}

pub(crate) fn select(
    title: &str,
    md: &str,
    section: Option<&SectionArg>,
    page: Option<u32>,
    want_toc: bool,
    page_bytes: usize,
) -> Result<Selected, WikiError> {
    let outline = Outline::new(md);
    let (entry, body) = match section {
        None => (None, md),
        Some(arg) => match outline.find(arg) {
            Some((entry, range)) => (Some(entry), &md[range]),
            None => {
                return Err(WikiError::NoSuchSection {
                    title: title.to_owned(),
                    section: match arg {
                        SectionArg::Index(i) => i.to_string(),
                        SectionArg::Name(n) => n.clone(),
                    },
                    available: outline.headings(),
                });
            }
        },
    };
    let pages = paginate(body, page_bytes);
    let n = pages.len() as u32;
    let want = page.unwrap_or(1).max(1);
    let Some(text) = pages.into_iter().nth((want - 1) as usize) else {
        return Err(WikiError::PageOutOfRange {
            title: title.to_owned(),
            page: want,
            pages: n,
        });
    };
    Ok(Selected {
        section: entry,
        markdown: text,
        page: want,
        pages: n,
        total_bytes: body.len(),
        toc: want_toc.then(|| outline.toc()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "Lead text.\n\n## Installation\n\nInstall it.\n\n### From the AUR\n\nBuild it.\n\n```\n# not a heading\n```\n\n## Configuration\n\nEdit the file.\n";

    #[test]
    fn outline_counts_sections_like_mediawiki_and_ignores_fenced_hashes() {
        let o = Outline::new(MD);
        let toc = o.toc();
        let titles: Vec<_> = toc
            .iter()
            .map(|e| (e.index, e.level, e.title.as_str()))
            .collect();
        assert_eq!(
            titles,
            vec![
                (0, 1, "(lead)"),
                (1, 2, "Installation"),
                (2, 3, "From the AUR"),
                (3, 2, "Configuration")
            ]
        );
        let (e, r) = o.find(&SectionArg::Name("installation".into())).unwrap();
        assert_eq!(e.index, 1);
        assert!(MD[r.clone()].contains("Build it.") && !MD[r].contains("Edit the file"));
        let (e, _) = o.find(&SectionArg::Name("3".into())).unwrap();
        assert_eq!(e.title, "Configuration");
        assert!(o.find(&SectionArg::Name("Nope".into())).is_none());
    }

    #[test]
    fn pagination_loses_nothing_and_respects_the_cap() {
        let mut md = String::new();
        for i in 0..400 {
            md.push_str(&format!(
                "Paragraph {i} with some words in it to fill the page.\n\n"
            ));
        }
        md.push_str("```\n");
        for i in 0..200 {
            md.push_str(&format!("echo line {i}\n"));
        }
        md.push_str("```\n");
        md.push_str(&"x".repeat(5000));
        let pages = paginate(&md, 4096);
        assert!(pages.len() > 5);
        for p in &pages {
            assert!(p.len() <= 4096 + 8, "page of {} bytes", p.len());
            assert_eq!(p.matches("```").count() % 2, 0, "unbalanced fence in page");
        }
        let joined: String = pages.concat().replace("```\n```\n", "");
        assert_eq!(joined, md);
    }
}
