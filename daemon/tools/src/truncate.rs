//! pi's output limits: head truncation (read, grep, find, ls) keeps the first complete lines,
//! tail truncation (bash) keeps the last ones; whichever of the line and byte limits hits first
//! wins. Also pi's `formatSize` and the `TruncationResult` JSON shape clients read in
//! `details.truncation`.
//!
//! Lines are counted as pi counts them: split on `\n`, so a trailing newline counts as one
//! more (empty) line. Output never ends in a partial line, except when a single last line is
//! larger than the byte limit under tail truncation (`last_line_partial`).

use serde_json::{Value, json};

/// Most lines a tool returns.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Most bytes a tool returns (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Most characters of one grep line.
pub const GREP_MAX_LINE_CHARS: usize = 500;

/// The limits of one truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most lines kept.
    pub max_lines: usize,
    /// Most bytes kept.
    pub max_bytes: usize,
}

impl Limits {
    /// pi's defaults: 2000 lines, 50 KB.
    pub const DEFAULT: Limits = Limits {
        max_lines: DEFAULT_MAX_LINES,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    /// Only the byte limit (grep, find and ls cap bytes, and count results themselves).
    pub const BYTES_ONLY: Limits = Limits {
        max_lines: usize::MAX,
        max_bytes: DEFAULT_MAX_BYTES,
    };
}

/// Which limit cut the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// What a truncation kept and why (pi's `TruncationResult`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// The kept text.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit cut it.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines of the whole input.
    pub total_lines: u64,
    /// Bytes of the whole input.
    pub total_bytes: u64,
    /// Lines kept.
    pub output_lines: u64,
    /// Bytes kept.
    pub output_bytes: u64,
    /// Tail truncation kept only the end of the last line.
    pub last_line_partial: bool,
    /// Head truncation kept nothing because the first line alone is over the byte limit.
    pub first_line_exceeds_limit: bool,
    /// The limits applied.
    pub limits: Limits,
}

impl Truncation {
    /// pi's `TruncationResult` JSON (for `details.truncation`).
    pub fn to_json(&self) -> Value {
        let truncated_by = match self.truncated_by {
            Some(TruncatedBy::Lines) => Value::from("lines"),
            Some(TruncatedBy::Bytes) => Value::from("bytes"),
            None => Value::Null,
        };
        let max_lines = match self.limits.max_lines {
            usize::MAX => Value::from(9007199254740991u64),
            other => Value::from(other),
        };
        json!({
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": max_lines,
            "maxBytes": self.limits.max_bytes,
        })
    }

    fn untouched(content: &str, limits: Limits) -> Truncation {
        let lines = line_count(content);
        Truncation {
            content: content.to_owned(),
            truncated: false,
            truncated_by: None,
            total_lines: lines,
            total_bytes: content.len() as u64,
            output_lines: lines,
            output_bytes: content.len() as u64,
            last_line_partial: false,
            first_line_exceeds_limit: false,
            limits,
        }
    }
}

/// Lines as pi counts them: `\n` count + 1.
pub fn line_count(text: &str) -> u64 {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64 + 1
}

/// Keeps the first complete lines that fit both limits.
pub fn truncate_head(content: &str, limits: Limits) -> Truncation {
    let total_lines = line_count(content);
    if total_lines <= limits.max_lines as u64 && content.len() <= limits.max_bytes {
        return Truncation::untouched(content, limits);
    }
    let first_line = content.split('\n').next().unwrap_or_default();
    if first_line.len() > limits.max_bytes {
        return Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes: content.len() as u64,
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            limits,
        };
    }
    // `end` is the byte length of the kept prefix (lines joined by `\n`, no trailing one).
    let mut end = 0usize;
    let mut kept = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    for (index, line) in content.split('\n').enumerate() {
        if kept >= limits.max_lines {
            break;
        }
        let added = line.len() + usize::from(index > 0);
        if end + added > limits.max_bytes {
            truncated_by = TruncatedBy::Bytes;
            break;
        }
        end += added;
        kept += 1;
    }
    if kept >= limits.max_lines && end <= limits.max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    Truncation {
        content: content[..end].to_owned(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes: content.len() as u64,
        output_lines: kept as u64,
        output_bytes: end as u64,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        limits,
    }
}

/// Keeps the last complete lines that fit both limits; a last line larger than the byte limit
/// keeps its final bytes (cut at a character boundary).
pub fn truncate_tail(content: &str, limits: Limits) -> Truncation {
    let total_lines = line_count(content);
    if total_lines <= limits.max_lines as u64 && content.len() <= limits.max_bytes {
        return Truncation::untouched(content, limits);
    }
    // `start` is where the kept suffix begins.
    let mut start = content.len();
    let mut kept = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    let mut last_line_partial = false;
    for line in content.rsplit('\n') {
        if kept >= limits.max_lines {
            break;
        }
        let added = line.len() + usize::from(kept > 0);
        let used = content.len() - start;
        if used + added > limits.max_bytes {
            truncated_by = TruncatedBy::Bytes;
            if kept == 0 {
                start = content.len() - suffix_within(line, limits.max_bytes).len();
                kept = 1;
                last_line_partial = true;
            }
            break;
        }
        start -= added;
        kept += 1;
    }
    let output_bytes = content.len() - start;
    if kept >= limits.max_lines && output_bytes <= limits.max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    Truncation {
        content: content[start..].to_owned(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes: content.len() as u64,
        output_lines: kept as u64,
        output_bytes: output_bytes as u64,
        last_line_partial,
        first_line_exceeds_limit: false,
        limits,
    }
}

/// The longest suffix of `text` of at most `max_bytes` bytes that starts at a char boundary.
fn suffix_within(text: &str, max_bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// pi's `formatSize`: `512B`, `50.0KB`, `1.5MB`.
pub fn format_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(max_lines: usize, max_bytes: usize) -> Limits {
        Limits {
            max_lines,
            max_bytes,
        }
    }

    fn check_head(input: &str, limits: Limits, expect: (&str, Option<TruncatedBy>, u64)) {
        let result = truncate_head(input, limits);
        assert_eq!(
            (
                result.content.as_str(),
                result.truncated_by,
                result.output_lines
            ),
            expect
        );
        assert_eq!(result.output_bytes, result.content.len() as u64);
    }

    fn check_tail(input: &str, limits: Limits, expect: (&str, Option<TruncatedBy>, bool)) {
        let result = truncate_tail(input, limits);
        assert_eq!(
            (
                result.content.as_str(),
                result.truncated_by,
                result.last_line_partial
            ),
            expect
        );
    }

    #[test]
    fn head_truncation_keeps_whole_lines() {
        check_head("a\nb\nc", small(5, 100), ("a\nb\nc", None, 3));
        check_head(
            "a\nb\nc",
            small(2, 100),
            ("a\nb", Some(TruncatedBy::Lines), 2),
        );
        check_head(
            "aa\nbb\ncc",
            small(10, 5),
            ("aa\nbb", Some(TruncatedBy::Bytes), 2),
        );
        check_head("a\n", small(1, 100), ("a", Some(TruncatedBy::Lines), 1));
        let first = truncate_head("aaaaaa\nb", small(10, 3));
        assert!(first.first_line_exceeds_limit && first.content.is_empty());
    }

    #[test]
    fn tail_truncation_keeps_whole_lines_or_the_end_of_a_huge_last_line() {
        check_tail(
            "a\nb\nc",
            small(2, 100),
            ("b\nc", Some(TruncatedBy::Lines), false),
        );
        check_tail(
            "aa\nbb\ncc",
            small(10, 5),
            ("bb\ncc", Some(TruncatedBy::Bytes), false),
        );
        check_tail(
            "x\nabcdef",
            small(10, 3),
            ("def", Some(TruncatedBy::Bytes), true),
        );
        // A multi-byte character is never split.
        check_tail(
            "x\naéé",
            small(10, 3),
            ("é", Some(TruncatedBy::Bytes), true),
        );
    }

    #[test]
    fn sizes_print_like_pi() {
        let sizes: Vec<String> = [0, 1023, 1024, 51200, 1536 * 1024]
            .into_iter()
            .map(format_size)
            .collect();
        assert_eq!(sizes, ["0B", "1023B", "1.0KB", "50.0KB", "1.5MB"]);
    }
}
