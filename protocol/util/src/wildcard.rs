//! `*` and `?` wildcards over whole strings: tool names in approval rules, `bash` commands in
//! them, environment variable names, model ids in `pictl --models`.
//!
//! `*` matches any run of characters (`/` and line breaks included), `?` exactly one
//! character (a Unicode scalar, not a byte), and every other character only itself. A pattern
//! is compiled once, to a regex anchored at both ends.
//!
//! Why regex and not globset: globset compiles `?` to one *byte*, so `?` would stop matching
//! one non-ASCII character, and its `**`, `[…]` and `{…}` would have to be escaped anyway.

use std::fmt;

use regex::{Regex, RegexBuilder};

/// Whether letters must match in case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `a` matches only `a`.
    Sensitive,
    /// ASCII letters match either case (`path` matches `PATH`); other characters only
    /// themselves.
    AsciiInsensitive,
}

/// A compiled pattern. Equal when the pattern text and the case rule are.
#[derive(Clone)]
pub struct Wildcard {
    pattern: String,
    case: Case,
    regex: Regex,
}

impl Wildcard {
    /// Compiles `pattern`. Every pattern compiles: its characters are literals apart from `*`
    /// and `?`.
    pub fn new(pattern: &str, case: Case) -> Wildcard {
        let mut source = String::with_capacity(pattern.len() * 2 + 8);
        source.push_str("(?s)^");
        let mut previous_star = false;
        for c in pattern.chars() {
            match c {
                // A run of stars is one star.
                '*' if previous_star => {}
                '*' => source.push_str(".*"),
                '?' => source.push('.'),
                c if case == Case::AsciiInsensitive && c.is_ascii_alphabetic() => {
                    source.push('[');
                    source.push(c.to_ascii_lowercase());
                    source.push(c.to_ascii_uppercase());
                    source.push(']');
                }
                c => {
                    let mut buffer = [0u8; 4];
                    source.push_str(&regex::escape(c.encode_utf8(&mut buffer)));
                }
            }
            previous_star = c == '*';
        }
        source.push('$');
        let regex = RegexBuilder::new(&source)
            // A pattern is as long as its settings-file line; its program is linear in it.
            .size_limit(usize::MAX)
            .dfa_size_limit(1 << 20)
            .build()
            .expect("literals, `.` and `.*` always compile, and the size limit is lifted");
        Wildcard {
            pattern: pattern.to_string(),
            case,
            regex,
        }
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
}

impl PartialEq for Wildcard {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.case == other.case
    }
}

impl Eq for Wildcard {}

impl fmt::Debug for Wildcard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Wildcard")
            .field(&self.pattern)
            .field(&self.case)
            .finish()
    }
}

impl fmt::Display for Wildcard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}
