//! The Anthropic Messages wire format (`POST /v1/messages`, `stream: true`): `message_start`,
//! a `ping`, per block `content_block_start` / `content_block_delta` (`text_delta`,
//! `thinking_delta` + `signature_delta`, `input_json_delta`) / `content_block_stop`, then
//! `message_delta` (stop reason, cumulative usage) and `message_stop`; in-stream failures are
//! `event: error`. Error bodies are `{"type":"error","error":{"type":…,"message":…}}`.

use serde_json::{Value, json};

use super::script::{Block, Reply, ScriptStop};
use super::{RenderContext, ScriptErrorKind, sse_event};

/// A `content_block_delta` whose JSON breaks off.
pub(super) const MALFORMED_EVENT: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\n\n";

/// The SSE events answering one request with `reply`.
pub(super) fn render(reply: &Reply, context: &RenderContext<'_>) -> Vec<String> {
    let usage = reply.usage;
    let mut events = vec![sse_event(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": format!("msg_scripted_{:04}", context.request_number),
                "type": "message",
                "role": "assistant",
                "model": context.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input,
                    "cache_creation_input_tokens": usage.cache_write,
                    "cache_read_input_tokens": usage.cache_read,
                    "output_tokens": usage.output.min(1),
                },
            },
        }),
    )];
    let ping = sse_event("ping", &json!({"type": "ping"}));
    if reply.blocks.is_empty() {
        events.push(ping.clone());
    }
    for (index, block) in reply.blocks.iter().enumerate() {
        let (content_block, deltas) = match block {
            Block::Thinking { text, signature } => {
                let mut deltas: Vec<Delta> = reply
                    .deltas(text)
                    .into_iter()
                    .map(|piece| Delta::new("thinking_delta", "thinking", piece))
                    .collect();
                if let Some(signature) = signature {
                    deltas.push(Delta::new("signature_delta", "signature", signature));
                }
                (json!({"type": "thinking", "thinking": ""}), deltas)
            }
            Block::RedactedThinking { data } => (
                json!({"type": "redacted_thinking", "data": data}),
                Vec::new(),
            ),
            Block::Text { text } => {
                let deltas = reply
                    .deltas(text)
                    .into_iter()
                    .map(|piece| Delta::new("text_delta", "text", piece))
                    .collect();
                (json!({"type": "text", "text": ""}), deltas)
            }
            Block::ToolCall {
                id,
                name,
                arguments,
                splits,
            } => {
                // The API opens every tool input with an empty fragment.
                let deltas = std::iter::once("")
                    .chain(reply.argument_deltas(arguments, splits.as_deref()))
                    .map(|piece| Delta::new("input_json_delta", "partial_json", piece))
                    .collect();
                let content_block =
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}});
                (content_block, deltas)
            }
        };
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        ));
        if index == 0 {
            // Like the API: one ping, right after the first block opened.
            events.push(ping.clone());
        }
        for delta in deltas {
            events.push(delta.event(index));
        }
        events.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    if let Some((kind, message)) = &reply.stream_error {
        events.push(sse_event(
            "error",
            &json!({"type": "error", "error": {"type": error_type(*kind), "message": message}}),
        ));
        return events;
    }
    let stop_reason = match reply.stop_reason() {
        ScriptStop::Stop => "end_turn",
        ScriptStop::Length => "max_tokens",
        ScriptStop::ToolUse => "tool_use",
        ScriptStop::Refusal => "refusal",
    };
    events.push(sse_event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {
                "input_tokens": usage.input,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "output_tokens": usage.output,
            },
        }),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    events
}

/// One `content_block_delta`: its `delta`'s type, the field that carries the piece, the piece.
struct Delta {
    kind: &'static str,
    field: &'static str,
    piece: String,
}

impl Delta {
    fn new(kind: &'static str, field: &'static str, piece: impl Into<String>) -> Delta {
        Delta {
            kind,
            field,
            piece: piece.into(),
        }
    }

    /// The event as the API writes it: compact JSON with `type` first, then `index`, then
    /// `delta` (`type` first again). (`json!` would sort the keys.)
    fn event(&self, index: usize) -> String {
        let Delta { kind, field, piece } = self;
        let piece = Value::String(piece.clone());
        format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"{kind}\",\"{field}\":{piece}}}}}\n\n"
        )
    }
}

/// The JSON body of an HTTP error; `message: None` uses the API's own wording for `kind`.
pub(super) fn error_body(
    kind: ScriptErrorKind,
    message: Option<&str>,
    context: &RenderContext<'_>,
) -> Value {
    let message = message.unwrap_or(match kind {
        ScriptErrorKind::InvalidRequest => "messages: field required",
        ScriptErrorKind::Authentication => "invalid x-api-key",
        ScriptErrorKind::RateLimit => {
            "This request would exceed the rate limit for your organization of 50 requests per minute."
        }
        ScriptErrorKind::Overloaded => "Overloaded",
        ScriptErrorKind::Server => "Internal server error",
        ScriptErrorKind::ContextOverflow => "prompt is too long: 213462 tokens > 200000 maximum",
    });
    json!({
        "type": "error",
        "error": {"type": error_type(kind), "message": message},
        "request_id": format!("req_scripted_{:04}", context.request_number),
    })
}

fn error_type(kind: ScriptErrorKind) -> &'static str {
    match kind {
        ScriptErrorKind::InvalidRequest | ScriptErrorKind::ContextOverflow => {
            "invalid_request_error"
        }
        ScriptErrorKind::Authentication => "authentication_error",
        ScriptErrorKind::RateLimit => "rate_limit_error",
        ScriptErrorKind::Overloaded => "overloaded_error",
        ScriptErrorKind::Server => "api_error",
    }
}
