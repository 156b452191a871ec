//! Quirks of OpenAI-compatible chat-completions servers (pi's `OpenAICompletionsCompat`): which
//! request fields a server accepts and how it wants reasoning, tool results and thinking sent.
//!
//! [`OpenAiCompletionsCompat`] is the configured form (every field optional, camelCase JSON, as
//! in `models.json`); [`ResolvedCompat`] is the concrete form a provider uses. Resolution starts
//! from what the provider id and base URL reveal ([`ResolvedCompat::detect`]) and lets every
//! configured field win, so an explicit `compat` in `models.json` always overrides detection.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::level::ThinkingLevel;

/// Configured compatibility flags; `None` fields are detected from the provider and base URL.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiCompletionsCompat {
    /// Send `store: false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    /// Send the system prompt with role `developer` to reasoning models (else `system`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    /// Send `reasoning_effort` to reasoning models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    /// Wire value for each thinking level (`{"xhigh": "max"}`); unmapped levels send their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort_map: Option<BTreeMap<ThinkingLevel, String>>,
    /// Send `stream_options: {include_usage: true}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    /// Which field carries the output token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    /// Tool result messages must carry the tool's `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    /// A user message may not follow a tool result directly; insert an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    /// Replay earlier thinking as `<thinking>` text instead of a reasoning field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    /// Tool call ids must be exactly 9 alphanumeric characters (Mistral).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_mistral_tool_ids: Option<bool>,
    /// Assistant messages with tool calls must carry their `reasoning_content` (DeepSeek).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
    /// How thinking is switched on in the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_format: Option<ThinkingFormat>,
    /// OpenRouter provider routing (`provider: {only, order}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_router_routing: Option<RoutingPreferences>,
    /// Vercel AI Gateway routing (`providerOptions.gateway: {only, order}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vercel_gateway_routing: Option<RoutingPreferences>,
    /// Tools may be sent with `strict: false`; when unsupported the field is omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
}

/// The request field that carries the output token cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI's current name).
    MaxCompletionTokens,
    /// `max_tokens` (older servers, DeepSeek, Mistral, local servers).
    MaxTokens,
}

/// How a request turns thinking on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkingFormat {
    /// `reasoning_effort: "<level>"`.
    Openai,
    /// `reasoning: {effort: "<level>"}` (OpenRouter's normalized form).
    Openrouter,
    /// Top-level `enable_thinking: bool` (Z.ai).
    Zai,
    /// Top-level `enable_thinking: bool` (Qwen / DashScope).
    Qwen,
    /// `chat_template_kwargs: {enable_thinking: bool}` (vLLM / llama.cpp serving Qwen).
    QwenChatTemplate,
    /// `thinking: {type: "enabled"|"disabled"}` plus `reasoning_effort` (DeepSeek).
    Deepseek,
}

/// Which upstream providers a router may use, and in what order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutingPreferences {
    /// Only these upstream providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
    /// Try upstream providers in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<String>>,
}

/// Concrete compatibility flags for one model; see [`OpenAiCompletionsCompat`] for meanings.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedCompat {
    /// Send `store: false`.
    pub supports_store: bool,
    /// Use role `developer` for the system prompt of reasoning models.
    pub supports_developer_role: bool,
    /// Send `reasoning_effort`.
    pub supports_reasoning_effort: bool,
    /// Wire value per level.
    pub reasoning_effort_map: BTreeMap<ThinkingLevel, String>,
    /// Ask for usage in the stream.
    pub supports_usage_in_streaming: bool,
    /// Output cap field.
    pub max_tokens_field: MaxTokensField,
    /// Tool results carry `name`.
    pub requires_tool_result_name: bool,
    /// Insert an assistant message between a tool result and a user message.
    pub requires_assistant_after_tool_result: bool,
    /// Replay thinking as text.
    pub requires_thinking_as_text: bool,
    /// 9-character alphanumeric tool call ids.
    pub requires_mistral_tool_ids: bool,
    /// Replay `reasoning_content` on assistant messages.
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// How thinking is requested.
    pub thinking_format: ThinkingFormat,
    /// OpenRouter routing (empty when unset).
    pub open_router_routing: RoutingPreferences,
    /// Vercel AI Gateway routing (empty when unset).
    pub vercel_gateway_routing: RoutingPreferences,
    /// Tools may carry `strict: false`.
    pub supports_strict_mode: bool,
}

impl OpenAiCompletionsCompat {
    /// `self` laid over `base`: every field set in `self` wins; routing preferences merge field
    /// by field (pi's `mergeCompat`).
    pub fn merged_over(&self, base: &OpenAiCompletionsCompat) -> OpenAiCompletionsCompat {
        let routing = |over: &Option<RoutingPreferences>, under: &Option<RoutingPreferences>| match (
            over, under,
        ) {
            (Some(over), Some(under)) => Some(RoutingPreferences {
                only: over.only.clone().or_else(|| under.only.clone()),
                order: over.order.clone().or_else(|| under.order.clone()),
            }),
            (Some(only), None) | (None, Some(only)) => Some(only.clone()),
            (None, None) => None,
        };
        OpenAiCompletionsCompat {
            supports_store: self.supports_store.or(base.supports_store),
            supports_developer_role: self
                .supports_developer_role
                .or(base.supports_developer_role),
            supports_reasoning_effort: self
                .supports_reasoning_effort
                .or(base.supports_reasoning_effort),
            reasoning_effort_map: self
                .reasoning_effort_map
                .clone()
                .or_else(|| base.reasoning_effort_map.clone()),
            supports_usage_in_streaming: self
                .supports_usage_in_streaming
                .or(base.supports_usage_in_streaming),
            max_tokens_field: self.max_tokens_field.or(base.max_tokens_field),
            requires_tool_result_name: self
                .requires_tool_result_name
                .or(base.requires_tool_result_name),
            requires_assistant_after_tool_result: self
                .requires_assistant_after_tool_result
                .or(base.requires_assistant_after_tool_result),
            requires_thinking_as_text: self
                .requires_thinking_as_text
                .or(base.requires_thinking_as_text),
            requires_mistral_tool_ids: self
                .requires_mistral_tool_ids
                .or(base.requires_mistral_tool_ids),
            requires_reasoning_content_on_assistant_messages: self
                .requires_reasoning_content_on_assistant_messages
                .or(base.requires_reasoning_content_on_assistant_messages),
            thinking_format: self.thinking_format.or(base.thinking_format),
            open_router_routing: routing(&self.open_router_routing, &base.open_router_routing),
            vercel_gateway_routing: routing(
                &self.vercel_gateway_routing,
                &base.vercel_gateway_routing,
            ),
            supports_strict_mode: self.supports_strict_mode.or(base.supports_strict_mode),
        }
    }

    /// Concrete flags: every configured field replaces the corresponding field of `detected`.
    pub fn resolved(&self, detected: ResolvedCompat) -> ResolvedCompat {
        ResolvedCompat {
            supports_store: self.supports_store.unwrap_or(detected.supports_store),
            supports_developer_role: self
                .supports_developer_role
                .unwrap_or(detected.supports_developer_role),
            supports_reasoning_effort: self
                .supports_reasoning_effort
                .unwrap_or(detected.supports_reasoning_effort),
            reasoning_effort_map: self
                .reasoning_effort_map
                .clone()
                .unwrap_or(detected.reasoning_effort_map),
            supports_usage_in_streaming: self
                .supports_usage_in_streaming
                .unwrap_or(detected.supports_usage_in_streaming),
            max_tokens_field: self.max_tokens_field.unwrap_or(detected.max_tokens_field),
            requires_tool_result_name: self
                .requires_tool_result_name
                .unwrap_or(detected.requires_tool_result_name),
            requires_assistant_after_tool_result: self
                .requires_assistant_after_tool_result
                .unwrap_or(detected.requires_assistant_after_tool_result),
            requires_thinking_as_text: self
                .requires_thinking_as_text
                .unwrap_or(detected.requires_thinking_as_text),
            requires_mistral_tool_ids: self
                .requires_mistral_tool_ids
                .unwrap_or(detected.requires_mistral_tool_ids),
            requires_reasoning_content_on_assistant_messages: self
                .requires_reasoning_content_on_assistant_messages
                .unwrap_or(detected.requires_reasoning_content_on_assistant_messages),
            thinking_format: self.thinking_format.unwrap_or(detected.thinking_format),
            open_router_routing: self
                .open_router_routing
                .clone()
                .unwrap_or(detected.open_router_routing),
            vercel_gateway_routing: self
                .vercel_gateway_routing
                .clone()
                .unwrap_or(detected.vercel_gateway_routing),
            supports_strict_mode: self
                .supports_strict_mode
                .unwrap_or(detected.supports_strict_mode),
        }
    }
}

/// What a server is, as far as the provider id and base URL tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ServerKind {
    OpenAi,
    OpenRouter,
    Groq,
    Cerebras,
    Xai,
    Mistral,
    DeepSeek,
    Zai,
    Chutes,
    OpenCode,
    /// Ollama, llama.cpp, vLLM, LM Studio or any server on a loopback address.
    Local,
    /// Anything else: assume a faithful OpenAI clone.
    Other,
}

impl ResolvedCompat {
    /// Flags detected from the provider id, base URL and model id. Provider ids win over URLs;
    /// loopback servers (Ollama `:11434`, llama.cpp `:8080`, vLLM `:8000`, LM Studio `:1234`)
    /// get the conservative subset every local server understands.
    pub fn detect(provider: &str, base_url: &str, model_id: &str) -> ResolvedCompat {
        let kind = server_kind(provider, base_url);
        let mut compat = ResolvedCompat {
            supports_store: true,
            supports_developer_role: true,
            supports_reasoning_effort: true,
            reasoning_effort_map: BTreeMap::new(),
            supports_usage_in_streaming: true,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_mistral_tool_ids: false,
            requires_reasoning_content_on_assistant_messages: false,
            thinking_format: ThinkingFormat::Openai,
            open_router_routing: RoutingPreferences::default(),
            vercel_gateway_routing: RoutingPreferences::default(),
            supports_strict_mode: true,
        };
        match kind {
            ServerKind::OpenAi | ServerKind::Other => {}
            ServerKind::OpenRouter => compat.thinking_format = ThinkingFormat::Openrouter,
            ServerKind::Groq => {
                // Groq's Qwen 3 takes only `none`/`default` as effort.
                if model_id == "qwen/qwen3-32b" {
                    compat.reasoning_effort_map = ThinkingLevel::ALL
                        .into_iter()
                        .filter(|level| *level != ThinkingLevel::Off)
                        .map(|level| (level, "default".to_owned()))
                        .collect();
                }
            }
            ServerKind::Cerebras | ServerKind::OpenCode => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
            }
            ServerKind::Xai => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.supports_reasoning_effort = false;
            }
            ServerKind::Zai => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.supports_reasoning_effort = false;
                compat.thinking_format = ThinkingFormat::Zai;
            }
            ServerKind::Chutes => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.max_tokens_field = MaxTokensField::MaxTokens;
            }
            ServerKind::DeepSeek => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.max_tokens_field = MaxTokensField::MaxTokens;
                compat.thinking_format = ThinkingFormat::Deepseek;
                compat.requires_reasoning_content_on_assistant_messages = true;
                compat.reasoning_effort_map = ThinkingLevel::ALL
                    .into_iter()
                    .filter(|level| *level != ThinkingLevel::Off)
                    .map(|level| {
                        let wire = if level == ThinkingLevel::Xhigh {
                            "max"
                        } else {
                            "high"
                        };
                        (level, wire.to_owned())
                    })
                    .collect();
            }
            ServerKind::Mistral => {
                // Mistral rejects unknown request fields, wants `name` on tool results, short
                // tool ids, and has no reasoning field of its own on this endpoint.
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.supports_reasoning_effort = false;
                compat.supports_usage_in_streaming = false;
                compat.max_tokens_field = MaxTokensField::MaxTokens;
                compat.requires_tool_result_name = true;
                compat.requires_thinking_as_text = true;
                compat.requires_mistral_tool_ids = true;
            }
            ServerKind::Local => {
                compat.supports_store = false;
                compat.supports_developer_role = false;
                compat.max_tokens_field = MaxTokensField::MaxTokens;
                compat.supports_strict_mode = false;
            }
        }
        compat
    }

    /// The `reasoning_effort` value for `level`; `None` for `off`.
    pub fn reasoning_effort(&self, level: ThinkingLevel) -> Option<String> {
        match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal
            | ThinkingLevel::Low
            | ThinkingLevel::Medium
            | ThinkingLevel::High
            | ThinkingLevel::Xhigh => Some(
                self.reasoning_effort_map
                    .get(&level)
                    .cloned()
                    .unwrap_or_else(|| level.as_str().to_owned()),
            ),
        }
    }
}

fn server_kind(provider: &str, base_url: &str) -> ServerKind {
    let by_provider = match provider {
        "openai" => Some(ServerKind::OpenAi),
        "openrouter" => Some(ServerKind::OpenRouter),
        "groq" => Some(ServerKind::Groq),
        "cerebras" => Some(ServerKind::Cerebras),
        "xai" => Some(ServerKind::Xai),
        "mistral" => Some(ServerKind::Mistral),
        "deepseek" => Some(ServerKind::DeepSeek),
        "zai" => Some(ServerKind::Zai),
        "opencode" => Some(ServerKind::OpenCode),
        // pi's catalog provider, whatever address it is rerouted to (a local proxy included).
        "github-copilot" => Some(ServerKind::Other),
        "ollama" | "llama.cpp" | "llamacpp" | "llama-cpp" | "vllm" | "lmstudio" | "lm-studio" => {
            Some(ServerKind::Local)
        }
        _ => None,
    };
    if let Some(kind) = by_provider {
        return kind;
    }
    let (host, port) = host_and_port(base_url);
    let host_is = |suffix: &str| host == suffix || host.ends_with(&format!(".{suffix}"));
    if host_is("openai.com") {
        ServerKind::OpenAi
    } else if host_is("openrouter.ai") {
        ServerKind::OpenRouter
    } else if host_is("groq.com") {
        ServerKind::Groq
    } else if host_is("cerebras.ai") {
        ServerKind::Cerebras
    } else if host_is("x.ai") {
        ServerKind::Xai
    } else if host_is("mistral.ai") {
        ServerKind::Mistral
    } else if host_is("deepseek.com") {
        ServerKind::DeepSeek
    } else if host_is("z.ai") || host_is("bigmodel.cn") {
        ServerKind::Zai
    } else if host_is("chutes.ai") {
        ServerKind::Chutes
    } else if host_is("opencode.ai") {
        ServerKind::OpenCode
    } else if matches!(
        host.as_str(),
        "localhost" | "127.0.0.1" | "0.0.0.0" | "[::1]" | "::1"
    ) || host.ends_with(".localhost")
        || port == Some(11434)
    {
        ServerKind::Local
    } else {
        ServerKind::Other
    }
}

/// The lowercase host and the port of `url`, without parsing anything else.
fn host_and_port(url: &str) -> (String, Option<u16>) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((host, rest)) => (
                format!("[{host}]"),
                rest.strip_prefix(':').and_then(|port| port.parse().ok()),
            ),
            None => (authority.to_owned(), None),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), port.parse().ok()),
            None => (authority.to_owned(), None),
        }
    };
    (host.to_ascii_lowercase(), port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_handles_common_shapes() {
        let check = |url: &str, host: &str, port: Option<u16>| {
            assert_eq!(host_and_port(url), (host.to_owned(), port), "{url}");
        };
        check("https://api.groq.com/openai/v1", "api.groq.com", None);
        check("http://localhost:11434/v1", "localhost", Some(11434));
        check("http://user:pw@LOCALHOST:8080", "localhost", Some(8080));
        check("http://[::1]:8000/v1", "[::1]", Some(8000));
        check("api.x.ai", "api.x.ai", None);
    }
}
