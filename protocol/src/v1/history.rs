//! `history/*`: the prompt history every client shares (pi's editor history, kept by the
//! daemon in SQLite FTS5). Every prompt, steering and follow-up message sent to any session
//! is recorded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `history/search`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistorySearchParams {
    /// Words to find (full-text, each word a prefix); absent or empty: the newest prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Only prompts sent in sessions with this working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// At most this many (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Response of `history/search`: newest first, each text once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistorySearchResponse {
    /// The prompts found.
    pub entries: Vec<HistoryEntry>,
}

/// One remembered prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The text as sent.
    pub text: String,
    /// Working directory of the session it was sent to.
    pub cwd: String,
    /// When it was last sent, Unix ms.
    pub sent_at: i64,
}
