//! Best-effort parsing of an incomplete JSON document, for tool-call arguments while they
//! stream: `{"path": "src/ma` parses to `{"path": "src/ma"}`.
//!
//! Rules (those of pi's streaming parser): a string cut short keeps what it has; a key without
//! a complete value is left out; a cut number keeps its digits when they form a number; a cut
//! literal (`tru`) is left out; open arrays and objects are closed. Anything that is not a
//! prefix of valid JSON yields `None`, and callers fall back to the last good value or `{}`.

use pi_json::ToolArguments;
use serde_json::{Map, Number, Value};

/// Parses `text`, complete or cut short. `None` when it is not a prefix of a JSON value.
pub fn parse_partial(text: &str) -> Option<Value> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    parser.skip_ws();
    let value = match parser.value() {
        Ok(Parsed::Whole(value) | Parsed::Cut(value)) => value,
        Ok(Parsed::Nothing) | Err(Invalid) => return None,
    };
    parser.skip_ws();
    // Trailing garbage after a complete value means this is not JSON at all.
    (parser.at == parser.bytes.len()).then_some(value)
}

/// Parses complete arguments — keeping the model's exact text (without surrounding
/// whitespace) —, falling back to the partial parse, then to `{}`: what a tool call carries
/// when its stream ends.
pub fn parse_arguments(text: &str) -> ToolArguments {
    if text.trim().is_empty() {
        return Value::Object(Map::new()).into();
    }
    ToolArguments::from_raw(text.trim().to_owned())
        .ok()
        .or_else(|| parse_partial(text).map(ToolArguments::from))
        .unwrap_or_else(|| Value::Object(Map::new()).into())
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

/// The input is not a prefix of JSON.
struct Invalid;

enum Parsed {
    /// A value that ended properly.
    Whole(Value),
    /// A value the input cut short, completed as well as possible.
    Cut(Value),
    /// The input ended before anything usable.
    Nothing,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<Parsed, Invalid> {
        match self.bytes.get(self.at) {
            None => Ok(Parsed::Nothing),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(|(text, whole)| {
                if whole {
                    Parsed::Whole(Value::String(text))
                } else {
                    Parsed::Cut(Value::String(text))
                }
            }),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(Invalid),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Parsed, Invalid> {
        let rest = &self.bytes[self.at..];
        if rest.starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(Parsed::Whole(value))
        } else if word.as_bytes().starts_with(rest) {
            self.at = self.bytes.len();
            Ok(Parsed::Nothing)
        } else {
            Err(Invalid)
        }
    }

    fn number(&mut self) -> Result<Parsed, Invalid> {
        let start = self.at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let token = &self.text[start..self.at];
        let at_end = self.at == self.bytes.len();
        match serde_json::from_str::<Number>(token) {
            Ok(number) if at_end => Ok(Parsed::Cut(Value::Number(number))),
            Ok(number) => Ok(Parsed::Whole(Value::Number(number))),
            Err(_) if at_end => {
                // `1.`, `-`, `1e`: keep the longest prefix that is a number, if any.
                let trimmed = token.trim_end_matches(['.', 'e', 'E', '-', '+']);
                Ok(serde_json::from_str::<Number>(trimmed)
                    .map(|number| Parsed::Cut(Value::Number(number)))
                    .unwrap_or(Parsed::Nothing))
            }
            Err(_) => Err(Invalid),
        }
    }

    /// A string starting at the opening quote; `(text, true)` when it closed.
    fn string(&mut self) -> Result<(String, bool), Invalid> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run_start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(&self.text[run_start..self.at]);
            match self.bytes.get(self.at) {
                None => return Ok((out, false)),
                Some(b'"') => {
                    self.at += 1;
                    return Ok((out, true));
                }
                Some(b'\\') => {
                    let Some(&escape) = self.bytes.get(self.at + 1) else {
                        self.at = self.bytes.len();
                        return Ok((out, false));
                    };
                    self.at += 2;
                    let simple = match escape {
                        b'"' => Some('"'),
                        b'\\' => Some('\\'),
                        b'/' => Some('/'),
                        b'b' => Some('\u{8}'),
                        b'f' => Some('\u{c}'),
                        b'n' => Some('\n'),
                        b'r' => Some('\r'),
                        b't' => Some('\t'),
                        b'u' => None,
                        _ => return Err(Invalid),
                    };
                    match simple {
                        Some(c) => out.push(c),
                        None => match self.unicode_escape()? {
                            Some(c) => out.push(c),
                            None => return Ok((out, false)),
                        },
                    }
                }
                // A raw control character inside a string is not JSON.
                Some(_) => return Err(Invalid),
            }
        }
    }

    /// After `\u`: the character, or `None` when the input ends inside the escape.
    fn unicode_escape(&mut self) -> Result<Option<char>, Invalid> {
        let Some(first) = self.hex4()? else {
            return Ok(None);
        };
        if !(0xD800..0xDC00).contains(&first) {
            return Ok(Some(char::from_u32(first).unwrap_or('\u{fffd}')));
        }
        // A high surrogate wants `\uDC00..\uDFFF` next.
        match self.bytes.get(self.at..self.at + 2) {
            Some(b"\\u") => {
                self.at += 2;
                let Some(second) = self.hex4()? else {
                    return Ok(None);
                };
                let combined = 0x10000 + ((first - 0xD800) << 10) + (second.wrapping_sub(0xDC00));
                Ok(Some(char::from_u32(combined).unwrap_or('\u{fffd}')))
            }
            _ if self.at + 2 > self.bytes.len() => {
                self.at = self.bytes.len();
                Ok(None)
            }
            _ => Ok(Some('\u{fffd}')),
        }
    }

    fn hex4(&mut self) -> Result<Option<u32>, Invalid> {
        let digits = &self.bytes[self.at..self.bytes.len().min(self.at + 4)];
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(Invalid);
        }
        if digits.len() < 4 {
            self.at = self.bytes.len();
            return Ok(None);
        }
        self.at += 4;
        let text = std::str::from_utf8(digits).map_err(|_| Invalid)?;
        u32::from_str_radix(text, 16).map(Some).map_err(|_| Invalid)
    }

    fn array(&mut self) -> Result<Parsed, Invalid> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.bytes.get(self.at) {
                None => return Ok(Parsed::Cut(Value::Array(items))),
                Some(b']') => {
                    self.at += 1;
                    return Ok(Parsed::Whole(Value::Array(items)));
                }
                Some(_) => {}
            }
            match self.value()? {
                Parsed::Whole(value) => items.push(value),
                Parsed::Cut(value) => {
                    items.push(value);
                    return Ok(Parsed::Cut(Value::Array(items)));
                }
                Parsed::Nothing => return Ok(Parsed::Cut(Value::Array(items))),
            }
            self.skip_ws();
            match self.bytes.get(self.at) {
                None => return Ok(Parsed::Cut(Value::Array(items))),
                Some(b',') => self.at += 1,
                Some(b']') => {}
                Some(_) => return Err(Invalid),
            }
        }
    }

    fn object(&mut self) -> Result<Parsed, Invalid> {
        self.at += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            match self.bytes.get(self.at) {
                None => return Ok(Parsed::Cut(Value::Object(map))),
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Parsed::Whole(Value::Object(map)));
                }
                Some(b'"') => {}
                Some(_) => return Err(Invalid),
            }
            let (key, key_whole) = self.string()?;
            self.skip_ws();
            if !key_whole || self.at == self.bytes.len() {
                return Ok(Parsed::Cut(Value::Object(map)));
            }
            if self.bytes[self.at] != b':' {
                return Err(Invalid);
            }
            self.at += 1;
            self.skip_ws();
            match self.value()? {
                Parsed::Whole(value) => {
                    map.insert(key, value);
                }
                Parsed::Cut(value) => {
                    map.insert(key, value);
                    return Ok(Parsed::Cut(Value::Object(map)));
                }
                Parsed::Nothing => return Ok(Parsed::Cut(Value::Object(map))),
            }
            self.skip_ws();
            match self.bytes.get(self.at) {
                None => return Ok(Parsed::Cut(Value::Object(map))),
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                Some(_) => return Err(Invalid),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(input: &str, expected: Option<Value>) {
        assert_eq!(parse_partial(input), expected, "input {input:?}");
    }

    #[test]
    fn prefixes_parse_to_the_best_partial_value() {
        check("", None);
        check("{", Some(json!({})));
        check(r#"{"pa"#, Some(json!({})));
        check(r#"{"path""#, Some(json!({})));
        check(r#"{"path": "#, Some(json!({})));
        check(r#"{"path": "src/ma"#, Some(json!({"path": "src/ma"})));
        check(r#"{"path": "a\"b"#, Some(json!({"path": "a\"b"})));
        check(r#"{"path": "a\"#, Some(json!({"path": "a"})));
        check(r#"{"s": "\u00e"#, Some(json!({"s": ""})));
        check(r#"{"s": "\ud83d\ude00!"#, Some(json!({"s": "\u{1f600}!"})));
        check(r#"{"n": 12"#, Some(json!({"n": 12})));
        check(r#"{"n": 1."#, Some(json!({"n": 1})));
        check(r#"{"n": -"#, Some(json!({})));
        check(r#"{"b": tr"#, Some(json!({})));
        check(
            r#"{"b": true, "l": [1, {"x": "y"#,
            Some(json!({"b": true, "l": [1, {"x": "y"}]})),
        );
        check(r#"{"a": 1}"#, Some(json!({"a": 1})));
        check(r#"{"a": 1} x"#, None);
        check(r#"{"a" 1"#, None);
        check("[1, 2", Some(json!([1, 2])));
    }

    #[test]
    fn complete_arguments_fall_back_gracefully() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments(r#"{"a": [1]}"#), json!({"a": [1]}));
        assert_eq!(parse_arguments(r#"{"a": "x"#), json!({"a": "x"}));
        assert_eq!(parse_arguments("not json"), json!({}));
    }
}
