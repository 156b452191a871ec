//! `openai-completions`: OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, SSE) and
//! every server that speaks it (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, Groq, Cerebras,
//! xAI, Mistral, DeepSeek), with per-server differences from [`ResolvedCompat`].
//!
//! Request: system prompt as `system` (or `developer` for reasoning models where supported),
//! assistant tool calls as `tool_calls`, results as `tool` messages (images from results follow
//! as a user message), `stream_options.include_usage`, `reasoning_effort` or the server's own
//! thinking switch. Stream: `chat.completion.chunk`s whose `choices[0].delta` carries
//! `content`, `reasoning_content` (or `reasoning`, `reasoning_text`) and `tool_calls`
//! fragments, a `finish_reason`, an optional usage chunk with no choices, then `[DONE]`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::{base_max_tokens, data_url, header_list, parse_event_json};
use crate::assemble::Assembler;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, HttpRequest, RawTexts, Step, stream_cut};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::sse::SseEvent;
use crate::transform::transform_messages;
use crate::types::{AssistantContent, Message, UserContent};

use crate::compat::{MaxTokensField, ResolvedCompat, ThinkingFormat};

/// The Chat Completions wire format.
#[derive(Debug, Default)]
pub struct OpenAiCompletionsProvider;

impl Provider for OpenAiCompletionsProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        super::send(model, request, &options, CompletionsDecoder::default())
    }
}

/// OpenAI's tool-call id rule: the part before a Responses `|fc_` suffix, safe characters, at
/// most 40 of them.
fn openai_tool_id(id: &str) -> String {
    let id = id.split('|').next().unwrap_or(id);
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect()
}

/// Mistral's rule: exactly nine alphanumeric characters.
pub(crate) fn mistral_tool_id(id: &str) -> String {
    let mut out: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if out.len() > 9 {
        out = out[out.len() - 9..].to_owned();
    }
    while out.len() < 9 {
        out.push('0');
    }
    out
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let compat = model.resolved_compat();
    let id_rule = if compat.requires_mistral_tool_ids {
        mistral_tool_id
    } else {
        openai_tool_id
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    let mut messages = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        messages.push(json!({"role": role, "content": system}));
    }
    let transformed = transform_messages(&context.messages, model, Some(id_rule));
    convert_messages(&transformed, &compat, &mut messages);
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    // pi: the session as the cache key for OpenAI itself, or with `PI_CACHE_RETENTION=long`
    // where the server keeps a cache that long (not Cloudflare's).
    let cloudflare = ["cloudflare-workers-ai", "cloudflare-ai-gateway"]
        .contains(&model.provider.as_str())
        || model.base_url.contains("api.cloudflare.com")
        || model.base_url.contains("gateway.ai.cloudflare.com");
    let long = options.cache_retention == crate::provider::CacheRetention::Long && !cloudflare;
    if let Some(session_id) = &options.session_id
        && (model.base_url.contains("api.openai.com") || long)
    {
        body.insert("prompt_cache_key".into(), json!(session_id));
    }
    if long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    let max_tokens_field = match compat.max_tokens_field {
        MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        MaxTokensField::MaxTokens => "max_tokens",
    };
    body.insert(
        max_tokens_field.into(),
        json!(base_max_tokens(model, options)),
    );
    let routing = &compat.open_router_routing;
    if routing.only.is_some() || routing.order.is_some() {
        let mut provider = Map::new();
        if let Some(only) = &routing.only {
            provider.insert("only".into(), json!(only));
        }
        if let Some(order) = &routing.order {
            provider.insert("order".into(), json!(order));
        }
        body.insert("provider".into(), Value::Object(provider));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                let mut function = json!({"name": tool.name, "description": tool.description,
                                          "parameters": crate::schema::adapt(&tool.parameters, crate::schema::Dialect::OpenAi)});
                if compat.supports_strict_mode {
                    function["strict"] = json!(false);
                }
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        let level = options.thinking;
        let on = level != ThinkingLevel::Off;
        let effort = compat
            .reasoning_effort(level)
            .filter(|_| compat.supports_reasoning_effort);
        match compat.thinking_format {
            ThinkingFormat::Openai => {
                if let Some(effort) = effort {
                    body.insert("reasoning_effort".into(), json!(effort));
                }
            }
            ThinkingFormat::Openrouter => {
                let reasoning = match effort {
                    Some(effort) => json!({"effort": effort}),
                    None => json!({"enabled": false}),
                };
                body.insert("reasoning".into(), reasoning);
            }
            ThinkingFormat::Zai | ThinkingFormat::Qwen => {
                body.insert("enable_thinking".into(), json!(on));
            }
            ThinkingFormat::QwenChatTemplate => {
                body.insert(
                    "chat_template_kwargs".into(),
                    json!({"enable_thinking": on}),
                );
            }
            ThinkingFormat::Deepseek => {
                let kind = if on { "enabled" } else { "disabled" };
                body.insert("thinking".into(), json!({"type": kind}));
                if let Some(effort) = effort {
                    body.insert("reasoning_effort".into(), json!(effort));
                }
            }
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
        url: format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers,
        body: Value::Object(body),
        raw: RawTexts::default(),
        sign: None,
    })
}

fn convert_messages(messages: &[Message], compat: &ResolvedCompat, out: &mut Vec<Value>) {
    // Images returned by tools, sent as one user message after the run of tool messages.
    let mut tool_images: Vec<Value> = Vec::new();
    for (position, message) in messages.iter().enumerate() {
        match message {
            Message::User(user) => {
                let only_text = user
                    .content
                    .iter()
                    .all(|b| matches!(b, UserContent::Text(_)));
                let content = if only_text {
                    Value::String(super::joined_text(&user.content))
                } else {
                    Value::Array(user.content.iter().map(content_part).collect())
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(assistant) => {
                // Text blocks (and thinking sent as text) stay apart: one string, separated
                // by blank lines, so the model does not read them as one run-on sentence.
                let mut texts: Vec<&str> = Vec::new();
                let mut reasoning = String::new();
                let mut tool_calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantContent::Text(block) => texts.push(&block.text),
                        AssistantContent::Thinking(thinking)
                            if compat.requires_thinking_as_text =>
                        {
                            texts.push(&thinking.thinking)
                        }
                        AssistantContent::Thinking(thinking) => {
                            reasoning.push_str(&thinking.thinking)
                        }
                        AssistantContent::ToolCall(call) => tool_calls.push(json!({
                            "id": call.id, "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments.to_json_string()}
                        })),
                    }
                }
                texts.retain(|text| !text.trim().is_empty());
                let text = texts.join("\n\n");
                if text.is_empty() && tool_calls.is_empty() {
                    continue;
                }
                let mut message = json!({"role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = Value::Array(tool_calls);
                }
                if compat.requires_reasoning_content_on_assistant_messages {
                    message["reasoning_content"] = json!(reasoning);
                }
                out.push(message);
            }
            Message::ToolResult(result) => {
                let images: Vec<Value> = result
                    .content
                    .iter()
                    .filter(|b| matches!(b, UserContent::Image(_)))
                    .map(content_part)
                    .collect();
                let mut text = super::joined_text(&result.content);
                if text.is_empty() && !images.is_empty() {
                    text = "(see attached image)".into();
                }
                let mut message = json!({"role": "tool", "tool_call_id": result.tool_call_id,
                                         "content": text});
                if compat.requires_tool_result_name {
                    message["name"] = json!(result.tool_name);
                }
                out.push(message);
                tool_images.extend(images);
                let next_is_tool =
                    matches!(messages.get(position + 1), Some(Message::ToolResult(_)));
                if !next_is_tool {
                    if !tool_images.is_empty() {
                        let mut parts = vec![
                            json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                        ];
                        parts.append(&mut tool_images);
                        out.push(json!({"role": "user", "content": parts}));
                    } else if compat.requires_assistant_after_tool_result
                        && matches!(messages.get(position + 1), Some(Message::User(_)))
                    {
                        out.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                }
            }
        }
    }
}

fn content_part(block: &UserContent) -> Value {
    match block {
        UserContent::Text(text) => json!({"type": "text", "text": text.text}),
        UserContent::Image(image) => json!({"type": "image_url",
            "image_url": {"url": data_url(&image.mime_type, &image.data)}}),
    }
}

/// Stream state.
#[derive(Debug, Default)]
pub struct CompletionsDecoder {
    /// The response's one text block and one thinking block, as pi keeps them: text after a
    /// tool call goes on in the same block, and every block closes when the stream ends.
    text: Option<usize>,
    thinking: Option<usize>,
    /// The server's tool-call index → our content index.
    tool_calls: HashMap<u64, usize>,
    finish_reason: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

/// A chunk of text or reasoning, the hot path (one per token), read straight from the event
/// text: building a `serde_json::Value` for it was most of the decoding time. Chunks with an
/// error, usage or tool-call fragments, or of any other shape, take the general path.
#[derive(Deserialize)]
struct TextChunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Vec<TextChoice<'a>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(default)]
    usage: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct TextChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<TextDelta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct TextDelta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_text: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<IgnoredAny>,
}

impl Decoder for CompletionsDecoder {
    async fn on_event(&mut self, event: &SseEvent, out: &mut Assembler) -> Step {
        let data = event.data.trim();
        if data == "[DONE]" {
            return self.done(out);
        }
        if let Ok(chunk) = serde_json::from_str::<TextChunk<'_>>(data)
            && chunk.error.is_none()
            && chunk.usage.is_none()
        {
            out.set_response_id(chunk.id.as_deref());
            let choice = chunk.choices.first();
            let delta = choice.and_then(|choice| choice.delta.as_ref());
            if delta.is_none_or(|delta| delta.tool_calls.is_none()) {
                if let Some(delta) = delta {
                    let reasoning = [
                        &delta.reasoning_content,
                        &delta.reasoning,
                        &delta.reasoning_text,
                    ]
                    .into_iter()
                    .find_map(|field| field.as_deref().filter(|s| !s.is_empty()));
                    self.text(reasoning, delta.content.as_deref(), out).await;
                }
                if let Some(reason) = choice.and_then(|choice| choice.finish_reason.as_deref()) {
                    self.finish_reason = Some(reason.to_owned());
                }
                return Step::Continue;
            }
        }
        let chunk = match parse_event_json(data) {
            Ok(chunk) => chunk,
            Err(step) => return step,
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return stream_error(error);
        }
        out.set_response_id(chunk["id"].as_str());
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            read_usage(usage, out);
        }
        let Some(choice) = chunk["choices"]
            .as_array()
            .and_then(|choices| choices.first())
        else {
            return Step::Continue;
        };
        let delta = &choice["delta"];
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .iter()
            .find_map(|field| delta[field].as_str().filter(|s| !s.is_empty()));
        self.text(reasoning, delta["content"].as_str(), out).await;
        // Mistral: content as a list of text and thinking parts.
        if let Some(parts) = delta["content"].as_array() {
            for part in parts {
                match (part.as_str(), part["type"].as_str()) {
                    (Some(text), _) => self.text(None, Some(text), out).await,
                    (None, Some("thinking")) => {
                        let thinking: String = part["thinking"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|piece| piece["text"].as_str())
                            .collect();
                        if !thinking.is_empty() {
                            self.text(Some(&thinking), None, out).await;
                        }
                    }
                    (None, Some("text")) => self.text(None, part["text"].as_str(), out).await,
                    _ => {}
                }
            }
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            for call in calls {
                self.tool_call_fragment(call, out).await;
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_owned());
        }
        Step::Continue
    }

    fn on_end(&mut self, out: &Assembler) -> Step {
        // Some servers end without `[DONE]` once they sent a finish reason.
        match self.finish_reason {
            Some(_) => self.done(out),
            None => stream_cut(),
        }
    }
}

impl CompletionsDecoder {
    /// A delta's reasoning, then its content.
    async fn text(&mut self, reasoning: Option<&str>, content: Option<&str>, out: &mut Assembler) {
        if let Some(reasoning) = reasoning {
            let index = self.block(Kind::Thinking, out).await;
            out.thinking_delta(index, reasoning).await;
        }
        if let Some(content) = content.filter(|s| !s.is_empty()) {
            let index = self.block(Kind::Text, out).await;
            out.text_delta(index, content).await;
        }
    }

    /// The index of the response's block of `kind`, opening it the first time.
    async fn block(&mut self, kind: Kind, out: &mut Assembler) -> usize {
        let slot = match kind {
            Kind::Text => &mut self.text,
            Kind::Thinking => &mut self.thinking,
        };
        if let Some(index) = *slot {
            return index;
        }
        let index = match kind {
            Kind::Text => out.open_text().await,
            Kind::Thinking => out.open_thinking().await,
        };
        *slot = Some(index);
        index
    }

    async fn tool_call_fragment(&mut self, call: &Value, out: &mut Assembler) {
        let wire_index = call["index"]
            .as_u64()
            .unwrap_or(self.tool_calls.len() as u64);
        let index = match self.tool_calls.get(&wire_index) {
            Some(&index) => index,
            None => {
                let id = call["id"]
                    .as_str()
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("call_{}_{wire_index}", out.message().timestamp));
                let name = call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let index = out.open_tool_call(id, name).await;
                self.tool_calls.insert(wire_index, index);
                index
            }
        };
        // Every fragment is a delta, an empty one too (pi's first, with the id and name).
        let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
        out.tool_args_delta(index, arguments).await;
    }

    fn done(&self, out: &Assembler) -> Step {
        match self.finish_reason.as_deref() {
            Some("length") => Step::Done(DoneReason::Length),
            Some("content_filter") => Step::Fail {
                message: "The response was blocked by the provider's content filter".into(),
                failure: Failure::new(FailureKind::Other),
            },
            _ if out.has_tool_calls() => Step::Done(DoneReason::ToolUse),
            // `stop`, `end`, or none.
            _ => Step::Done(DoneReason::Stop),
        }
    }
}

fn stream_error(error: &Value) -> Step {
    let message = error["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    let status = error["code"]
        .as_u64()
        .or_else(|| error["status"].as_u64())
        .and_then(|code| u16::try_from(code).ok());
    let failure = match status {
        Some(status) => Failure::from_http(status, &message, None),
        None => Failure::new(super::openai_error_kind(
            error["code"].as_str(),
            error["type"].as_str(),
            &message,
        )),
    };
    let message = match status {
        Some(status) => format!("{status}: {message}"),
        None => message,
    };
    Step::Fail { message, failure }
}

fn read_usage(usage: &Value, out: &mut Assembler) {
    let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .or_else(|| usage["prompt_cache_hit_tokens"].as_u64())
        .unwrap_or(0);
    let usage_out = out.usage_mut();
    usage_out.input = prompt.saturating_sub(cached);
    usage_out.cache_read = cached;
    usage_out.output = usage["completion_tokens"].as_u64().unwrap_or(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_ids_follow_the_server_rules() {
        assert_eq!(openai_tool_id("call_abc|fc_123"), "call_abc");
        assert_eq!(openai_tool_id(&"x".repeat(50)).len(), 40);
        assert_eq!(mistral_tool_id("toolu_01ABCdefGHIjk"), "CdefGHIjk");
        assert_eq!(mistral_tool_id("a1"), "a10000000");
    }
}
