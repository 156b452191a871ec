//! `model/*`: the models the daemon can use.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `model/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    /// Only models whose provider has a key configured.
    #[serde(default)]
    pub available_only: bool,
    /// A session whose extensions' providers (pi's `registerProvider`) are listed too, in
    /// place of the daemon's models of a provider they redefine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Names of the variables set in the client's environment (names only, no values): a
    /// provider whose key variable is among them counts as having a key, as it will for the
    /// sessions this client starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
}

/// Response of `model/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    /// Models, by provider then id.
    pub models: Vec<ModelInfo>,
}

/// A model and whether it can be used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Wire format.
    pub api: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Max output tokens.
    pub max_tokens: u64,
    /// Supports thinking.
    pub reasoning: bool,
    /// Accepts images.
    pub images: bool,
    /// USD per million input tokens.
    pub input_cost: f64,
    /// USD per million output tokens.
    pub output_cost: f64,
    /// A key (or no-auth server) is configured for its provider.
    pub has_key: bool,
    /// The endpoint's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// USD per million cache-read tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_cost: Option<f64>,
    /// USD per million cache-write tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_cost: Option<f64>,
}

/// A model reference: `provider` and `id`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub id: String,
}
