//! `usage/*`: tokens and cost of stored assistant messages, by model and by day (the ledger
//! behind `pictl stats`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::session::TokenTotals;

/// Params of `usage/stats`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageStatsParams {
    /// Only assistant messages at or after this time, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<i64>,
}

/// Response of `usage/stats`: sums over the assistant messages of every stored session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageStatsResponse {
    /// Per `provider/model`, by cost then name.
    pub by_model: Vec<ModelUsage>,
    /// Per UTC day, oldest first.
    pub by_day: Vec<DayUsage>,
    /// Per project (the sessions' working directory), by cost then directory.
    #[serde(default)]
    pub by_project: Vec<ProjectUsage>,
    /// Everything.
    pub total: UsageTotals,
}

/// Sums for one model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// The sums.
    pub usage: UsageTotals,
}

/// Sums for one day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    /// The sums.
    pub usage: UsageTotals,
}

/// Sums for one project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectUsage {
    /// The sessions' working directory.
    pub cwd: String,
    /// The sums.
    pub usage: UsageTotals,
}

/// Message count, tokens and cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Assistant messages.
    pub messages: u64,
    /// Token sums.
    pub tokens: TokenTotals,
    /// Cost, USD.
    pub cost: f64,
}
