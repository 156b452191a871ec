//! How an OpenAI-compatible server differs from OpenAI's Chat Completions (pi's
//! `OpenAICompletionsCompat`), resolved to concrete values: detected from the provider and
//! base URL.

use crate::model::{Model, ThinkingLevel};

/// How a server switches reasoning on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort` (OpenAI, Groq, OpenRouter, ...).
    OpenAi,
    /// z.ai: top-level `enable_thinking`.
    Zai,
    /// Qwen: top-level `enable_thinking`.
    Qwen,
    /// Qwen via a chat template: `chat_template_kwargs.enable_thinking`.
    QwenChatTemplate,
}

/// Concrete compatibility settings for one model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionsCompat {
    /// Send `store: false`.
    pub supports_store: bool,
    /// Reasoning models take the system prompt as a `developer` message.
    pub supports_developer_role: bool,
    /// The server accepts `reasoning_effort`.
    pub supports_reasoning_effort: bool,
    /// The server streams usage when asked with `stream_options.include_usage`.
    pub supports_usage_in_streaming: bool,
    /// `max_completion_tokens` or `max_tokens`.
    pub max_tokens_field: &'static str,
    /// `tool` messages must carry the tool's `name`.
    pub requires_tool_result_name: bool,
    /// A user message may not follow a tool message directly.
    pub requires_assistant_after_tool_result: bool,
    /// Earlier reasoning must be sent back as text.
    pub requires_thinking_as_text: bool,
    /// How reasoning is switched on.
    pub thinking_format: ThinkingFormat,
    /// Tools carry `strict: false`.
    pub supports_strict_mode: bool,
    /// Tool-call ids must be nine alphanumeric characters (Mistral).
    pub mistral_tool_ids: bool,
}

impl CompletionsCompat {
    /// Detects the settings for `model` from its provider and base URL.
    pub fn for_model(model: &Model) -> Self {
        let url = model.base_url.to_ascii_lowercase();
        let is = |provider: &str, host: &str| model.provider == provider || url.contains(host);
        let zai = is("zai", "api.z.ai");
        let xai = is("xai", "api.x.ai");
        let mistral = is("mistral", "mistral.ai");
        let non_standard = zai
            || xai
            || mistral
            || is("cerebras", "cerebras.ai")
            || is("deepseek", "deepseek.com")
            || is("chutes", "chutes.ai")
            || is("opencode", "opencode.ai");
        let local = ["localhost", "127.0.0.1", "0.0.0.0", "[::1]"]
            .iter()
            .any(|host| url.contains(host));
        CompletionsCompat {
            supports_store: !non_standard && !local,
            supports_developer_role: !non_standard && !local,
            supports_reasoning_effort: !(xai || zai),
            supports_usage_in_streaming: true,
            max_tokens_field: if mistral || local || is("chutes", "chutes.ai") {
                "max_tokens"
            } else {
                "max_completion_tokens"
            },
            requires_tool_result_name: mistral,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: mistral,
            thinking_format: if zai {
                ThinkingFormat::Zai
            } else {
                ThinkingFormat::OpenAi
            },
            supports_strict_mode: !local,
            mistral_tool_ids: mistral,
        }
    }

    /// The `reasoning_effort` value for a level.
    pub fn reasoning_effort(&self, level: ThinkingLevel) -> &'static str {
        match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High | ThinkingLevel::Xhigh => "high",
        }
    }
}
