//! MediaWiki HTML → clean Markdown: one converter for online pages, offline pages and news bodies.
//!
//! Two stages. [`clean_html`] walks the page with `scraper` and writes a small, plain HTML
//! fragment: the article body only (no edit links, navboxes, TOC, images, scripts), bare
//! `<pre>` wrapped in `<code>` so it becomes a fenced block, ArchWiki's Note/Warning/Tip
//! boxes as `<blockquote>` with a bold label, and internal links rewritten to
//! `archwiki://page/Title` references. It also returns the plain text and headings for the
//! index. [`html_to_markdown`] then hands that fragment to `htmd`.

use scraper::{ElementRef, Html, Node, Selector};

use crate::md_table::{CELL, HEAD_CELL, ROW, ROW_END, markdown_table, marked};
use crate::types::{normalize_title, page_uri, percent_decode};

/// An article reduced to what matters.
#[derive(Debug, Clone, Default)]
pub struct CleanPage {
    /// The title found in the document (`h1#firstHeading`, else `<title>`), if any.
    pub title: Option<String>,
    /// The cleaned article body as a plain HTML fragment.
    pub html: String,
    /// The article body as plain text (for indexing and snippets).
    pub text: String,
    /// The headings, in order.
    pub headings: Vec<String>,
}

/// Classes whose elements (and everything inside) are not article content.
const SKIP_CLASSES: &[&str] = &[
    "mw-editsection",
    "navbox",
    "toc",
    "mw-jump-link",
    "catlinks",
    "printfooter",
    "mw-empty-elt",
    "noprint",
    "mw-cite-backlink",
    "thumb",
    "mw-indicators",
    "mw-references-wrap-hidden",
];

/// Ids whose elements are page chrome.
const SKIP_IDS: &[&str] = &[
    "toc",
    "siteSub",
    "contentSub",
    "jump-to-nav",
    "catlinks",
    "mw-navigation",
    "footer",
    "archnavbar",
];

/// Tags that never carry article text.
const SKIP_TAGS: &[&str] = &[
    "script", "style", "noscript", "link", "meta", "img", "audio", "video", "figure", "map", "svg",
    "math", "input", "button", "form", "nav", "footer", "iframe", "object", "head",
];

/// Tags kept as they are (without attributes).
const KEEP_TAGS: &[&str] = &[
    "p",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "th",
    "td",
    "caption",
    "blockquote",
    "code",
    "strong",
    "b",
    "em",
    "i",
    "sup",
    "sub",
    "s",
    "del",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "div",
];

/// Block-level tags: the plain text gets a line break after them.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "ul",
    "ol",
    "li",
    "table",
    "tr",
    "th",
    "td",
    "caption",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "div",
    "dl",
    "dt",
    "dd",
    "pre",
    "br",
    "hr",
];

/// The ArchWiki message boxes that become blockquotes, with their labels.
const BOXES: &[(&str, &str)] = &[
    ("archwiki-template-box-note", "Note"),
    ("archwiki-template-box-warning", "Warning"),
    ("archwiki-template-box-tip", "Tip"),
];

/// Cleans a whole HTML document (or a parse API `text` fragment) down to its article body.
pub fn clean_html(raw: &str) -> CleanPage {
    let doc = Html::parse_document(raw);
    let title = find_title(&doc);
    let root = find_content_root(&doc);
    let mut c = Cleaner::default();
    match root {
        Some(root) => c.children(root),
        None => c.children(doc.root_element()),
    }
    CleanPage {
        title,
        html: c.html,
        text: tidy_text(&c.text),
        headings: c.headings,
    }
}

/// Converts a cleaned fragment (from [`clean_html`]) to Markdown.
pub fn html_to_markdown(clean: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            br_style: htmd::options::BrStyle::Backslash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Default::default()
        })
        .add_handler(vec!["td"], |e: htmd::Element| Some(marked(CELL, e.content)))
        .add_handler(vec!["th"], |e: htmd::Element| {
            Some(marked(HEAD_CELL, e.content))
        })
        .add_handler(vec!["tr"], |e: htmd::Element| {
            Some(format!("{ROW}{}{ROW_END}", e.content))
        })
        .add_handler(vec!["table"], |e: htmd::Element| {
            Some(markdown_table(e.content))
        })
        .build();
    match converter.convert(clean) {
        Ok(md) => tidy_markdown(&md),
        // htmd only fails on I/O errors of its in-memory reader; fall back to the plain text.
        Err(_) => tidy_text(clean),
    }
}

/// Converts raw wiki HTML straight to Markdown.
pub fn page_markdown(raw: &str) -> String {
    html_to_markdown(&clean_html(raw).html)
}

fn selector(s: &str) -> Option<Selector> {
    Selector::parse(s).ok()
}

fn find_title(doc: &Html) -> Option<String> {
    let from = |sel: &str| {
        let sel = selector(sel)?;
        let el = doc.select(&sel).next()?;
        let t = el.text().collect::<String>();
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty()).then_some(t)
    };
    from("h1#firstHeading").or_else(|| {
        from("title").map(|t| {
            t.strip_suffix(" - ArchWiki")
                .map(str::to_owned)
                .unwrap_or(t)
        })
    })
}

fn find_content_root(doc: &Html) -> Option<ElementRef<'_>> {
    [
        ".mw-parser-output",
        "#mw-content-text",
        "#bodyContent",
        "#content",
        "main",
        "body",
    ]
    .iter()
    .filter_map(|s| selector(s))
    .find_map(|sel| doc.select(&sel).next())
}

#[derive(Default)]
struct Cleaner {
    html: String,
    text: String,
    headings: Vec<String>,
}

impl Cleaner {
    fn children(&mut self, el: ElementRef<'_>) {
        for child in el.children() {
            match child.value() {
                Node::Text(t) => {
                    push_escaped(&mut self.html, t);
                    self.text.push_str(t);
                }
                Node::Element(_) => {
                    if let Some(e) = ElementRef::wrap(child) {
                        self.element(e);
                    }
                }
                _ => {}
            }
        }
    }

    fn element(&mut self, el: ElementRef<'_>) {
        let e = el.value();
        let name = e.name();
        if SKIP_TAGS.contains(&name)
            || e.id().is_some_and(|id| SKIP_IDS.contains(&id))
            || e.classes().any(|c| SKIP_CLASSES.contains(&c))
        {
            return;
        }
        match name {
            "pre" => self.pre(el),
            "a" => self.link(el),
            "h1" => self.wrap(el, "h2"),
            "h2" | "h3" | "h4" | "h5" | "h6" => {
                let text = heading_text(el);
                if !text.is_empty() {
                    self.headings.push(text);
                }
                self.wrap(el, name);
            }
            "dl" => self.wrap(el, "div"),
            "dd" => self.wrap(el, "div"),
            "dt" => {
                self.html.push_str("<p><strong>");
                self.children(el);
                self.html.push_str("</strong></p>");
            }
            "kbd" | "tt" | "samp" | "var" => self.wrap(el, "code"),
            "br" => self.html.push_str("<br>"),
            "hr" => self.html.push_str("<hr>"),
            "div"
                if e.classes()
                    .any(|c| c == "archwiki-template-meta-related-articles-start") =>
            {
                self.related(el)
            }
            "div" => match BOXES
                .iter()
                .find(|(class, _)| e.classes().any(|c| c == *class))
            {
                Some((_, label)) => self.note_box(el, label),
                None => self.wrap(el, "div"),
            },
            _ if KEEP_TAGS.contains(&name) => self.wrap(el, name),
            _ => self.children(el),
        }
        if BLOCK_TAGS.contains(&name) {
            self.text.push('\n');
        }
    }

    fn wrap(&mut self, el: ElementRef<'_>, tag: &str) {
        self.html.push('<');
        self.html.push_str(tag);
        self.html.push('>');
        self.children(el);
        self.html.push_str("</");
        self.html.push_str(tag);
        self.html.push('>');
        // A separator between siblings: htmd merges adjacent elements of the same tag
        // (two `<td>` side by side would become one cell).
        if BLOCK_TAGS.contains(&tag) {
            self.html.push('\n');
        }
    }

    fn pre(&mut self, el: ElementRef<'_>) {
        let code: String = el.text().collect();
        let code = code.trim_end_matches(['\n', ' ']);
        let code = code.strip_prefix('\n').unwrap_or(code);
        self.html.push_str("<pre><code>");
        push_escaped(&mut self.html, code);
        self.html.push_str("\n</code></pre>");
        self.text.push_str(code);
    }

    fn note_box(&mut self, el: ElementRef<'_>, label: &str) {
        let text: String = el.text().collect();
        let has_label = text
            .trim_start()
            .to_lowercase()
            .starts_with(&format!("{}:", label.to_lowercase()));
        self.html.push_str("<blockquote><p>");
        if !has_label {
            self.html.push_str(&format!("<strong>{label}:</strong> "));
            self.text.push_str(label);
            self.text.push_str(": ");
        }
        self.children(el);
        self.html.push_str("</p></blockquote>");
    }

    /// ArchWiki's "Related articles" box as one line of links.
    fn related(&mut self, el: ElementRef<'_>) {
        let Some(sel) = selector("a") else { return };
        self.html.push_str("<p><strong>Related articles:</strong> ");
        for (i, a) in el.select(&sel).enumerate() {
            if i > 0 {
                self.html.push_str(", ");
            }
            self.link(a);
            self.text.push(' ');
        }
        self.html.push_str("</p>");
    }

    fn link(&mut self, el: ElementRef<'_>) {
        let e = el.value();
        let target = match e.attr("href") {
            Some(href) if !e.classes().any(|c| c == "new" || c == "mw-selflink") => {
                link_target(href)
            }
            _ => None,
        };
        match target {
            Some(href) => {
                self.html.push_str("<a href=\"");
                push_escaped(&mut self.html, &href);
                self.html.push_str("\">");
                self.children(el);
                self.html.push_str("</a>");
            }
            None => self.children(el),
        }
    }
}

/// Where a link should point in the Markdown: an `archwiki://` reference for wiki pages,
/// the URL itself for the rest of the web, nothing for edit and red links.
fn link_target(href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with("javascript:") {
        return None;
    }
    if href.starts_with('#') {
        return Some(href.to_owned());
    }
    if let Some(title) = internal_title(href) {
        let (t, _) = title.split_once('#').unwrap_or((&title, ""));
        if t.is_empty() || t.starts_with("Special:") {
            return None;
        }
        return Some(page_uri(&title));
    }
    if href.contains("action=edit") || href.contains("redlink=1") {
        return None;
    }
    Some(href.to_owned())
}

/// The wiki title (with `#fragment`) a link points to, if it points into the wiki.
fn internal_title(href: &str) -> Option<String> {
    let path = match href.split_once("://") {
        Some((scheme, rest)) if scheme == "http" || scheme == "https" => {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            if !host.ends_with("wiki.archlinux.org") {
                return None;
            }
            format!("/{path}")
        }
        Some(_) => return None,
        None => href.to_owned(),
    };
    if let Some(rest) = path.strip_prefix("/title/") {
        return Some(decode_title(rest));
    }
    if let Some(rest) = path.strip_prefix("/index.php/") {
        return Some(decode_title(rest));
    }
    if let Some(query) = path.strip_prefix("/index.php?") {
        if query.contains("action=") || query.contains("redlink=") || query.contains("oldid=") {
            return None;
        }
        let (query, fragment) = query.split_once('#').unwrap_or((query, ""));
        let title = query.split('&').find_map(|kv| kv.strip_prefix("title="))?;
        let mut t = decode_title(title);
        if !fragment.is_empty() {
            t.push('#');
            t.push_str(fragment);
        }
        return Some(t);
    }
    // arch-wiki-docs layout: relative links to `Page.html`, `../en/Page.html`, `./Page.html#x`.
    let (file, fragment) = path.split_once('#').unwrap_or((&path, ""));
    let file = file.strip_suffix(".html")?;
    if file.starts_with('/') {
        return None;
    }
    let mut segments: Vec<&str> = file
        .split('/')
        .filter(|s| !s.is_empty() && *s != "." && *s != "..")
        .collect();
    if segments.len() > 1 && is_lang_dir(segments[0]) {
        segments.remove(0);
    }
    let mut t = decode_title(&segments.join("/"));
    if !fragment.is_empty() {
        t.push('#');
        t.push_str(fragment);
    }
    Some(t)
}

/// True for directory names of the arch-wiki-docs language layout (`en`, `es`, `zh-hans`, `pt-br` ...).
pub(crate) fn is_lang_dir(s: &str) -> bool {
    let (main, sub) = s.split_once('-').unwrap_or((s, ""));
    (2..=3).contains(&main.len())
        && main.bytes().all(|b| b.is_ascii_lowercase())
        && sub.len() <= 4
        && sub.bytes().all(|b| b.is_ascii_lowercase())
}

fn decode_title(s: &str) -> String {
    let decoded = percent_decode(s);
    match decoded.split_once('#') {
        Some((t, f)) => format!("{}#{f}", normalize_title(t)),
        None => normalize_title(&decoded),
    }
}

fn heading_text(el: ElementRef<'_>) -> String {
    let mut out = String::new();
    collect_heading_text(el, &mut out);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn collect_heading_text(el: ElementRef<'_>, out: &mut String) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(e) if !e.classes().any(|c| SKIP_CLASSES.contains(&c)) => {
                if let Some(c) = ElementRef::wrap(child) {
                    collect_heading_text(c, out);
                }
            }
            _ => {}
        }
    }
}

fn push_escaped(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(ch),
        }
    }
}

/// Plain text: blanks collapsed within lines, empty lines dropped.
fn tidy_text(s: &str) -> String {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Markdown: at most one blank line between blocks outside code fences, no trailing blanks.
fn tidy_markdown(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut in_fence = false;
    let mut blank_run = 0;
    for line in md.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push('\n');
            continue;
        }
        blank_run = 0;
        out.push_str(if in_fence { line } else { line.trim_end() });
        out.push('\n');
    }
    let trimmed = out.trim_matches('\n');
    let mut s = trimmed.to_owned();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_map_to_archwiki_references() {
        assert_eq!(
            link_target("/title/Systemd#Basic_usage").as_deref(),
            Some("archwiki://page/Systemd#Basic_usage")
        );
        assert_eq!(
            link_target("../en/Power_management.html").as_deref(),
            Some("archwiki://page/Power_management")
        );
        assert_eq!(
            link_target("./Pacman.html#Cleaning").as_deref(),
            Some("archwiki://page/Pacman#Cleaning")
        );
        assert_eq!(
            link_target("https://wiki.archlinux.org/title/GRUB").as_deref(),
            Some("archwiki://page/GRUB")
        );
        assert_eq!(
            link_target("/index.php?title=Fstab&action=edit&redlink=1"),
            None
        );
        assert_eq!(
            link_target("/index.php?title=Fstab").as_deref(),
            Some("archwiki://page/Fstab")
        );
        assert_eq!(
            link_target("https://example.org/x").as_deref(),
            Some("https://example.org/x")
        );
        assert_eq!(link_target("/title/Special:Search"), None);
        assert!(is_lang_dir("zh-hans") && is_lang_dir("en") && !is_lang_dir("Pacman"));
    }
}
