//! `bedrock-converse-stream`: Amazon Bedrock's Converse API
//! (`POST {endpoint}/model/{modelId}/converse-stream`), its response in AWS's binary event
//! stream, signed with SigV4 (or a Bedrock API key as a Bearer token); credentials and region
//! from [`crate::aws`].
//!
//! Request (pi 0.73.1's): `messages` (text, images as bytes, `toolUse`, `toolResult` —
//! consecutive results in one user message —, Claude's signed thinking as `reasoningContent`),
//! `system` (with a cache point for Claude 4 models), `inferenceConfig.maxTokens`,
//! `toolConfig.tools[].toolSpec`, and for a thinking Claude `additionalModelRequestFields`
//! (`thinking` with pi's budgets, the interleaved-thinking beta). Stream: `messageStart`,
//! `contentBlockStart` (tool use), `contentBlockDelta` (text, `toolUse.input`,
//! `reasoningContent` text and signature), `contentBlockStop`, `messageStop` (stop reason),
//! `metadata` (usage); exceptions by type. The endpoint: `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`
//! (or `AWS_ENDPOINT_URL`), else the region's, else a `baseUrl` of `models.json`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::base_max_tokens;
use super::deferred::deferred;
use crate::assemble::Assembler;
use crate::aws::BedrockAuth;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, Framing, HttpRequest, RawTexts, Step};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{Context, Provider, StreamOptions};
use crate::sse::SseEvent;
use crate::transform::transform_messages;
use crate::types::{AssistantContent, Message, UserContent};

/// The Bedrock wire format.
#[derive(Debug, Default)]
pub struct BedrockProvider;

impl Provider for BedrockProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let body = build_body(model, context, &options);
        let owned = model.clone();
        deferred(
            model,
            options.cancel.clone(),
            FailureKind::Auth,
            async move {
                let var = |name: &str| options.env_var(name);
                let auth = crate::aws::credentials(&var).await?;
                let request = build_request(&owned, body, &options, auth)?;
                Ok(super::send(
                    &owned,
                    Ok(request),
                    &options,
                    BedrockDecoder::default(),
                ))
            },
        )
    }
}

/// The region in a Bedrock endpoint's host (`bedrock-runtime.REGION.amazonaws.com`).
fn endpoint_region(base_url: &str) -> Option<String> {
    let host = url::Url::parse(base_url).ok()?.host_str()?.to_owned();
    let rest = host.strip_prefix("bedrock-runtime.")?;
    let region = rest.split('.').next()?;
    (!region.is_empty() && host.ends_with(".amazonaws.com")).then(|| region.to_owned())
}

/// The request with its body and `auth`: URL, headers and the signer.
pub fn build_request(
    model: &Model,
    body: Value,
    options: &StreamOptions,
    auth: BedrockAuth,
) -> Result<HttpRequest, String> {
    let var = |name: &str| options.env_var(name);
    let native = endpoint_region(&model.base_url);
    let region = crate::aws::region(&var, native.as_deref());
    let endpoint = var("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
        .or_else(|| var("AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| match native {
            // The catalog's endpoint follows the region chosen.
            Some(_) => format!("https://bedrock-runtime.{region}.amazonaws.com"),
            None => model.base_url.clone(),
        });
    let id: String = url::form_urlencoded::byte_serialize(model.id.as_bytes()).collect();
    let url = format!(
        "{}/model/{}/converse-stream",
        endpoint.trim_end_matches('/'),
        id.replace('+', "%20")
    );
    let mut headers = super::header_list(model);
    headers.push(("content-type".into(), "application/json".into()));
    headers.push(("accept".into(), "application/vnd.amazon.eventstream".into()));
    let sign: Option<crate::http::Signer> = match auth {
        BedrockAuth::Bearer(token) => {
            headers.push(("authorization".into(), format!("Bearer {token}")));
            None
        }
        BedrockAuth::SigV4(keys) => Some(Box::new(move |url, body, headers| {
            let host = url::Url::parse(url)
                .ok()
                .and_then(|url| {
                    url.host_str().map(|host| match url.port() {
                        Some(port) => format!("{host}:{port}"),
                        None => host.to_owned(),
                    })
                })
                .unwrap_or_default();
            let mut signed = headers.clone();
            signed.push(("host".into(), host));
            let added = crate::aws::sign(
                &keys,
                &region,
                "bedrock",
                std::time::SystemTime::now(),
                "POST",
                url,
                &signed,
                body,
            )?;
            headers.extend(added);
            Ok(())
        })),
    };
    Ok(HttpRequest {
        url,
        headers,
        body,
        raw: RawTexts::default(),
        sign,
    })
}

fn is_claude(model: &Model) -> bool {
    model.id.contains("claude") || model.name.to_ascii_lowercase().contains("claude")
}

fn adaptive(model: &Model) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "sonnet-4-6",
        "sonnet-4.6",
        "opus-4-7",
        "opus-4.7",
    ]
    .iter()
    .any(|tag| model.id.contains(tag))
}

/// Tool-call ids as Bedrock takes them: letters, digits, `_` and `-`, at most 64.
fn tool_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The Converse body.
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let claude = is_claude(model);
    let caching = claude
        && ["-4-", "-4.", "-5"]
            .iter()
            .any(|tag| model.id.contains(tag));
    let cache_point = || match options.cache_retention {
        crate::provider::CacheRetention::Long => {
            json!({"cachePoint": {"type": "default", "ttl": "1h"}})
        }
        crate::provider::CacheRetention::Short => json!({"cachePoint": {"type": "default"}}),
    };
    let messages = transform_messages(&context.messages, model, Some(tool_id));
    let mut converted = convert_messages(&messages);
    if caching
        && let Some(Value::Array(content)) = converted
            .last_mut()
            .filter(|message| message["role"] == "user")
            .map(|message| &mut message["content"])
    {
        content.push(cache_point());
    }
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(converted));
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let mut blocks = vec![json!({"text": system})];
        if caching {
            blocks.push(cache_point());
        }
        body.insert("system".into(), Value::Array(blocks));
    }
    body.insert(
        "inferenceConfig".into(),
        json!({"maxTokens": base_max_tokens(model, options)}),
    );
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {"name": tool.name, "description": tool.description,
                    "inputSchema": {"json": tool.parameters}}})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if model.reasoning && claude && options.thinking != ThinkingLevel::Off {
        let fields = if adaptive(model) {
            let effort = match options.thinking {
                ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                ThinkingLevel::High | ThinkingLevel::Xhigh => "high",
            };
            json!({"thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": effort}})
        } else {
            let budget =
                options
                    .thinking_budgets
                    .of(options.thinking)
                    .unwrap_or(match options.thinking {
                        ThinkingLevel::Off | ThinkingLevel::Minimal => 1024,
                        ThinkingLevel::Low => 2048,
                        ThinkingLevel::Medium => 8192,
                        ThinkingLevel::High | ThinkingLevel::Xhigh => 16384,
                    });
            json!({"thinking": {"type": "enabled", "budget_tokens": budget, "display": "summarized"},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"]})
        };
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Value::Object(body)
}

fn image_block(mime_type: &str, data: &str) -> Value {
    let format = mime_type.strip_prefix("image/").unwrap_or("png");
    let format = if format == "jpg" { "jpeg" } else { format };
    json!({"image": {"format": format, "source": {"bytes": data}}})
}

fn convert_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => {
                let content: Vec<Value> = user
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        UserContent::Text(text) if text.text.trim().is_empty() => None,
                        UserContent::Text(text) => Some(json!({"text": text.text})),
                        UserContent::Image(image) => {
                            Some(image_block(&image.mime_type, &image.data))
                        }
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(assistant) => {
                let content: Vec<Value> = assistant
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Text(text) if text.text.trim().is_empty() => None,
                        AssistantContent::Text(text) => Some(json!({"text": text.text})),
                        AssistantContent::Thinking(thinking) if thinking.thinking.trim().is_empty() => None,
                        AssistantContent::Thinking(thinking) => match &thinking.thinking_signature {
                            Some(signature) if !signature.is_empty() => Some(json!({"reasoningContent":
                                {"reasoningText": {"text": thinking.thinking, "signature": signature}}})),
                            _ => Some(json!({"text": thinking.thinking})),
                        },
                        AssistantContent::ToolCall(call) => Some(json!({"toolUse": {
                            "toolUseId": call.id, "name": call.name, "input": *call.arguments}})),
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(result) => {
                let mut content: Vec<Value> = result
                    .content
                    .iter()
                    .map(|block| match block {
                        UserContent::Text(text) => json!({"text": text.text}),
                        UserContent::Image(image) => image_block(&image.mime_type, &image.data),
                    })
                    .collect();
                if content.is_empty() {
                    content.push(json!({"text": "(no output)"}));
                }
                let block = json!({"toolResult": {"toolUseId": result.tool_call_id,
                    "content": content, "status": if result.is_error { "error" } else { "success" }}});
                // Results of one turn go together in one user message.
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"].as_array().is_some_and(|blocks| {
                                blocks.iter().all(|b| b.get("toolResult").is_some())
                            }) =>
                    {
                        if let Some(blocks) = last["content"].as_array_mut() {
                            blocks.push(block);
                        }
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    out
}

/// Stream state: Bedrock's block indexes mapped to ours.
#[derive(Debug, Default)]
pub struct BedrockDecoder {
    blocks: HashMap<u64, usize>,
    stop_reason: Option<String>,
}

impl Decoder for BedrockDecoder {
    fn framing(&self) -> Framing {
        Framing::AwsEventStream
    }

    async fn on_event(&mut self, event: &SseEvent, out: &mut Assembler) -> Step {
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(data) => data,
            Err(error) => {
                return Step::Fail {
                    message: format!("Bedrock sent a malformed event ({error})"),
                    failure: Failure::new(FailureKind::StreamCut),
                };
            }
        };
        if let Some(kind) = event.event.strip_prefix("exception:") {
            let message = data["message"]
                .as_str()
                .or_else(|| data["Message"].as_str())
                .unwrap_or(kind);
            let failure = match kind {
                "throttlingException" => FailureKind::RateLimited,
                "serviceUnavailableException" | "modelNotReadyException" => FailureKind::Overloaded,
                "internalServerException" => FailureKind::ServerError,
                "modelStreamErrorException" => FailureKind::StreamCut,
                "validationException" => crate::failure::classify_error_message(message),
                "accessDeniedException" => FailureKind::Auth,
                _ => FailureKind::Other,
            };
            return Step::Fail {
                message: format!("{kind}: {message}"),
                failure: Failure::new(failure),
            };
        }
        let index = data["contentBlockIndex"].as_u64().unwrap_or(0);
        match event.event.as_str() {
            "contentBlockStart" => {
                if let Some(tool) = data["start"].get("toolUse") {
                    let id = tool["toolUseId"].as_str().unwrap_or_default().to_owned();
                    let name = tool["name"].as_str().unwrap_or_default().to_owned();
                    let opened = out.open_tool_call(id, name).await;
                    self.blocks.insert(index, opened);
                }
            }
            "contentBlockDelta" => {
                let delta = &data["delta"];
                if let Some(text) = delta["text"].as_str() {
                    let opened = self.block(index, out, false).await;
                    out.text_delta(opened, text).await;
                } else if let Some(input) = delta["toolUse"]["input"].as_str() {
                    if let Some(&opened) = self.blocks.get(&index) {
                        out.tool_args_delta(opened, input).await;
                    }
                } else if let Some(reasoning) = delta.get("reasoningContent") {
                    let opened = self.block(index, out, true).await;
                    if let Some(text) = reasoning["text"].as_str() {
                        out.thinking_delta(opened, text).await;
                    }
                    if let Some(signature) = reasoning["signature"].as_str() {
                        out.thinking_signature_delta(opened, signature);
                    }
                }
            }
            "contentBlockStop" => {
                if let Some(opened) = self.blocks.remove(&index) {
                    out.close(opened).await;
                }
            }
            "messageStop" => {
                self.stop_reason = data["stopReason"].as_str().map(str::to_owned);
            }
            "metadata" => {
                let usage = &data["usage"];
                let usage_out = out.usage_mut();
                usage_out.input = usage["inputTokens"].as_u64().unwrap_or(0);
                usage_out.output = usage["outputTokens"].as_u64().unwrap_or(0);
                usage_out.cache_read = usage["cacheReadInputTokens"].as_u64().unwrap_or(0);
                usage_out.cache_write = usage["cacheWriteInputTokens"].as_u64().unwrap_or(0);
                return self.done(out);
            }
            _ => {}
        }
        Step::Continue
    }

    fn on_end(&mut self, out: &Assembler) -> Step {
        match self.stop_reason {
            Some(_) => self.done(out),
            None => crate::http::stream_cut(),
        }
    }
}

impl BedrockDecoder {
    /// The text or thinking block at Bedrock's `index`, opened the first time.
    async fn block(&mut self, index: u64, out: &mut Assembler, thinking: bool) -> usize {
        if let Some(&opened) = self.blocks.get(&index) {
            return opened;
        }
        let opened = if thinking {
            out.open_thinking().await
        } else {
            out.open_text().await
        };
        self.blocks.insert(index, opened);
        opened
    }

    fn done(&self, out: &Assembler) -> Step {
        match self.stop_reason.as_deref() {
            Some("max_tokens" | "model_context_window_exceeded") => Step::Done(DoneReason::Length),
            Some("guardrail_intervened" | "content_filtered") => Step::Fail {
                message: "The response was blocked by the provider's content filter".into(),
                failure: Failure::new(FailureKind::Other),
            },
            _ if out.has_tool_calls() => Step::Done(DoneReason::ToolUse),
            _ => Step::Done(DoneReason::Stop),
        }
    }
}
