//! `google-generative-ai`: Gemini's `streamGenerateContent` with `alt=sse`
//! (`POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`).
//!
//! Request: `contents` of `user`/`model` turns (thinking as `thought` parts, function calls
//! and grouped function responses), `systemInstruction`, `functionDeclarations` with
//! `parametersJsonSchema`, `thinkingConfig` as a budget (2.5) or a level (3).
//! Stream: one `GenerateContentResponse` per event, whose parts are text, thought text (with
//! `thoughtSignature`) and whole `functionCall`s; `finishReason` and `usageMetadata` arrive on
//! the last events; the body simply ends.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::{base_max_tokens, header_list, parse_event_json};
use crate::assemble::Assembler;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, HttpRequest, RawTexts, Step, stream_cut};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::sse::SseEvent;
use crate::transform::transform_messages;
use crate::types::{AssistantContent, Message, UserContent};

/// The Gemini wire format.
#[derive(Debug, Default)]
pub struct GoogleProvider;

impl Provider for GoogleProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        super::send(model, request, &options, GoogleDecoder::default())
    }
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let mut body = Map::new();
    let mut raw = RawTexts::default();
    let messages = transform_messages(&context.messages, model, None);
    body.insert(
        "contents".into(),
        Value::Array(convert_messages(&messages, &mut raw)),
    );
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            // As Google's SDK sends pi's string: a user content.
            json!({"parts": [{"text": system}], "role": "user"}),
        );
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description,
                       "parametersJsonSchema": crate::schema::adapt(&tool.parameters, crate::schema::Dialect::Google)})
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut generation = Map::new();
    generation.insert(
        "maxOutputTokens".into(),
        json!(base_max_tokens(model, options)),
    );
    if model.reasoning && options.thinking != ThinkingLevel::Off {
        generation.insert(
            "thinkingConfig".into(),
            thinking_config(model, options.thinking, &options.thinking_budgets),
        );
    }
    body.insert("generationConfig".into(), Value::Object(generation));

    let mut headers = header_list(model);
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("accept".into(), "text/event-stream".into()));
    if let Some(key) = &options.api_key {
        headers.push(("x-goog-api-key".into(), key.expose().to_owned()));
    }
    let id = model.id.strip_prefix("models/").unwrap_or(&model.id);
    Ok(HttpRequest {
        url: format!(
            "{}/models/{id}:streamGenerateContent?alt=sse",
            model.base_url.trim_end_matches('/')
        ),
        headers,
        body: Value::Object(body),
        raw,
        sign: None,
    })
}

fn thinking_config(
    model: &Model,
    level: ThinkingLevel,
    custom: &crate::provider::ThinkingBudgets,
) -> Value {
    let id = model.id.as_str();
    if id.contains("gemini-3") {
        let flash = id.contains("flash");
        let name = match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal if flash => "MINIMAL",
            ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "LOW",
            ThinkingLevel::Medium if flash => "MEDIUM",
            ThinkingLevel::Medium | ThinkingLevel::High | ThinkingLevel::Xhigh => "HIGH",
        };
        return json!({"includeThoughts": true, "thinkingLevel": name});
    }
    let budgets: Option<[i64; 4]> = if id.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if id.contains("2.5-flash-lite") {
        Some([512, 2048, 8192, 24576])
    } else if id.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    // The settings' budget for the level wins (pi's `thinkingBudgets`).
    if let Some(budget) = custom.of(level) {
        return json!({"includeThoughts": true, "thinkingBudget": budget});
    }
    let budget = match budgets {
        Some([minimal, low, medium, high]) => match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal => minimal,
            ThinkingLevel::Low => low,
            ThinkingLevel::Medium => medium,
            ThinkingLevel::High | ThinkingLevel::Xhigh => high,
        },
        None => -1,
    };
    json!({"includeThoughts": true, "thinkingBudget": budget})
}

fn convert_messages(messages: &[Message], raw: &mut RawTexts) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(user) => {
                let parts = user_parts(&user.content);
                if !parts.is_empty() {
                    out.push(json!({"parts": parts, "role": "user"}));
                }
            }
            Message::Assistant(assistant) => {
                let parts: Vec<Value> = assistant
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Thinking(thinking) => {
                            let mut part = json!({"text": thinking.thinking, "thought": true});
                            if let Some(signature) = &thinking.thinking_signature {
                                part["thoughtSignature"] = json!(signature);
                            }
                            Some(part)
                        }
                        AssistantContent::Text(text) if text.text.is_empty() => None,
                        AssistantContent::Text(text) => {
                            let mut part = json!({"text": text.text});
                            if let Some(signature) = &text.text_signature {
                                part["thoughtSignature"] = json!(signature);
                            }
                            Some(part)
                        }
                        AssistantContent::ToolCall(call) => {
                            let mut part = json!({"functionCall": {"name": call.name, "args": raw.object(&call.arguments)}});
                            if let Some(signature) = &call.thought_signature {
                                part["thoughtSignature"] = json!(signature);
                            }
                            Some(part)
                        }
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(json!({"parts": parts, "role": "model"}));
                }
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
                let key = if result.is_error { "error" } else { "output" };
                let mut parts = vec![json!({"functionResponse": {
                    "name": result.tool_name, "response": {key: text.join("\n")}}})];
                parts.extend(
                    user_parts(&result.content)
                        .into_iter()
                        .filter(|part| part.get("inlineData").is_some()),
                );
                // Consecutive results share one user turn, right after the calls.
                let last_is_results = out.last().is_some_and(|last| {
                    last["role"] == "user" && last["parts"][0].get("functionResponse").is_some()
                });
                match out.last_mut() {
                    Some(last) if last_is_results => {
                        if let Some(Value::Array(existing)) = last.get_mut("parts") {
                            existing.extend(parts);
                        }
                    }
                    _ => out.push(json!({"parts": parts, "role": "user"})),
                }
            }
        }
    }
    out
}

fn user_parts(content: &[UserContent]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) if text.text.is_empty() => None,
            UserContent::Text(text) => Some(json!({"text": text.text})),
            UserContent::Image(image) => Some(json!({"inlineData": {
                "mimeType": image.mime_type, "data": image.data}})),
        })
        .collect()
}

/// Stream state.
#[derive(Debug, Default)]
pub struct GoogleDecoder {
    current: Option<(bool, usize)>,
    finish_reason: Option<String>,
    n_calls: usize,
}

/// A chunk of text and thought parts, the hot path (one per token), read straight from the
/// event text: building a `serde_json::Value` for it was most of the decoding time. Chunks
/// with an error, usage or a function call take the general path.
#[derive(Deserialize)]
struct TextChunk<'a> {
    #[serde(rename = "responseId", borrow, default)]
    response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    candidates: Vec<TextCandidate<'a>>,
    #[serde(rename = "usageMetadata", default)]
    usage_metadata: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct TextCandidate<'a> {
    #[serde(borrow, default)]
    content: Option<TextParts<'a>>,
    #[serde(rename = "finishReason", borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct TextParts<'a> {
    #[serde(borrow, default)]
    parts: Vec<TextPart<'a>>,
}

#[derive(Deserialize)]
struct TextPart<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(rename = "thoughtSignature", borrow, default)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(rename = "functionCall", default)]
    function_call: Option<IgnoredAny>,
}

impl Decoder for GoogleDecoder {
    async fn on_event(&mut self, event: &SseEvent, out: &mut Assembler) -> Step {
        if let Ok(chunk) = serde_json::from_str::<TextChunk<'_>>(&event.data)
            && chunk.error.is_none()
            && chunk.usage_metadata.is_none()
        {
            out.set_response_id(chunk.response_id.as_deref());
            let candidate = chunk.candidates.first();
            let parts = candidate
                .and_then(|candidate| candidate.content.as_ref())
                .map(|content| content.parts.as_slice())
                .unwrap_or_default();
            if parts.iter().all(|part| part.function_call.is_none()) {
                for part in parts {
                    if let Some(text) = &part.text {
                        let signature = part.thought_signature.as_deref().map(str::to_owned);
                        let thought = part.thought.unwrap_or(false);
                        self.text_part(text, thought, signature, out).await;
                    }
                }
                if let Some(reason) = candidate.and_then(|c| c.finish_reason.as_deref()) {
                    self.finish_reason = Some(reason.to_owned());
                }
                return Step::Continue;
            }
        }
        let chunk = match parse_event_json(&event.data) {
            Ok(chunk) => chunk,
            Err(step) => return step,
        };
        if let Some(error) = chunk.get("error").filter(|e| e.is_object()) {
            let message = error["message"]
                .as_str()
                .unwrap_or("unknown error")
                .to_owned();
            let failure = match error["code"].as_u64().and_then(|c| u16::try_from(c).ok()) {
                Some(code) => Failure::from_http(code, &message, None),
                None => Failure::new(crate::failure::classify_error_message(&message)),
            };
            let status = error["status"].as_str().unwrap_or("ERROR");
            return Step::Fail {
                message: format!("{status}: {message}"),
                failure,
            };
        }
        out.set_response_id(chunk["responseId"].as_str());
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            let prompt = usage["promptTokenCount"].as_u64().unwrap_or(0);
            let cached = usage["cachedContentTokenCount"].as_u64().unwrap_or(0);
            let usage_out = out.usage_mut();
            usage_out.input = prompt.saturating_sub(cached);
            usage_out.cache_read = cached;
            usage_out.output = usage["candidatesTokenCount"].as_u64().unwrap_or(0)
                + usage["thoughtsTokenCount"].as_u64().unwrap_or(0);
        }
        let Some(candidate) = chunk["candidates"].as_array().and_then(|c| c.first()) else {
            return Step::Continue;
        };
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            self.part(part, out).await;
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish_reason = Some(reason.to_owned());
        }
        Step::Continue
    }

    fn on_end(&mut self, out: &Assembler) -> Step {
        let Some(reason) = self.finish_reason.as_deref() else {
            return stream_cut();
        };
        match reason {
            "MAX_TOKENS" => Step::Done(DoneReason::Length),
            "STOP" | "FINISH_REASON_UNSPECIFIED" if out.has_tool_calls() => {
                Step::Done(DoneReason::ToolUse)
            }
            "STOP" | "FINISH_REASON_UNSPECIFIED" => Step::Done(DoneReason::Stop),
            // Safety, recitation, a malformed function call...: the model produced no usable
            // answer.
            other => Step::Fail {
                message: format!("the model stopped without an answer (finish reason {other})"),
                failure: Failure::new(FailureKind::Other),
            },
        }
    }
}

impl GoogleDecoder {
    async fn part(&mut self, part: &Value, out: &mut Assembler) {
        let signature = part["thoughtSignature"].as_str().map(str::to_owned);
        if let Some(call) = part.get("functionCall") {
            if let Some((_, open)) = self.current.take() {
                out.close(open).await;
            }
            let name = call["name"].as_str().unwrap_or_default().to_owned();
            self.n_calls += 1;
            let id = match call["id"].as_str().filter(|id| !id.is_empty()) {
                Some(id) => id.to_owned(),
                None => format!("{name}_{}_{}", out.message().timestamp, self.n_calls),
            };
            let index = out.open_tool_call(id, name).await;
            let arguments = call.get("args").cloned().unwrap_or_else(|| json!({}));
            out.tool_args_delta(index, &arguments.to_string()).await;
            if let Some(signature) = signature {
                out.set_thought_signature(index, signature);
            }
            out.close(index).await;
            return;
        }
        let Some(text) = part["text"].as_str() else {
            return;
        };
        let thought = part["thought"].as_bool().unwrap_or(false);
        self.text_part(text, thought, signature, out).await;
    }

    /// A text or thought part, appended to the open block of its kind.
    async fn text_part(
        &mut self,
        text: &str,
        thought: bool,
        signature: Option<String>,
        out: &mut Assembler,
    ) {
        let index = match self.current {
            Some((is_thought, index)) if is_thought == thought => index,
            previous => {
                if let Some((_, index)) = previous {
                    out.close(index).await;
                }
                let index = if thought {
                    out.open_thinking().await
                } else {
                    out.open_text().await
                };
                self.current = Some((thought, index));
                index
            }
        };
        if thought {
            out.thinking_delta(index, text).await;
            if let Some(signature) = signature {
                out.set_thinking_signature(index, signature);
            }
        } else {
            out.text_delta(index, text).await;
            if let Some(signature) = signature {
                out.set_text_signature(index, signature);
            }
        }
    }
}
