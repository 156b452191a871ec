//! Conversation messages on the wire, in pi's `AgentMessage` JSON shapes (so events and exports
//! stay compatible with pi's RPC and JSON modes), and the streaming event of an assistant
//! message (pi's `AssistantMessageEvent`, without the cumulative `partial`).

pub use pi_json::ToolArguments;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{type:"text", text, textSignature?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Provider signature, round-tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

/// `{type:"thinking", thinking, thinkingSignature?, redacted?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text.
    pub thinking: String,
    /// Provider signature, round-tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// Redacted by the provider.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// `{type:"image", data, mimeType}` with base64 `data`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 bytes.
    pub data: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
}

/// `{type:"toolCall", id, name, arguments, thoughtSignature?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments object, in the model's key order (and with its exact text when it was
    /// read from one).
    pub arguments: ToolArguments,
    /// Google thought signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// Text or image (user messages, tool results).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserContent {
    /// Text.
    Text(TextContent),
    /// Image.
    Image(ImageContent),
}

/// Text, thinking or tool call (assistant messages).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantContent {
    /// Text.
    Text(TextContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// Tool call.
    ToolCall(ToolCall),
}

/// Why an assistant message ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Finished.
    Stop,
    /// Output limit.
    Length,
    /// Wants tool results.
    ToolUse,
    /// Failed (`errorMessage`).
    Error,
    /// Aborted.
    Aborted,
}

/// Cost in USD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Non-cached input.
    #[serde(serialize_with = "pi_json::js_number")]
    pub input: f64,
    /// Output.
    #[serde(serialize_with = "pi_json::js_number")]
    pub output: f64,
    /// Cache reads.
    #[serde(serialize_with = "pi_json::js_number")]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(serialize_with = "pi_json::js_number")]
    pub cache_write: f64,
    /// Sum.
    #[serde(serialize_with = "pi_json::js_number")]
    pub total: f64,
}

/// Token usage; `input` is non-cached input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Non-cached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Sum of the four.
    pub total_tokens: u64,
    /// Cost.
    pub cost: Cost,
}

/// `{role:"user", content, timestamp}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text and images.
    pub content: Vec<UserContent>,
    /// Unix ms.
    pub timestamp: i64,
}

/// `{role:"assistant", ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Blocks in stream order.
    pub content: Vec<AssistantContent>,
    /// API kind.
    pub api: String,
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Usage.
    pub usage: Usage,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Unix ms.
    pub timestamp: i64,
    /// The provider's id of the response, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// For errors and aborts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// `{role:"toolResult", ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call answered.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<UserContent>,
    /// Structured detail for clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The call failed.
    pub is_error: bool,
    /// Unix ms.
    pub timestamp: i64,
}

/// `{role:"bashExecution", ...}`: a user shell command (`!cmd`, `!!cmd`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command.
    pub command: String,
    /// Sanitized, truncated output.
    pub output: String,
    /// Exit code; absent when killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Killed.
    pub cancelled: bool,
    /// Output truncated.
    pub truncated: bool,
    /// Full output (`artifact://ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Never sent to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude_from_context: bool,
    /// Unix ms.
    pub timestamp: i64,
}

/// `{role:"custom", ...}`: an injected message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// Producer's tag.
    pub custom_type: String,
    /// Content.
    pub content: Vec<UserContent>,
    /// Whether to show it.
    pub display: bool,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Unix ms.
    pub timestamp: i64,
}

/// `{role:"branchSummary", summary, fromId, timestamp}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// Summary text.
    pub summary: String,
    /// Entry id it was written at.
    pub from_id: String,
    /// Unix ms.
    pub timestamp: i64,
}

/// `{role:"compactionSummary", summary, tokensBefore, timestamp}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// Summary text.
    pub summary: String,
    /// Tokens before compaction.
    pub tokens_before: u64,
    /// Unix ms.
    pub timestamp: i64,
}

/// A conversation message, tagged by `role`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum AgentMessage {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool result.
    ToolResult(ToolResultMessage),
    /// A user shell command.
    BashExecution(BashExecutionMessage),
    /// An injected message.
    Custom(CustomMessage),
    /// A branch summary.
    BranchSummary(BranchSummaryMessage),
    /// A compaction summary.
    CompactionSummary(CompactionSummaryMessage),
}

/// One streaming event of an assistant message (pi's `AssistantMessageEvent` without the
/// cumulative `partial`; rebuild the partial from `message_start` and these deltas).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    /// Response began.
    Start,
    /// Text block began.
    TextStart {
        /// Block index.
        content_index: usize,
    },
    /// Text delta.
    TextDelta {
        /// Block index.
        content_index: usize,
        /// New text.
        delta: String,
    },
    /// Text block ended.
    TextEnd {
        /// Block index.
        content_index: usize,
        /// Whole text.
        content: String,
        /// Signature.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Thinking block began.
    ThinkingStart {
        /// Block index.
        content_index: usize,
    },
    /// Thinking delta.
    ThinkingDelta {
        /// Block index.
        content_index: usize,
        /// New text.
        delta: String,
    },
    /// Thinking block ended.
    ThinkingEnd {
        /// Block index.
        content_index: usize,
        /// Whole text.
        content: String,
        /// Signature.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Redacted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// Tool call began.
    ToolcallStart {
        /// Block index.
        content_index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        tool_name: String,
    },
    /// Tool call argument delta.
    ToolcallDelta {
        /// Block index.
        content_index: usize,
        /// Raw JSON fragment.
        delta: String,
        /// Arguments parsed so far, when re-parsed for this delta (large arguments are re-parsed
        /// only as they grow by a quarter); absent means unchanged since the last delta.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    /// Tool call ended.
    ToolcallEnd {
        /// Block index.
        content_index: usize,
        /// The complete call.
        tool_call: ToolCall,
    },
    /// Succeeded (terminal).
    Done {
        /// `stop`, `length` or `toolUse`.
        reason: String,
        /// Final message.
        message: AssistantMessage,
    },
    /// Failed or aborted (terminal).
    Error {
        /// `error` or `aborted`.
        reason: String,
        /// Partial message with the error.
        error: AssistantMessage,
    },
}

/// A tool's result: what the model sees plus structured detail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// What the model sees.
    pub content: Vec<UserContent>,
    /// Structured detail (diff, truncation), absent where pi has none: a successful call
    /// that set none. A failed call always has it (`{}` at least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}
