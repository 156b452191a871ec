//! Conversions between internal types (pi-agent, pi-llm) and wire types (pi-protocol), used
//! by the session layer (events, entries) and the RPC layer alike.
//!
//! Both sides use pi's JSON shapes, so rare conversions transcode through serde. The
//! per-token ones (stream deltas) are explicit, field by field. Converting agent events is
//! explicit too: wire events drop what pi repeats needlessly (the cumulative partial message)
//! and add what clients need (entry ids).

use pi_agent::{AgentEvent, AgentMessage, ToolOutput};
use pi_llm::StreamEvent;
use pi_protocol::v1::message::AssistantMessageEvent;
use pi_protocol::v1::{ResourceDiagnostic, ResourceDiagnosticKind, SessionEvent};

use crate::compaction::CompactionResult;
use pi_coding::{Diagnostic, DiagnosticKind};
use pi_protocol::v1::message::{self as wire_message, ToolResult};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a value could not be converted (a bug: both sides share one JSON shape).
#[derive(Debug, thiserror::Error)]
#[error("cannot convert {what}: {message}")]
pub struct WireError {
    what: &'static str,
    message: String,
}

impl WireError {
    /// A conversion failure of `what`.
    pub fn new(what: &'static str, message: impl std::fmt::Display) -> Self {
        tracing::error!(what, %message, "wire conversion failed");
        WireError {
            what,
            message: message.to_string(),
        }
    }
}

/// Converts between two types with the same JSON shape.
pub fn transcode<From: Serialize, To: DeserializeOwned>(
    what: &'static str,
    value: &From,
) -> Result<To, WireError> {
    // Through text, not a `Value`, which would cost a tree of allocations. (Tool-call
    // arguments lose their exact text all the same, in serde's buffering of tagged enums:
    // `message_to_wire` copies them over.)
    let json = serde_json::to_string(value).map_err(|error| WireError::new(what, error))?;
    serde_json::from_str(&json).map_err(|error| WireError::new(what, error))
}

/// An internal message as a wire message. Tool-call arguments keep the model's exact text
/// (serde cannot carry it through the tagged enums on the way: it is copied over).
pub fn message_to_wire(message: &AgentMessage) -> Result<wire_message::AgentMessage, WireError> {
    let mut wire: wire_message::AgentMessage = transcode("message", message)?;
    if let (AgentMessage::Assistant(from), wire_message::AgentMessage::Assistant(to)) =
        (message, &mut wire)
    {
        keep_argument_texts(&from.content, &mut to.content);
    }
    Ok(wire)
}

/// A wire message as an internal message (tool-call arguments as in
/// [`message_to_wire`]).
pub fn message_from_wire(message: &wire_message::AgentMessage) -> Result<AgentMessage, WireError> {
    let mut internal: AgentMessage = transcode("message", message)?;
    if let (wire_message::AgentMessage::Assistant(from), AgentMessage::Assistant(to)) =
        (message, &mut internal)
    {
        for (from, to) in from.content.iter().zip(&mut to.content) {
            if let (
                wire_message::AssistantContent::ToolCall(from),
                pi_llm::AssistantContent::ToolCall(to),
            ) = (from, to)
            {
                to.arguments = from.arguments.clone();
            }
        }
    }
    Ok(internal)
}

/// Copies each tool call's arguments (with their exact text) from `from` to the same block of
/// `to`, its transcoded copy.
fn keep_argument_texts(
    from: &[pi_llm::AssistantContent],
    to: &mut [wire_message::AssistantContent],
) {
    for (from, to) in from.iter().zip(to) {
        if let (
            pi_llm::AssistantContent::ToolCall(from),
            wire_message::AssistantContent::ToolCall(to),
        ) = (from, to)
        {
            to.arguments = from.arguments.clone();
        }
    }
}

/// A final result: pi's details rule (see `ToolOutput::reported_details`).
fn tool_result(output: &ToolOutput) -> Result<ToolResult, WireError> {
    Ok(ToolResult {
        content: transcode("tool result content", &output.content)?,
        details: output.reported_details(),
    })
}

/// A partial result: its details as the tool set them.
fn partial_tool_result(output: &ToolOutput) -> Result<ToolResult, WireError> {
    Ok(ToolResult {
        content: transcode("tool result content", &output.content)?,
        details: output.partial_details(),
    })
}

/// An agent event as a session event. `entry_id` is the stored entry of a `message_end`.
/// Takes the event by value: the per-token deltas move into the wire event.
pub fn event_to_wire(
    event: AgentEvent,
    entry_id: Option<String>,
) -> Result<SessionEvent, WireError> {
    if let AgentEvent::MessageUpdate { event } = event {
        return Ok(SessionEvent::MessageUpdate {
            assistant_message_event: stream_event_into_wire(event)?,
        });
    }
    let event = &event;
    Ok(match event {
        AgentEvent::AgentStart => SessionEvent::AgentStart,
        AgentEvent::AgentEnd { messages } => SessionEvent::AgentEnd {
            message_count: messages.len() as u32,
        },
        AgentEvent::TurnStart => SessionEvent::TurnStart,
        AgentEvent::TurnEnd {
            message,
            tool_results,
        } => SessionEvent::TurnEnd {
            message: {
                let mut wire: wire_message::AssistantMessage =
                    transcode("assistant message", message)?;
                keep_argument_texts(&message.content, &mut wire.content);
                wire
            },
            tool_results: transcode("tool results", tool_results)?,
        },
        AgentEvent::MessageStart { message } => SessionEvent::MessageStart {
            message: message_to_wire(message)?,
        },
        // Handled above, by value; kept so the match stays exhaustive.
        AgentEvent::MessageUpdate { event } => SessionEvent::MessageUpdate {
            assistant_message_event: transcode("stream event", event)?,
        },
        AgentEvent::MessageEnd { message } => SessionEvent::MessageEnd {
            message: message_to_wire(message)?,
            entry_id,
        },
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => SessionEvent::ToolExecutionStart {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.clone(),
        },
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
        } => SessionEvent::ToolExecutionUpdate {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.clone(),
            partial_result: partial_tool_result(partial_result)?,
        },
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
        } => SessionEvent::ToolExecutionEnd {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            result: tool_result(result)?,
            is_error: result.is_error,
        },
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => SessionEvent::QueueUpdate {
            steering: steering.clone(),
            follow_up: follow_up.clone(),
        },
        AgentEvent::ToolsWaitStart {
            sources,
            timeout_ms,
        } => SessionEvent::ToolsWaitStart {
            sources: sources.clone(),
            timeout_ms: *timeout_ms,
        },
        AgentEvent::ToolsWaitEnd { not_ready, aborted } => SessionEvent::ToolsWaitEnd {
            not_ready: not_ready.clone(),
            aborted: *aborted,
        },
    })
}

/// A stream event as a wire event, moving its text; the per-token variants without serde.
pub fn stream_event_into_wire(event: StreamEvent) -> Result<AssistantMessageEvent, WireError> {
    Ok(match event {
        StreamEvent::Start => AssistantMessageEvent::Start,
        StreamEvent::TextStart { content_index } => {
            AssistantMessageEvent::TextStart { content_index }
        }
        StreamEvent::TextDelta {
            content_index,
            delta,
        } => AssistantMessageEvent::TextDelta {
            content_index,
            delta,
        },
        StreamEvent::TextEnd {
            content_index,
            content,
            signature,
        } => AssistantMessageEvent::TextEnd {
            content_index,
            content,
            signature,
        },
        StreamEvent::ThinkingStart { content_index } => {
            AssistantMessageEvent::ThinkingStart { content_index }
        }
        StreamEvent::ThinkingDelta {
            content_index,
            delta,
        } => AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
        },
        StreamEvent::ThinkingEnd {
            content_index,
            content,
            signature,
            redacted,
        } => AssistantMessageEvent::ThinkingEnd {
            content_index,
            content,
            signature,
            redacted,
        },
        StreamEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        } => AssistantMessageEvent::ToolcallStart {
            content_index,
            id,
            tool_name,
        },
        StreamEvent::ToolcallDelta {
            content_index,
            delta,
            arguments,
        } => AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta,
            arguments,
        },
        StreamEvent::ToolcallEnd {
            content_index,
            tool_call,
        } => AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call: wire_message::ToolCall {
                id: tool_call.id,
                name: tool_call.name,
                arguments: tool_call.arguments,
                thought_signature: tool_call.thought_signature,
            },
        },
        StreamEvent::Done { .. } | StreamEvent::Error { .. } => transcode("stream event", &event)?,
    })
}

/// A running tool's partial output as a wire tool result.
pub fn partial_output_to_wire(output: &ToolOutput) -> Result<ToolResult, WireError> {
    partial_tool_result(output)
}

/// A compaction's result as pi's wire `CompactionResult`.
pub fn compaction_result_to_wire(result: &CompactionResult) -> pi_protocol::v1::CompactionResult {
    pi_protocol::v1::CompactionResult {
        summary: result.summary.clone(),
        first_kept_entry_id: result.first_kept_entry_id.clone(),
        tokens_before: result.tokens_before,
        details: result.details_value(),
    }
}

/// The wire form of a diagnostic.
pub fn diagnostic(diagnostic: &Diagnostic) -> ResourceDiagnostic {
    ResourceDiagnostic {
        kind: match diagnostic.kind {
            DiagnosticKind::Warning => ResourceDiagnosticKind::Warning,
            DiagnosticKind::Collision => ResourceDiagnosticKind::Collision,
            DiagnosticKind::NotApplied => ResourceDiagnosticKind::NotApplied,
        },
        path: diagnostic.path.display().to_string(),
        key: diagnostic.key.clone(),
        message: diagnostic.message.clone(),
    }
}
