//! Cross-provider context transformation (pi's `transformMessages`), applied to the
//! conversation before every request so a session can switch models mid-conversation.
//!
//! - Assistant messages that failed (`error`, `aborted`) are dropped, with the tool results
//!   that answer their calls.
//! - Assistant messages from another model: thinking becomes plain text (redacted or empty
//!   thinking is dropped), Google thought signatures and text signatures are removed, and tool
//!   call ids are normalized by the target's rule, rewriting the matching tool results.
//! - The same model: thinking is kept only if it is signed or non-empty.
//! - A tool call with no result before the next user or assistant message gets a synthetic
//!   error result `No result provided`.
//! - Images are removed for models without image input.

use std::collections::{HashMap, HashSet};

use crate::model::Model;
use crate::types::{
    AssistantContent, Message, StopReason, TextContent, ToolResultMessage, UserContent,
};

/// How a target API constrains tool-call ids.
pub type IdRule = fn(&str) -> String;

/// Anthropic's rule: `[a-zA-Z0-9_-]`, at most 64 characters.
pub fn anthropic_tool_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The conversation as `model` should receive it.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    id_rule: Option<IdRule>,
) -> Vec<Message> {
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut dropped_calls: HashSet<String> = HashSet::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    // Calls of the last kept assistant message still waiting for a result, in call order.
    let mut pending: Vec<(String, String)> = Vec::new();

    for message in messages {
        match message {
            Message::Assistant(assistant) => {
                close_pending(&mut out, &mut pending);
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    dropped_calls.extend(assistant.tool_calls().map(|call| call.id.clone()));
                    continue;
                }
                let same_model = assistant.provider == model.provider
                    && assistant.api == model.api
                    && assistant.model == model.id;
                let mut assistant = assistant.clone();
                assistant.content = assistant
                    .content
                    .into_iter()
                    .filter_map(|block| match block {
                        AssistantContent::Thinking(thinking) if same_model => {
                            let signed = thinking
                                .thinking_signature
                                .as_deref()
                                .is_some_and(|s| !s.is_empty());
                            (signed || !thinking.thinking.trim().is_empty())
                                .then_some(AssistantContent::Thinking(thinking))
                        }
                        AssistantContent::Thinking(thinking) => {
                            let keep = !thinking.redacted && !thinking.thinking.trim().is_empty();
                            keep.then_some(AssistantContent::Text(TextContent {
                                text: thinking.thinking,
                                text_signature: None,
                            }))
                        }
                        AssistantContent::Text(mut text) => {
                            if !same_model {
                                text.text_signature = None;
                            }
                            Some(AssistantContent::Text(text))
                        }
                        AssistantContent::ToolCall(mut call) => {
                            if !same_model {
                                call.thought_signature = None;
                                if let Some(rule) = id_rule {
                                    let new_id = rule(&call.id);
                                    if new_id != call.id {
                                        renamed.insert(call.id.clone(), new_id.clone());
                                        call.id = new_id;
                                    }
                                }
                            }
                            pending.push((call.id.clone(), call.name.clone()));
                            Some(AssistantContent::ToolCall(call))
                        }
                    })
                    .collect();
                out.push(Message::Assistant(assistant));
            }
            Message::ToolResult(result) => {
                if dropped_calls.contains(&result.tool_call_id) {
                    continue;
                }
                let mut result = result.clone();
                if let Some(new_id) = renamed.get(&result.tool_call_id) {
                    result.tool_call_id = new_id.clone();
                }
                let Some(position) = pending
                    .iter()
                    .position(|(id, _)| *id == result.tool_call_id)
                else {
                    // A result for no known call: providers reject these, so leave it out.
                    continue;
                };
                pending.remove(position);
                if !model.accepts_images() {
                    strip_images(&mut result.content);
                }
                out.push(Message::ToolResult(result));
            }
            Message::User(user) => {
                close_pending(&mut out, &mut pending);
                let mut user = user.clone();
                if !model.accepts_images() {
                    strip_images(&mut user.content);
                }
                out.push(Message::User(user));
            }
        }
    }
    close_pending(&mut out, &mut pending);
    out
}

fn close_pending(out: &mut Vec<Message>, pending: &mut Vec<(String, String)>) {
    for (id, name) in pending.drain(..) {
        out.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: name,
            content: vec![UserContent::text("No result provided")],
            details: None,
            is_error: true,
            timestamp: 0,
        }));
    }
}

fn strip_images(content: &mut Vec<UserContent>) {
    let before = content.len();
    content.retain(|block| matches!(block, UserContent::Text(_)));
    if content.len() < before && content.is_empty() {
        content.push(UserContent::text(
            "(image omitted: this model does not accept images)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faux::faux_model;
    use serde_json::json;

    fn messages(value: serde_json::Value) -> Vec<Message> {
        serde_json::from_value(value).unwrap()
    }

    fn assistant(
        provider: &str,
        model: &str,
        stop: &str,
        content: serde_json::Value,
    ) -> serde_json::Value {
        json!({"role": "assistant", "content": content, "api": "faux", "provider": provider,
               "model": model, "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
               "totalTokens": 0, "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0,
               "cacheWrite": 0.0, "total": 0.0}}, "stopReason": stop, "timestamp": 1})
    }

    #[test]
    fn foreign_thinking_becomes_text_and_ids_are_normalized() {
        let model = faux_model();
        let input = messages(json!([
            {"role": "user", "content": "hi", "timestamp": 1},
            assistant("other", "m", "toolUse", json!([
                {"type": "thinking", "thinking": "ponder", "thinkingSignature": "sig"},
                {"type": "thinking", "thinking": "", "thinkingSignature": "x", "redacted": true},
                {"type": "toolCall", "id": "call|fc.1", "name": "read", "arguments": {}, "thoughtSignature": "g"}
            ])),
            {"role": "toolResult", "toolCallId": "call|fc.1", "toolName": "read",
             "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 2}
        ]));
        let out = transform_messages(&input, &model, Some(anthropic_tool_id));
        let value = serde_json::to_value(&out).unwrap();
        assert_eq!(
            value[1]["content"][0],
            json!({"type": "text", "text": "ponder"})
        );
        assert_eq!(value[1]["content"][1]["id"], "call_fc_1");
        assert!(value[1]["content"][1].get("thoughtSignature").is_none());
        assert_eq!(value[2]["toolCallId"], "call_fc_1");
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn failed_messages_drop_and_orphans_get_results() {
        let model = faux_model();
        let input = messages(json!([
            {"role": "user", "content": "hi", "timestamp": 1},
            assistant("faux", "faux-1", "error", json!([{"type": "text", "text": "half"}])),
            assistant("faux", "faux-1", "toolUse", json!([
                {"type": "toolCall", "id": "a", "name": "bash", "arguments": {}},
                {"type": "toolCall", "id": "b", "name": "bash", "arguments": {}}
            ])),
            {"role": "toolResult", "toolCallId": "a", "toolName": "bash",
             "content": [{"type": "text", "text": "done"}], "isError": false, "timestamp": 2},
            {"role": "user", "content": "next", "timestamp": 3}
        ]));
        let out = transform_messages(&input, &model, None);
        let roles: Vec<String> = serde_json::to_value(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            roles,
            ["user", "assistant", "toolResult", "toolResult", "user"]
        );
        let Message::ToolResult(synthetic) = &out[3] else {
            panic!("expected a tool result")
        };
        assert_eq!(synthetic.tool_call_id, "b");
        assert!(synthetic.is_error);
    }
}
