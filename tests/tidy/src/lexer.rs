//! Blanking Rust source down to the code that can name a module or a crate.
//!
//! Both functions return text of exactly the input's length, with every newline where it was,
//! so a byte offset or a line number in the result is one in the original. What is blanked
//! becomes spaces (every byte of it, so the result is ASCII where something was blanked).

/// Blanks comments (line, block — nested — and doc comments) and the contents of string,
/// byte-string, raw-string and char literals. Lifetimes and labels stay.
pub fn blank(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let n = bytes.len();
    let mut i = 0;
    let erase = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to.min(n)] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < n {
        let c = bytes[i];
        let after_ident = i > 0 && is_ident_byte(bytes[i - 1]);
        if bytes[i..].starts_with(b"//") {
            let end = memchr(b'\n', &bytes[i..]).map_or(n, |at| i + at);
            erase(&mut out, i, end);
            i = end;
        } else if bytes[i..].starts_with(b"/*") {
            let mut depth = 0usize;
            let mut j = i;
            while j < n {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            erase(&mut out, i, j);
            i = j;
        } else if !after_ident && let Some(hashes_at) = raw_string_start(&bytes[i..]) {
            // `r"…"`, `r#"…"#`, `br"…"`, `cr#"…"#`: ends at a quote followed by as many hashes.
            let hashes = bytes[i + hashes_at..]
                .iter()
                .take_while(|&&b| b == b'#')
                .count();
            let body = i + hashes_at + hashes + 1;
            let mut j = body;
            let mut end = n;
            while j < n {
                if bytes[j] == b'"' && bytes[j + 1..].iter().take(hashes).all(|&b| b == b'#') {
                    end = (j + 1 + hashes).min(n);
                    break;
                }
                j += 1;
            }
            erase(&mut out, i, end);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < n && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(n);
            erase(&mut out, i, end);
            i = end;
        } else if c == b'\'' {
            match char_literal_len(&text[i..]) {
                Some(len) => {
                    erase(&mut out, i, i + len);
                    i += len;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    // Only whole UTF-8 sequences were replaced (by spaces), so this cannot fail; fall back to
    // a lossy conversion rather than panic if that reasoning is ever wrong.
    String::from_utf8(out).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into())
}

/// Blanks every `#[cfg(test)]` attribute together with the item, statement, field or arm it
/// applies to: up to the brace that closes the item's body, or a `;` or `,` outside any
/// bracket, or the end of the enclosing block. Give it text that went through [`blank`].
pub fn drop_cfg_test(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut from = 0;
    while let Some((start, attribute_end)) = find_cfg_test(bytes, from) {
        let mut depth = 0i64;
        let mut j = attribute_end;
        let mut end = bytes.len();
        while j < bytes.len() {
            match bytes[j] {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => {
                    depth -= 1;
                    if depth < 0 {
                        end = j;
                        break;
                    }
                    if depth == 0 && bytes[j] == b'}' {
                        end = j + 1;
                        break;
                    }
                }
                b';' | b',' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for byte in &mut out[start..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        from = end.max(attribute_end);
    }
    String::from_utf8(out).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into())
}

/// Whether `byte` can be part of an identifier (ASCII; non-ASCII identifiers are not used
/// for module or crate names here).
pub(crate) fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Where `#[cfg(test)]` (any spacing) next starts at or after `from`, and where it ends.
fn find_cfg_test(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'#' {
            let mut j = i + 1;
            let mut matched = true;
            for token in [&b"["[..], b"cfg", b"(", b"test", b")", b"]"] {
                j = skip_whitespace(bytes, j);
                if bytes[j..].starts_with(token) {
                    j += token.len();
                } else {
                    matched = false;
                    break;
                }
            }
            if matched {
                return Some((i, j));
            }
        }
        i += 1;
    }
    None
}

pub(crate) fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// When `bytes` starts a raw string (`r"`, `r#`, `br`, `cr`), the offset of its hashes.
fn raw_string_start(bytes: &[u8]) -> Option<usize> {
    let prefix = match bytes {
        [b'r', ..] => 1,
        [b'b' | b'c', b'r', ..] => 2,
        _ => return None,
    };
    let hashes = bytes[prefix..].iter().take_while(|&&b| b == b'#').count();
    (bytes.get(prefix + hashes) == Some(&b'"')).then_some(prefix)
}

/// The length of the char literal `text` starts with (`'x'`, `'\n'`, `'\u{..}'`, `'é'`), or
/// `None` when the quote starts a lifetime or a label.
fn char_literal_len(text: &str) -> Option<usize> {
    let rest = &text[1..];
    let mut chars = rest.char_indices();
    let (_, first) = chars.next()?;
    if first == '\\' {
        // An escape: the literal ends at the next quote after the escaped character.
        let (_, _escaped) = chars.next()?;
        for (at, c) in chars {
            if c == '\'' {
                return Some(1 + at + 1);
            }
            if c == '\n' {
                return None;
            }
        }
        return None;
    }
    let (at, second) = chars.next()?;
    (second == '\'' && first != '\'').then_some(1 + at + 1)
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::{blank, drop_cfg_test};

    /// Blanks `input` and compares it with `expect`, where every run of spaces is one space
    /// and lines end without spaces (the lengths are checked separately).
    fn check(input: &str, expect: &str) {
        let output = drop_cfg_test(&blank(input));
        assert_eq!(output.len(), input.len());
        let squeeze = |text: &str| -> Vec<String> {
            text.lines()
                .map(|line| {
                    line.split(' ')
                        .filter(|part| !part.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        };
        assert_eq!(squeeze(&output), squeeze(expect), "for {input:?}");
    }

    #[test]
    fn comments_and_literals_are_blanked() {
        check("a // crate::b\nc", "a\nc");
        check("a /* x /* y */ z */ b", "a b");
        check(r#"x("crate::a") y"#, "x( ) y");
        check(r###"x(r#"a"b"#) y"###, "x( ) y");
        check(r#"x(br"q") y"#, "x( ) y");
        check(r#"x("a\"b") y"#, "x( ) y");
        check("f('a', '\\'', '\\u{1F600}')", "f( , , )");
        check("fn f<'a>(x: &'a str) {}", "fn f<'a>(x: &'a str) {}");
        check("'outer: loop {}", "'outer: loop {}");
        check("let c = 'é';", "let c = ;");
        check("let r#type = 1;", "let r#type = 1;");
    }

    #[test]
    fn cfg_test_items_are_blanked() {
        check(
            "use a;\n#[cfg(test)]\nmod tests {\n use crate::b;\n}\nuse c;",
            "use a;\n\n\n\n\nuse c;",
        );
        check("#[cfg(test)] mod tests;\nuse c;", "\nuse c;");
        check(
            "#[cfg(test)] const X: [u8; 2] = [1, 2];\nuse c;",
            "\nuse c;",
        );
        check(
            "struct S {\n #[cfg(test)]\n f: u8,\n g: u8 }",
            "struct S {\n\n\n g: u8 }",
        );
        check("fn f() { #[cfg(test)] x() }", "fn f() { }");
        check("# [ cfg ( test ) ] fn f() {}\nuse c;", "\nuse c;");
    }
}
