//! Presence: which clients are attached to a session and what each is typing.
//!
//! A client reports its editor draft with `session/setDraft`; the daemon keeps the latest
//! draft per connection (live only, never stored) and sends `session/presence` with the whole
//! list to every attached client whenever a client attaches, detaches or changes its draft.
//! The same list is in the attach snapshot, so a new client starts in sync.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `session/setDraft`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetDraftParams {
    /// The session (this connection must be attached to it).
    pub session_id: String,
    /// The editor's text; empty when the editor is empty or was submitted.
    pub text: String,
}

/// A client attached to a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachedClient {
    /// The connection (`connectionId` of its `initialize` response).
    pub connection_id: String,
    /// `clientInfo.name` of its `initialize`.
    pub name: String,
    /// Its latest draft; absent when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub draft: String,
}

/// Params of the `session/presence` notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionPresenceParams {
    /// The session.
    pub session_id: String,
    /// Every attached client, the receiver included, in attach order.
    pub clients: Vec<AttachedClient>,
}
