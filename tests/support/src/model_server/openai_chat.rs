//! The OpenAI Chat Completions wire format (`POST /v1/chat/completions`, `stream: true`):
//! `data:` lines of `chat.completion.chunk` objects whose `choices[0].delta` carries `role`,
//! `content`, `reasoning_content` (thinking) and `tool_calls` fragments; a chunk with the
//! `finish_reason`; the usage chunk (`"choices": []`) only when the request set
//! `stream_options.include_usage`; then `data: [DONE]`. In-stream failures are a
//! `data: {"error":{…}}` line and no `[DONE]`. Error bodies are `{"error":{message,type,param,code}}`.

use serde_json::{Value, json};

use super::script::{Block, Reply, ScriptStop};
use super::{CREATED_AT, RenderContext, ScriptErrorKind, sse_data};

/// A chunk whose JSON breaks off.
pub(super) const MALFORMED_EVENT: &str =
    "data: {\"id\":\"chatcmpl-malformed\",\"object\":\"chat.completion.chunk\",\"choices\":[{\n\n";

/// The SSE events answering one request with `reply`.
pub(super) fn render(reply: &Reply, context: &RenderContext<'_>) -> Vec<String> {
    let include_usage = context.body["stream_options"]["include_usage"] == json!(true);
    let chunk = |choices: Value| {
        let mut chunk = json!({
            "id": format!("chatcmpl-scripted-{:04}", context.request_number),
            "object": "chat.completion.chunk",
            "created": CREATED_AT,
            "model": context.model,
            "system_fingerprint": "fp_scripted",
            "service_tier": "default",
            "choices": choices,
        });
        if include_usage {
            // With include_usage every chunk carries `usage`, null until the last one.
            chunk["usage"] = Value::Null;
        }
        chunk
    };
    let choice = |delta: Value, finish_reason: Value| json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]);
    let mut deltas = vec![json!({"role": "assistant", "content": "", "refusal": null})];
    let mut tool_index = 0;
    for block in &reply.blocks {
        match block {
            Block::Thinking { text, .. } => {
                for piece in reply.deltas(text) {
                    deltas.push(json!({"reasoning_content": piece}));
                }
            }
            // Chat completions has no opaque reasoning to carry.
            Block::RedactedThinking { .. } => {}
            Block::Text { text } => {
                for piece in reply.deltas(text) {
                    deltas.push(json!({"content": piece}));
                }
            }
            Block::ToolCall {
                id,
                name,
                arguments,
                splits,
            } => {
                deltas.push(json!({"tool_calls": [{
                    "index": tool_index,
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]}));
                for piece in reply.argument_deltas(arguments, splits.as_deref()) {
                    deltas.push(json!({"tool_calls": [{
                        "index": tool_index,
                        "function": {"arguments": piece},
                    }]}));
                }
                tool_index += 1;
            }
        }
    }
    let mut events: Vec<String> = deltas
        .into_iter()
        .map(|delta| sse_data(&chunk(choice(delta, Value::Null))))
        .collect();
    if let Some((kind, message)) = &reply.stream_error {
        events.push(sse_data(&json!({"error": error_object(*kind, message)})));
        return events;
    }
    let finish_reason = match reply.stop_reason() {
        ScriptStop::Stop => "stop",
        ScriptStop::Length => "length",
        ScriptStop::ToolUse => "tool_calls",
        ScriptStop::Refusal => "content_filter",
    };
    events.push(sse_data(&chunk(choice(json!({}), json!(finish_reason)))));
    if include_usage {
        let usage = reply.usage;
        let prompt_tokens = usage.input + usage.cache_read;
        let mut usage_chunk = chunk(json!([]));
        usage_chunk["usage"] = json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": usage.output,
            "total_tokens": prompt_tokens + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": usage.reasoning,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        });
        events.push(sse_data(&usage_chunk));
    }
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The JSON body of an HTTP error; `message: None` uses the API's own wording for `kind`.
/// Shared by chat completions and Responses, which answer errors alike.
pub(super) fn error_body(kind: ScriptErrorKind, message: Option<&str>) -> Value {
    let message = message.unwrap_or(match kind {
        ScriptErrorKind::InvalidRequest => "Invalid value for 'messages': expected an array.",
        ScriptErrorKind::Authentication => {
            "Incorrect API key provided: sk-scrip*****. You can find your API key at \
             https://platform.openai.com/account/api-keys."
        }
        ScriptErrorKind::RateLimit => "Rate limit reached for requests. Please try again in 1s.",
        ScriptErrorKind::Overloaded => "The server is overloaded or not ready yet.",
        ScriptErrorKind::Server => {
            "The server had an error while processing your request. Sorry about that!"
        }
        ScriptErrorKind::ContextOverflow => {
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 131072 tokens. Please reduce the length of the messages."
        }
    });
    json!({"error": error_object(kind, message)})
}

/// `{message, type, param, code}` as OpenAI reports errors.
pub(super) fn error_object(kind: ScriptErrorKind, message: &str) -> Value {
    let (error_type, param, code) = match kind {
        ScriptErrorKind::InvalidRequest => ("invalid_request_error", Value::Null, Value::Null),
        ScriptErrorKind::Authentication => (
            "invalid_request_error",
            Value::Null,
            json!("invalid_api_key"),
        ),
        ScriptErrorKind::RateLimit => ("requests", Value::Null, json!("rate_limit_exceeded")),
        ScriptErrorKind::Overloaded | ScriptErrorKind::Server => {
            ("server_error", Value::Null, Value::Null)
        }
        ScriptErrorKind::ContextOverflow => (
            "invalid_request_error",
            json!("messages"),
            json!("context_length_exceeded"),
        ),
    };
    json!({"message": message, "type": error_type, "param": param, "code": code})
}
