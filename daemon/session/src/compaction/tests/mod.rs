//! Tests of the pure compaction algorithm on synthetic branches written in a small notation
//! (see [`branch`]).

mod branch_summary;
mod cut;
mod files;
mod prepare;

use pi_agent::AgentMessage;
use pi_agent::message::{
    BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage,
};
use pi_llm::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage,
};
use serde_json::json;

use crate::compaction::{BranchEntry, BranchEntryKind, FileLists};

/// A branch from a space-separated notation; entry ids are `e0`, `e1`, ... Each token is a
/// kind and a size in estimated tokens (`chars / 4`):
///
/// - `u8` user message, `a8` assistant text, `t8` assistant with one `bash` tool call,
///   `r8` tool result (answering the latest call), `x8` bash execution;
/// - `cm8` custom message entry, `bs8` branch summary entry;
/// - `C` compaction entry (summary `S`), `m` model change.
pub fn branch(notation: &str) -> Vec<BranchEntry> {
    let mut last_call = String::new();
    notation
        .split_whitespace()
        .enumerate()
        .map(|(index, token)| {
            let split = token
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(token.len());
            let (kind, size) = token.split_at(split);
            let chars = size.parse::<usize>().unwrap_or(0) * 4;
            let text = "w".repeat(chars);
            let kind = match kind {
                "u" => BranchEntryKind::Message(user(&text)),
                "a" => BranchEntryKind::Message(assistant(vec![text_block(&text)])),
                "t" => {
                    last_call = format!("call{index}");
                    // `bash` + `{"command":"…"}` is 18 characters around the command.
                    let command = "w".repeat(chars.saturating_sub(18));
                    BranchEntryKind::Message(assistant(vec![tool_call(
                        &last_call,
                        "bash",
                        json!({"command": command}),
                    )]))
                }
                "r" => BranchEntryKind::Message(tool_result(&last_call, &text)),
                "x" => {
                    BranchEntryKind::Message(AgentMessage::BashExecution(BashExecutionMessage {
                        command: String::new(),
                        output: text,
                        exit_code: Some(0),
                        cancelled: false,
                        truncated: false,
                        full_output_path: None,
                        exclude_from_context: false,
                        timestamp: 0,
                    }))
                }
                "cm" => BranchEntryKind::CustomMessage(CustomMessage {
                    custom_type: "note".into(),
                    content: vec![UserContent::text(text)],
                    display: true,
                    details: None,
                    timestamp: 0,
                }),
                "bs" => BranchEntryKind::BranchSummary {
                    message: BranchSummaryMessage {
                        summary: text,
                        from_id: "root".into(),
                        timestamp: 0,
                    },
                    details: None,
                    from_hook: false,
                },
                "C" => BranchEntryKind::Compaction {
                    message: CompactionSummaryMessage {
                        summary: "S".into(),
                        tokens_before: 0,
                        timestamp: 0,
                    },
                    first_kept_entry_id: "e0".into(),
                    details: None,
                    from_hook: false,
                },
                "m" => BranchEntryKind::Other,
                other => panic!("unknown entry kind {other:?} in {notation:?}"),
            };
            BranchEntry {
                id: format!("e{index}"),
                kind,
            }
        })
        .collect()
}

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: vec![UserContent::text(text)],
        timestamp: 0,
    })
}

pub fn text_block(text: &str) -> AssistantContent {
    AssistantContent::Text(TextContent {
        text: text.into(),
        text_signature: None,
    })
}

pub fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        thought_signature: None,
    })
}

pub fn assistant(content: Vec<AssistantContent>) -> AgentMessage {
    let stop_reason = if content
        .iter()
        .any(|block| matches!(block, AssistantContent::ToolCall(_)))
    {
        StopReason::ToolUse
    } else {
        StopReason::Stop
    };
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: "faux".into(),
        provider: "faux".into(),
        model: "faux-1".into(),
        usage: Usage::default(),
        stop_reason,
        ..AssistantMessage::default()
    })
}

pub fn tool_result(call_id: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: call_id.into(),
        tool_name: "bash".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        timestamp: 0,
    })
}

pub fn entry(id: &str, message: AgentMessage) -> BranchEntry {
    BranchEntry {
        id: id.into(),
        kind: BranchEntryKind::Message(message),
    }
}

pub fn compaction_entry(id: &str, summary: &str, details: Option<FileLists>) -> BranchEntry {
    BranchEntry {
        id: id.into(),
        kind: BranchEntryKind::Compaction {
            message: CompactionSummaryMessage {
                summary: summary.into(),
                tokens_before: 0,
                timestamp: 0,
            },
            first_kept_entry_id: "e0".into(),
            details,
            from_hook: false,
        },
    }
}
