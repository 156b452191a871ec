//! The branch as compaction sees it: each entry's id and what it contributes to the
//! conversation. The session converts its stored entries into these once; every function in
//! this module tree works on slices of them, root first.

use std::borrow::Cow;

use pi_agent::AgentMessage;
use pi_agent::message::{BranchSummaryMessage, CompactionSummaryMessage, CustomMessage};

use crate::compaction::files::FileLists;

/// One entry of a branch.
#[derive(Clone, Debug, PartialEq)]
pub struct BranchEntry {
    /// The entry id.
    pub id: String,
    /// What it is.
    pub kind: BranchEntryKind,
}

/// What an entry contributes, by pi entry type.
#[derive(Clone, Debug, PartialEq)]
pub enum BranchEntryKind {
    /// A `message` entry (any role).
    Message(AgentMessage),
    /// A `custom_message` entry, seen by the model as a user message.
    CustomMessage(CustomMessage),
    /// A `branch_summary` entry.
    BranchSummary {
        /// The summary as a message (its timestamp is the entry's).
        message: BranchSummaryMessage,
        /// File lists from `details`, when it had them.
        details: Option<FileLists>,
        /// Produced by an extension (pi's `fromHook`): its details are not trusted.
        from_hook: bool,
    },
    /// A `compaction` entry.
    Compaction {
        /// The summary as a message (its timestamp is the entry's).
        message: CompactionSummaryMessage,
        /// The first entry kept verbatim.
        first_kept_entry_id: String,
        /// File lists from `details`, when it had them.
        details: Option<FileLists>,
        /// Produced by an extension (pi's `fromHook`): its details are not trusted.
        from_hook: bool,
    },
    /// `thinking_level_change`, `model_change`, `custom`, `label`, `session_info`: nothing for
    /// the model.
    Other,
}

impl BranchEntry {
    /// The message this entry gives the model, as pi's compaction `getMessageFromEntry`:
    /// messages, custom messages, branch summaries and compaction summaries.
    pub fn message(&self) -> Option<AgentMessage> {
        self.message_ref().map(Cow::into_owned)
    }

    /// [`BranchEntry::message`], borrowed where the entry holds the message itself.
    pub fn message_ref(&self) -> Option<Cow<'_, AgentMessage>> {
        match &self.kind {
            BranchEntryKind::Message(message) => Some(Cow::Borrowed(message)),
            BranchEntryKind::CustomMessage(custom) => {
                Some(Cow::Owned(AgentMessage::Custom(custom.clone())))
            }
            BranchEntryKind::BranchSummary { message, .. } => {
                Some(Cow::Owned(AgentMessage::BranchSummary(message.clone())))
            }
            BranchEntryKind::Compaction { message, .. } => {
                Some(Cow::Owned(AgentMessage::CompactionSummary(message.clone())))
            }
            BranchEntryKind::Other => None,
        }
    }

    /// The message of a `message` entry.
    pub fn as_message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            BranchEntryKind::Message(message) => Some(message),
            BranchEntryKind::CustomMessage(_)
            | BranchEntryKind::BranchSummary { .. }
            | BranchEntryKind::Compaction { .. }
            | BranchEntryKind::Other => None,
        }
    }

    /// Whether this is a `compaction` entry.
    pub fn is_compaction(&self) -> bool {
        matches!(self.kind, BranchEntryKind::Compaction { .. })
    }
}
