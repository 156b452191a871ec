//! The OpenAI Responses wire format (`POST /v1/responses`, `stream: true`): named events,
//! each with a growing `sequence_number`: `response.created`, `response.in_progress`, per
//! output item `response.output_item.added` … `response.output_item.done` (reasoning items
//! with `response.reasoning_summary_*` events and `encrypted_content` when the request's
//! `include` asks for `reasoning.encrypted_content`; messages with `response.content_part.*`
//! and `response.output_text.*`; function calls with `response.function_call_arguments.*`),
//! then `response.completed`, or `response.incomplete` (`incomplete_details.reason`
//! `max_output_tokens` for a length stop, `content_filter` for a refusal), or
//! `response.failed` for an in-stream error. There is no `[DONE]`.

use serde_json::{Value, json};

use super::script::{Block, Reply, ScriptStop};
use super::{CREATED_AT, RenderContext, ScriptErrorKind, openai_chat, sse_event};

/// An output-text delta whose JSON breaks off.
pub(super) const MALFORMED_EVENT: &str = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n";

/// The SSE events answering one request with `reply`.
pub(super) fn render(reply: &Reply, context: &RenderContext<'_>) -> Vec<String> {
    let n = context.request_number;
    let include_encrypted = context.body["include"]
        .as_array()
        .is_some_and(|include| include.contains(&json!("reasoning.encrypted_content")));
    let mut events = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(events.len());
        events.push(sse_event(name, &data));
    };
    let response = |status: &str, output: &[Value], usage: Value| {
        json!({
            "id": format!("resp_scripted_{n:04}"),
            "object": "response",
            "created_at": CREATED_AT,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "model": context.model,
            "output": output,
            "parallel_tool_calls": true,
            "previous_response_id": null,
            "usage": usage,
        })
    };
    push(
        "response.created",
        json!({"response": response("in_progress", &[], Value::Null)}),
    );
    push(
        "response.in_progress",
        json!({"response": response("in_progress", &[], Value::Null)}),
    );
    let mut output = Vec::new();
    for (output_index, block) in reply.blocks.iter().enumerate() {
        let done_item = match block {
            Block::Thinking { text, signature } => {
                let item_id = format!("rs_scripted_{n:04}_{output_index}");
                push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {"id": item_id, "type": "reasoning", "summary": []}}),
                );
                let at =
                    json!({"item_id": item_id, "output_index": output_index, "summary_index": 0});
                let mut summary = Vec::new();
                if !text.is_empty() {
                    let part = |text: &str| json!({"type": "summary_text", "text": text});
                    push(
                        "response.reasoning_summary_part.added",
                        merge(&at, json!({"part": part("")})),
                    );
                    for piece in reply.deltas(text) {
                        push(
                            "response.reasoning_summary_text.delta",
                            merge(&at, json!({"delta": piece})),
                        );
                    }
                    push(
                        "response.reasoning_summary_text.done",
                        merge(&at, json!({"text": text})),
                    );
                    push(
                        "response.reasoning_summary_part.done",
                        merge(&at, json!({"part": part(text)})),
                    );
                    summary.push(part(text));
                }
                let mut item = json!({"id": item_id, "type": "reasoning", "summary": summary});
                if include_encrypted {
                    item["encrypted_content"] = match signature {
                        Some(signature) => json!(signature),
                        None => json!(format!("scripted-encrypted-{item_id}")),
                    };
                }
                item
            }
            Block::RedactedThinking { data } => {
                // Opaque reasoning: an item with no summary, only its encrypted content.
                let item_id = format!("rs_scripted_{n:04}_{output_index}");
                push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": {"id": item_id, "type": "reasoning", "summary": []}}),
                );
                json!({"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": data})
            }
            Block::Text { text } => {
                let item_id = format!("msg_scripted_{n:04}_{output_index}");
                let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []});
                let message = |status: &str, content: Value| json!({"id": item_id, "type": "message", "status": status, "role": "assistant", "content": content});
                push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": message("in_progress", json!([]))}),
                );
                let at =
                    json!({"item_id": item_id, "output_index": output_index, "content_index": 0});
                push(
                    "response.content_part.added",
                    merge(&at, json!({"part": part("")})),
                );
                for piece in reply.deltas(text) {
                    push(
                        "response.output_text.delta",
                        merge(&at, json!({"delta": piece, "logprobs": []})),
                    );
                }
                push(
                    "response.output_text.done",
                    merge(&at, json!({"text": text, "logprobs": []})),
                );
                push(
                    "response.content_part.done",
                    merge(&at, json!({"part": part(text)})),
                );
                message("completed", json!([part(text)]))
            }
            Block::ToolCall {
                id,
                name,
                arguments,
                splits,
            } => {
                // pi keeps Responses tool-call ids as `call_id|item_id`.
                let (call_id, item_id) = match id.split_once('|') {
                    Some((call_id, item_id)) => (call_id.to_owned(), item_id.to_owned()),
                    None => (id.clone(), format!("fc_scripted_{n:04}_{output_index}")),
                };
                let call = |status: &str, arguments: &str| {
                    json!({
                        "id": item_id,
                        "type": "function_call",
                        "status": status,
                        "call_id": call_id,
                        "name": name,
                        "arguments": arguments,
                    })
                };
                push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": call("in_progress", "")}),
                );
                let at = json!({"item_id": item_id, "output_index": output_index});
                for piece in reply.argument_deltas(arguments, splits.as_deref()) {
                    push(
                        "response.function_call_arguments.delta",
                        merge(&at, json!({"delta": piece})),
                    );
                }
                push(
                    "response.function_call_arguments.done",
                    merge(&at, json!({"arguments": arguments})),
                );
                call("completed", arguments)
            }
        };
        push(
            "response.output_item.done",
            json!({"output_index": output_index, "item": done_item}),
        );
        output.push(done_item);
    }
    if let Some((kind, message)) = &reply.stream_error {
        let mut failed = response("failed", &output, Value::Null);
        let code = match kind {
            ScriptErrorKind::InvalidRequest => "invalid_prompt",
            ScriptErrorKind::Authentication => "invalid_api_key",
            ScriptErrorKind::RateLimit => "rate_limit_exceeded",
            ScriptErrorKind::Overloaded | ScriptErrorKind::Server => "server_error",
            ScriptErrorKind::ContextOverflow => "context_length_exceeded",
        };
        failed["error"] = json!({"code": code, "message": message});
        push("response.failed", json!({"response": failed}));
        return events;
    }
    let usage = reply.usage;
    let input_tokens = usage.input + usage.cache_read;
    let usage = json!({
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": input_tokens + usage.output,
    });
    let incomplete_reason = match reply.stop_reason() {
        ScriptStop::Stop | ScriptStop::ToolUse => None,
        ScriptStop::Length => Some("max_output_tokens"),
        ScriptStop::Refusal => Some("content_filter"),
    };
    match incomplete_reason {
        None => push(
            "response.completed",
            json!({"response": response("completed", &output, usage)}),
        ),
        Some(reason) => {
            let mut incomplete = response("incomplete", &output, usage);
            incomplete["incomplete_details"] = json!({"reason": reason});
            push("response.incomplete", json!({"response": incomplete}));
        }
    }
    events
}

/// The JSON body of an HTTP error; `message: None` uses the API's own wording for `kind`.
pub(super) fn error_body(kind: ScriptErrorKind, message: Option<&str>) -> Value {
    match (kind, message) {
        (ScriptErrorKind::ContextOverflow, None) => json!({"error": {
            "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }}),
        (kind, message) => openai_chat::error_body(kind, message),
    }
}

/// `base` with the fields of `extra` added.
fn merge(base: &Value, extra: Value) -> Value {
    let mut merged = base.clone();
    if let (Some(merged), Value::Object(extra)) = (merged.as_object_mut(), extra) {
        merged.extend(extra);
    }
    merged
}
