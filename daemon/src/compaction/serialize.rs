//! pi's `serializeConversation`: the conversation as a plain transcript, so the summarizer
//! reads it instead of continuing it. One block per part, blocks separated by a blank line:
//! `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(key=<JSON>, …); …`, `[Tool result]: …` (text only, cut at
//! 2000 characters). Images are dropped.
//!
//! Tool-call arguments are listed in the order the parsed JSON object keeps them (sorted by
//! key), where pi keeps the order the model sent them.

use std::fmt::Write as _;

use pi_llm::{AssistantContent, Message, UserContent};

use crate::compaction::tokens::js_len;

/// Tool results longer than this many characters are cut in the transcript.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The transcript of `messages` (already converted for the model).
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut out = String::new();
    let push_part = |out: &mut String, label: &str, text: &str| {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(label);
        out.push_str(text);
    };
    for message in messages {
        match message {
            Message::User(user) => {
                let text = joined_text(&user.content);
                if !text.is_empty() {
                    push_part(&mut out, "[User]: ", &text);
                }
            }
            Message::Assistant(assistant) => {
                let mut texts = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantContent::Text(text) => texts.push(text.text.as_str()),
                        AssistantContent::Thinking(block) => thinking.push(block.thinking.as_str()),
                        AssistantContent::ToolCall(call) => {
                            let mut rendered = format!("{}(", call.name);
                            if let Some(arguments) = call.arguments.as_object() {
                                for (position, (key, value)) in arguments.iter().enumerate() {
                                    if position > 0 {
                                        rendered.push_str(", ");
                                    }
                                    // Writing to a String cannot fail.
                                    let _ = write!(rendered, "{key}={value}");
                                }
                            }
                            rendered.push(')');
                            calls.push(rendered);
                        }
                    }
                }
                if !thinking.is_empty() {
                    push_part(&mut out, "[Assistant thinking]: ", &thinking.join("\n"));
                }
                if !texts.is_empty() {
                    push_part(&mut out, "[Assistant]: ", &texts.join("\n"));
                }
                if !calls.is_empty() {
                    push_part(&mut out, "[Assistant tool calls]: ", &calls.join("; "));
                }
            }
            Message::ToolResult(result) => {
                let text = joined_text(&result.content);
                if !text.is_empty() {
                    push_part(
                        &mut out,
                        "[Tool result]: ",
                        &truncate(&text, TOOL_RESULT_MAX_CHARS),
                    );
                }
            }
        }
    }
    out
}

/// The text blocks, joined without a separator (pi's `join("")`).
fn joined_text(content: &[UserContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect()
}

/// pi's `truncateForSummary`: the first `max_chars` UTF-16 units and a note of how many more
/// there were. A character whose surrogate pair straddles the limit is left out (JavaScript
/// would keep its first half).
fn truncate(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    let total = js_len(text);
    if total <= max_chars {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut units = 0;
    let mut end = 0;
    for (offset, character) in text.char_indices() {
        if units + character.len_utf16() > max_chars {
            break;
        }
        units += character.len_utf16();
        end = offset + character.len_utf8();
    }
    std::borrow::Cow::Owned(format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        total - max_chars
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_tool_results_are_cut_at_2000_utf16_units() {
        let cases = [
            ("x".repeat(2000), "x".repeat(2000)),
            (
                "x".repeat(2010),
                format!("{}\n\n[... 10 more characters truncated]", "x".repeat(2000)),
            ),
            (
                format!("{}😀z", "x".repeat(1999)),
                format!("{}\n\n[... 2 more characters truncated]", "x".repeat(1999)),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(truncate(&text, TOOL_RESULT_MAX_CHARS), expected);
        }
    }
}
