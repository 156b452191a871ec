//! pi's token accounting: real provider usage where there is some, and a `chars / 4` estimate
//! (`estimateTokens`) for everything after it.
//!
//! Lengths are counted as JavaScript does (UTF-16 code units), so estimates equal pi's for
//! any text.

use std::borrow::Borrow;
use std::io;

use pi_agent::AgentMessage;
use pi_llm::{AssistantContent, StopReason, Usage, UserContent};

use crate::compaction::CompactionSettings;

/// An image in a tool result or custom message counts as this many characters (1200 tokens).
pub const IMAGE_CHARS: usize = 4800;

/// What `estimate_context_tokens` found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// The context size the last successful assistant message reported.
    pub usage_tokens: u64,
    /// Estimated tokens of the messages after it (all messages when there is no usage).
    pub trailing_tokens: u64,
    /// Index of that assistant message; `None` when no message has usage.
    pub last_usage_index: Option<usize>,
}

/// pi's `calculateContextTokens`: `totalTokens`, or the sum of the four counts when it is 0.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens != 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// pi's `estimateTokens`: `ceil(chars / 4)` of what the message shows the model. User messages
/// count their text only; tool results and custom messages count 4800 characters per image;
/// assistant messages count text, thinking, and each tool call's name and JSON arguments.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::User(user) => text_chars(&user.content, 0),
        AgentMessage::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|block| match block {
                AssistantContent::Text(text) => js_len(&text.text),
                AssistantContent::Thinking(thinking) => js_len(&thinking.thinking),
                AssistantContent::ToolCall(call) => {
                    js_len(&call.name) + json_js_len(&call.arguments)
                }
            })
            .sum(),
        AgentMessage::ToolResult(result) => text_chars(&result.content, IMAGE_CHARS),
        AgentMessage::Custom(custom) => text_chars(&custom.content, IMAGE_CHARS),
        AgentMessage::BashExecution(bash) => js_len(&bash.command) + js_len(&bash.output),
        AgentMessage::BranchSummary(summary) => js_len(&summary.summary),
        AgentMessage::CompactionSummary(summary) => js_len(&summary.summary),
    };
    chars.div_ceil(4) as u64
}

/// pi's `estimateContextTokens`: the usage of the last assistant message that did not fail
/// (the provider's own count of everything before and including it) plus estimates of every
/// message after it; the sum of estimates when no message has usage.
pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextEstimate {
    let last_usage = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, message)| assistant_usage(message.borrow()).map(|usage| (index, usage)));
    let Some((index, usage)) = last_usage else {
        let estimated = messages
            .iter()
            .map(|message| estimate_tokens(message.borrow()))
            .sum();
        return ContextEstimate {
            tokens: estimated,
            usage_tokens: 0,
            trailing_tokens: estimated,
            last_usage_index: None,
        };
    };
    let usage_tokens = calculate_context_tokens(usage);
    let trailing_tokens = messages[index + 1..]
        .iter()
        .map(|message| estimate_tokens(message.borrow()))
        .sum();
    ContextEstimate {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index: Some(index),
    }
}

/// pi's `shouldCompact`: enabled and `contextTokens > contextWindow - reserveTokens` (a reserve
/// larger than the window makes every context too large, as in pi).
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled
        && i128::from(context_tokens)
            > i128::from(context_window) - i128::from(settings.reserve_tokens)
}

/// The usage of an assistant message that neither failed nor was aborted.
pub fn assistant_usage(message: &AgentMessage) -> Option<&Usage> {
    match message {
        AgentMessage::Assistant(assistant)
            if !matches!(
                assistant.stop_reason,
                StopReason::Error | StopReason::Aborted
            ) =>
        {
            Some(&assistant.usage)
        }
        AgentMessage::Assistant(_)
        | AgentMessage::User(_)
        | AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_) => None,
    }
}

/// The length of `text` in UTF-16 code units, as JavaScript's `String.length`.
pub fn js_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().map(char::len_utf16).sum()
    }
}

fn text_chars(content: &[UserContent], image_chars: usize) -> usize {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => js_len(&text.text),
            UserContent::Image(_) => image_chars,
        })
        .sum()
}

/// `JSON.stringify(value).length`, without building the string.
fn json_js_len(value: &serde_json::Value) -> usize {
    let mut counter = Utf16Counter(0);
    // Writing JSON into a counter cannot fail: the counter accepts every byte.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Counts the UTF-16 code units of the UTF-8 bytes written to it.
struct Utf16Counter(usize);

impl io::Write for Utf16Counter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        for &byte in bytes {
            // Every character starts with a non-continuation byte; 4-byte characters are
            // surrogate pairs in UTF-16.
            if byte & 0xC0 != 0x80 {
                self.0 += 1;
            }
            if byte >= 0xF0 {
                self.0 += 1;
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use pi_agent::message::{BashExecutionMessage, CompactionSummaryMessage};
    use pi_llm::{
        AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    };
    use serde_json::json;

    use super::*;

    fn assistant(content: Vec<AssistantContent>, stop: StopReason, total: u64) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            content,
            stop_reason: stop,
            usage: Usage {
                total_tokens: total,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        })
    }

    fn text(text: &str) -> AssistantContent {
        AssistantContent::Text(TextContent {
            text: text.into(),
            text_signature: None,
        })
    }

    #[test]
    fn estimates_follow_pi_per_message_kind() {
        let image = UserContent::Image(ImageContent {
            data: "aGk=".into(),
            mime_type: "image/png".into(),
        });
        let cases: Vec<(&str, AgentMessage, u64)> = vec![
            (
                "user text only, images ignored",
                AgentMessage::User(pi_llm::UserMessage {
                    content: vec![UserContent::text("12345"), image.clone()],
                    timestamp: 0,
                }),
                2,
            ),
            (
                "assistant text, thinking and tool call",
                assistant(
                    vec![
                        text("abcd"),
                        AssistantContent::Thinking(ThinkingContent {
                            thinking: "efgh".into(),
                            thinking_signature: None,
                            redacted: false,
                        }),
                        AssistantContent::ToolCall(ToolCall {
                            id: "c1".into(),
                            name: "read".into(),
                            arguments: json!({"path": "a.rs"}).into(),
                            thought_signature: None,
                        }),
                    ],
                    StopReason::ToolUse,
                    0,
                ),
                // 4 + 4 + 4 + len({"path":"a.rs"}) = 15 → 27 chars.
                7,
            ),
            (
                "tool result with an image",
                AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id: "c1".into(),
                    tool_name: "read".into(),
                    content: vec![UserContent::text("1234"), image],
                    details: None,
                    is_error: false,
                    timestamp: 0,
                }),
                1201,
            ),
            (
                "bash command and output",
                AgentMessage::BashExecution(BashExecutionMessage {
                    command: "ls".into(),
                    output: "a\nb".into(),
                    exit_code: Some(0),
                    cancelled: false,
                    truncated: false,
                    full_output_path: None,
                    exclude_from_context: false,
                    timestamp: 0,
                }),
                2,
            ),
            (
                "summaries count their text; astral characters are two units",
                AgentMessage::CompactionSummary(CompactionSummaryMessage {
                    summary: "é😀".into(),
                    tokens_before: 0,
                    timestamp: 0,
                }),
                1,
            ),
        ];
        for (name, message, expected) in cases {
            assert_eq!(estimate_tokens(&message), expected, "{name}");
        }
    }

    #[test]
    fn json_lengths_are_counted_in_utf16_units() {
        let value = json!({"k": "é😀\n"});
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(json_js_len(&value), js_len(&text));
        assert_eq!(
            json_js_len(&value),
            r#"{"k":"é😀\n"}"#.encode_utf16().count()
        );
    }

    #[test]
    fn context_estimate_uses_the_last_successful_usage() {
        let user = |t: &str| AgentMessage::user(t, vec![], 0);
        let cases = vec![
            (
                "no usage: all estimated",
                vec![user("12345678"), user("1234")],
                (3, 0, 3, None),
            ),
            (
                "usage plus trailing estimate",
                vec![
                    user("x"),
                    assistant(vec![text("ok")], StopReason::Stop, 100),
                    user("12345678"),
                ],
                (102, 100, 2, Some(1)),
            ),
            (
                "failed and aborted messages have no usable usage",
                vec![
                    assistant(vec![], StopReason::Stop, 50),
                    assistant(vec![], StopReason::Error, 900),
                    assistant(vec![], StopReason::Aborted, 900),
                ],
                (50, 50, 0, Some(0)),
            ),
        ];
        for (name, messages, (tokens, usage, trailing, index)) in cases {
            let estimate = estimate_context_tokens(&messages);
            assert_eq!(
                (
                    estimate.tokens,
                    estimate.usage_tokens,
                    estimate.trailing_tokens,
                    estimate.last_usage_index
                ),
                (tokens, usage, trailing, index),
                "{name}"
            );
        }
    }

    #[test]
    fn threshold_is_window_minus_reserve() {
        let settings = CompactionSettings {
            enabled: true,
            reserve_tokens: 100,
            keep_recent_tokens: 10,
        };
        assert!(!should_compact(900, 1000, &settings));
        assert!(should_compact(901, 1000, &settings));
        assert!(
            should_compact(0, 50, &settings),
            "reserve larger than the window"
        );
        let disabled = CompactionSettings {
            enabled: false,
            ..settings
        };
        assert!(!should_compact(5000, 1000, &disabled));
        let usage = Usage {
            input: 1,
            output: 2,
            cache_read: 3,
            cache_write: 4,
            ..Usage::default()
        };
        assert_eq!(calculate_context_tokens(&usage), 10);
    }
}
