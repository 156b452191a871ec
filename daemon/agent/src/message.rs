//! The messages of an agent conversation, in pi's `AgentMessage` shapes: the LLM roles (user,
//! assistant, toolResult) plus the coding agent's own (bashExecution, custom, branchSummary,
//! compactionSummary), and [`convert_to_llm`], which turns them into what the model sees.

use pi_llm::{AssistantMessage, Message, TextContent, ToolResultMessage, UserContent, UserMessage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A user's shell command and its output (`!cmd`); `!!cmd` sets `exclude_from_context`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command line.
    pub command: String,
    /// Sanitized, tail-truncated output.
    pub output: String,
    /// Exit code; absent when the process was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Killed before it exited.
    pub cancelled: bool,
    /// `output` was truncated.
    pub truncated: bool,
    /// Where the full output is (`artifact://ID`), when truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Shown and stored but never sent to the model (`!!cmd`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude_from_context: bool,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// A message injected by an extension or the daemon, sent to the model as a user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// The producer's type tag.
    pub custom_type: String,
    /// Text and images.
    pub content: Vec<UserContent>,
    /// Whether clients should show it.
    pub display: bool,
    /// Producer-specific detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// The summary of a branch the conversation came back from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// The entry id the summary was written at (pi's semantics: the new leaf, or `root`).
    pub from_id: String,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// The summary that replaces compacted history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// Context tokens before compaction.
    pub tokens_before: u64,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// A message of the agent's context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum AgentMessage {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's result.
    ToolResult(ToolResultMessage),
    /// A user shell command.
    BashExecution(BashExecutionMessage),
    /// An injected message.
    Custom(CustomMessage),
    /// A branch summary.
    BranchSummary(BranchSummaryMessage),
    /// A compaction summary.
    CompactionSummary(CompactionSummaryMessage),
}

/// Text that precedes a compaction summary in the model's context.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Text that precedes a branch summary in the model's context.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Text that closes either summary.
pub const SUMMARY_SUFFIX: &str = "\n</summary>";

impl AgentMessage {
    /// A user message with text and images, timestamped now.
    pub fn user(
        text: impl Into<String>,
        images: Vec<pi_llm::ImageContent>,
        timestamp: i64,
    ) -> AgentMessage {
        let mut content = vec![UserContent::text(text)];
        content.extend(images.into_iter().map(UserContent::Image));
        AgentMessage::User(UserMessage { content, timestamp })
    }

    /// The role name as in pi (`user`, `toolResult`, ...).
    pub fn role(&self) -> &'static str {
        match self {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::BashExecution(_) => "bashExecution",
            AgentMessage::Custom(_) => "custom",
            AgentMessage::BranchSummary(_) => "branchSummary",
            AgentMessage::CompactionSummary(_) => "compactionSummary",
        }
    }

    /// The first text block of a user or custom message (for fork prefill, queue displays).
    pub fn user_text(&self) -> Option<String> {
        let content = match self {
            AgentMessage::User(message) => &message.content,
            AgentMessage::Custom(message) => &message.content,
            AgentMessage::Assistant(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => return None,
        };
        let texts: Vec<&str> = content
            .iter()
            .filter_map(|block| match block {
                UserContent::Text(text) => Some(text.text.as_str()),
                UserContent::Image(_) => None,
            })
            .collect();
        Some(texts.join("\n"))
    }
}

/// What replaces an image when images are blocked (pi's words).
pub const IMAGES_BLOCKED: &str = "Image reading is disabled.";

/// `messages` with every image of a user message or tool result replaced by
/// [`IMAGES_BLOCKED`], consecutive replacements as one (pi's `images.blockImages`).
pub fn without_images(messages: Vec<Message>) -> Vec<Message> {
    fn replaced(content: Vec<UserContent>) -> Vec<UserContent> {
        let mut out: Vec<UserContent> = Vec::with_capacity(content.len());
        for block in content {
            let block = match block {
                UserContent::Image(_) => UserContent::Text(TextContent {
                    text: IMAGES_BLOCKED.to_owned(),
                    ..TextContent::default()
                }),
                other => other,
            };
            let repeated = matches!((&block, out.last()),
                (UserContent::Text(now), Some(UserContent::Text(before)))
                    if now.text == IMAGES_BLOCKED && before.text == IMAGES_BLOCKED);
            if !repeated {
                out.push(block);
            }
        }
        out
    }
    messages
        .into_iter()
        .map(|message| match message {
            Message::User(mut user)
                if user
                    .content
                    .iter()
                    .any(|c| matches!(c, UserContent::Image(_))) =>
            {
                user.content = replaced(user.content);
                Message::User(user)
            }
            Message::ToolResult(mut result)
                if result
                    .content
                    .iter()
                    .any(|c| matches!(c, UserContent::Image(_))) =>
            {
                result.content = replaced(result.content);
                Message::ToolResult(result)
            }
            other => other,
        })
        .collect()
}

/// What the model sees: pi's `convertToLlm`.
pub fn convert_to_llm<M: std::borrow::Borrow<AgentMessage>>(messages: &[M]) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message.borrow() {
            AgentMessage::User(user) => out.push(Message::User(user.clone())),
            AgentMessage::Assistant(assistant) => out.push(Message::Assistant(assistant.clone())),
            AgentMessage::ToolResult(result) => out.push(Message::ToolResult(result.clone())),
            AgentMessage::BashExecution(bash) => {
                if !bash.exclude_from_context {
                    out.push(user_text_message(bash_execution_text(bash), bash.timestamp));
                }
            }
            AgentMessage::Custom(custom) => {
                out.push(Message::User(UserMessage {
                    content: custom.content.clone(),
                    timestamp: custom.timestamp,
                }));
            }
            AgentMessage::BranchSummary(summary) => {
                if !summary.summary.is_empty() {
                    let text =
                        format!("{BRANCH_SUMMARY_PREFIX}{}{SUMMARY_SUFFIX}", summary.summary);
                    out.push(user_text_message(text, summary.timestamp));
                }
            }
            AgentMessage::CompactionSummary(summary) => {
                let text = format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{SUMMARY_SUFFIX}",
                    summary.summary
                );
                out.push(user_text_message(text, summary.timestamp));
            }
        }
    }
    out
}

/// pi's rendering of a user shell command for the model.
pub fn bash_execution_text(bash: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", bash.command);
    if bash.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", bash.output));
    }
    if bash.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = bash.exit_code
        && code != 0
    {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if bash.truncated
        && let Some(path) = &bash.full_output_path
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn user_text_message(text: String, timestamp: i64) -> Message {
    Message::User(UserMessage {
        content: vec![UserContent::Text(TextContent {
            text,
            text_signature: None,
        })],
        timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_images_become_one_sentence_per_run_of_images() {
        let image = || {
            UserContent::Image(pi_llm::ImageContent {
                data: "AA==".into(),
                mime_type: "image/png".into(),
            })
        };
        let text = |text: &str| {
            UserContent::Text(TextContent {
                text: text.into(),
                ..TextContent::default()
            })
        };
        let messages = vec![
            Message::User(UserMessage {
                content: vec![text("look"), image(), image(), text("and"), image()],
                timestamp: 0,
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c".into(),
                tool_name: "read".into(),
                content: vec![image()],
                details: None,
                is_error: false,
                timestamp: 0,
            }),
        ];
        let texts = |message: &Message| -> Vec<String> {
            let content = match message {
                Message::User(user) => &user.content,
                Message::ToolResult(result) => &result.content,
                Message::Assistant(_) => return Vec::new(),
            };
            content
                .iter()
                .map(|block| match block {
                    UserContent::Text(text) => text.text.clone(),
                    UserContent::Image(_) => "<image>".into(),
                })
                .collect()
        };
        let blocked = without_images(messages);
        assert_eq!(
            texts(&blocked[0]),
            ["look", IMAGES_BLOCKED, "and", IMAGES_BLOCKED]
        );
        assert_eq!(texts(&blocked[1]), [IMAGES_BLOCKED]);
    }

    fn bash(
        output: &str,
        exit_code: Option<i32>,
        cancelled: bool,
        truncated: bool,
    ) -> BashExecutionMessage {
        BashExecutionMessage {
            command: "make".into(),
            output: output.into(),
            exit_code,
            cancelled,
            truncated,
            full_output_path: truncated.then(|| "artifact://a1".to_owned()),
            exclude_from_context: false,
            timestamp: 0,
        }
    }

    #[test]
    fn bash_executions_render_as_pi_does() {
        let cases = [
            (
                bash("ok", Some(0), false, false),
                "Ran `make`\n```\nok\n```",
            ),
            (bash("", Some(0), false, false), "Ran `make`\n(no output)"),
            (
                bash("err", Some(2), false, false),
                "Ran `make`\n```\nerr\n```\n\nCommand exited with code 2",
            ),
            (
                bash("x", None, true, false),
                "Ran `make`\n```\nx\n```\n\n(command cancelled)",
            ),
            (
                bash("tail", Some(0), false, true),
                "Ran `make`\n```\ntail\n```\n\n[Output truncated. Full output: artifact://a1]",
            ),
        ];
        for (message, expected) in cases {
            assert_eq!(bash_execution_text(&message), expected);
        }
    }

    #[test]
    fn excluded_commands_and_empty_branch_summaries_are_not_sent() {
        let mut excluded = bash("secret", Some(0), false, false);
        excluded.exclude_from_context = true;
        let messages = vec![
            AgentMessage::BashExecution(excluded),
            AgentMessage::BranchSummary(BranchSummaryMessage {
                summary: String::new(),
                from_id: "root".into(),
                timestamp: 0,
            }),
            AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: "S".into(),
                tokens_before: 9,
                timestamp: 0,
            }),
        ];
        let llm = convert_to_llm(&messages);
        assert_eq!(llm.len(), 1);
        let Message::User(user) = &llm[0] else {
            panic!("expected a user message")
        };
        let UserContent::Text(text) = &user.content[0] else {
            panic!("expected text")
        };
        assert_eq!(
            text.text,
            format!("{COMPACTION_SUMMARY_PREFIX}S{SUMMARY_SUFFIX}")
        );
    }

    #[test]
    fn agent_messages_use_pi_role_tags() {
        let message = AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: "s".into(),
            from_id: "ab12cd34".into(),
            timestamp: 7,
        });
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            serde_json::json!({"role": "branchSummary", "summary": "s", "fromId": "ab12cd34", "timestamp": 7})
        );
    }
}
