//! `rules/test`: which of oh-my-pi's stream rules (TTSR) would fire on a piece of a reply —
//! `pictl rules test` — without a model or a session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::settings::ResourceDiagnostic;

/// Params of `rules/test`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RulesTestParams {
    /// Absolute working directory: its project's rules (and its settings' `ttsr` keys) apply,
    /// and a relative `rule` is resolved against it.
    pub cwd: String,
    /// A rule file to test alone; absent: every stream rule of the project and the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The streamed text to match, as the model would send it (for a tool, its argument
    /// JSON).
    pub text: String,
    /// Where the text comes from: `text` (the default), `thinking`, or `tool:NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Response of `rules/test`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RulesTestResponse {
    /// Every stream rule tested, in priority order.
    pub rules: Vec<RuleTestResult>,
    /// Problems with the rules (a condition that is not a regex, an unknown scope); such
    /// rules are skipped.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// One rule's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleTestResult {
    /// The rule's name.
    pub name: String,
    /// Its file.
    pub path: String,
    /// Its condition matched the text in scope.
    pub fires: bool,
    /// A match interrupts the reply (otherwise it becomes a reminder); only when `fires`.
    pub interrupts: bool,
}
