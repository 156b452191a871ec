//! `artifact/*`: reading stored tool output (`artifact://ID`), such as the full output of a
//! truncated bash command.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `artifact/read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactReadParams {
    /// The session that stored the artifact.
    pub session_id: String,
    /// The artifact id (`bash-…`), with or without the `artifact://` prefix.
    pub artifact_id: String,
    /// First byte to read; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Most bytes to read; default 1 MiB, at most 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// Response of `artifact/read`: one byte range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactReadResponse {
    /// The bytes as UTF-8 (invalid sequences replaced; a range may split a character).
    pub data: String,
    /// Where the range starts.
    pub offset: u64,
    /// Bytes in the range (before UTF-8 replacement); the next range starts at
    /// `offset + bytes`.
    pub bytes: u64,
    /// The artifact's size.
    pub total_bytes: u64,
    /// The range reaches the end of the artifact.
    pub eof: bool,
}
