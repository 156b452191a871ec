//! `initialize`: the handshake that opens every connection.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The protocol version the client speaks; must equal the daemon's.
    pub protocol_version: u32,
    /// Who is connecting, for logs and for other clients' presence lists.
    pub client_info: ClientInfo,
    /// Optional behaviours the client asks for.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
}

/// Identifies a client program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// Program name, e.g. `pictl` or `vscode-pi`.
    pub name: String,
    /// Program version.
    pub version: String,
}

/// Optional client behaviours.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Notification methods this connection does not want (exact names; unknown names are
    /// ignored). A dashboard may opt out of streaming deltas, for example.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opt_out_notifications: Vec<String>,
}

/// Response of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// The protocol version the daemon speaks (equal to the client's on success).
    pub protocol_version: u32,
    /// The daemon's package version.
    pub daemon_version: String,
    /// The id the daemon gave this connection, as it appears in logs and presence lists.
    pub connection_id: String,
    /// What the daemon serves.
    pub capabilities: DaemonCapabilities,
}

/// What the daemon serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonCapabilities {
    /// Every request method this daemon answers.
    pub methods: Vec<String>,
    /// Every notification this daemon may send.
    pub notifications: Vec<String>,
}
