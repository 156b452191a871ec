//! Session entries in pi's v3 shapes: building new ones (unique 8-hex ids, ISO timestamps,
//! parent = current leaf), parsing stored ones, and building the model's context from a branch
//! (pi's `buildSessionContext`).

use std::collections::HashSet;

use pi_agent::AgentMessage;
use pi_agent::message::{BranchSummaryMessage, CompactionSummaryMessage, CustomMessage};
use pi_protocol::v1::SessionEntry;

use crate::compaction::{BranchEntry, BranchEntryKind, FileLists};
use crate::convert::{WireError, message_from_wire, message_to_wire, transcode};
use pi_store::{NewEntry, StoredEntry};
use pi_util::time::{iso_from_millis, millis_from_iso};

/// Allocates entry ids unique within one session.
#[derive(Debug, Default)]
pub struct EntryIds {
    // Invariant: every id stored for the session, as the u32 its 8 hex digits encode.
    used: HashSet<u32>,
}

impl EntryIds {
    /// Tracks the ids already stored.
    pub fn new<'a>(existing: impl IntoIterator<Item = &'a str>) -> Self {
        EntryIds {
            used: existing
                .into_iter()
                .filter_map(|id| u32::from_str_radix(id, 16).ok())
                .collect(),
        }
    }

    /// A fresh id: 8 lowercase hex characters.
    pub fn allocate(&mut self) -> String {
        loop {
            let mut bytes = [0u8; 4];
            // getrandom only fails without an OS entropy source; fall back to a counter-ish value.
            if getrandom::fill(&mut bytes).is_err() {
                bytes = (self.used.len() as u32)
                    .wrapping_mul(2_654_435_761)
                    .to_be_bytes();
            }
            let candidate = u32::from_be_bytes(bytes);
            if self.used.insert(candidate) {
                return format!("{candidate:08x}");
            }
        }
    }
}

/// The id, parent and timestamp every entry carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryBase {
    /// Entry id.
    pub id: String,
    /// Parent (the leaf at append time).
    pub parent_id: Option<String>,
    /// ISO-8601.
    pub timestamp: String,
}

impl EntryBase {
    /// A new base: fresh id, the given parent, now.
    pub fn new(ids: &mut EntryIds, parent_id: Option<String>, now_millis: i64) -> Self {
        EntryBase {
            id: ids.allocate(),
            parent_id,
            timestamp: iso_from_millis(now_millis),
        }
    }
}

/// A `message` entry.
pub fn message_entry(base: EntryBase, message: &AgentMessage) -> Result<SessionEntry, WireError> {
    Ok(SessionEntry::Message {
        id: base.id,
        parent_id: base.parent_id,
        timestamp: base.timestamp,
        message: message_to_wire(message)?,
    })
}

/// The id, parent and type name of an entry.
pub fn entry_parts(entry: &SessionEntry) -> (&str, Option<&str>, &'static str) {
    match entry {
        SessionEntry::Message { id, parent_id, .. } => (id, parent_id.as_deref(), "message"),
        SessionEntry::ThinkingLevelChange { id, parent_id, .. } => {
            (id, parent_id.as_deref(), "thinking_level_change")
        }
        SessionEntry::ModelChange { id, parent_id, .. } => {
            (id, parent_id.as_deref(), "model_change")
        }
        SessionEntry::Compaction { id, parent_id, .. } => (id, parent_id.as_deref(), "compaction"),
        SessionEntry::BranchSummary { id, parent_id, .. } => {
            (id, parent_id.as_deref(), "branch_summary")
        }
        SessionEntry::Custom { id, parent_id, .. } => (id, parent_id.as_deref(), "custom"),
        SessionEntry::CustomMessage { id, parent_id, .. } => {
            (id, parent_id.as_deref(), "custom_message")
        }
        SessionEntry::Label { id, parent_id, .. } => (id, parent_id.as_deref(), "label"),
        SessionEntry::SessionInfo { id, parent_id, .. } => {
            (id, parent_id.as_deref(), "session_info")
        }
    }
}

/// An entry ready to store, announced by the event `seq`.
pub fn new_entry(entry: &SessionEntry, seq: u64) -> Result<NewEntry, WireError> {
    let body = serde_json::to_string(entry).map_err(|error| WireError::new("entry", error))?;
    Ok(new_entry_with_body(entry, body, seq))
}

/// An entry ready to store as `body`, its JSON (which must parse to `entry`: an imported
/// line, with the fields the daemon does not model).
pub fn new_entry_with_body(entry: &SessionEntry, body: String, seq: u64) -> NewEntry {
    let (id, parent_id, kind) = entry_parts(entry);
    NewEntry {
        id: id.to_owned(),
        parent_id: parent_id.map(str::to_owned),
        seq,
        kind: kind.to_owned(),
        body,
    }
}

/// Parses a stored entry.
pub fn parse_entry(stored: &StoredEntry) -> Result<SessionEntry, WireError> {
    serde_json::from_str(&stored.body).map_err(|error| WireError::new("stored entry", error))
}

/// What a branch means for the model and the session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchContext {
    /// The messages the model sees, in order.
    pub messages: Vec<AgentMessage>,
    /// The thinking level last set on the branch.
    pub thinking_level: Option<String>,
    /// The model last used or set on the branch (provider, id).
    pub model: Option<(String, String)>,
    /// How many leading `messages` predate the latest compaction on the branch (its summary
    /// and the kept messages); 0 without a compaction.
    pub compacted_prefix: usize,
}

/// pi's `buildSessionContext` over a branch (root first): messages, custom messages and
/// non-empty branch summaries in order; with a compaction, its summary first, then the kept
/// entries from `firstKeptEntryId`, then what follows the compaction.
pub fn build_context(branch: &[SessionEntry]) -> Result<BranchContext, WireError> {
    let mut context = BranchContext::default();
    let mut compaction_index = None;
    for (index, entry) in branch.iter().enumerate() {
        match entry {
            SessionEntry::ThinkingLevelChange { thinking_level, .. } => {
                context.thinking_level = Some(thinking_level.clone())
            }
            SessionEntry::ModelChange {
                provider, model_id, ..
            } => context.model = Some((provider.clone(), model_id.clone())),
            SessionEntry::Message {
                message: pi_protocol::v1::message::AgentMessage::Assistant(assistant),
                ..
            } => {
                context.model = Some((assistant.provider.clone(), assistant.model.clone()));
            }
            SessionEntry::Compaction { .. } => compaction_index = Some(index),
            SessionEntry::Message { .. }
            | SessionEntry::BranchSummary { .. }
            | SessionEntry::Custom { .. }
            | SessionEntry::CustomMessage { .. }
            | SessionEntry::Label { .. }
            | SessionEntry::SessionInfo { .. } => {}
        }
    }
    let Some(compaction_index) = compaction_index else {
        for entry in branch {
            push_context_message(&mut context.messages, entry)?;
        }
        return Ok(context);
    };
    let SessionEntry::Compaction {
        summary,
        first_kept_entry_id,
        tokens_before,
        timestamp,
        ..
    } = &branch[compaction_index]
    else {
        return Ok(context);
    };
    context
        .messages
        .push(AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: summary.clone(),
            tokens_before: *tokens_before,
            timestamp: millis_from_iso(timestamp).unwrap_or(0),
        }));
    let kept_from = branch[..compaction_index]
        .iter()
        .position(|entry| entry_parts(entry).0 == first_kept_entry_id)
        .unwrap_or(compaction_index);
    for entry in &branch[kept_from..compaction_index] {
        push_context_message(&mut context.messages, entry)?;
    }
    context.compacted_prefix = context.messages.len();
    for entry in &branch[compaction_index + 1..] {
        push_context_message(&mut context.messages, entry)?;
    }
    Ok(context)
}

fn push_context_message(
    messages: &mut Vec<AgentMessage>,
    entry: &SessionEntry,
) -> Result<(), WireError> {
    match entry {
        SessionEntry::Message { message, .. } => messages.push(message_from_wire(message)?),
        SessionEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
            timestamp,
            ..
        } => {
            messages.push(AgentMessage::Custom(CustomMessage {
                custom_type: custom_type.clone(),
                content: transcode("custom message content", content)?,
                display: *display,
                details: details.clone(),
                timestamp: millis_from_iso(timestamp).unwrap_or(0),
            }));
        }
        SessionEntry::BranchSummary {
            summary,
            from_id,
            timestamp,
            ..
        } => {
            if !summary.is_empty() {
                messages.push(AgentMessage::BranchSummary(BranchSummaryMessage {
                    summary: summary.clone(),
                    from_id: from_id.clone(),
                    timestamp: millis_from_iso(timestamp).unwrap_or(0),
                }));
            }
        }
        SessionEntry::ThinkingLevelChange { .. }
        | SessionEntry::ModelChange { .. }
        | SessionEntry::Compaction { .. }
        | SessionEntry::Custom { .. }
        | SessionEntry::Label { .. }
        | SessionEntry::SessionInfo { .. } => {}
    }
    Ok(())
}

/// An entry as compaction sees it (`crate::compaction`): its id and what it gives the model.
pub fn branch_entry(entry: &SessionEntry) -> Result<BranchEntry, WireError> {
    let (id, _, _) = entry_parts(entry);
    let kind = match entry {
        SessionEntry::Message { message, .. } => {
            BranchEntryKind::Message(message_from_wire(message)?)
        }
        SessionEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
            timestamp,
            ..
        } => BranchEntryKind::CustomMessage(CustomMessage {
            custom_type: custom_type.clone(),
            content: transcode("custom message content", content)?,
            display: *display,
            details: details.clone(),
            timestamp: millis_from_iso(timestamp).unwrap_or(0),
        }),
        SessionEntry::BranchSummary {
            from_id,
            summary,
            details,
            from_hook,
            timestamp,
            ..
        } => BranchEntryKind::BranchSummary {
            message: BranchSummaryMessage {
                summary: summary.clone(),
                from_id: from_id.clone(),
                timestamp: millis_from_iso(timestamp).unwrap_or(0),
            },
            details: details.as_ref().map(FileLists::from_details),
            from_hook: from_hook.unwrap_or(false),
        },
        SessionEntry::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            from_hook,
            timestamp,
            ..
        } => BranchEntryKind::Compaction {
            message: CompactionSummaryMessage {
                summary: summary.clone(),
                tokens_before: *tokens_before,
                timestamp: millis_from_iso(timestamp).unwrap_or(0),
            },
            first_kept_entry_id: first_kept_entry_id.clone(),
            details: details.as_ref().map(FileLists::from_details),
            from_hook: from_hook.unwrap_or(false),
        },
        SessionEntry::ThinkingLevelChange { .. }
        | SessionEntry::ModelChange { .. }
        | SessionEntry::Custom { .. }
        | SessionEntry::Label { .. }
        | SessionEntry::SessionInfo { .. } => BranchEntryKind::Other,
    };
    Ok(BranchEntry {
        id: id.to_owned(),
        kind,
    })
}
