//! YAML frontmatter of skills and prompt templates: the block between a leading `---` line and
//! the next line starting with `---`, as pi's `parseFrontmatter` finds it (CRLF normalized, a
//! BOM stripped, the body after the block trimmed).
//!
//! The block is read by a small YAML subset parser rather than a YAML library: top-level
//! `key: value` pairs whose values are plain, single- or double-quoted scalars, `|` / `>` block
//! scalars (with `-` / `+` chomping), flow or block lists of scalars, and nested mappings (kept
//! but not interpreted). That covers what the Agent Skills standard and pi's templates put
//! there. It is more lenient than YAML where leniency is harmless: a plain scalar may contain
//! `: ` and a repeated key keeps its last value. Anything else is a [`FrontmatterError`] with
//! the line, which callers turn into a diagnostic.

use std::collections::BTreeMap;

/// A parsed file: its frontmatter fields and the body after them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frontmatter {
    /// Top-level fields by key.
    pub fields: BTreeMap<String, Value>,
    /// The text after the frontmatter (trimmed), or the whole text when there is none.
    pub body: String,
}

/// A frontmatter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `~`, `null` or nothing.
    Null,
    /// A scalar; `quoted` when written in quotes (so `"true"` is text, not a boolean).
    Scalar {
        /// The text, with escapes and folding applied.
        text: String,
        /// Written in single or double quotes.
        quoted: bool,
    },
    /// A list of scalars.
    List(Vec<String>),
    /// A nested mapping, kept as its raw lines.
    Map(String),
}

/// The frontmatter is not the YAML subset this module reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid frontmatter at line {line}: {message}")]
pub struct FrontmatterError {
    /// 1-based line in the file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Value {
    /// The text of a scalar.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Scalar { text, .. } => Some(text),
            Value::Null | Value::List(_) | Value::Map(_) => None,
        }
    }

    /// An unquoted YAML 1.2 boolean (`true`, `True`, `TRUE`, and the same for false).
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Scalar {
                text,
                quoted: false,
            } => match text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            Value::Scalar { quoted: true, .. } | Value::Null | Value::List(_) | Value::Map(_) => {
                None
            }
        }
    }
}

/// Splits `content` into frontmatter and body, and parses the frontmatter.
pub fn parse(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let normalized = content
        .strip_prefix('\u{feff}')
        .unwrap_or(content)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let leading = normalized.len() - normalized.trim_start().len();
    let after_marker = &normalized[leading..];
    let starts_block = after_marker == "---" || after_marker.starts_with("---\n");
    if !starts_block {
        return Ok(Frontmatter {
            fields: BTreeMap::new(),
            body: normalized,
        });
    }
    let block_start = (leading + 4).min(normalized.len());
    let Some(end) = normalized[block_start..].find("\n---") else {
        return Ok(Frontmatter {
            fields: BTreeMap::new(),
            body: normalized,
        });
    };
    let block = &normalized[block_start..block_start + end];
    let body = normalized[block_start + end + 4..].trim().to_owned();
    // Lines before the block: the leading whitespace's newlines and the `---` line.
    let first_line = normalized[..block_start].matches('\n').count() + 1;
    let fields = parse_block(block, first_line)?;
    Ok(Frontmatter { fields, body })
}

/// The body of `content` without its frontmatter (pi's `stripFrontmatter`).
pub fn strip(content: &str) -> String {
    match parse(content) {
        Ok(parsed) => parsed.body,
        Err(_) => content.to_owned(),
    }
}

fn parse_block(
    block: &str,
    first_line: usize,
) -> Result<BTreeMap<String, Value>, FrontmatterError> {
    let lines: Vec<&str> = block.split('\n').collect();
    let mut fields = BTreeMap::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let line_number = first_line + index;
        let error = |message: &str| FrontmatterError {
            line: line_number,
            message: message.to_owned(),
        };
        index += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(error("unexpected indentation"));
        }
        let Some((key, rest)) = split_key(line) else {
            return Err(error("expected `key: value`"));
        };
        // The indented lines after the key belong to its value.
        let mut nested = Vec::new();
        while index < lines.len() {
            let next = lines[index];
            let is_list_item = next.starts_with("- ") || next == "-";
            if next.trim().is_empty() || next.starts_with([' ', '\t']) || is_list_item {
                nested.push(next);
                index += 1;
            } else {
                break;
            }
        }
        while nested.last().is_some_and(|line| line.trim().is_empty()) {
            nested.pop();
        }
        let value = parse_value(rest.trim(), &nested).map_err(|message| error(&message))?;
        fields.insert(key.to_owned(), value);
    }
    Ok(fields)
}

fn split_key(line: &str) -> Option<(&str, &str)> {
    let colon = line
        .char_indices()
        .find(|&(at, c)| {
            c == ':' && matches!(line[at + 1..].chars().next(), None | Some(' ' | '\t'))
        })
        .map(|(at, _)| at)?;
    let key = line[..colon].trim();
    let key = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    if key.is_empty() {
        return None;
    }
    Some((key, &line[colon + 1..]))
}

fn parse_value(rest: &str, nested: &[&str]) -> Result<Value, String> {
    if rest.is_empty() || rest.starts_with('#') {
        let Some(first) = nested.iter().find(|line| !line.trim().is_empty()) else {
            return Ok(Value::Null);
        };
        if first.trim_start().starts_with("- ") || first.trim() == "-" {
            let items = nested
                .iter()
                .filter(|line| !line.trim().is_empty())
                .map(|line| {
                    let item = line.trim_start();
                    let item = item.strip_prefix('-').unwrap_or(item).trim();
                    scalar(item, &[]).map(|value| value.as_text().unwrap_or_default().to_owned())
                })
                .collect::<Result<_, _>>()?;
            return Ok(Value::List(items));
        }
        return Ok(Value::Map(nested.join("\n")));
    }
    if let Some(indicator) = rest.strip_prefix(['|', '>']) {
        let folded = rest.starts_with('>');
        let indicator = indicator.split('#').next().unwrap_or_default().trim();
        if !indicator
            .chars()
            .all(|c| matches!(c, '-' | '+' | '1'..='9'))
        {
            return Err(format!("bad block scalar indicator `{rest}`"));
        }
        let chomp = if indicator.contains('-') {
            Chomp::Strip
        } else if indicator.contains('+') {
            Chomp::Keep
        } else {
            Chomp::Clip
        };
        return Ok(Value::Scalar {
            text: block_scalar(nested, folded, chomp),
            quoted: false,
        });
    }
    if let Some(flow) = rest.strip_prefix('[') {
        let Some(inner) = flow
            .split('#')
            .next()
            .and_then(|f| f.trim_end().strip_suffix(']'))
        else {
            return Err("a flow list must close on its line".to_owned());
        };
        let items = inner
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                scalar(item, &[]).map(|value| value.as_text().unwrap_or_default().to_owned())
            })
            .collect::<Result<_, _>>()?;
        return Ok(Value::List(items));
    }
    if rest.starts_with('{') {
        return Ok(Value::Map(rest.to_owned()));
    }
    scalar(rest, nested)
}

#[derive(Clone, Copy)]
enum Chomp {
    Clip,
    Strip,
    Keep,
}

fn block_scalar(lines: &[&str], folded: bool, chomp: Chomp) -> String {
    let indent = lines
        .iter()
        .find(|line| !line.trim().is_empty())
        .map_or(0, |line| line.len() - line.trim_start().len());
    let mut text = String::new();
    let mut previous_blank = true;
    for line in lines {
        let content = line.get(indent..).unwrap_or("");
        if folded {
            if line.trim().is_empty() {
                text.push('\n');
                previous_blank = true;
                continue;
            }
            if !previous_blank {
                text.push(' ');
            }
            text.push_str(content);
            previous_blank = false;
        } else {
            text.push_str(content);
            text.push('\n');
        }
    }
    let body = text.trim_end_matches('\n');
    match chomp {
        Chomp::Strip => body.to_owned(),
        Chomp::Clip if body.is_empty() => String::new(),
        Chomp::Clip => format!("{body}\n"),
        Chomp::Keep if folded => format!("{text}\n"),
        Chomp::Keep => text,
    }
}

fn scalar(first: &str, continuation: &[&str]) -> Result<Value, String> {
    let mut joined = first.to_owned();
    for line in continuation {
        let line = line.trim();
        joined.push_str(if line.is_empty() { "\n" } else { " " });
        joined.push_str(line);
    }
    if let Some(inner) = joined.strip_prefix('"') {
        let mut text = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return trailing_comment_only(chars.as_str(), text),
                '\\' => text.push(match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('0') => '\0',
                    Some(c @ ('"' | '\\' | '/' | ' ')) => c,
                    Some(other) => return Err(format!("unknown escape `\\{other}`")),
                    None => return Err("unterminated double-quoted string".to_owned()),
                }),
                c => text.push(c),
            }
        }
        return Err("unterminated double-quoted string".to_owned());
    }
    if let Some(inner) = joined.strip_prefix('\'') {
        let mut text = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    text.push('\'');
                    continue;
                }
                return trailing_comment_only(&chars.collect::<String>(), text);
            }
            text.push(c);
        }
        return Err("unterminated single-quoted string".to_owned());
    }
    let text = match joined.find(" #") {
        Some(at) => joined[..at].trim_end(),
        None => joined.trim_end(),
    };
    if matches!(text, "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    Ok(Value::Scalar {
        text: text.to_owned(),
        quoted: false,
    })
}

fn trailing_comment_only(rest: &str, text: String) -> Result<Value, String> {
    let rest = rest.trim();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(Value::Scalar { text, quoted: true })
    } else {
        Err(format!("unexpected text after a quoted string: `{rest}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders the parse as `key=value` lines (values in Rust debug form) and the body.
    fn check(content: &str, expect: &str) {
        let actual = match parse(content) {
            Ok(parsed) => {
                let mut out = String::new();
                for (key, value) in &parsed.fields {
                    let value = match value {
                        Value::Null => "null".to_owned(),
                        Value::Scalar { text, quoted } => {
                            format!("{}{text:?}", if *quoted { "q" } else { "" })
                        }
                        Value::List(items) => format!("{items:?}"),
                        Value::Map(raw) => format!("map {raw:?}"),
                    };
                    out.push_str(&format!("{key}={value}\n"));
                }
                out.push_str(&format!("body={:?}", parsed.body));
                out
            }
            Err(error) => error.to_string(),
        };
        assert_eq!(actual, expect, "for {content:?}");
    }

    #[test]
    fn frontmatter_subset() {
        let cases: &[(&str, &str)] = &[
            ("# Title\nbody\n", "body=\"# Title\\nbody\\n\""),
            ("---\nname: x\nno end", "body=\"---\\nname: x\\nno end\""),
            (
                "\u{feff}---\r\nname: my-skill\r\ndescription: Does things: well # note\r\n---\r\n\r\nBody\r\n",
                "description=\"Does things: well\"\nname=\"my-skill\"\nbody=\"Body\"",
            ),
            (
                "---\ndescription: >\n  Folded\n  text\n\n  para\nname: 'it''s'\n---\nB",
                "description=\"Folded text\\npara\\n\"\nname=q\"it's\"\nbody=\"B\"",
            ),
            (
                "---\ndescription: |-\n  line one\n    indented\nflag: true\nquoted: \"true\"\n---\n",
                "description=\"line one\\n  indented\"\nflag=\"true\"\nquoted=q\"true\"\nbody=\"\"",
            ),
            (
                "---\nallowed-tools: [read, \"bash\"]\nlist:\n  - a\n  - 'b'\nmetadata:\n  author: me\nempty:\n---\nx",
                "allowed-tools=[\"read\", \"bash\"]\nempty=null\nlist=[\"a\", \"b\"]\nmetadata=map \"  author: me\"\nbody=\"x\"",
            ),
            (
                "---\ndescription: plain\n  continued here\n---\nx",
                "description=\"plain continued here\"\nbody=\"x\"",
            ),
            (
                "---\njust text\n---\nx",
                "invalid frontmatter at line 2: expected `key: value`",
            ),
            (
                "\n\n---\n  indented: first\n---\n",
                "invalid frontmatter at line 4: unexpected indentation",
            ),
            (
                "---\ndescription: \"unterminated\n---\n",
                "invalid frontmatter at line 2: unterminated double-quoted string",
            ),
            // pi looks for the closing marker after the opening line's newline, so an empty
            // block is not a block.
            ("---\n---\nonly body", "body=\"---\\n---\\nonly body\""),
            ("---\n\n---\nbody", "body=\"body\""),
        ];
        for (content, expect) in cases {
            check(content, expect);
        }
    }

    #[test]
    fn booleans_are_unquoted_yaml_booleans() {
        let parsed = parse("---\na: true\nb: \"true\"\nc: False\nd: yes\n---\n").unwrap();
        let flags: Vec<Option<bool>> = ["a", "b", "c", "d"]
            .iter()
            .map(|key| parsed.fields[*key].as_bool())
            .collect();
        assert_eq!(flags, [Some(true), None, Some(false), None]);
    }
}
