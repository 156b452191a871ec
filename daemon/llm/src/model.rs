//! What a model is ([`Model`], pi's `Model` object) and how hard it thinks ([`ThinkingLevel`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::compat::{OpenAiCompletionsCompat, ResolvedCompat};
pub use crate::level::{ThinkingLevel, UnknownThinkingLevel};

/// Input modalities a model accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InputKind {
    /// Text.
    Text,
    /// Images.
    Image,
}

/// Prices in USD per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// Non-cached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
}

/// A model: where it is served, by which wire format, what it can do and what it costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Provider-side model id (`claude-sonnet-4-5`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Wire format: `anthropic-messages`, `openai-completions`, `openai-responses`,
    /// `google-generative-ai` (or `faux` in tests). Built-in models may also carry pi's other
    /// formats (`bedrock-converse-stream`, `google-vertex`, `azure-openai-responses`,
    /// `openai-codex-responses`), which this daemon does not implement.
    pub api: String,
    /// Provider id (`anthropic`, `openai`, `openrouter`, ...).
    pub provider: String,
    /// Base URL requests go to.
    pub base_url: String,
    /// Whether the model supports thinking/reasoning.
    pub reasoning: bool,
    /// Accepted inputs.
    pub input: Vec<InputKind>,
    /// Prices.
    pub cost: ModelCost,
    /// Context window in tokens.
    pub context_window: u64,
    /// Maximum output tokens.
    pub max_tokens: u64,
    /// Extra HTTP headers sent with every request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Quirks of an `openai-completions` server as configured (pi's `compat`); `None` means
    /// detect them from the provider and base URL. Providers use
    /// [`Model::resolved_compat`](crate::compat), never this field directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<OpenAiCompletionsCompat>,
}

impl Model {
    /// Whether the model accepts images.
    pub fn accepts_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }
}

impl Model {
    /// The compatibility flags a provider should use for this model: detection from provider,
    /// base URL and id, overridden by every field set in [`Model::compat`].
    pub fn resolved_compat(&self) -> ResolvedCompat {
        let detected = ResolvedCompat::detect(&self.provider, &self.base_url, &self.id);
        match &self.compat {
            Some(compat) => compat.resolved(detected),
            None => detected,
        }
    }
}
