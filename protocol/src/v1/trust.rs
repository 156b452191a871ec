//! What to do about code a project brings (its MCP servers, its pi extensions): the one
//! answer `mcp/trust` and `extensions/trust` take.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An answer about a project's MCP server or extensions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TrustDecision {
    /// Run it (sessions that skipped it start or load it now).
    #[default]
    Approve,
    /// Never run it, and stop asking.
    Deny,
    /// Forget the answer: sessions ask again.
    Forget,
}

impl TrustDecision {
    /// The answer as stored: approved, refused, or none.
    pub fn approval(self) -> Option<bool> {
        match self {
            TrustDecision::Approve => Some(true),
            TrustDecision::Deny => Some(false),
            TrustDecision::Forget => None,
        }
    }
}
