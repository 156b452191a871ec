//! The built-in catalog: the providers we speak to out of the box ([`PROVIDERS`]: wire format,
//! base URL, where the key comes from, the model new sessions prefer) and their models
//! ([`builtin_models`], data in `catalog_data.rs`).
//!
//! Guarantees: every built-in model belongs to a provider in [`PROVIDERS`] and takes its `api`
//! and `base_url` from it; `(provider, id)` is unique; every provider's `default_model` exists.

use crate::catalog_data::MODELS;
use crate::model::{Model, ModelCost};

/// A built-in provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderInfo {
    /// Provider id (`anthropic`).
    pub id: &'static str,
    /// Wire format of its models.
    pub api: &'static str,
    /// Base URL of its API.
    pub base_url: &'static str,
    /// Environment variables holding its key, tried in order.
    pub env_vars: &'static [&'static str],
    /// The model picked when this provider is the first one with a key.
    pub default_model: &'static str,
}

/// Wire format `anthropic-messages`.
pub const API_ANTHROPIC_MESSAGES: &str = "anthropic-messages";
/// Wire format `openai-responses`.
pub const API_OPENAI_RESPONSES: &str = "openai-responses";
/// Wire format `openai-completions`.
pub const API_OPENAI_COMPLETIONS: &str = "openai-completions";
/// Wire format `google-generative-ai`.
pub const API_GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";

/// Built-in providers in default-model preference order (pi's `defaultModelPerProvider` order):
/// with no configured default, new sessions get the `default_model` of the first provider that
/// has a key.
pub const PROVIDERS: &[ProviderInfo] = &[
    ProviderInfo {
        id: "anthropic",
        api: API_ANTHROPIC_MESSAGES,
        base_url: "https://api.anthropic.com",
        // An OAuth token (Claude Pro/Max) wins over an API key, as in pi.
        env_vars: &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        default_model: "claude-opus-4-6",
    },
    ProviderInfo {
        id: "openai",
        api: API_OPENAI_RESPONSES,
        base_url: "https://api.openai.com/v1",
        env_vars: &["OPENAI_API_KEY"],
        default_model: "gpt-5.4",
    },
    ProviderInfo {
        id: "google",
        api: API_GOOGLE_GENERATIVE_AI,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        env_vars: &["GEMINI_API_KEY"],
        default_model: "gemini-2.5-pro",
    },
    ProviderInfo {
        id: "openrouter",
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://openrouter.ai/api/v1",
        env_vars: &["OPENROUTER_API_KEY"],
        default_model: "openai/gpt-5.1-codex",
    },
    ProviderInfo {
        id: "xai",
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://api.x.ai/v1",
        env_vars: &["XAI_API_KEY"],
        default_model: "grok-4-fast-non-reasoning",
    },
    ProviderInfo {
        id: "groq",
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://api.groq.com/openai/v1",
        env_vars: &["GROQ_API_KEY"],
        default_model: "openai/gpt-oss-120b",
    },
    ProviderInfo {
        id: "cerebras",
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://api.cerebras.ai/v1",
        env_vars: &["CEREBRAS_API_KEY"],
        default_model: "zai-glm-4.7",
    },
    ProviderInfo {
        id: "mistral",
        // pi speaks Mistral's own conversations API; we use its OpenAI-compatible endpoint.
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://api.mistral.ai/v1",
        env_vars: &["MISTRAL_API_KEY"],
        default_model: "devstral-medium-latest",
    },
    ProviderInfo {
        id: "deepseek",
        api: API_OPENAI_COMPLETIONS,
        base_url: "https://api.deepseek.com",
        env_vars: &["DEEPSEEK_API_KEY"],
        default_model: "deepseek-chat",
    },
];

/// The built-in provider `id`.
pub fn provider(id: &str) -> Option<&'static ProviderInfo> {
    PROVIDERS.iter().find(|info| info.id == id)
}

/// Every built-in model, grouped by provider in [`PROVIDERS`] order.
pub fn builtin_models() -> Vec<Model> {
    PROVIDERS
        .iter()
        .flat_map(|info| {
            MODELS
                .iter()
                .filter(move |row| row.provider == info.id)
                .map(move |row| Model {
                    id: row.id.to_owned(),
                    name: row.name.to_owned(),
                    api: info.api.to_owned(),
                    provider: info.id.to_owned(),
                    base_url: info.base_url.to_owned(),
                    reasoning: row.reasoning,
                    input: row.input.to_vec(),
                    cost: ModelCost {
                        input: row.cost[0],
                        output: row.cost[1],
                        cache_read: row.cost[2],
                        cache_write: row.cost[3],
                    },
                    context_window: row.context_window,
                    max_tokens: row.max_tokens,
                    headers: Default::default(),
                    compat: None,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn table_is_consistent() {
        let models = builtin_models();
        assert_eq!(
            models.len(),
            MODELS.len(),
            "every row belongs to a provider"
        );
        let mut seen = BTreeSet::new();
        for model in &models {
            assert!(
                seen.insert((model.provider.clone(), model.id.clone())),
                "duplicate {}/{}",
                model.provider,
                model.id
            );
            assert!(
                model.context_window > 0 && model.max_tokens > 0,
                "{}",
                model.id
            );
            assert!(model.max_tokens <= model.context_window, "{}", model.id);
        }
        for info in PROVIDERS {
            assert!(
                models
                    .iter()
                    .any(|model| model.provider == info.id && model.id == info.default_model),
                "default model of {} is missing",
                info.id
            );
        }
    }
}
