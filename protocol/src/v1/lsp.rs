//! `lsp/*`: the language servers the daemon runs, one per server and workspace root, shared by
//! every session working there.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `lsp/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspListParams {}

/// Response of `lsp/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspListResponse {
    /// Every server the daemon has started or been asked for, by name then root.
    pub servers: Vec<LspServerStatus>,
}

/// One language server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspServerStatus {
    /// The server's name (`pyright`, `typescript`, ...).
    pub name: String,
    /// Its workspace root.
    pub root: String,
    /// `starting`, `ready`, `stopped` or `failed`.
    pub state: String,
    /// The process leading the server's process group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The sessions using it.
    pub sessions: Vec<String>,
    /// How many files it has open.
    pub open_files: u32,
    /// The last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The server's stderr log file.
    pub log_path: String,
    /// How often it was started.
    pub starts: u32,
}

/// Params of `lsp/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspRestartParams {
    /// The server's name.
    pub name: String,
}

/// Response of `lsp/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspRestartResponse {
    /// How many servers of that name were restarted (one per root).
    pub restarted: u32,
}

/// Params of `lsp/changed`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspChangedParams {
    /// Every server, as `lsp/list` shows them.
    pub servers: Vec<LspServerStatus>,
}

/// Params of `lsp/logs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspLogsParams {
    /// The server's name (`pyright`, `typescript`, ...).
    pub name: String,
    /// Only the server of this workspace root; absent: every root it runs for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// How many of the last lines (default 100, at most 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
}

/// Response of `lsp/logs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspLogsResponse {
    /// One log per workspace root the server runs (ran) for.
    pub logs: Vec<LspLog>,
}

/// The end of one language server's stderr log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspLog {
    /// The workspace root.
    pub root: String,
    /// The log file.
    pub path: String,
    /// Its last lines.
    pub text: String,
}
