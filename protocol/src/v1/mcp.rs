//! `mcp/*`: the MCP servers the daemon runs, shared by every session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::v1::settings::ResourceDiagnostic;

/// Params of `mcp/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpListParams {
    /// Also report the definitions a session in this absolute directory would see (with
    /// the project's files), and the problems in their files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Response of `mcp/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpListResponse {
    /// Every server the daemon has started or been asked for, by name then key.
    pub servers: Vec<McpServerStatus>,
    /// With `cwd`: the definitions a session there sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<McpDefinition>,
    /// With `cwd`: problems in the `mcp.json` files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// One running (or once running) server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// The server's name in its file.
    pub name: String,
    /// Other names sessions give the same server: another definition of the same command
    /// (an editor's ACP `mcpServers` repeating a `mcp.json` server, say). The tools are
    /// offered under each name; `mcp/restart` and `mcp/logs` take any of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Its sharing key: one connection per key for the whole daemon.
    pub key: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `starting`, `ready`, `stopped` or `failed`.
    pub state: String,
    /// The process leading the server's process group (stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The file that defines it.
    pub file: String,
    /// Its tools as the server names them.
    pub tools: Vec<String>,
    /// The sessions using it.
    pub sessions: Vec<String>,
    /// The last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The server's stderr log file.
    pub log_path: String,
    /// How often it was started.
    pub starts: u32,
}

/// A server definition as a session in `cwd` sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpDefinition {
    /// The name.
    pub name: String,
    /// The file.
    pub file: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// Defined by a user-level file; a project's servers need approval before they start.
    pub trusted: bool,
    /// `user file`, `approved`, `denied` or `not approved yet`.
    pub approval: String,
}

/// Params of `mcp/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpRestartParams {
    /// The server's name.
    pub name: String,
}

/// Response of `mcp/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpRestartResponse {
    /// How many connections of that name were restarted (one per definition key).
    pub restarted: u32,
}

/// Params of `mcp/logs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpLogsParams {
    /// The server's name.
    pub name: String,
    /// How many of the last lines (default 100, at most 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
}

/// Response of `mcp/logs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpLogsResponse {
    /// One log per definition of that name (stdio servers write stderr there).
    pub logs: Vec<McpLog>,
}

/// The end of one server's stderr log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpLog {
    /// The server's sharing key.
    pub key: String,
    /// The log file.
    pub path: String,
    /// Its last lines (empty when the server wrote nothing).
    pub text: String,
}

/// Params of `mcp/trust`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpTrustParams {
    /// The absolute project directory whose files define the server.
    pub cwd: String,
    /// The server's name.
    pub name: String,
    /// The answer (default `approve`).
    #[serde(default)]
    pub decision: super::TrustDecision,
}

/// Response of `mcp/trust`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpTrustResponse {
    /// The server's name.
    pub name: String,
    /// The project file that defines it.
    pub file: String,
    /// Where it stands now: `approved`, `denied` or `not approved yet`.
    pub approval: String,
}

/// Params of `mcp/setEnabled`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSetEnabledParams {
    /// The session.
    pub session_id: String,
    /// The server's name.
    pub name: String,
    /// Use it (`true`) or not.
    pub enabled: bool,
}

/// Response of `mcp/setEnabled`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSetEnabledResponse {
    /// The servers the session now does not use (its own choice; settings'
    /// `mcp.disabledServers` apply too).
    pub disabled_servers: Vec<String>,
}

/// Params of `mcp/changed`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpChangedParams {
    /// Every server the daemon has started or been asked for, as `mcp/list` shows them.
    pub servers: Vec<McpServerStatus>,
}

/// Params of `mcp/setSessionServers`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSetSessionServersParams {
    /// The session.
    pub session_id: String,
    /// The servers (replacing those given before); empty removes them.
    pub servers: Vec<McpSessionServer>,
}

/// A server a client gives one session (an editor's ACP `mcpServers`): a command (stdio) or
/// a URL (Streamable HTTP).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSessionServer {
    /// Its name (tools are `mcp__<name>__<tool>`).
    pub name: String,
    /// The program, for a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables added to the session's environment.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The endpoint, for an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
}

/// Response of `mcp/setSessionServers`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpSetSessionServersResponse {
    /// The names of the session's given servers now.
    pub servers: Vec<String>,
}
