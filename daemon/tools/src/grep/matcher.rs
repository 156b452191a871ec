//! [`LineMatcher`]: grep-regex's matcher plus a required inner literal to find candidate
//! lines. For a pattern like `let \w+_4 = token` the regex engine accelerates only its prefix
//! (`let `), which is on most lines of source code; scanning for the longest literal that every
//! match must contain (`_4 = token`) with `memmem` and running the regex only on the lines it
//! finds is several times faster. (grep-regex does this itself only when the regex has no
//! prefix acceleration.)
//!
//! Invariant: the literal is a required part of every match (a literal child of the pattern's
//! top-level concatenation), so candidate lines are never false negatives.

use grep_matcher::{ByteSet, LineMatchKind, LineTerminator, Match, Matcher, NoError};
use grep_regex::{RegexCaptures, RegexMatcher};
use memchr::memmem::Finder;
use regex_syntax::hir::{Hir, HirKind};

/// Shortest inner literal worth scanning for.
const MIN_LITERAL: usize = 3;

/// A line-oriented matcher with an optional inner-literal candidate search.
#[derive(Clone, Debug)]
pub struct LineMatcher {
    regex: RegexMatcher,
    // A literal every match contains and that is not the pattern's prefix.
    inner: Option<Finder<'static>>,
}

impl LineMatcher {
    /// Wraps `regex`, built from `pattern`; `plain` says the pattern was compiled as written
    /// (not as a fixed string, not case-insensitively), so its syntax tree can be read.
    pub fn new(regex: RegexMatcher, pattern: &str, plain: bool) -> LineMatcher {
        let inner = plain
            .then(|| regex_syntax::Parser::new().parse(pattern).ok())
            .flatten()
            .and_then(|hir| inner_literal(&hir))
            .map(|literal| Finder::new(&literal).into_owned());
        LineMatcher { regex, inner }
    }

    /// The inner literal in use, if any (for tests).
    #[cfg(test)]
    pub fn inner_literal(&self) -> Option<&[u8]> {
        self.inner.as_ref().map(Finder::needle)
    }
}

/// The longest literal run of the top-level concatenation that does not start the pattern.
fn inner_literal(hir: &Hir) -> Option<Vec<u8>> {
    let HirKind::Concat(parts) = unwrap_captures(hir).kind() else {
        return None;
    };
    let mut runs: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut current: Option<(usize, Vec<u8>)> = None;
    for (index, part) in parts.iter().enumerate() {
        match unwrap_captures(part).kind() {
            HirKind::Literal(literal) => {
                current
                    .get_or_insert_with(|| (index, Vec::new()))
                    .1
                    .extend_from_slice(&literal.0);
            }
            _ => runs.extend(current.take()),
        }
    }
    runs.extend(current);
    runs.into_iter()
        .filter(|(start, literal)| *start > 0 && literal.len() >= MIN_LITERAL)
        .max_by_key(|(_, literal)| literal.len())
        .map(|(_, literal)| literal)
}

fn unwrap_captures(mut hir: &Hir) -> &Hir {
    while let HirKind::Capture(capture) = hir.kind() {
        hir = &capture.sub;
    }
    hir
}

impl Matcher for LineMatcher {
    type Captures = RegexCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        self.regex.find_at(haystack, at)
    }

    fn new_captures(&self) -> Result<RegexCaptures, NoError> {
        self.regex.new_captures()
    }

    fn capture_count(&self) -> usize {
        self.regex.capture_count()
    }

    fn capture_index(&self, name: &str) -> Option<usize> {
        self.regex.capture_index(name)
    }

    fn captures_at(
        &self,
        haystack: &[u8],
        at: usize,
        captures: &mut RegexCaptures,
    ) -> Result<bool, NoError> {
        self.regex.captures_at(haystack, at, captures)
    }

    fn is_match_at(&self, haystack: &[u8], at: usize) -> Result<bool, NoError> {
        self.regex.is_match_at(haystack, at)
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        self.regex.shortest_match_at(haystack, at)
    }

    fn non_matching_bytes(&self) -> Option<&ByteSet> {
        self.regex.non_matching_bytes()
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.regex.line_terminator()
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        match &self.inner {
            Some(finder) => Ok(finder.find(haystack).map(LineMatchKind::Candidate)),
            None => self.regex.find_candidate_line(haystack),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pattern: &str, expect: Option<&str>) {
        let regex = grep_regex::RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .unwrap();
        let matcher = LineMatcher::new(regex, pattern, true);
        let literal = matcher
            .inner_literal()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
        assert_eq!(literal.as_deref(), expect, "{pattern}");
    }

    #[test]
    fn inner_literals_are_required_non_prefix_runs() {
        check(r"let \w+_4 = token", Some("_4 = token"));
        check(r"fn [a-z_]+_needle\(", Some("_needle("));
        check(r"(fn) (\w+)(_needle)", Some("_needle"));
        check("plain literal", None);
        check("a|bcdef", None);
        check(r"\w+ab", None);
        check(r"x(?i:abc)", None);
    }
}
