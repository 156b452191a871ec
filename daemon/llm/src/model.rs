//! What a model is ([`Model`], pi's `Model` object) and how hard it thinks ([`ThinkingLevel`]).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::compat::OpenAiCompletionsCompat;

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
    /// `google-generative-ai` (or `faux` in tests).
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

/// How much the model should think. `Off` omits reasoning from the request.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    Off,
    /// Least reasoning.
    Minimal,
    /// Low.
    Low,
    /// Medium (pi's default).
    #[default]
    Medium,
    /// High.
    High,
    /// Extra high (few models).
    Xhigh,
}

impl ThinkingLevel {
    /// Every level, in increasing order.
    pub const ALL: [ThinkingLevel; 6] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
    ];

    /// The wire name (`off`, `minimal`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
        }
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A thinking level name that is not one of `off|minimal|low|medium|high|xhigh`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown thinking level {0:?}; use one of off, minimal, low, medium, high, xhigh")]
pub struct UnknownThinkingLevel(pub String);

impl FromStr for ThinkingLevel {
    type Err = UnknownThinkingLevel;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ThinkingLevel::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownThinkingLevel(text.to_owned()))
    }
}

impl Model {
    /// Whether the model accepts images.
    pub fn accepts_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }
}
