//! pi's `serializeConversation`: the conversation as a plain transcript, so the summarizer
//! reads it instead of continuing it. One block per part, blocks separated by a blank line:
//! `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(key=<JSON>, …); …`, `[Tool result]: …` (text only, cut at
//! 2000 characters). Images are dropped.
//!
//! Tool-call arguments are listed in the order the parsed JSON object keeps them (sorted by
//! key), where pi keeps the order the model sent them.

use std::borrow::Cow;
use std::fmt::Write as _;

use pi_agent::AgentMessage;
use pi_agent::message::convert_to_llm;
use pi_llm::{AssistantContent, AssistantMessage, Message, UserContent};

use crate::compaction::tokens::js_len;

/// Tool results longer than this many characters are cut in the transcript.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The transcript of `messages` (already converted for the model).
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut out = String::new();
    let mut transcript = Transcript {
        out: &mut out,
        empty: true,
    };
    for message in messages {
        write_message(&mut transcript, message);
    }
    out
}

/// Appends the transcript of agent messages to `out`: pi's `convertToLlm` then
/// `serializeConversation`, without copying the messages the model sees unchanged.
pub fn write_agent_conversation(out: &mut String, messages: &[AgentMessage]) {
    let out = &mut Transcript { out, empty: true };
    for message in messages {
        match message {
            AgentMessage::User(user) => write_user(out, &user.content),
            AgentMessage::Assistant(assistant) => write_assistant(out, assistant),
            AgentMessage::ToolResult(result) => write_tool_result(out, &result.content),
            AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => {
                for converted in convert_to_llm(std::slice::from_ref(message)) {
                    write_message(out, &converted);
                }
            }
        }
    }
}

fn write_message(out: &mut Transcript<'_>, message: &Message) {
    match message {
        Message::User(user) => write_user(out, &user.content),
        Message::Assistant(assistant) => write_assistant(out, assistant),
        Message::ToolResult(result) => write_tool_result(out, &result.content),
    }
}

/// A transcript being written into a buffer.
struct Transcript<'a> {
    out: &'a mut String,
    // Invariant: no block was written yet (so the next needs no separator).
    empty: bool,
}

/// Appends one block, separated from the previous one by a blank line.
fn push_part(transcript: &mut Transcript<'_>, label: &str, text: &str) {
    if !transcript.empty {
        transcript.out.push_str("\n\n");
    }
    transcript.empty = false;
    transcript.out.push_str(label);
    transcript.out.push_str(text);
}

fn write_user(out: &mut Transcript<'_>, content: &[UserContent]) {
    let text = joined_text(content);
    if !text.is_empty() {
        push_part(out, "[User]: ", &text);
    }
}

fn write_tool_result(out: &mut Transcript<'_>, content: &[UserContent]) {
    let text = joined_text(content);
    if !text.is_empty() {
        push_part(
            out,
            "[Tool result]: ",
            &truncate(&text, TOOL_RESULT_MAX_CHARS),
        );
    }
}

fn write_assistant(out: &mut Transcript<'_>, assistant: &AssistantMessage) {
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
        push_part(out, "[Assistant thinking]: ", &thinking.join("\n"));
    }
    if !texts.is_empty() {
        push_part(out, "[Assistant]: ", &texts.join("\n"));
    }
    if !calls.is_empty() {
        push_part(out, "[Assistant tool calls]: ", &calls.join("; "));
    }
}

/// The text blocks, joined without a separator (pi's `join("")`).
fn joined_text(content: &[UserContent]) -> Cow<'_, str> {
    let mut texts = content.iter().filter_map(|block| match block {
        UserContent::Text(text) => Some(text.text.as_str()),
        UserContent::Image(_) => None,
    });
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut joined = format!("{first}{second}");
            joined.extend(texts);
            Cow::Owned(joined)
        }
    }
}

/// pi's `truncateForSummary`: the first `max_chars` UTF-16 units and a note of how many more
/// there were. A character whose surrogate pair straddles the limit is left out (JavaScript
/// would keep its first half).
fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = js_len(text);
    if total <= max_chars {
        return Cow::Borrowed(text);
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
    Cow::Owned(format!(
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
