//! The wildcard matcher, by examples and against the hand-written matcher it replaced.

use pi_util::wildcard::{Case, Wildcard};
use proptest::prelude::*;

fn check(pattern: &str, case: Case, text: &str, expect: bool) {
    let wildcard = Wildcard::new(pattern, case);
    assert_eq!(
        wildcard.is_match(text),
        expect,
        "{pattern:?} against {text:?}"
    );
}

#[test]
fn stars_and_question_marks() {
    use Case::{AsciiInsensitive, Sensitive};
    check("a?c*", Sensitive, "abcdef", true);
    check("a?c", Sensitive, "abcd", false);
    check("", Sensitive, "", true);
    check("", Sensitive, "a", false);
    check("*", Sensitive, "", true);
    check("git push*", Sensitive, "git push --force origin main", true);
    check("git push*", Sensitive, "git pull", false);
    check(
        "mcp__github__*",
        Sensitive,
        "mcp__github__create_issue",
        true,
    );
    // `*` crosses `/` and line breaks; `?` is one character, whatever its UTF-8 length.
    check("rm *", Sensitive, "rm -rf /tmp/a\n/tmp/b", true);
    check("caf?", Sensitive, "café", true);
    check("caf??", Sensitive, "café", false);
    // Runs of stars are one star, and glob syntax is literal.
    check("**/x", Sensitive, "a/b/x", true);
    check("**/x", Sensitive, "x", false);
    check("[ab]{c,d}\\", Sensitive, "[ab]{c,d}\\", true);
    check("[ab]", Sensitive, "a", false);
    check("a.c", Sensitive, "abc", false);
    // Case.
    check("MY_*", AsciiInsensitive, "my_token", true);
    check("path", AsciiInsensitive, "PATH", true);
    check("path", Sensitive, "PATH", false);
    check("É", AsciiInsensitive, "é", false);
}

#[test]
fn equal_by_pattern_and_case() {
    assert_eq!(
        Wildcard::new("a*", Case::Sensitive),
        Wildcard::new("a*", Case::Sensitive)
    );
    assert_ne!(
        Wildcard::new("a*", Case::Sensitive),
        Wildcard::new("a*", Case::AsciiInsensitive)
    );
    assert_eq!(Wildcard::new("a*", Case::Sensitive).as_str(), "a*");
}

/// The matcher `pi_util::wildcard` replaced (daemon/src/session/secrets.rs before issue 28).
fn oracle(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = text.chars().collect();
    let (mut p, mut n) = (0, 0);
    let (mut star, mut resume) = (None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            resume = n;
            p += 1;
        } else if let Some(at) = star {
            p = at + 1;
            resume += 1;
            n = resume;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn agrees_with_the_old_matcher(
        pattern in "[ab*?./\\[\\]{}\\\\é\n]{0,8}",
        text in "[ab./\\[\\]{}\\\\é\n]{0,10}",
    ) {
        let wildcard = Wildcard::new(&pattern, Case::Sensitive);
        prop_assert_eq!(wildcard.is_match(&text), oracle(&pattern, &text));
    }

    #[test]
    fn ignoring_ascii_case_is_comparing_uppercased(
        pattern in "[aAbB*?_é]{0,8}",
        text in "[aAbB_é]{0,10}",
    ) {
        let wildcard = Wildcard::new(&pattern, Case::AsciiInsensitive);
        let expect = oracle(&pattern.to_ascii_uppercase(), &text.to_ascii_uppercase());
        prop_assert_eq!(wildcard.is_match(&text), expect);
    }
}
