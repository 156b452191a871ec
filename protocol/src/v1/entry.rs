//! Session entries: pi's session-file v3 entry types (a tree via `id`/`parentId`), as stored by
//! the daemon and returned by `session/read`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::v1::message::{AgentMessage, UserContent};

/// One entry of a session tree. `timestamp` is an ISO-8601 string, as in pi's files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionEntry {
    /// A conversation message.
    Message {
        /// 8 hex characters, unique in the session.
        id: String,
        /// Parent entry; `null` for a root.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// The message.
        message: AgentMessage,
    },
    /// The thinking level changed.
    ThinkingLevelChange {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// The new level.
        thinking_level: String,
    },
    /// The model changed.
    ModelChange {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// Provider id.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// History before `firstKeptEntryId` was replaced by `summary`.
    Compaction {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// The summary.
        summary: String,
        /// First entry kept verbatim.
        first_kept_entry_id: String,
        /// Context tokens before.
        tokens_before: u64,
        /// `{readFiles, modifiedFiles}` and more.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Produced by an extension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Summary of a branch navigated away from.
    BranchSummary {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// Where the summary was written (pi's semantics: the new leaf, or `root`).
        from_id: String,
        /// The summary.
        summary: String,
        /// Detail.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Produced by an extension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Extension state, never sent to the model.
    Custom {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// Producer's tag.
        custom_type: String,
        /// Data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// An injected message sent to the model as a user message.
    CustomMessage {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// Producer's tag.
        custom_type: String,
        /// Content.
        content: Vec<UserContent>,
        /// Whether to show it.
        display: bool,
        /// Detail.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// A label on another entry (absent `label` clears it).
    Label {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// The labelled entry.
        target_id: String,
        /// The label.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Session metadata (the display name).
    SessionInfo {
        /// Entry id.
        id: String,
        /// Parent entry.
        parent_id: Option<String>,
        /// ISO-8601.
        timestamp: String,
        /// The name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

impl SessionEntry {
    /// The entry's id.
    pub fn id(&self) -> &str {
        self.ids().0
    }

    /// The entry's parent, if any (a root has none).
    pub fn parent_id(&self) -> Option<&str> {
        self.ids().1
    }

    fn ids(&self) -> (&str, Option<&str>) {
        match self {
            SessionEntry::Message { id, parent_id, .. }
            | SessionEntry::ThinkingLevelChange { id, parent_id, .. }
            | SessionEntry::ModelChange { id, parent_id, .. }
            | SessionEntry::Compaction { id, parent_id, .. }
            | SessionEntry::BranchSummary { id, parent_id, .. }
            | SessionEntry::Custom { id, parent_id, .. }
            | SessionEntry::CustomMessage { id, parent_id, .. }
            | SessionEntry::Label { id, parent_id, .. }
            | SessionEntry::SessionInfo { id, parent_id, .. } => (id, parent_id.as_deref()),
        }
    }
}

/// An entry with the `seq` of the event that announced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryRecord {
    /// The session event sequence number that announced this entry.
    pub seq: u64,
    /// The entry.
    pub entry: SessionEntry,
}
