//! `anthropic-messages`: the Anthropic Messages API (`POST {baseUrl}/v1/messages`, SSE).
//!
//! Request (pi-ai's shapes, byte for byte where the prompt cache sees them): system prompt
//! as a cached text block, consecutive tool results grouped into one user message of
//! `tool_result` blocks (their content a string of the texts, blocks only with images),
//! signed thinking sent back with its signature (unsigned thinking as text, empty thinking
//! dropped, redacted thinking as `redacted_thinking`), `cache_control` on the system block
//! and on the last block when the conversation ends with the user's turn, thinking as a budget (with the
//! interleaved-thinking beta) or adaptive with an effort for the 4.6 models.
//! Stream: `message_start`, `content_block_start|delta|stop` (text, thinking, signature,
//! `input_json_delta`), `message_delta` (stop reason, usage), `message_stop`, `ping`, `error`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{base_max_tokens, header_list, parse_event_json};
use crate::assemble::Assembler;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, HttpRequest, RawTexts, Step};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::sse::SseEvent;
use crate::transform::{anthropic_tool_id, transform_messages};
use crate::types::{AssistantContent, Message, UserContent};

/// The Anthropic Messages wire format.
#[derive(Debug, Default)]
pub struct AnthropicProvider;

const API_VERSION: &str = "2023-06-01";
/// The Claude Code release whose identity a Claude Pro/Max token is sent with (pi 0.73.1's).
const CLAUDE_CODE_VERSION: &str = "2.1.75";
/// What a Claude Pro/Max request's system prompt starts with (pi sends it; Anthropic
/// refuses subscription tokens without it).
pub const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";
/// Claude Code's tool names: a subscription request names pi's tools of the same names (any
/// case) this way, and the model's calls are mapped back.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `name` in Claude Code's casing when it is one of its tools.
fn to_claude_code_name(name: &str) -> Cow<'_, str> {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|tool| tool.eq_ignore_ascii_case(name))
        .map_or(Cow::Borrowed(name), |tool| Cow::Borrowed(*tool))
}

/// How a request authenticates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Auth {
    /// `x-api-key`.
    ApiKey,
    /// A Claude Pro/Max token: Bearer, Claude Code's identity, betas and tool names.
    ClaudeSubscription,
    /// GitHub Copilot's Anthropic endpoint: Bearer.
    Copilot,
}
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

impl Provider for AnthropicProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        let mut decoder = AnthropicDecoder::default();
        if auth_of(model, &options) == Auth::ClaudeSubscription {
            // The model calls Claude Code's names; the session knows its own.
            decoder.tool_names = context
                .tools
                .iter()
                .map(|tool| (tool.name.to_ascii_lowercase(), tool.name.clone()))
                .collect();
        }
        super::send(model, request, &options, decoder)
    }
}

/// Whether the model thinks adaptively with an effort instead of a token budget.
fn is_adaptive(model: &Model) -> bool {
    ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"]
        .iter()
        .any(|tag| model.id.contains(tag))
}

fn auth_of(model: &Model, options: &StreamOptions) -> Auth {
    if model.provider == "github-copilot" {
        Auth::Copilot
    } else if options
        .api_key
        .as_ref()
        .is_some_and(crate::provider::ApiKey::is_anthropic_oauth)
    {
        Auth::ClaudeSubscription
    } else {
        Auth::ApiKey
    }
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    // pi-ai's order of the body's keys: model, messages, max_tokens, stream, system, tools,
    // thinking.
    let mut max_tokens = base_max_tokens(model, options);
    let mut betas = Vec::new();
    let level = if model.reasoning {
        options.thinking
    } else {
        ThinkingLevel::Off
    };
    let mut thinking = Map::new();
    match level {
        // pi-ai: a model that can think is told not to.
        ThinkingLevel::Off if model.reasoning => {
            thinking.insert("thinking".into(), json!({"type": "disabled"}));
        }
        ThinkingLevel::Off => {}
        level if is_adaptive(model) => {
            let effort = match level {
                ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                ThinkingLevel::High => "high",
                ThinkingLevel::Xhigh if model.id.contains("opus") => "max",
                ThinkingLevel::Xhigh => "high",
            };
            thinking.insert(
                "thinking".into(),
                json!({"type": "adaptive", "display": "summarized"}),
            );
            thinking.insert("output_config".into(), json!({"effort": effort}));
        }
        level => {
            // pi-ai's budgets (or the settings'), and its room for the answer.
            let mut budget: u64 = options.thinking_budgets.of(level).unwrap_or(match level {
                ThinkingLevel::Off | ThinkingLevel::Minimal => 1024,
                ThinkingLevel::Low => 2048,
                ThinkingLevel::Medium => 8192,
                ThinkingLevel::High | ThinkingLevel::Xhigh => 16384,
            });
            max_tokens = (max_tokens + budget).min(model.max_tokens.max(1));
            if max_tokens <= budget {
                budget = max_tokens.saturating_sub(1024);
            }
            thinking.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
            );
            betas.push(INTERLEAVED_THINKING_BETA);
        }
    }
    let auth = auth_of(model, options);
    let subscription = auth == Auth::ClaudeSubscription;
    // pi's `PI_CACHE_RETENTION=long`: an hour instead of five minutes.
    let cache = match options.cache_retention {
        crate::provider::CacheRetention::Short => json!({"type": "ephemeral"}),
        crate::provider::CacheRetention::Long => json!({"type": "ephemeral", "ttl": "1h"}),
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    let mut raw = RawTexts::default();
    let messages = transform_messages(&context.messages, model, Some(anthropic_tool_id));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(&messages, &mut raw, subscription, &cache)),
    );
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    let mut system = Vec::new();
    if subscription {
        system.push(json!({"type": "text", "text": CLAUDE_CODE_IDENTITY,
            "cache_control": cache}));
    }
    if let Some(prompt) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        system.push(json!({"type": "text", "text": prompt, "cache_control": cache}));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    if !context.tools.is_empty() {
        let last = context.tools.len() - 1;
        let tools: Vec<Value> = context
            .tools
            .iter()
            .enumerate()
            .map(|(index, tool)| {
                let name = if subscription {
                    to_claude_code_name(&tool.name)
                } else {
                    Cow::Borrowed(tool.name.as_str())
                };
                let mut sent = json!({"name": name, "description": tool.description,
                    "eager_input_streaming": true,
                    "input_schema": input_schema(&tool.parameters)});
                // The tool definitions are cached with the system prompt.
                if index == last {
                    sent["cache_control"] = cache.clone();
                }
                sent
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.extend(thinking);

    let mut headers = header_list(model);
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("accept".into(), "text/event-stream".into()));
    headers.push(("anthropic-version".into(), API_VERSION.into()));
    if subscription {
        betas.splice(0..0, ["claude-code-20250219", "oauth-2025-04-20"]);
    }
    if !betas.is_empty() {
        headers.push(("anthropic-beta".into(), betas.join(",")));
    }
    if subscription {
        headers.retain(|(name, _)| name != "user-agent");
        headers.push((
            "user-agent".into(),
            format!("claude-cli/{CLAUDE_CODE_VERSION}"),
        ));
        headers.push(("x-app".into(), "cli".into()));
    }
    if let Some(key) = &options.api_key {
        match auth {
            Auth::ApiKey => headers.push(("x-api-key".into(), key.expose().to_owned())),
            Auth::ClaudeSubscription | Auth::Copilot => {
                headers.push(("authorization".into(), format!("Bearer {}", key.expose())));
            }
        }
    }
    if auth == Auth::Copilot {
        headers.extend(super::copilot_headers(&context.messages));
    }
    Ok(HttpRequest {
        url: format!("{}/v1/messages", model.base_url.trim_end_matches('/')),
        headers,
        body: Value::Object(body),
        raw,
        sign: None,
    })
}

fn convert_messages(
    messages: &[Message],
    raw: &mut RawTexts,
    subscription: bool,
    cache: &Value,
) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::User(user) => {
                // pi drops text blocks that are only whitespace, and a message left empty.
                let blocks: Vec<Value> = user_blocks(&user.content)
                    .into_iter()
                    .filter(|block| {
                        block["type"] != "text"
                            || block["text"]
                                .as_str()
                                .is_some_and(|text| !text.trim().is_empty())
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.push(json!({"role": "user", "content": blocks}));
                }
            }
            Message::Assistant(assistant) => {
                let blocks: Vec<Value> = assistant
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Text(text) if text.text.trim().is_empty() => None,
                        AssistantContent::Text(text) => {
                            Some(json!({"type": "text", "text": text.text}))
                        }
                        AssistantContent::Thinking(thinking) if thinking.redacted => {
                            let data = thinking.thinking_signature.clone().unwrap_or_default();
                            Some(json!({"type": "redacted_thinking", "data": data}))
                        }
                        // Empty thinking is dropped, signed or not (pi's order).
                        AssistantContent::Thinking(thinking)
                            if thinking.thinking.trim().is_empty() =>
                        {
                            None
                        }
                        AssistantContent::Thinking(thinking) => {
                            match &thinking.thinking_signature {
                                Some(signature) if !signature.trim().is_empty() => Some(json!({
                                "type": "thinking", "thinking": thinking.thinking,
                                "signature": signature})),
                                _ => Some(json!({"type": "text", "text": thinking.thinking})),
                            }
                        }
                        AssistantContent::ToolCall(call) => {
                            // The model's exact text: the prompt cache matches bytes.
                            let input = raw.object(&call.arguments);
                            let name = if subscription {
                                to_claude_code_name(&call.name)
                            } else {
                                Cow::Borrowed(call.name.as_str())
                            };
                            Some(json!({"type": "tool_use", "id": call.id, "name": name,
                                        "input": input}))
                        }
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(result) => {
                let block = json!({"type": "tool_result", "tool_use_id": result.tool_call_id,
                                   "content": tool_result_content(&result.content),
                                   "is_error": result.is_error});
                // Consecutive results share one user message, right after the tool calls.
                match out.last_mut() {
                    Some(last) if is_tool_result_message(last) => {
                        if let Some(Value::Array(blocks)) = last.get_mut("content") {
                            blocks.push(block);
                        }
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    // Cache the conversation when it ends with the user's turn (pi marks the last block of
    // that message, when it is text, an image or a tool result).
    if let Some(last) = out.last_mut().filter(|message| message["role"] == "user")
        && let Some(Value::Array(blocks)) = last.get_mut("content")
        && let Some(Value::Object(block)) = blocks.last_mut()
        && matches!(
            block.get("type").and_then(Value::as_str),
            Some("text" | "image" | "tool_result")
        )
    {
        block.insert("cache_control".into(), cache.clone());
    }
    out
}

/// A tool's schema as pi-ai sends it: an object with its `properties` and `required` (and
/// the definitions its references need, which pi would drop).
fn input_schema(parameters: &Value) -> Value {
    let adapted = crate::schema::adapt(parameters, crate::schema::Dialect::Anthropic);
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert(
        "properties".into(),
        adapted
            .get("properties")
            .cloned()
            .unwrap_or_else(|| json!({})),
    );
    schema.insert(
        "required".into(),
        adapted
            .get("required")
            .cloned()
            .unwrap_or_else(|| json!([])),
    );
    for key in ["$defs", "definitions"] {
        if let Some(definitions) = adapted.get(key) {
            schema.insert(key.into(), definitions.clone());
        }
    }
    Value::Object(schema)
}

/// A tool result's content as pi sends it: its texts joined by line breaks when it has no
/// image; with images, the blocks (and a placeholder text when there is none).
fn tool_result_content(content: &[UserContent]) -> Value {
    let has_image = content
        .iter()
        .any(|block| matches!(block, UserContent::Image(_)));
    if !has_image {
        return Value::String(super::joined_text(content));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => json!({"type": "text", "text": text.text}),
            UserContent::Image(image) => image_block(image),
        })
        .collect();
    if !content
        .iter()
        .any(|block| matches!(block, UserContent::Text(_)))
    {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

fn is_tool_result_message(message: &Value) -> bool {
    message["role"] == "user"
        && message["content"]
            .as_array()
            .and_then(|blocks| blocks.first())
            .is_some_and(|block| block["type"] == "tool_result")
}

fn user_blocks(content: &[UserContent]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) if text.text.is_empty() => None,
            UserContent::Text(text) => Some(json!({"type": "text", "text": text.text})),
            UserContent::Image(image) => Some(image_block(image)),
        })
        .collect()
}

fn image_block(image: &crate::types::ImageContent) -> Value {
    json!({"type": "image", "source": {
        "type": "base64", "media_type": image.mime_type, "data": image.data}})
}

/// Stream state: Anthropic's block indexes mapped to ours, and the stop reason.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: HashMap<u64, usize>,
    stop_reason: Option<String>,
    // A subscription request's tools by lower-cased name: Claude Code's names mapped back.
    tool_names: HashMap<String, String>,
}

/// `content_block_delta`, the event carrying nearly every byte of a response (one per
/// token), read straight from the event text: building a `serde_json::Value` for it was most
/// of the decoding time.
#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: u64,
    #[serde(borrow)]
    delta: DeltaFields<'a>,
}

#[derive(Deserialize)]
struct DeltaFields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
}

impl<'a> BlockDelta<'a> {
    /// Reads a delta in the exact shape Anthropic sends without a JSON parser:
    /// `{"type":"content_block_delta","index":N,"delta":{"type":"KIND","FIELD":"…"}}` with
    /// KIND/FIELD one of `text_delta`/`text`, `thinking_delta`/`thinking` and
    /// `input_json_delta`/`partial_json`. Any other spelling (spaces, key order, more fields)
    /// returns `None` and takes the parser; a string with escapes is unescaped by it too.
    fn scan(data: &'a str) -> Option<Self> {
        const HEAD: &str = r#"{"type":"content_block_delta","index":"#;
        const KINDS: [(&str, &str); 3] = [
            ("text_delta", "text"),
            ("thinking_delta", "thinking"),
            ("input_json_delta", "partial_json"),
        ];
        let rest = data.strip_prefix(HEAD)?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let index: u64 = rest.get(..digits)?.parse().ok()?;
        let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
        let (kind, field) = KINDS.into_iter().find(|(kind, _)| {
            rest.strip_prefix(kind)
                .is_some_and(|after| after.starts_with(r#"",""#))
        })?;
        let rest = rest[kind.len() + 3..].strip_prefix(field)?;
        let body = rest.strip_prefix(r#"":""#)?.strip_suffix(r#""}}"#)?;
        let value = json_string_body(body)?;
        let mut delta = DeltaFields {
            kind: Cow::Borrowed(kind),
            text: None,
            thinking: None,
            signature: None,
            partial_json: None,
        };
        match field {
            "text" => delta.text = Some(value),
            "thinking" => delta.thinking = Some(value),
            _ => delta.partial_json = Some(value),
        }
        Some(Self { index, delta })
    }
}

/// The value of a JSON string whose text between the quotes is `body`, borrowed when it has
/// no escapes; `None` when `body` is not the inside of one JSON string (an unescaped quote,
/// a control character, a dangling backslash).
fn json_string_body(body: &str) -> Option<Cow<'_, str>> {
    let bytes = body.as_bytes();
    let mut escaped = false;
    let mut plain = true;
    for &byte in bytes {
        if escaped {
            escaped = false;
        } else if byte == b'\\' {
            escaped = true;
            plain = false;
        } else if byte == b'"' || byte < 0x20 {
            return None;
        }
    }
    if escaped {
        return None;
    }
    if plain {
        return Some(Cow::Borrowed(body));
    }
    let quoted = format!("\"{body}\"");
    serde_json::from_str::<String>(&quoted).ok().map(Cow::Owned)
}

impl Decoder for AnthropicDecoder {
    async fn on_event(&mut self, event: &SseEvent, out: &mut Assembler) -> Step {
        // The hot path; anything unexpected takes the general path below.
        if event.event == "content_block_delta" {
            if let Some(delta) = BlockDelta::scan(&event.data) {
                self.on_delta(delta, out).await;
                return Step::Continue;
            }
            if let Ok(delta) = serde_json::from_str::<BlockDelta<'_>>(&event.data) {
                self.on_delta(delta, out).await;
                return Step::Continue;
            }
        }
        let data = match parse_event_json(&event.data) {
            Ok(data) => data,
            Err(step) => return step,
        };
        let kind = data["type"].as_str().unwrap_or(event.event.as_str());
        match kind {
            "message_start" => {
                out.set_response_id(data["message"]["id"].as_str());
                read_usage(&data["message"]["usage"], out);
            }
            "content_block_start" => {
                let wire_index = data["index"].as_u64().unwrap_or(0);
                let block = &data["content_block"];
                let index = match block["type"].as_str().unwrap_or_default() {
                    "thinking" => out.open_thinking().await,
                    "redacted_thinking" => {
                        let index = out.open_thinking().await;
                        out.set_redacted(
                            index,
                            block["data"].as_str().unwrap_or_default().to_owned(),
                        );
                        index
                    }
                    "tool_use" => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().unwrap_or_default();
                        let name = self
                            .tool_names
                            .get(&name.to_ascii_lowercase())
                            .cloned()
                            .unwrap_or_else(|| name.to_owned());
                        out.open_tool_call(id, name).await
                    }
                    _ => {
                        let index = out.open_text().await;
                        if let Some(text) = block["text"].as_str() {
                            out.text_delta(index, text).await;
                        }
                        index
                    }
                };
                self.blocks.insert(wire_index, index);
            }
            "content_block_delta" => {
                if let Ok(delta) = BlockDelta::deserialize(&data) {
                    self.on_delta(delta, out).await;
                }
            }
            "content_block_stop" => {
                if let Some(&index) = data["index"].as_u64().and_then(|i| self.blocks.get(&i)) {
                    out.close(index).await;
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                read_usage(&data["usage"], out);
            }
            "message_stop" => return self.finish(),
            "error" => {
                let error_type = data["error"]["type"].as_str().unwrap_or("error");
                let message = data["error"]["message"].as_str().unwrap_or("unknown error");
                let kind = match error_type {
                    "overloaded_error" => FailureKind::Overloaded,
                    "rate_limit_error" => FailureKind::RateLimited,
                    "api_error" | "timeout_error" => FailureKind::ServerError,
                    "authentication_error" | "permission_error" => FailureKind::Auth,
                    "request_too_large" => FailureKind::ContextOverflow,
                    "invalid_request_error" => FailureKind::InvalidRequest,
                    _ => FailureKind::Other,
                };
                let text = format!("{error_type}: {message}");
                let kind = if crate::failure::classify_error_message(&text)
                    == FailureKind::ContextOverflow
                {
                    FailureKind::ContextOverflow
                } else {
                    kind
                };
                return Step::Fail {
                    message: text,
                    failure: Failure::new(kind),
                };
            }
            // `ping` and event types added after this was written.
            _ => {}
        }
        Step::Continue
    }
}

impl AnthropicDecoder {
    async fn on_delta(&mut self, block: BlockDelta<'_>, out: &mut Assembler) {
        let Some(&index) = self.blocks.get(&block.index) else {
            return;
        };
        let delta = block.delta;
        let text = delta.text.as_deref().unwrap_or_default();
        let thinking = delta.thinking.as_deref().unwrap_or_default();
        let signature = delta.signature.as_deref().unwrap_or_default();
        let partial_json = delta.partial_json.as_deref().unwrap_or_default();
        match delta.kind.as_ref() {
            "text_delta" => out.text_delta(index, text).await,
            "thinking_delta" => out.thinking_delta(index, thinking).await,
            "signature_delta" => out.thinking_signature_delta(index, signature),
            "input_json_delta" => out.tool_args_delta(index, partial_json).await,
            _ => {}
        }
    }

    fn finish(&self) -> Step {
        match self.stop_reason.as_deref() {
            Some("max_tokens") => Step::Done(DoneReason::Length),
            Some("tool_use") => Step::Done(DoneReason::ToolUse),
            Some("refusal") => Step::Fail {
                message: "The model refused to respond (stop reason: refusal)".into(),
                failure: Failure::new(FailureKind::Other),
            },
            Some("model_context_window_exceeded") => Step::Fail {
                message:
                    "model_context_window_exceeded: the conversation exceeds the context window"
                        .into(),
                failure: Failure::new(FailureKind::ContextOverflow),
            },
            // `end_turn`, `pause_turn`, `stop_sequence`, or none.
            _ => Step::Done(DoneReason::Stop),
        }
    }
}

fn read_usage(usage: &Value, out: &mut Assembler) {
    let usage_out = out.usage_mut();
    if let Some(input) = usage["input_tokens"].as_u64() {
        usage_out.input = input;
    }
    if let Some(output) = usage["output_tokens"].as_u64() {
        usage_out.output = output;
    }
    if let Some(read) = usage["cache_read_input_tokens"].as_u64() {
        usage_out.cache_read = read;
    }
    if let Some(write) = usage["cache_creation_input_tokens"].as_u64() {
        usage_out.cache_write = write;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A delta's index, kind, text, thinking and partial JSON, owned.
    type Flat = (u64, String, Option<String>, Option<String>, Option<String>);

    /// What the general path reads from the same text.
    fn parsed(data: &str) -> Option<Flat> {
        let delta = serde_json::from_str::<BlockDelta<'_>>(data).ok()?;
        Some(flatten(delta))
    }

    fn flatten(delta: BlockDelta<'_>) -> Flat {
        let fields = delta.delta;
        (
            delta.index,
            fields.kind.into_owned(),
            fields.text.map(Cow::into_owned),
            fields.thinking.map(Cow::into_owned),
            fields.partial_json.map(Cow::into_owned),
        )
    }

    fn text(text: &str) -> UserContent {
        UserContent::Text(crate::types::TextContent {
            text: text.to_owned(),
            text_signature: None,
        })
    }

    fn image() -> UserContent {
        UserContent::Image(crate::types::ImageContent {
            data: "aGk=".to_owned(),
            mime_type: "image/png".to_owned(),
        })
    }

    #[test]
    fn tool_results_carry_their_texts_as_a_string_and_images_as_blocks_as_pi_sends_them() {
        assert_eq!(
            tool_result_content(&[text("one"), text("two")]),
            json!("one\ntwo")
        );
        assert_eq!(tool_result_content(&[]), json!(""));
        assert_eq!(
            tool_result_content(&[text("a chart"), image()]),
            json!([{"type": "text", "text": "a chart"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}])
        );
        assert_eq!(
            tool_result_content(&[image()])[0],
            json!({"type": "text", "text": "(see attached image)"})
        );
    }

    #[test]
    fn whitespace_and_empty_thinking_are_left_out_and_the_cache_mark_needs_the_users_turn() {
        let user = |content: Vec<UserContent>| {
            Message::User(crate::types::UserMessage {
                content,
                timestamp: 0,
            })
        };
        let assistant = Message::Assistant(crate::types::AssistantMessage {
            content: vec![
                AssistantContent::Thinking(crate::types::ThinkingContent {
                    thinking: " ".to_owned(),
                    thinking_signature: Some("sig".to_owned()),
                    redacted: false,
                }),
                AssistantContent::Text(crate::types::TextContent {
                    text: "answer".to_owned(),
                    text_signature: None,
                }),
            ],
            ..Default::default()
        });
        let mut raw = RawTexts::default();
        let sent = convert_messages(
            &[user(vec![text("  "), text("question")]), assistant.clone()],
            &mut raw,
            false,
            &json!({"type": "ephemeral"}),
        );
        assert_eq!(
            sent,
            [
                json!({"role": "user", "content": [{"type": "text", "text": "question"}]}),
                json!({"role": "assistant", "content": [{"type": "text", "text": "answer"}]}),
            ]
        );
        let sent = convert_messages(
            &[assistant, user(vec![text("next")])],
            &mut raw,
            false,
            &json!({"type": "ephemeral"}),
        );
        assert_eq!(
            sent[1],
            json!({"role": "user", "content": [{"type": "text", "text": "next",
                "cache_control": {"type": "ephemeral"}}]})
        );
    }

    #[test]
    fn the_scanner_reads_each_delta_kind_as_the_parser_does() {
        for data in [
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a\\\\b\"}"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line\nnext \u00e9 \ud83d\ude00"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}"#,
        ] {
            let scanned = BlockDelta::scan(data).map(flatten);
            assert!(scanned.is_some(), "the scanner should read {data}");
            assert_eq!(scanned, parsed(data), "{data}");
        }
    }

    #[test]
    fn other_spellings_go_to_the_parser() {
        for data in [
            // Whitespace, key order, extra fields, other kinds, broken strings.
            r#"{"type": "content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","x":1}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"}}"#,
            r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"a"}}"#,
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\tb\"}}",
        ] {
            assert!(
                BlockDelta::scan(data).is_none(),
                "the scanner should decline {data}"
            );
        }
    }

    proptest! {
        /// Whatever the text (quotes, backslashes, control characters, any Unicode), the
        /// scanner either declines or agrees with the parser.
        #[test]
        fn the_scanner_never_disagrees_with_the_parser(text in any::<String>(), raw in "[a-z\\\\\"\\n]{0,8}") {
            let encoded = serde_json::to_string(&text).unwrap();
            let data = format!(
                r#"{{"type":"content_block_delta","index":3,"delta":{{"type":"text_delta","text":{encoded}}}}}"#
            );
            let scanned = BlockDelta::scan(&data).map(flatten);
            prop_assert!(scanned.is_some());
            prop_assert_eq!(scanned, parsed(&data));
            let data = format!(
                r#"{{"type":"content_block_delta","index":3,"delta":{{"type":"text_delta","text":"{raw}"}}}}"#
            );
            if let Some(scanned) = BlockDelta::scan(&data).map(flatten) {
                prop_assert_eq!(Some(scanned), parsed(&data));
            }
        }
    }
}
