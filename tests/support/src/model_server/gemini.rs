//! The Gemini wire format (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`):
//! `data:` lines separated by CRLF as Google sends them, each a `GenerateContentResponse`
//! with one part in `candidates[0].content.parts`: `{text}`, `{text, thought: true}` (the
//! last piece of a signed thought carries `thoughtSignature`) or `{functionCall: {name, args,
//! id}}` with the arguments whole. The last chunk adds `finishReason`, `usageMetadata` (zero
//! counts omitted) and there is no terminator. In-stream failures are a
//! `data: {"error":{code,message,status}}` line; error bodies have the same shape.

use serde_json::{Value, json};

use super::script::{Block, Reply, ScriptStop};
use super::{RenderContext, ScriptErrorKind};

/// A chunk whose JSON breaks off.
pub(super) const MALFORMED_EVENT: &str =
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \r\n\r\n";

/// The SSE events answering one request with `reply`.
pub(super) fn render(reply: &Reply, context: &RenderContext<'_>) -> Vec<String> {
    let mut parts = Vec::new();
    for block in &reply.blocks {
        match block {
            Block::Thinking { text, signature } => {
                let mut pieces: Vec<Value> = reply
                    .deltas(text)
                    .into_iter()
                    .map(|piece| json!({"text": piece, "thought": true}))
                    .collect();
                if let Some(signature) = signature {
                    if pieces.is_empty() {
                        pieces.push(json!({"text": "", "thought": true}));
                    }
                    if let Some(last) = pieces.last_mut() {
                        last["thoughtSignature"] = json!(signature);
                    }
                }
                parts.extend(pieces.into_iter().map(|piece| (piece, None)));
            }
            // Gemini has no opaque reasoning block.
            Block::RedactedThinking { .. } => {}
            Block::Text { text } => {
                parts.extend(
                    reply
                        .deltas(text)
                        .into_iter()
                        .map(|piece| (json!({"text": piece}), None)),
                );
            }
            Block::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                let mut call = json!({"name": name});
                // Arguments that are not JSON are written verbatim, making the chunk invalid.
                let (args, raw) = match serde_json::from_str::<Value>(arguments) {
                    Ok(args) => (args, None),
                    Err(_) => (json!(RAW_ARGUMENTS), Some(arguments.as_str())),
                };
                call["args"] = args;
                if !id.is_empty() {
                    call["id"] = json!(id);
                }
                parts.push((json!({"functionCall": call}), raw));
            }
        }
    }
    let chunk = |part: Value| {
        json!({
            "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
            "modelVersion": context.model,
            "responseId": format!("scripted-{:04}", context.request_number),
        })
    };
    let mut chunks: Vec<(Value, Option<&str>)> = parts
        .into_iter()
        .map(|(part, raw)| (chunk(part), raw))
        .collect();
    let serialize = |(chunk, raw): &(Value, Option<&str>)| {
        let text = chunk.to_string();
        let text = match raw {
            Some(raw) => text.replacen(&format!("\"{RAW_ARGUMENTS}\""), raw, 1),
            None => text,
        };
        format!("data: {text}\r\n\r\n")
    };
    if let Some((kind, message)) = &reply.stream_error {
        let error = json!({"error": error_object(*kind, kind.typical_status(), message)});
        let mut events: Vec<String> = chunks.iter().map(serialize).collect();
        events.push(serialize(&(error, None)));
        return events;
    }
    if chunks.is_empty() {
        chunks.push((chunk(json!({"text": ""})), None));
    }
    let finish_reason = match reply.stop_reason() {
        ScriptStop::Stop | ScriptStop::ToolUse => "STOP",
        ScriptStop::Length => "MAX_TOKENS",
        ScriptStop::Refusal => "SAFETY",
    };
    let usage = reply.usage;
    let prompt_tokens = usage.input + usage.cache_read;
    let mut usage_metadata = serde_json::Map::new();
    for (field, count) in [
        ("promptTokenCount", prompt_tokens),
        (
            "candidatesTokenCount",
            usage.output.saturating_sub(usage.reasoning),
        ),
        ("totalTokenCount", prompt_tokens + usage.output),
        ("cachedContentTokenCount", usage.cache_read),
        ("thoughtsTokenCount", usage.reasoning),
    ] {
        if count > 0 {
            usage_metadata.insert(field.to_owned(), json!(count));
        }
    }
    if prompt_tokens > 0 {
        usage_metadata.insert(
            "promptTokensDetails".to_owned(),
            json!([{"modality": "TEXT", "tokenCount": prompt_tokens}]),
        );
    }
    if let Some((last, _)) = chunks.last_mut() {
        last["candidates"][0]["finishReason"] = json!(finish_reason);
        last["usageMetadata"] = Value::Object(usage_metadata);
    }
    chunks.iter().map(serialize).collect()
}

/// The JSON body of an HTTP error; `message: None` uses the API's own wording for `kind`.
pub(super) fn error_body(kind: ScriptErrorKind, message: Option<&str>, status: u16) -> Value {
    let message = message.unwrap_or(match kind {
        ScriptErrorKind::InvalidRequest => "Invalid JSON payload received.",
        ScriptErrorKind::Authentication => {
            "API key not valid. Please pass a valid API key."
        }
        ScriptErrorKind::RateLimit => "Resource has been exhausted (e.g. check quota).",
        ScriptErrorKind::Overloaded => "The model is overloaded. Please try again later.",
        ScriptErrorKind::Server => "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
        ScriptErrorKind::ContextOverflow => {
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        }
    });
    json!({"error": error_object(kind, status, message)})
}

/// Stands in for scripted arguments that are not JSON until the chunk is serialized.
const RAW_ARGUMENTS: &str = "scripted-model-server:raw-arguments";

fn error_object(kind: ScriptErrorKind, status: u16, message: &str) -> Value {
    let status_name = match kind {
        ScriptErrorKind::InvalidRequest | ScriptErrorKind::ContextOverflow => "INVALID_ARGUMENT",
        ScriptErrorKind::Authentication => "UNAUTHENTICATED",
        ScriptErrorKind::RateLimit => "RESOURCE_EXHAUSTED",
        ScriptErrorKind::Overloaded => "UNAVAILABLE",
        ScriptErrorKind::Server => "INTERNAL",
    };
    json!({"code": status, "message": message, "status": status_name})
}
