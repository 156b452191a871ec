//! `mistral-conversations`: Mistral's chat API as pi 0.73.1 calls it through Mistral's SDK
//! (`POST {baseUrl}/v1/chat/completions`, SSE).
//!
//! Request (pi's bytes, recorded against a stub): `model`, `max_tokens`, `stream`, `messages`
//! (the system prompt first; user content as `text`/`image_url` parts; assistant text and
//! thinking as content parts — thinking as `{"type": "thinking", "thinking": [{text}]}` — and
//! `tool_calls`; tool results as `role: tool` with text and image parts, errors prefixed
//! `[tool error]`), `tools` (`strict: false`), then `prompt_mode: reasoning` for Magistral-style
//! reasoning models or `reasoning_effort` for the models that take one. Tool-call ids are
//! Mistral's nine alphanumeric characters; the session rides in `x-affinity` (its KV-cache
//! reuse). The stream is chat completions' chunks, whose content may be a list of text and
//! thinking parts ([`CompletionsDecoder`] reads both).

use serde_json::{Map, Value, json};

use super::openai_completions::{CompletionsDecoder, mistral_tool_id};
use super::{base_max_tokens, data_url, header_list};
use crate::event::AssistantStream;
use crate::http::{HttpRequest, RawTexts};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::transform::transform_messages;
use crate::types::{AssistantContent, Message, UserContent};

/// Mistral's wire format.
#[derive(Debug, Default)]
pub struct MistralProvider;

impl Provider for MistralProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        super::send(model, request, &options, CompletionsDecoder::default())
    }
}

/// The models that take `reasoning_effort` instead of `prompt_mode` (pi's list).
fn uses_reasoning_effort(model: &Model) -> bool {
    [
        "mistral-small-2603",
        "mistral-small-latest",
        "mistral-medium-3.5",
    ]
    .contains(&model.id.as_str())
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let images = model.accepts_images();
    let mut messages = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    let transformed = transform_messages(&context.messages, model, Some(mistral_tool_id));
    convert_messages(&transformed, images, &mut messages);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("max_tokens".into(), json!(base_max_tokens(model, options)));
    body.insert("stream".into(), json!(true));
    body.insert("messages".into(), Value::Array(messages));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {"name": tool.name,
                    "description": tool.description, "parameters": tool.parameters,
                    "strict": false}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning && options.thinking != ThinkingLevel::Off {
        if uses_reasoning_effort(model) {
            body.insert("reasoning_effort".into(), json!("high"));
        } else {
            body.insert("prompt_mode".into(), json!("reasoning"));
        }
    }
    let mut headers = header_list(model);
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("accept".into(), "text/event-stream".into()));
    if let Some(key) = &options.api_key {
        headers.push(("authorization".into(), format!("Bearer {}", key.expose())));
    }
    if let Some(session_id) = &options.session_id
        && !headers.iter().any(|(name, _)| name == "x-affinity")
    {
        headers.push(("x-affinity".into(), session_id.clone()));
    }
    Ok(HttpRequest {
        url: format!(
            "{}/v1/chat/completions",
            model.base_url.trim_end_matches('/')
        ),
        headers,
        body: Value::Object(body),
        raw: RawTexts::default(),
        sign: None,
    })
}

fn image_part(mime_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": data_url(mime_type, data)})
}

fn convert_messages(messages: &[Message], images: bool, out: &mut Vec<Value>) {
    for message in messages {
        match message {
            Message::User(user) => {
                let had_images = user
                    .content
                    .iter()
                    .any(|block| matches!(block, UserContent::Image(_)));
                let parts: Vec<Value> = user
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        UserContent::Text(text) => Some(json!({"type": "text", "text": text.text})),
                        UserContent::Image(image) if images => {
                            Some(image_part(&image.mime_type, &image.data))
                        }
                        UserContent::Image(_) => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": parts}));
                } else if had_images {
                    out.push(json!({"role": "user",
                        "content": "(image omitted: model does not support images)"}));
                }
            }
            Message::Assistant(assistant) => {
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantContent::Text(text) if !text.text.trim().is_empty() => {
                            parts.push(json!({"type": "text", "text": text.text}));
                        }
                        AssistantContent::Thinking(thinking)
                            if !thinking.thinking.trim().is_empty() =>
                        {
                            parts.push(json!({"type": "thinking",
                                "thinking": [{"type": "text", "text": thinking.thinking}]}));
                        }
                        AssistantContent::ToolCall(call) => calls.push(json!({"id": call.id,
                            "type": "function", "function": {"name": call.name,
                            "arguments": call.arguments.to_json_string()}})),
                        AssistantContent::Text(_) | AssistantContent::Thinking(_) => {}
                    }
                }
                if parts.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut sent = json!({"role": "assistant"});
                if !parts.is_empty() {
                    sent["content"] = Value::Array(parts);
                }
                if !calls.is_empty() {
                    sent["tool_calls"] = Value::Array(calls);
                }
                out.push(sent);
            }
            Message::ToolResult(result) => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        UserContent::Text(text) => Some(text.text.as_str()),
                        UserContent::Image(_) => None,
                    })
                    .collect();
                let has_images = result
                    .content
                    .iter()
                    .any(|block| matches!(block, UserContent::Image(_)));
                let mut parts = vec![json!({"type": "text",
                    "text": tool_result_text(&text.join("\n"), has_images, images, result.is_error)})];
                if images {
                    parts.extend(result.content.iter().filter_map(|block| match block {
                        UserContent::Image(image) => {
                            Some(image_part(&image.mime_type, &image.data))
                        }
                        UserContent::Text(_) => None,
                    }));
                }
                out.push(json!({"role": "tool", "tool_call_id": result.tool_call_id,
                    "name": result.tool_name, "content": parts}));
            }
        }
    }
}

/// A tool result's text as pi words it for Mistral.
fn tool_result_text(text: &str, has_images: bool, images: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let error = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let omitted = if has_images && !images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{error}{trimmed}{omitted}");
    }
    match (has_images, images) {
        (true, true) => format!("{error}(see attached image)"),
        (true, false) => format!("{error}(image omitted: model does not support images)"),
        (false, _) => format!("{error}(no tool output)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{StopReason, ToolResultMessage};

    fn magistral() -> Model {
        Model {
            id: "magistral-medium-latest".into(),
            name: "Magistral Medium".into(),
            api: "mistral-conversations".into(),
            provider: "mistral".into(),
            base_url: "https://api.mistral.ai".into(),
            reasoning: true,
            input: vec![crate::model::InputKind::Text],
            cost: Default::default(),
            context_window: 128_000,
            max_tokens: 40_000,
            headers: Default::default(),
            compat: None,
        }
    }

    /// Magistral streams its thinking as content parts; a tool call follows.
    #[tokio::test]
    async fn thinking_parts_text_and_tool_calls_decode() {
        let chunks = [
            json!({"id": "r1", "choices": [{"index": 0, "delta": {"role": "assistant",
                "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me "}]}]}}]}),
            json!({"id": "r1", "choices": [{"index": 0, "delta": {
                "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "look."}]}]}}]}),
            json!({"id": "r1", "choices": [{"index": 0, "delta": {"content": "Reading it."}}]}),
            json!({"id": "r1", "choices": [{"index": 0, "delta": {"tool_calls": [{"id": "abcDEF123",
                "index": 0, "function": {"name": "read", "arguments": "{\"path\": \"a\"}"}}]},
                "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}}),
        ];
        let mut body: String = chunks
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect();
        body.push_str("data: [DONE]\n\n");
        let message = crate::http::replay(
            &magistral(),
            vec![bytes::Bytes::from(body)],
            0,
            CompletionsDecoder::default(),
        )
        .result()
        .await;
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{message:?}");
        let thinking: Vec<&str> = message
            .content
            .iter()
            .filter_map(|block| match block {
                AssistantContent::Thinking(thinking) => Some(thinking.thinking.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, ["Let me look."]);
        assert_eq!(message.text(), "Reading it.");
        let call = message.tool_calls().next().unwrap();
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("abcDEF123", "read")
        );
        assert_eq!(message.usage.input, 12);
        assert_eq!(message.usage.output, 7);

        // The reply goes back as Mistral takes it: thinking and text as parts, the call, and
        // its result (an error, prefixed as pi prefixes it).
        let result = Message::ToolResult(ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: "read".into(),
            content: vec![UserContent::text("no such file")],
            details: None,
            is_error: true,
            timestamp: 2,
        });
        let context = Context {
            system_prompt: None,
            messages: vec![Message::Assistant(message.clone()), result],
            tools: Vec::new(),
        };
        let body = build_request(&magistral(), &context, &StreamOptions::default())
            .unwrap()
            .body;
        assert_eq!(
            body["messages"][0],
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "Let me look."}]},
                {"type": "text", "text": "Reading it."}],
                "tool_calls": [{"id": "abcDEF123", "type": "function",
                    "function": {"name": "read", "arguments": "{\"path\": \"a\"}"}}]})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "tool", "tool_call_id": "abcDEF123", "name": "read",
                "content": [{"type": "text", "text": "[tool error] no such file"}]})
        );
    }
}
