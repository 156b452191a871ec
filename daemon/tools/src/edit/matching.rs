//! Where `edit` finds `oldText`: normalized views of a file that remember, for every change
//! they made, which original bytes it came from, so a match found in normalized text maps
//! back to an exact range of the original and only that range is rewritten.
//!
//! Two views: [`View::line_feeds`] (CRLF read as LF — the exact match) and [`View::fuzzy`]
//! (pi's `normalizeForFuzzyMatch`: NFKC, trailing whitespace per line dropped, smart quotes,
//! Unicode dashes and spaces made ASCII). The same normalization is applied to `oldText`.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::canonical_combining_class;

/// A normalized text and the changes that produced it from the original.
#[derive(Debug)]
pub struct View<'a> {
    /// The normalized text.
    pub text: Cow<'a, str>,
    // Invariant: sorted by `normalized.start` (strictly increasing) and non-overlapping in
    // both coordinates; between changes the two texts are identical.
    changes: Vec<Change>,
}

/// Normalized bytes `normalized` replaced original bytes `original`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Change {
    normalized_start: usize,
    normalized_end: usize,
    original_start: usize,
    original_end: usize,
}

impl<'a> View<'a> {
    /// `original` with every `\r\n` read as `\n`.
    pub fn line_feeds(original: &'a str) -> View<'a> {
        if memchr::memchr(b'\r', original.as_bytes()).is_none() {
            return View {
                text: Cow::Borrowed(original),
                changes: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut changes = Vec::new();
        let mut copied = 0;
        for newline in memchr::memchr_iter(b'\n', original.as_bytes()) {
            if newline > 0 && original.as_bytes()[newline - 1] == b'\r' {
                text.push_str(&original[copied..newline - 1]);
                changes.push(Change {
                    normalized_start: text.len(),
                    normalized_end: text.len(),
                    original_start: newline - 1,
                    original_end: newline,
                });
                copied = newline;
            }
        }
        text.push_str(&original[copied..]);
        View {
            text: Cow::Owned(text),
            changes,
        }
    }

    /// `original` normalized for fuzzy matching (see the module docs).
    pub fn fuzzy(original: &'a str) -> View<'a> {
        let mut text = String::with_capacity(original.len());
        let mut changes = Vec::new();
        let mut line_start = 0;
        loop {
            let line_end = memchr::memchr(b'\n', &original.as_bytes()[line_start..])
                .map_or(original.len(), |index| line_start + index);
            let line = &original[line_start..line_end];
            let kept = line.trim_end_matches(is_fuzzy_whitespace);
            let kept_end = line_start + kept.len();
            if kept.is_ascii() {
                text.push_str(kept);
            } else {
                push_fuzzy_segments(kept, line_start, &mut text, &mut changes);
            }
            if kept_end < line_end {
                changes.push(Change {
                    normalized_start: text.len(),
                    normalized_end: text.len(),
                    original_start: kept_end,
                    original_end: line_end,
                });
            }
            if line_end == original.len() {
                break;
            }
            text.push('\n');
            line_start = line_end + 1;
        }
        View {
            text: Cow::Owned(text),
            changes,
        }
    }

    /// The original range of the normalized range `start..end`. A range that starts where
    /// removed text was (a `\r`, trailing whitespace) includes it; one that ends there
    /// excludes it; positions inside a rewritten character widen to the whole character.
    pub fn original_range(&self, start: usize, end: usize) -> (usize, usize) {
        (self.original_start(start), self.original_end(end))
    }

    fn original_start(&self, position: usize) -> usize {
        let index = self
            .changes
            .partition_point(|change| change.normalized_start <= position);
        match index.checked_sub(1).map(|index| self.changes[index]) {
            None => position,
            Some(change)
                if position < change.normalized_end || position == change.normalized_start =>
            {
                change.original_start
            }
            Some(change) => change.original_end + (position - change.normalized_end),
        }
    }

    fn original_end(&self, position: usize) -> usize {
        let index = self
            .changes
            .partition_point(|change| change.normalized_start < position);
        match index.checked_sub(1).map(|index| self.changes[index]) {
            None => position,
            Some(change) if position <= change.normalized_end => change.original_end,
            Some(change) => change.original_end + (position - change.normalized_end),
        }
    }
}

/// `text` with `\r\n` read as `\n`.
pub fn normalize_line_feeds(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// `text` normalized as [`View::fuzzy`] normalizes files.
pub fn normalize_fuzzy(text: &str) -> String {
    View::fuzzy(text).text.into_owned()
}

/// Non-overlapping occurrences of `needle` in `haystack`, left to right.
pub fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    memchr::memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).collect()
}

/// Normalizes a non-ASCII run segment by segment (a starter and its combining marks), so each
/// changed segment maps to its original bytes.
fn push_fuzzy_segments(run: &str, offset: usize, text: &mut String, changes: &mut Vec<Change>) {
    let mut segment_start = 0;
    let mut chars = run.char_indices().peekable();
    while let Some((_, _first)) = chars.next() {
        while let Some(&(_, next)) = chars.peek() {
            if canonical_combining_class(next) == 0 {
                break;
            }
            chars.next();
        }
        let segment_end = chars.peek().map_or(run.len(), |&(index, _)| index);
        let segment = &run[segment_start..segment_end];
        let normalized: String = segment.nfkc().map(fuzzy_char).collect();
        if normalized == segment {
            text.push_str(segment);
        } else {
            changes.push(Change {
                normalized_start: text.len(),
                normalized_end: text.len() + normalized.len(),
                original_start: offset + segment_start,
                original_end: offset + segment_end,
            });
            text.push_str(&normalized);
        }
        segment_start = segment_end;
    }
}

/// pi's character folding: smart quotes, Unicode dashes and spaces to ASCII.
fn fuzzy_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// JavaScript's `trimEnd` whitespace: Unicode White_Space plus the BOM.
fn is_fuzzy_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_fuzzy(original: &str, needle: &str, expect: &str) {
        let view = View::fuzzy(original);
        let needle = normalize_fuzzy(needle);
        let found = occurrences(&view.text, &needle);
        let [start] = found[..] else {
            panic!("{needle:?} found {found:?} in {:?}", view.text)
        };
        let (from, to) = view.original_range(start, start + needle.len());
        assert_eq!(&original[from..to], expect);
    }

    #[test]
    fn fuzzy_matches_map_back_to_the_original_bytes() {
        check_fuzzy("a = “x”;\nb", "a = \"x\";", "a = “x”;");
        check_fuzzy(
            "let x = 1;   \nlet y = 2;\t\n",
            "let x = 1;\nlet y = 2;",
            "let x = 1;   \nlet y = 2;",
        );
        check_fuzzy("x — y\n", "x - y", "x — y");
        check_fuzzy("ﬁle\u{00A0}name", "file name", "ﬁle\u{00A0}name");
        check_fuzzy("e\u{301}t\u{e9}", "\u{e9}t\u{e9}", "e\u{301}t\u{e9}");
    }

    #[test]
    fn line_feed_view_keeps_crlf_pairs_together() {
        let original = "one\r\ntwo\r\nthree";
        let view = View::line_feeds(original);
        assert_eq!(view.text, "one\ntwo\nthree");
        let start = occurrences(&view.text, "two")[0];
        assert_eq!(view.original_range(start, start + 3), (5, 8));
        let start = occurrences(&view.text, "\ntwo\n")[0];
        assert_eq!(view.original_range(start, start + 5), (3, 10));
    }
}
