//! Daemon session events in pi's JSON-mode shapes (`pi --mode json`, `pi --mode rpc`).
//!
//! The daemon speaks pi's event vocabulary with two deliberate differences (docs/protocol.md):
//! `message_update` carries only the delta, and `agent_end` carries a count instead of the
//! run's messages. [`PiEvents`] undoes both for consumers of pi's format: it collects the
//! run's messages from their `message_end`s to rebuild `agent_end.messages`, and in
//! [`PartialMode::Full`] rebuilds the cumulative partial message that pi repeats in every
//! `message_update` (as `message` and as `assistantMessageEvent.partial`).
//!
//! In `Full` mode the partial also carries the scratch keys pi's providers keep on blocks still
//! streaming (see [`Scratch`]): Chat Completions' `partialArgs`/`streamIndex` on tool calls
//! until the stream ends, Anthropic's `partialJson`/`index` on tool calls and `index` on text
//! and thinking until the block ends, the Responses API's `partialJson` until the call ends.
//!
//! Daemon-only events (`queue_update`, `entry_added`, `leaf_changed`, `session_updated`,
//! `session_error`) have no pi counterpart and convert to nothing; daemon-only fields
//! (`entryId`, the `id`/`toolName` of `toolcall_start`, the `arguments` of `toolcall_delta`,
//! the `details` of a successful `write`: what the file was, for editors' diffs) are left out,
//! so each line validates against pi's event schema.

use std::collections::{BTreeMap, BTreeSet};

use pi_protocol::v1::SessionEvent;
use pi_protocol::v1::message::{AgentMessage, AssistantMessage, AssistantMessageEvent};
use serde_json::{Value, json};

/// Whether `message_update` lines carry the cumulative partial message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialMode {
    /// Only the delta (`pictl run --json`): linear in the reply's length.
    DeltaOnly,
    /// pi's exact form: the whole partial in `message` and `assistantMessageEvent.partial`.
    Full,
}

/// Converts one session's events, in order, to pi's shapes.
#[derive(Debug)]
pub struct PiEvents {
    mode: PartialMode,
    // The assistant message being streamed, rebuilt from deltas (only in `Full` mode).
    partial: Option<AssistantMessage>,
    // What pi's provider keeps on the blocks of that message while they stream.
    scratch: Scratch,
    // Messages of the current run, from its `message_end`s, for `agent_end.messages`.
    run_messages: Vec<Value>,
}

impl PiEvents {
    /// A converter.
    pub fn new(mode: PartialMode) -> PiEvents {
        PiEvents {
            mode,
            partial: None,
            scratch: Scratch::default(),
            run_messages: Vec::new(),
        }
    }

    /// Starts from a snapshot's streaming message (after attaching mid-run).
    pub fn resume_partial(&mut self, streaming: Option<AssistantMessage>) {
        self.partial = streaming;
        // The argument text so far is not in a snapshot: the scratch keys start empty.
        self.scratch = Scratch::default();
    }

    /// The pi JSON line for `event`, or `None` for daemon-only events.
    pub fn convert(&mut self, event: &SessionEvent) -> Option<Value> {
        let value = match event {
            SessionEvent::AgentStart => {
                self.run_messages.clear();
                json!({"type": "agent_start"})
            }
            SessionEvent::AgentEnd { .. } => {
                let messages = std::mem::take(&mut self.run_messages);
                json!({"type": "agent_end", "messages": messages})
            }
            SessionEvent::TurnStart => json!({"type": "turn_start"}),
            SessionEvent::TurnEnd {
                message,
                tool_results,
            } => json!({
                "type": "turn_end",
                "message": assistant_json(message),
                "toolResults": tool_results_json(tool_results),
            }),
            SessionEvent::MessageStart { message } => {
                if let AgentMessage::Assistant(partial) = message
                    && self.mode == PartialMode::Full
                {
                    self.partial = Some(partial.clone());
                    self.scratch = Scratch::default();
                }
                json!({"type": "message_start", "message": message})
            }
            SessionEvent::MessageUpdate {
                assistant_message_event,
            } => self.message_update(assistant_message_event),
            SessionEvent::MessageEnd { message, .. } => {
                self.partial = None;
                let message = match message {
                    AgentMessage::ToolResult(result) => tool_result_json(result),
                    other => serde_json::to_value(other).unwrap_or(Value::Null),
                };
                self.run_messages.push(message.clone());
                json!({"type": "message_end", "message": message})
            }
            SessionEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => json!({
                "type": "tool_execution_start",
                "toolCallId": tool_call_id,
                "toolName": tool_name,
                "args": args,
            }),
            SessionEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => json!({
                "type": "tool_execution_update",
                "toolCallId": tool_call_id,
                "toolName": tool_name,
                "args": args,
                "partialResult": partial_result,
            }),
            SessionEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                let mut result = serde_json::to_value(result).unwrap_or(Value::Null);
                if tool_name == "write" && !is_error {
                    drop_details(&mut result);
                }
                json!({
                    "type": "tool_execution_end",
                    "toolCallId": tool_call_id,
                    "toolName": tool_name,
                    "result": result,
                    "isError": is_error,
                })
            }
            // Same shapes as pi's (0.73: `compaction_start|end` with `reason`, including
            // `manual`; `auto_retry_start|end`).
            SessionEvent::AutoRetryStart { .. }
            | SessionEvent::AutoRetryEnd { .. }
            | SessionEvent::CompactionStart { .. }
            | SessionEvent::CompactionEnd { .. } => {
                serde_json::to_value(event).unwrap_or(Value::Null)
            }
            SessionEvent::QueueUpdate { .. }
            | SessionEvent::EntryAdded { .. }
            | SessionEvent::LeafChanged { .. }
            | SessionEvent::SessionUpdated { .. }
            | SessionEvent::TodosUpdated { .. }
            | SessionEvent::PlanModeChanged { .. }
            | SessionEvent::SessionError { .. }
            | SessionEvent::ToolsWaitStart { .. }
            | SessionEvent::ToolsWaitEnd { .. } => return None,
        };
        Some(value)
    }

    fn message_update(&mut self, event: &AssistantMessageEvent) -> Value {
        let mut delta = pi_delta(event);
        match (self.mode, &mut self.partial) {
            (PartialMode::Full, Some(partial)) => {
                pi_client::partial::apply(partial, event);
                self.scratch.apply(event);
                let mut partial = assistant_json(partial);
                self.scratch.decorate(&mut partial);
                delta["partial"] = partial.clone();
                json!({"type": "message_update", "assistantMessageEvent": delta, "message": partial})
            }
            (PartialMode::Full, None) | (PartialMode::DeltaOnly, _) => {
                json!({"type": "message_update", "assistantMessageEvent": delta})
            }
        }
    }
}

/// The keys pi's providers keep on the blocks of a message while they stream, and delete
/// before the block's end event (Chat Completions: before the first end event of the message,
/// as it closes every block when the stream ends).
#[derive(Debug, Default)]
struct Scratch {
    // The raw argument text of each tool call so far, by content index.
    arguments: BTreeMap<usize, String>,
    // Blocks whose end event was sent.
    ended: BTreeSet<usize>,
}

impl Scratch {
    fn apply(&mut self, event: &AssistantMessageEvent) {
        match event {
            AssistantMessageEvent::ToolcallStart { content_index, .. } => {
                self.arguments.entry(*content_index).or_default();
            }
            AssistantMessageEvent::ToolcallDelta {
                content_index,
                delta,
                ..
            } => self
                .arguments
                .entry(*content_index)
                .or_default()
                .push_str(delta),
            AssistantMessageEvent::TextEnd { content_index, .. }
            | AssistantMessageEvent::ThinkingEnd { content_index, .. }
            | AssistantMessageEvent::ToolcallEnd { content_index, .. } => {
                self.ended.insert(*content_index);
            }
            _ => {}
        }
    }

    /// Adds the keys to the blocks of `partial` (an assistant message as JSON) still streaming.
    fn decorate(&self, partial: &mut Value) {
        let api = partial["api"].as_str().unwrap_or_default().to_owned();
        let Some(blocks) = partial["content"].as_array_mut() else {
            return;
        };
        let mut tool_calls = 0usize;
        for (index, block) in blocks.iter_mut().enumerate() {
            let kind = block["type"].as_str().unwrap_or_default().to_owned();
            let is_tool_call = kind == "toolCall";
            let raw = || json!(self.arguments.get(&index).cloned().unwrap_or_default());
            let Some(fields) = block.as_object_mut() else {
                continue;
            };
            match api.as_str() {
                "openai-completions" if is_tool_call && self.ended.is_empty() => {
                    fields.insert("partialArgs".to_owned(), raw());
                    fields.insert("streamIndex".to_owned(), json!(tool_calls));
                }
                "anthropic-messages" if !self.ended.contains(&index) => {
                    if is_tool_call {
                        fields.insert("partialJson".to_owned(), raw());
                    }
                    fields.insert("index".to_owned(), json!(index));
                }
                "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
                    if is_tool_call && !self.ended.contains(&index) =>
                {
                    fields.insert("partialJson".to_owned(), raw());
                }
                _ => {}
            }
            if is_tool_call {
                tool_calls += 1;
            }
        }
    }
}

/// A delta in pi's `AssistantMessageEvent` shape, without `partial`.
fn pi_delta(event: &AssistantMessageEvent) -> Value {
    match event {
        AssistantMessageEvent::Start => json!({"type": "start"}),
        AssistantMessageEvent::TextStart { content_index } => {
            json!({"type": "text_start", "contentIndex": content_index})
        }
        AssistantMessageEvent::TextDelta {
            content_index,
            delta,
        } => json!({"type": "text_delta", "contentIndex": content_index, "delta": delta}),
        AssistantMessageEvent::TextEnd {
            content_index,
            content,
            ..
        } => json!({"type": "text_end", "contentIndex": content_index, "content": content}),
        AssistantMessageEvent::ThinkingStart { content_index } => {
            json!({"type": "thinking_start", "contentIndex": content_index})
        }
        AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
        } => json!({"type": "thinking_delta", "contentIndex": content_index, "delta": delta}),
        AssistantMessageEvent::ThinkingEnd {
            content_index,
            content,
            ..
        } => json!({"type": "thinking_end", "contentIndex": content_index, "content": content}),
        AssistantMessageEvent::ToolcallStart { content_index, .. } => {
            json!({"type": "toolcall_start", "contentIndex": content_index})
        }
        AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta,
            ..
        } => json!({"type": "toolcall_delta", "contentIndex": content_index, "delta": delta}),
        AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => {
            let mut tool_call = serde_json::to_value(tool_call).unwrap_or(Value::Null);
            tool_call["type"] = json!("toolCall");
            json!({"type": "toolcall_end", "contentIndex": content_index, "toolCall": tool_call})
        }
        AssistantMessageEvent::Done { reason, message } => {
            json!({"type": "done", "reason": reason, "message": assistant_json(message)})
        }
        AssistantMessageEvent::Error { reason, error } => {
            json!({"type": "error", "reason": reason, "error": assistant_json(error)})
        }
    }
}

/// An assistant message with its `role`, as pi writes it everywhere.
pub fn assistant_json(message: &AssistantMessage) -> Value {
    serde_json::to_value(AgentMessage::Assistant(message.clone())).unwrap_or(Value::Null)
}

/// Tool result messages with their `role`.
fn tool_results_json(results: &[pi_protocol::v1::message::ToolResultMessage]) -> Value {
    Value::Array(results.iter().map(tool_result_json).collect())
}

/// A tool result message with its `role`, as pi writes it: a successful `write` without the
/// daemon's details (pi's has none).
fn tool_result_json(result: &pi_protocol::v1::message::ToolResultMessage) -> Value {
    let mut value =
        serde_json::to_value(AgentMessage::ToolResult(result.clone())).unwrap_or(Value::Null);
    if result.tool_name == "write" && !result.is_error {
        drop_details(&mut value);
    }
    value
}

fn drop_details(value: &mut Value) {
    if let Value::Object(map) = value {
        map.shift_remove("details");
    }
}

/// The text blocks of an assistant message, in order (what print mode shows).
pub fn assistant_texts(message: &AssistantMessage) -> Vec<&str> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            pi_protocol::v1::message::AssistantContent::Text(text) => Some(text.text.as_str()),
            pi_protocol::v1::message::AssistantContent::Thinking(_)
            | pi_protocol::v1::message::AssistantContent::ToolCall(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pi_protocol::v1::message::{
        AssistantContent, StopReason, TextContent, Usage, UserContent, UserMessage,
    };

    use super::*;

    fn assistant(text: &str) -> AssistantMessage {
        AssistantMessage {
            content: if text.is_empty() {
                Vec::new()
            } else {
                vec![AssistantContent::Text(TextContent {
                    text: text.to_owned(),
                    text_signature: None,
                })]
            },
            api: "anthropic-messages".to_owned(),
            provider: "p".to_owned(),
            model: "m".to_owned(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: 1,
            response_id: None,
        }
    }

    fn run(mode: PartialMode) -> Vec<Value> {
        let user = AgentMessage::User(UserMessage {
            content: vec![UserContent::Text(TextContent {
                text: "hi".to_owned(),
                text_signature: None,
            })],
            timestamp: 1,
        });
        let events = vec![
            SessionEvent::AgentStart,
            SessionEvent::TurnStart,
            SessionEvent::MessageStart {
                message: user.clone(),
            },
            SessionEvent::MessageEnd {
                message: user,
                entry_id: Some("aaaaaaaa".to_owned()),
            },
            SessionEvent::MessageStart {
                message: AgentMessage::Assistant(assistant("")),
            },
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextStart { content_index: 0 },
            },
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta {
                    content_index: 0,
                    delta: "Hi".to_owned(),
                },
            },
            SessionEvent::MessageEnd {
                message: AgentMessage::Assistant(assistant("Hi")),
                entry_id: Some("bbbbbbbb".to_owned()),
            },
            SessionEvent::QueueUpdate {
                steering: Vec::new(),
                follow_up: Vec::new(),
            },
            SessionEvent::AgentEnd { message_count: 2 },
        ];
        let mut converter = PiEvents::new(mode);
        events
            .iter()
            .filter_map(|event| converter.convert(event))
            .collect()
    }

    #[test]
    fn delta_only_mode_leaves_the_partial_out_and_rebuilds_agent_end() {
        let lines = run(PartialMode::DeltaOnly);
        assert_eq!(lines.len(), 9, "queue_update is daemon-only");
        assert_eq!(
            lines[6],
            json!({"type": "message_update", "assistantMessageEvent":
                {"type": "text_delta", "contentIndex": 0, "delta": "Hi"}})
        );
        assert!(lines[3].get("entryId").is_none());
        let end = &lines[8];
        assert_eq!(end["type"], "agent_end");
        assert_eq!(end["messages"].as_array().unwrap().len(), 2);
        assert_eq!(end["messages"][1]["content"][0]["text"], "Hi");
    }

    #[test]
    fn full_mode_repeats_the_cumulative_partial() {
        let lines = run(PartialMode::Full);
        let update = &lines[6];
        assert_eq!(update["message"]["content"][0]["text"], "Hi");
        assert_eq!(
            update["assistantMessageEvent"]["partial"]["content"][0]["text"],
            "Hi"
        );
        assert_eq!(lines[5]["message"]["content"][0]["text"], "");
    }
}
