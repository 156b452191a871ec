//! Messages and content blocks, serialized exactly as pi serializes them (camelCase fields,
//! `type`-tagged content, `role`-tagged messages, Unix-millisecond timestamps), so sessions,
//! exports and events stay compatible with pi.

pub use pi_json::ToolArguments;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// `{type:"text", text, textSignature?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Provider signature of the text block (OpenAI Responses message ids), round-tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

/// `{type:"thinking", thinking, thinkingSignature?, redacted?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text (empty for redacted thinking).
    pub thinking: String,
    /// Provider signature (Anthropic `signature`, OpenAI reasoning item JSON), round-tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// The provider redacted the reasoning; the signature carries it opaquely.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// `{type:"image", data, mimeType}`; `data` is base64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
}

/// `{type:"toolCall", id, name, arguments, thoughtSignature?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider-assigned call id; never empty.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, a JSON object (partial while streaming), with the model's exact text once the
    /// call is complete.
    pub arguments: ToolArguments,
    /// Google thought signature, round-tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// Content of user messages and tool results: text or image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserContent {
    /// Text.
    Text(TextContent),
    /// Image.
    Image(ImageContent),
}

/// Content of assistant messages: text, thinking or a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantContent {
    /// Text.
    Text(TextContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// A tool call.
    ToolCall(ToolCall),
}

/// Why an assistant message ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished.
    #[default]
    Stop,
    /// The output token limit was hit.
    Length,
    /// The model wants tool results.
    ToolUse,
    /// The request failed; `errorMessage` says why.
    Error,
    /// The request was aborted.
    Aborted,
}

/// Cost in USD per bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Non-cached input.
    #[serde(serialize_with = "pi_json::js_number")]
    pub input: f64,
    /// Output (including reasoning).
    #[serde(serialize_with = "pi_json::js_number")]
    pub output: f64,
    /// Cache reads.
    #[serde(serialize_with = "pi_json::js_number")]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(serialize_with = "pi_json::js_number")]
    pub cache_write: f64,
    /// Sum of the four.
    #[serde(serialize_with = "pi_json::js_number")]
    pub total: f64,
}

/// Token usage of one response. `input` is non-cached input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Non-cached input tokens.
    pub input: u64,
    /// Output tokens (including reasoning).
    pub output: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
    /// `input + output + cacheRead + cacheWrite`.
    pub total_tokens: u64,
    /// Cost from the model's prices.
    pub cost: Cost,
}

/// `{role:"user", content, timestamp}`. Deserializes pi's string shorthand too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text and images.
    #[serde(deserialize_with = "string_or_user_content")]
    pub content: Vec<UserContent>,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// `{role:"assistant", content, api, provider, model, usage, stopReason, errorMessage?, timestamp}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool calls in stream order.
    pub content: Vec<AssistantContent>,
    /// The API kind that produced it (`anthropic-messages`, ...).
    pub api: String,
    /// The provider id (`anthropic`, ...).
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Tokens and cost.
    pub usage: Usage,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Unix milliseconds.
    pub timestamp: i64,
    /// The provider's id of the response (Anthropic's message id, OpenAI's completion or
    /// response id, Gemini's `responseId`), when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// For `error`/`aborted`: what happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Why the request failed, when it did and the failure is known (live responses only: not
    /// serialized, so stored and exported messages carry pi's `errorMessage` alone).
    #[serde(skip)]
    pub failure: Option<crate::failure::Failure>,
}

/// `{role:"toolResult", toolCallId, toolName, content, details?, isError, timestamp}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<UserContent>,
    /// Structured detail for clients; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The call failed.
    pub is_error: bool,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// A message of the LLM conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's result.
    ToolResult(ToolResultMessage),
}

impl UserContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        UserContent::Text(TextContent {
            text: text.into(),
            text_signature: None,
        })
    }
}

impl AssistantMessage {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                AssistantContent::Text(text) => Some(text.text.as_str()),
                AssistantContent::Thinking(_) | AssistantContent::ToolCall(_) => None,
            })
            .collect()
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            AssistantContent::ToolCall(call) => Some(call),
            AssistantContent::Text(_) | AssistantContent::Thinking(_) => None,
        })
    }
}

impl Usage {
    /// Recomputes `total_tokens` and the cost from per-million prices.
    pub fn price(&mut self, prices: &crate::model::ModelCost) {
        self.total_tokens = self.input + self.output + self.cache_read + self.cache_write;
        let per_million = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        self.cost.input = per_million(self.input, prices.input);
        self.cost.output = per_million(self.output, prices.output);
        self.cost.cache_read = per_million(self.cache_read, prices.cache_read);
        self.cost.cache_write = per_million(self.cache_write, prices.cache_write);
        self.cost.total =
            self.cost.input + self.cost.output + self.cost.cache_read + self.cost.cache_write;
    }
}

fn string_or_user_content<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<UserContent>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        Text(String),
        Blocks(Vec<UserContent>),
    }
    Ok(match Shape::deserialize(deserializer)? {
        Shape::Text(text) => vec![UserContent::text(text)],
        Shape::Blocks(blocks) => blocks,
    })
}

/// pi's `isContextOverflow`: an error whose text matches a provider's overflow message, or a
/// successful response whose input alone exceeded the window (servers that truncate silently).
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    match message.stop_reason {
        StopReason::Error => {
            message
                .failure
                .is_some_and(|failure| failure.kind == crate::failure::FailureKind::ContextOverflow)
                || message
                    .error_message
                    .as_deref()
                    .is_some_and(crate::failure::is_overflow_text)
        }
        StopReason::Stop => context_window.is_some_and(|window| {
            window > 0 && message.usage.input + message.usage.cache_read > window
        }),
        StopReason::Length | StopReason::ToolUse | StopReason::Aborted => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_in_pi_shapes() {
        let assistant = json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                {"type": "text", "text": "hi"},
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a"}}
            ],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
            "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "toolUse", "timestamp": 5
        });
        let message: Message = serde_json::from_value(assistant.clone()).unwrap();
        assert_eq!(serde_json::to_value(&message).unwrap(), assistant);

        let user: Message =
            serde_json::from_value(json!({"role": "user", "content": "hello", "timestamp": 1}))
                .unwrap();
        assert_eq!(
            serde_json::to_value(&user).unwrap(),
            json!({"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1})
        );
    }

    #[test]
    fn pricing_sums_buckets() {
        let mut usage = Usage {
            input: 1_000_000,
            output: 500_000,
            cache_read: 0,
            cache_write: 0,
            ..Usage::default()
        };
        usage.price(&crate::model::ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        });
        assert_eq!(usage.total_tokens, 1_500_000);
        assert!((usage.cost.total - 10.5).abs() < 1e-9);
    }
}
