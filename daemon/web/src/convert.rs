//! A response body made readable text by its content type: HTML as Markdown (on htmd, with
//! scripts, styles, navigation and SVG dropped, the title as a `# ` heading, links made
//! absolute), JSON pretty-printed, PDF as its text (pdf-extract), other text as it is, in
//! its declared (or sniffed) charset.
//!
//! Pure and synchronous: the client runs it on the blocking pool. Binary content is an error
//! (`WebError::Unreadable`), never bytes shown as text.

use std::borrow::Cow;

use htmd::element_handler::{HandlerResult, Handlers};
use htmd::{Element, HtmlToMarkdown};
use url::Url;

use crate::WebError;

/// A body converted: its text, the content type it was read as, and what was done to it.
#[derive(Debug)]
pub(crate) struct Converted {
    pub(crate) text: String,
    pub(crate) content_type: String,
    pub(crate) notes: Vec<String>,
}

/// Converts `body`, served as `content_type` (the header's value, when there was one) from
/// `url`.
pub(crate) fn convert(
    url: &Url,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Converted, WebError> {
    let (essence, charset) = parse_content_type(content_type.unwrap_or_default());
    let mut notes = Vec::new();
    let kind = match kind_of(&essence) {
        Some(kind) => kind,
        None => {
            let sniffed = sniff(body);
            match (essence.as_str(), sniffed) {
                ("", Kind::Binary) => {
                    return Err(WebError::Unreadable {
                        url: crate::error::shown_url(url),
                        content_type: "binary data without a content type".to_owned(),
                    });
                }
                (_, Kind::Binary) => {
                    return Err(WebError::Unreadable {
                        url: crate::error::shown_url(url),
                        content_type: essence,
                    });
                }
                ("", kind) => notes.push(format!(
                    "Served without a content type; read as {}.",
                    kind.name()
                )),
                (served, kind) => {
                    notes.push(format!("Served as {served}; read as {}.", kind.name()));
                }
            }
            sniffed
        }
    };
    let content_type = if essence.is_empty() {
        kind.mime().to_owned()
    } else {
        essence
    };
    let text = match kind {
        Kind::Pdf => {
            let (text, pages) = pdf_text(url, body)?;
            notes.push(format!(
                "Text extracted from a PDF of {pages} page{}; layout and images are lost.",
                if pages == 1 { "" } else { "s" }
            ));
            text
        }
        Kind::Html => {
            let html = decode(body, charset.as_deref().or(meta_charset(body)), &mut notes);
            notes.push("Converted from HTML to Markdown.".to_owned());
            html_to_markdown(&html, Some(url))
        }
        Kind::Json => {
            let text = decode(body, charset.as_deref(), &mut notes);
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(value) => match serde_json::to_string_pretty(&value) {
                    Ok(pretty) => pretty,
                    Err(_) => text.into_owned(),
                },
                Err(error) => {
                    notes.push(format!("Not valid JSON ({error}); shown as received."));
                    text.into_owned()
                }
            }
        }
        Kind::Text => decode(body, charset.as_deref(), &mut notes).into_owned(),
        Kind::Binary => {
            return Err(WebError::Unreadable {
                url: crate::error::shown_url(url),
                content_type,
            });
        }
    };
    Ok(Converted {
        text,
        content_type,
        notes,
    })
}

/// Converts an HTML document to Markdown: headings, lists, links, tables and code blocks as
/// Markdown; `<script>`, `<style>`, `<noscript>`, `<nav>`, `<svg>`, `<template>`, frames and
/// embedded objects dropped; the `<title>` as a `# ` heading; links and images resolved
/// against `base_url` when given; images inlined as `data:` URIs reduced to their alt text,
/// images without alt text dropped.
///
/// Runs of blank lines are collapsed to one and trailing spaces removed. html5ever accepts
/// any text, so there is no failure: broken markup is converted as browsers would read it.
pub fn html_to_markdown(html: &str, base_url: Option<&Url>) -> String {
    let link_base = base_url.cloned();
    let image_base = base_url.cloned();
    let converter = HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            br_style: htmd::options::BrStyle::Backslash,
            hr_style: htmd::options::HrStyle::Dashes,
            ..htmd::options::Options::default()
        })
        .skip_tags(vec![
            "script", "style", "noscript", "nav", "svg", "template", "iframe", "frame", "canvas",
            "object", "embed", "select",
        ])
        .add_handler(vec!["title"], title_handler)
        .add_handler(
            vec!["a"],
            move |handlers: &dyn Handlers, element: Element<'_>| {
                link_handler(handlers, &element, link_base.as_ref())
            },
        )
        .add_handler(
            vec!["img"],
            move |_: &dyn Handlers, element: Element<'_>| {
                image_handler(&element, image_base.as_ref())
            },
        )
        .build();
    // htmd's conversion is infallible for text input (its `Result` is for its reader API);
    // should that change, the page is shown as it came rather than lost.
    let markdown = match converter.convert(html) {
        Ok(markdown) => markdown,
        Err(_) => html.to_owned(),
    };
    tidy_lines(&markdown)
}

/// The start of an error response's body as one line of at most `EXCERPT_CHARS` characters
/// (HTML as its text); empty for binary content.
pub(crate) fn excerpt(content_type: Option<&str>, body: &[u8]) -> String {
    let (essence, charset) = parse_content_type(content_type.unwrap_or_default());
    let kind = kind_of(&essence).unwrap_or_else(|| sniff(body));
    let text = decode(body, charset.as_deref(), &mut Vec::new());
    let text = match kind {
        // Headings' marks say nothing on one line.
        Kind::Html => html_to_markdown(&text, None)
            .lines()
            .map(|line| line.trim_start_matches('#'))
            .collect::<Vec<_>>()
            .join("\n"),
        Kind::Json | Kind::Text => text.into_owned(),
        Kind::Pdf | Kind::Binary => return String::new(),
    };
    clip(&one_line(&text), EXCERPT_CHARS)
}

/// `text` cut to at most `chars` characters, with `…` when cut.
pub(crate) fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// Whitespace runs (line breaks included) as single spaces, trimmed.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The most characters of an error body an error message quotes.
const EXCERPT_CHARS: usize = 200;

/// What a body is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Json,
    Pdf,
    Text,
    Binary,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Html => "HTML",
            Kind::Json => "JSON",
            Kind::Pdf => "PDF",
            Kind::Text => "text",
            Kind::Binary => "binary",
        }
    }

    fn mime(self) -> &'static str {
        match self {
            Kind::Html => "text/html",
            Kind::Json => "application/json",
            Kind::Pdf => "application/pdf",
            Kind::Text => "text/plain",
            Kind::Binary => "application/octet-stream",
        }
    }
}

/// `text/html; charset=UTF-8` → (`text/html`, `Some("utf-8")`).
fn parse_content_type(header: &str) -> (String, Option<String>) {
    let mut parts = header.split(';');
    let essence = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts.find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
    });
    (essence, charset)
}

/// The kind a content type declares, or `None` when only the bytes can tell.
fn kind_of(essence: &str) -> Option<Kind> {
    let (top, sub) = essence.split_once('/').unwrap_or((essence, ""));
    match (top, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Some(Kind::Html),
        ("application", "json") => Some(Kind::Json),
        ("application", sub) if sub.ends_with("+json") => Some(Kind::Json),
        ("application", "pdf") => Some(Kind::Pdf),
        ("text", _) => Some(Kind::Text),
        (
            "application",
            "xml" | "javascript" | "x-javascript" | "ecmascript" | "yaml" | "x-yaml" | "toml"
            | "x-toml" | "x-sh" | "sql" | "graphql" | "x-ndjson" | "x-tex",
        ) => Some(Kind::Text),
        (_, sub) if sub.ends_with("+xml") => Some(Kind::Text),
        ("image" | "audio" | "video" | "font" | "model", _) => Some(Kind::Binary),
        (
            "application",
            "zip" | "gzip" | "x-gzip" | "x-tar" | "x-7z-compressed" | "x-rar-compressed" | "wasm"
            | "msword" | "vnd.ms-excel" | "x-msdownload" | "x-executable",
        ) => Some(Kind::Binary),
        _ => None,
    }
}

/// The kind of a body whose content type says nothing useful (none, octet-stream, an
/// unknown type), from its first bytes.
fn sniff(body: &[u8]) -> Kind {
    if body.starts_with(b"%PDF-") {
        return Kind::Pdf;
    }
    let head = &body[..body.len().min(8192)];
    if head.contains(&0) {
        return Kind::Binary;
    }
    let text_like = match std::str::from_utf8(head) {
        Ok(_) => true,
        // Cut in the middle of a character at the 8 KiB boundary.
        Err(error) => error.error_len().is_none(),
    };
    if !text_like {
        return Kind::Binary;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(512)])
        .trim_start()
        .to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else if start.starts_with('{') || start.starts_with('[') {
        Kind::Json
    } else {
        Kind::Text
    }
}

/// The charset an HTML document declares in a `<meta>` within its first 1024 bytes.
fn meta_charset(body: &[u8]) -> Option<&str> {
    let head = &body[..body.len().min(1024)];
    let position = head
        .windows(8)
        .position(|window| window.eq_ignore_ascii_case(b"charset="))?;
    let rest = &head[position + 8..];
    let rest = rest.strip_prefix(b"\"").unwrap_or(rest);
    let rest = rest.strip_prefix(b"'").unwrap_or(rest);
    let end = rest
        .iter()
        .position(|byte| matches!(byte, b'"' | b'\'' | b' ' | b';' | b'>' | b'/'))
        .unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok()
}

/// The body as text in `charset` (UTF-8 when none or unknown; a byte-order mark wins), with
/// a note when it was not UTF-8 or had bytes that are not text.
fn decode<'a>(body: &'a [u8], charset: Option<&str>, notes: &mut Vec<String>) -> Cow<'a, str> {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, used, had_errors) = encoding.decode(body);
    if used != encoding_rs::UTF_8 {
        notes.push(format!("Decoded from {}.", used.name()));
    }
    if had_errors {
        notes.push(format!(
            "Some bytes are not valid {} and were replaced with \u{fffd}.",
            used.name()
        ));
    }
    text
}

/// The text of a PDF, page after page, and how many pages it has.
fn pdf_text(url: &Url, body: &[u8]) -> Result<(String, usize), WebError> {
    let conversion_error = |detail: String| WebError::Conversion {
        url: crate::error::shown_url(url),
        format: "PDF",
        detail,
    };
    let pages = pdf_extract::extract_text_from_mem_by_pages(body)
        .map_err(|error| conversion_error(error.to_string()))?;
    let mut text = String::new();
    for page in &pages {
        let page = tidy_lines(page);
        if page.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&page);
    }
    if text.is_empty() {
        return Err(conversion_error(
            "it has no text to extract (its pages may be scanned images)".to_owned(),
        ));
    }
    Ok((text, pages.len()))
}

/// Trailing spaces removed from every line, runs of blank lines collapsed to one, and blank
/// lines at both ends dropped.
fn tidy_lines(text: &str) -> String {
    let mut tidy = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            continue;
        }
        if !tidy.is_empty() {
            tidy.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        tidy.push_str(line);
    }
    tidy
}

/// `<title>` as a level-one heading.
fn title_handler(handlers: &dyn Handlers, element: Element<'_>) -> Option<HandlerResult> {
    let title = one_line(&handlers.walk_children(element.node).content);
    if title.is_empty() {
        return Some("".into());
    }
    Some(format!("\n\n# {title}\n\n").into())
}

/// `<a href>` as an inline link with an absolute URL; anchors within the page, scripts and
/// empty links keep only their text.
fn link_handler(
    handlers: &dyn Handlers,
    element: &Element<'_>,
    base: Option<&Url>,
) -> Option<HandlerResult> {
    let text = one_line(&handlers.walk_children(element.node).content);
    let href = attribute(element, "href").unwrap_or_default().trim();
    if text.is_empty() {
        return Some("".into());
    }
    if href.is_empty() || href.starts_with('#') || href.starts_with("javascript:") {
        return Some(text.into());
    }
    let target = resolve(href, base);
    Some(format!("[{text}]({})", link_target(&target)).into())
}

/// `<img>` as an image link; an inlined (`data:`) image keeps only its alt text, and an
/// image without alt text (a logo, a spacer) is dropped.
fn image_handler(element: &Element<'_>, base: Option<&Url>) -> Option<HandlerResult> {
    let alt = one_line(attribute(element, "alt").unwrap_or_default());
    let source = attribute(element, "src").unwrap_or_default().trim();
    if alt.is_empty() || source.is_empty() || source.starts_with("data:") {
        return Some(alt.into());
    }
    let target = resolve(source, base);
    Some(format!("![{}]({})", alt.replace(']', "\\]"), link_target(&target)).into())
}

/// An attribute's value.
fn attribute<'a>(element: &'a Element<'_>, name: &str) -> Option<&'a str> {
    element
        .attrs
        .iter()
        .find(|attribute| &*attribute.name.local == name)
        .map(|attribute| &*attribute.value)
}

/// `href` resolved against the page's URL, or as written when it cannot be.
fn resolve(href: &str, base: Option<&Url>) -> String {
    base.and_then(|base| base.join(href).ok())
        .map_or_else(|| href.to_owned(), String::from)
}

/// A link target Markdown can hold: spaces and parentheses escaped.
fn link_target(target: &str) -> Cow<'_, str> {
    if target.contains([' ', '(', ')']) {
        Cow::Owned(
            target
                .replace(' ', "%20")
                .replace('(', "%28")
                .replace(')', "%29"),
        )
    } else {
        Cow::Borrowed(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.test/docs/page.html").unwrap()
    }

    #[test]
    fn content_types_are_parsed() {
        assert_eq!(
            parse_content_type("Text/HTML; charset=\"ISO-8859-1\""),
            ("text/html".to_owned(), Some("iso-8859-1".to_owned()))
        );
        assert_eq!(parse_content_type(""), (String::new(), None));
    }

    #[test]
    fn kinds_come_from_types_then_bytes() {
        assert_eq!(kind_of("application/ld+json"), Some(Kind::Json));
        assert_eq!(kind_of("image/svg+xml"), Some(Kind::Text));
        assert_eq!(kind_of("image/png"), Some(Kind::Binary));
        assert_eq!(kind_of("application/octet-stream"), None);
        assert_eq!(sniff(b"%PDF-1.4"), Kind::Pdf);
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(sniff(b"{\"a\": 1}"), Kind::Json);
        assert_eq!(sniff(b"plain words"), Kind::Text);
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), Kind::Binary);
    }

    #[test]
    fn the_meta_charset_is_found() {
        assert_eq!(
            meta_charset(b"<html><head><meta charset=\"windows-1252\">"),
            Some("windows-1252")
        );
        assert_eq!(
            meta_charset(b"<meta http-equiv=Content-Type content='text/html; charset=koi8-r'>"),
            Some("koi8-r")
        );
    }

    #[test]
    fn legacy_charsets_are_decoded_with_a_note() {
        let converted = convert(&url(), Some("text/plain; charset=latin1"), b"caf\xe9").unwrap();
        assert_eq!(converted.text, "café");
        assert_eq!(converted.notes, ["Decoded from windows-1252."]);
    }

    #[test]
    fn unknown_types_are_sniffed_and_noted() {
        let converted = convert(&url(), None, b"just text").unwrap();
        assert_eq!(converted.content_type, "text/plain");
        assert_eq!(
            converted.notes,
            ["Served without a content type; read as text."]
        );
        let error = convert(&url(), Some("application/octet-stream"), b"\0\x01\x02").unwrap_err();
        assert_eq!(
            error.to_string(),
            "https://example.test/docs/page.html is application/octet-stream, which cannot be read as text"
        );
        let error = convert(&url(), None, b"\0\x01\x02").unwrap_err();
        assert_eq!(
            error.to_string(),
            "https://example.test/docs/page.html is binary data without a content type, which cannot be read as text"
        );
    }

    #[test]
    fn links_and_images_are_absolute() {
        let markdown = html_to_markdown(
            "<p><a href=\"../a b.html\">A\n link</a> <a href=\"#top\">top</a> \
             <a href=\"/x\"><img src=\"data:image/png;base64,AAAA\"></a> \
             <img src=\"pic.png\" alt=\"A pic\"></p>",
            Some(&url()),
        );
        assert_eq!(
            markdown,
            "[A link](https://example.test/a%20b.html) top ![A pic](https://example.test/docs/pic.png)"
        );
    }

    #[test]
    fn tables_quotes_and_nested_lists() {
        let markdown = html_to_markdown(
            "<header><a href='/'><img src='logo.svg' alt=''></a></header>\
             <table><thead><tr><th>Name</th><th>Value</th></tr></thead>\
             <tbody><tr><td>a</td><td>1</td></tr></tbody></table>\
             <blockquote><p>Quoted <code>x`y</code></p></blockquote>\
             <ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>\
             <p>Line<br>break &amp; <em>em</em> [not a link]</p>\
             <p><a href='https://x.test/a_(b)'><img src='i.png' alt='Icon'> paren</a></p>",
            Some(&url()),
        );
        assert_eq!(
            markdown,
            "| Name | Value |\n| ---- | ----- |\n| a    | 1     |\n\n\
             > Quoted ``x`y``\n\n\
             - one\n  - nested\n- two\n\n\
             Line\\\nbreak & *em* \\[not a link\\]\n\n\
             [![Icon](https://example.test/docs/i.png) paren](https://x.test/a_%28b%29)"
        );
    }

    #[test]
    fn blank_runs_are_collapsed() {
        assert_eq!(tidy_lines("\n\na  \n\n\n\nb\nc\n\n"), "a\n\nb\nc");
    }
}
