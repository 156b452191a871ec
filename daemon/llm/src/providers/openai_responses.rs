//! `openai-responses`: the OpenAI Responses API (`POST {baseUrl}/responses`, SSE).
//!
//! Request: input items (user messages with `input_text`/`input_image`, assistant `message`
//! items with their ids, reasoning items sent back verbatim from the thinking signature,
//! `function_call` and `function_call_output` items), `store: false`, reasoning effort with
//! summaries and encrypted content, `prompt_cache_key` from the session. Tool-call ids are
//! `call_id|item_id`, so both halves round-trip.
//! Stream: `response.output_item.added|done` framing reasoning, message and function-call
//! items, their deltas (`reasoning_summary_text`, `output_text`, `refusal`,
//! `function_call_arguments`), then `response.completed`, `response.incomplete` or
//! `response.failed`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{base_max_tokens, data_url, header_list, parse_event_json};
use crate::assemble::Assembler;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, HttpRequest, RawTexts, Step};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::sse::SseEvent;
use crate::transform::transform_messages;
use crate::types::{AssistantContent, Message, UserContent};

/// The Responses wire format.
#[derive(Debug, Default)]
pub struct OpenAiResponsesProvider;

impl Provider for OpenAiResponsesProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        super::send(model, request, &options, ResponsesDecoder::default())
    }
}

fn supports_xhigh(model: &Model) -> bool {
    ["gpt-5.2", "gpt-5.3", "gpt-5.4"]
        .iter()
        .any(|tag| model.id.contains(tag))
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    // pi-ai's order of the body's keys: model, input, stream, prompt_cache_key, store,
    // max_output_tokens, tools, reasoning, include.
    let mut input = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        input.push(json!({"role": role, "content": system}));
    }
    let messages = transform_messages(&context.messages, model, None);
    convert_messages(&messages, &mut input);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    if let Some(session_id) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session_id));
    }
    if options.cache_retention == crate::provider::CacheRetention::Long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    body.insert("store".into(), json!(false));
    body.insert(
        "max_output_tokens".into(),
        json!(base_max_tokens(model, options)),
    );
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "name": tool.name, "description": tool.description,
                       "parameters": crate::schema::adapt(&tool.parameters, crate::schema::Dialect::OpenAi), "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        let level = options.thinking;
        if level == ThinkingLevel::Off {
            // pi 0.73.1: effort `none`, except from Copilot and for the GPT-5 family, which
            // pi's catalog says cannot think "off" (`thinkingLevelMap.off: null`): nothing.
            if model.provider != "github-copilot" && !model.id.starts_with("gpt-5") {
                body.insert("reasoning".into(), json!({"effort": "none"}));
            }
        } else {
            let effort = match level {
                ThinkingLevel::Off | ThinkingLevel::Minimal => "minimal",
                ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                ThinkingLevel::High => "high",
                ThinkingLevel::Xhigh if supports_xhigh(model) => "xhigh",
                ThinkingLevel::Xhigh => "high",
            };
            body.insert(
                "reasoning".into(),
                json!({"effort": effort, "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }

    let mut headers = header_list(model);
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("accept".into(), "text/event-stream".into()));
    if let Some(key) = &options.api_key {
        headers.push(("authorization".into(), format!("Bearer {}", key.expose())));
    }
    if model.provider == "github-copilot" {
        headers.extend(super::copilot_headers(&context.messages));
    }
    Ok(HttpRequest {
        url: format!("{}/responses", model.base_url.trim_end_matches('/')),
        headers,
        body: Value::Object(body),
        raw: RawTexts::default(),
        sign: None,
    })
}

pub(crate) fn convert_messages(messages: &[Message], input: &mut Vec<Value>) {
    for message in messages {
        match message {
            Message::User(user) => {
                input.push(json!({"role": "user", "content": user_parts(&user.content)}));
            }
            Message::Assistant(assistant) => {
                for block in &assistant.content {
                    match block {
                        AssistantContent::Thinking(thinking) => {
                            // The signature is the reasoning item as the API sent it.
                            let item = thinking
                                .thinking_signature
                                .as_deref()
                                .and_then(|signature| serde_json::from_str::<Value>(signature).ok())
                                .filter(|item| item["type"] == "reasoning");
                            if let Some(item) = item {
                                input.push(item);
                            }
                        }
                        AssistantContent::Text(text) if text.text.is_empty() => {}
                        AssistantContent::Text(text) => {
                            let mut item = json!({"type": "message", "role": "assistant",
                                "content": [{"type": "output_text", "text": text.text, "annotations": []}],
                                "status": "completed"});
                            if let Some(id) = text
                                .text_signature
                                .as_deref()
                                .filter(|id| id.starts_with("msg"))
                            {
                                item["id"] = json!(id);
                            }
                            input.push(item);
                        }
                        AssistantContent::ToolCall(call) => {
                            let (call_id, item_id) = split_id(&call.id);
                            let mut item = json!({"type": "function_call", "call_id": call_id,
                                "name": call.name, "arguments": call.arguments.to_json_string()});
                            if let Some(item_id) = item_id {
                                item["id"] = json!(item_id);
                            }
                            input.push(item);
                        }
                    }
                }
            }
            Message::ToolResult(result) => {
                let (call_id, _) = split_id(&result.tool_call_id);
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
                    .any(|b| matches!(b, UserContent::Image(_)));
                let output = match (text.is_empty(), has_images) {
                    (true, true) => "(see attached image)".to_owned(),
                    _ => text.join("\n"),
                };
                input.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
                if has_images {
                    let mut parts = vec![
                        json!({"type": "input_text", "text": "Attached image(s) from tool result:"}),
                    ];
                    parts.extend(
                        user_parts(&result.content)
                            .into_iter()
                            .filter(|p| p["type"] == "input_image"),
                    );
                    input.push(json!({"role": "user", "content": parts}));
                }
            }
        }
    }
}

/// `call_abc|fc_123` → (`call_abc`, Some(`fc_123`)).
fn split_id(id: &str) -> (&str, Option<&str>) {
    match id.split_once('|') {
        Some((call_id, item_id)) if !item_id.is_empty() => (call_id, Some(item_id)),
        Some((call_id, _)) => (call_id, None),
        None => (id, None),
    }
}

fn user_parts(content: &[UserContent]) -> Vec<Value> {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => json!({"type": "input_text", "text": text.text}),
            UserContent::Image(image) => json!({"type": "input_image", "detail": "auto",
                "image_url": data_url(&image.mime_type, &image.data)}),
        })
        .collect()
}

/// Stream state: output items by `output_index`.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    items: HashMap<u64, usize>,
}

/// A `*.delta` event, the hot path (one per token), read straight from the event text:
/// building a `serde_json::Value` for it was most of the decoding time.
#[derive(Deserialize)]
struct DeltaEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    output_index: u64,
    #[serde(borrow)]
    delta: Cow<'a, str>,
}

impl Decoder for ResponsesDecoder {
    async fn on_event(&mut self, event: &SseEvent, out: &mut Assembler) -> Step {
        if event.event.ends_with(".delta")
            && let Ok(event) = serde_json::from_str::<DeltaEvent<'_>>(&event.data)
        {
            self.delta(&event.kind, event.output_index, &event.delta, out)
                .await;
            return Step::Continue;
        }
        let data = match parse_event_json(&event.data) {
            Ok(data) => data,
            Err(step) => return step,
        };
        let kind = data["type"].as_str().unwrap_or(event.event.as_str());
        let output_index = data["output_index"].as_u64().unwrap_or(0);
        // `response.created` (and the later whole-response events) carry the response's id.
        out.set_response_id(data["response"]["id"].as_str());
        match kind {
            "response.output_item.added" => {
                let item = &data["item"];
                let index = match item["type"].as_str().unwrap_or_default() {
                    "reasoning" => out.open_thinking().await,
                    "function_call" => {
                        let call_id = item["call_id"].as_str().unwrap_or_default();
                        let id = match item["id"].as_str() {
                            Some(item_id) => format!("{call_id}|{item_id}"),
                            None => call_id.to_owned(),
                        };
                        let name = item["name"].as_str().unwrap_or_default().to_owned();
                        let index = out.open_tool_call(id, name).await;
                        // pi sends no delta for the (usually empty) arguments of a new item.
                        if let Some(arguments) =
                            item["arguments"].as_str().filter(|text| !text.is_empty())
                        {
                            out.tool_args_delta(index, arguments).await;
                        }
                        index
                    }
                    "message" => out.open_text().await,
                    _ => return Step::Continue,
                };
                self.items.insert(output_index, index);
            }
            "response.reasoning_summary_part.added" => {
                if data["summary_index"].as_u64().unwrap_or(0) > 0
                    && let Some(&index) = self.items.get(&output_index)
                {
                    out.thinking_delta(index, "\n\n").await;
                }
            }
            "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta"
            | "response.output_text.delta"
            | "response.refusal.delta"
            | "response.function_call_arguments.delta" => {
                let delta = data["delta"].as_str().unwrap_or_default();
                self.delta(kind, output_index, delta, out).await;
            }
            "response.output_item.done" => {
                let Some(&index) = self.items.get(&output_index) else {
                    return Step::Continue;
                };
                let item = &data["item"];
                match item["type"].as_str().unwrap_or_default() {
                    "reasoning" => out.thinking_signature_delta(index, &item.to_string()),
                    "message" => {
                        if let Some(id) = item["id"].as_str() {
                            out.set_text_signature(index, id.to_owned());
                        }
                    }
                    "function_call" => {
                        // The complete text wins over the deltas (kept exactly, once valid).
                        let complete = item["arguments"].as_str().filter(|arguments| {
                            serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok()
                        });
                        if let Some(arguments) = complete {
                            out.set_tool_arguments_text(index, arguments);
                        }
                    }
                    _ => {}
                }
                out.close(index).await;
            }
            // The ChatGPT backend (Codex) ends with `response.done`.
            "response.completed" | "response.incomplete" | "response.done" => {
                let response = &data["response"];
                read_usage(&response["usage"], out);
                let reason = response["incomplete_details"]["reason"].as_str();
                return match (response["status"].as_str(), reason) {
                    (Some("incomplete"), Some("content_filter")) => Step::Fail {
                        message: "The response was blocked by the provider's content filter".into(),
                        failure: Failure::new(FailureKind::Other),
                    },
                    (Some("incomplete"), _) => Step::Done(DoneReason::Length),
                    _ if out.has_tool_calls() => Step::Done(DoneReason::ToolUse),
                    _ => Step::Done(DoneReason::Stop),
                };
            }
            "response.failed" => {
                let error = &data["response"]["error"];
                read_usage(&data["response"]["usage"], out);
                return fail(error["code"].as_str(), error["message"].as_str());
            }
            "error" => return fail(data["code"].as_str(), data["message"].as_str()),
            _ => {}
        }
        Step::Continue
    }
}

impl ResponsesDecoder {
    /// Text of the item at `output_index`: reasoning, message text or a refusal, or argument
    /// JSON; other deltas (audio, ...) are ignored.
    async fn delta(&mut self, kind: &str, output_index: u64, delta: &str, out: &mut Assembler) {
        let Some(&index) = self.items.get(&output_index) else {
            return;
        };
        match kind {
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.thinking_delta(index, delta).await
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                out.text_delta(index, delta).await
            }
            "response.function_call_arguments.delta" => out.tool_args_delta(index, delta).await,
            _ => {}
        }
    }
}

fn fail(code: Option<&str>, message: Option<&str>) -> Step {
    let message = match (code, message) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (Some(code), None) => code.to_owned(),
        (None, None) => "the response failed without a reason".to_owned(),
    };
    Step::Fail {
        failure: Failure::new(super::openai_error_kind(code, None, &message)),
        message,
    }
}

fn read_usage(usage: &Value, out: &mut Assembler) {
    if !usage.is_object() {
        return;
    }
    let input = usage["input_tokens"].as_u64().unwrap_or(0);
    let cached = usage["input_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    let usage_out = out.usage_mut();
    usage_out.input = input.saturating_sub(cached);
    usage_out.cache_read = cached;
    usage_out.output = usage["output_tokens"].as_u64().unwrap_or(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str) -> Model {
        serde_json::from_value(json!({
            "id": id, "name": id, "api": "openai-responses", "provider": "openai",
            "baseUrl": "https://api.openai.com/v1", "reasoning": true, "input": ["text"],
            "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
            "contextWindow": 1000, "maxTokens": 100
        }))
        .unwrap()
    }

    #[test]
    fn thinking_off_asks_for_no_reasoning_as_pi_does() {
        let options = StreamOptions {
            thinking: ThinkingLevel::Off,
            ..StreamOptions::default()
        };
        let body = |id: &str| {
            build_request(&model(id), &Context::default(), &options)
                .unwrap()
                .body
        };
        // A reasoning model that can think "off": effort none.
        assert_eq!(body("o4-mini")["reasoning"], json!({"effort": "none"}));
        // The GPT-5 family cannot (pi's catalog): no reasoning field at all.
        assert!(body("gpt-5-mini").get("reasoning").is_none());
        assert!(body("gpt-5-mini").get("include").is_none());
    }
}
