//! pi's `prepareCompaction` and `compact`, split at the model calls: [`prepare_compaction`]
//! decides what to summarize and what to keep, [`CompactionPlan`] holds the one or two
//! summarization requests, and [`CompactionPlan::finish`] turns their answers into the
//! `compaction` entry's fields.

use pi_agent::AgentMessage;

use crate::compaction::CompactionSettings;
use crate::compaction::cut::find_cut_point;
use crate::compaction::entry::{BranchEntry, BranchEntryKind};
use crate::compaction::files::{FileLists, FileOperations};
use crate::compaction::prompt::{
    NO_PRIOR_HISTORY, SummaryRequest, history_request, turn_prefix_request,
};
use crate::compaction::tokens::{assistant_usage, calculate_context_tokens, estimate_tokens};

/// What a compaction summarizes and keeps (pi's `CompactionPreparation`).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Messages summarized and dropped from the context.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// When the cut splits a turn: the turn's messages before the cut, summarized separately.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// The cut is inside a turn.
    pub is_split_turn: bool,
    /// The context size before compaction (pi's `estimateContextTokens` from the previous
    /// summary on).
    pub tokens_before: u64,
    /// The previous compaction's summary, which this one updates.
    pub previous_summary: Option<String>,
    /// Files touched by the summarized messages, and by earlier summaries.
    pub file_ops: FileOperations,
    /// The settings used.
    pub settings: CompactionSettings,
}

/// Why there is nothing to compact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NothingToCompact {
    /// The branch ends with a compaction: compact again after new messages.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// Nothing follows the last compaction: send messages first.
    #[error("Nothing to compact (session too small)")]
    TooSmall,
}

/// The summarization calls of one compaction.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPlan {
    /// The history summary; `None` when a split turn has no history before it (pi then
    /// writes `No prior history.`).
    pub history: Option<SummaryRequest>,
    /// The turn-prefix summary of a split turn.
    pub turn_prefix: Option<SummaryRequest>,
    first_kept_entry_id: String,
    tokens_before: u64,
    file_lists: FileLists,
}

/// What a compaction stores (pi's `CompactionResult`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionResult {
    /// The summary, file lists appended.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// The context size before.
    pub tokens_before: u64,
    /// `details {readFiles, modifiedFiles}`.
    pub details: FileLists,
    /// Written by an extension (pi's `session_before_compact` giving a `compaction`): its own
    /// `details` as it gave them (`Null`: none) stand instead of the file lists.
    pub from_hook: Option<serde_json::Value>,
}

impl CompactionResult {
    /// The `details` stored with the entry.
    pub fn details_value(&self) -> Option<serde_json::Value> {
        match &self.from_hook {
            Some(serde_json::Value::Null) => None,
            Some(details) => Some(details.clone()),
            None => Some(self.details.to_details()),
        }
    }
}

/// pi's `prepareCompaction` over a branch (root first). The window is everything after the
/// last compaction; the cut keeps about `keep_recent_tokens`; the rest is summarized, a split
/// turn's prefix separately. File operations accumulate from the previous compaction's
/// details (unless an extension made it) and the summarized messages.
pub fn prepare_compaction(
    entries: &[BranchEntry],
    settings: &CompactionSettings,
) -> Result<CompactionPreparation, NothingToCompact> {
    if entries.last().is_some_and(BranchEntry::is_compaction) {
        return Err(NothingToCompact::AlreadyCompacted);
    }
    let previous_index = entries.iter().rposition(BranchEntry::is_compaction);
    let window_start = previous_index.map_or(0, |index| index + 1);
    let window_end = entries.len();

    let tokens_before = estimate_entries_tokens(&entries[previous_index.unwrap_or(0)..]);

    let cut = find_cut_point(
        entries,
        window_start,
        window_end,
        settings.keep_recent_tokens,
    );
    let Some(first_kept) = entries.get(cut.first_kept_entry_index) else {
        return Err(NothingToCompact::TooSmall);
    };
    let history_end = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => turn_start,
        Some(_) | None => cut.first_kept_entry_index,
    };
    let messages_to_summarize: Vec<AgentMessage> = entries[window_start..history_end]
        .iter()
        .filter_map(BranchEntry::message)
        .collect();
    let turn_prefix_messages: Vec<AgentMessage> = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => entries[turn_start..cut.first_kept_entry_index]
            .iter()
            .filter_map(BranchEntry::message)
            .collect(),
        Some(_) | None => Vec::new(),
    };

    let mut file_ops = FileOperations::default();
    let mut previous_summary = None;
    if let Some(index) = previous_index
        && let BranchEntryKind::Compaction {
            message,
            details,
            from_hook,
            ..
        } = &entries[index].kind
    {
        previous_summary = Some(message.summary.clone());
        if !from_hook && let Some(details) = details {
            file_ops.add_lists(details);
        }
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }

    Ok(CompactionPreparation {
        first_kept_entry_id: first_kept.id.clone(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}

/// `estimateContextTokens` over the messages of `entries`, without copying them: the last
/// successful assistant usage plus estimates of every message after it.
fn estimate_entries_tokens(entries: &[BranchEntry]) -> u64 {
    let last_usage = entries.iter().enumerate().rev().find_map(|(index, entry)| {
        entry
            .as_message()
            .and_then(assistant_usage)
            .map(|usage| (index, usage))
    });
    let (trailing_from, usage_tokens) = match last_usage {
        Some((index, usage)) => (index + 1, calculate_context_tokens(usage)),
        None => (0, 0),
    };
    let trailing: u64 = entries[trailing_from..]
        .iter()
        .filter_map(BranchEntry::message_ref)
        .map(|message| estimate_tokens(&message))
        .sum();
    usage_tokens + trailing
}

impl CompactionPreparation {
    /// pi's `CompactionPreparation`, as extensions see it in `session_before_compact`.
    pub fn to_pi(&self) -> serde_json::Value {
        fn sorted(set: &std::collections::HashSet<String>) -> Vec<&String> {
            let mut paths: Vec<&String> = set.iter().collect();
            paths.sort();
            paths
        }
        serde_json::json!({
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": self.messages_to_summarize,
            "turnPrefixMessages": self.turn_prefix_messages,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "fileOps": {
                "read": sorted(&self.file_ops.read),
                "written": sorted(&self.file_ops.written),
                "edited": sorted(&self.file_ops.edited),
            },
            "settings": {
                "enabled": self.settings.enabled,
                "reserveTokens": self.settings.reserve_tokens,
                "keepRecentTokens": self.settings.keep_recent_tokens,
            },
        })
    }

    /// The summarization calls pi's `compact` makes: with a split turn, a history summary
    /// (unless there is no history) and a turn-prefix summary, run in parallel; otherwise one
    /// history summary (even of an empty conversation, as pi).
    pub fn plan(&self, custom_instructions: Option<&str>, model_reasons: bool) -> CompactionPlan {
        let reserve_tokens = self.settings.reserve_tokens;
        let history = || {
            history_request(
                &self.messages_to_summarize,
                self.previous_summary.as_deref(),
                custom_instructions,
                reserve_tokens,
                model_reasons,
            )
        };
        let (history, turn_prefix) = if self.is_split_turn && !self.turn_prefix_messages.is_empty()
        {
            let history = (!self.messages_to_summarize.is_empty()).then(history);
            let prefix = turn_prefix_request(&self.turn_prefix_messages, reserve_tokens);
            (history, Some(prefix))
        } else {
            (Some(history()), None)
        };
        CompactionPlan {
            history,
            turn_prefix,
            first_kept_entry_id: self.first_kept_entry_id.clone(),
            tokens_before: self.tokens_before,
            file_lists: self.file_ops.lists(),
        }
    }
}

impl CompactionPlan {
    /// The result from the answers: `history` for [`CompactionPlan::history`] (ignored when
    /// it is `None`), `turn_prefix` for [`CompactionPlan::turn_prefix`]. A split turn merges
    /// them as pi does; the file lists are appended.
    pub fn finish(self, history: String, turn_prefix: Option<String>) -> CompactionResult {
        let history = match self.history {
            Some(_) => history,
            None => NO_PRIOR_HISTORY.to_owned(),
        };
        let mut summary = match (self.turn_prefix, turn_prefix) {
            (Some(_), Some(prefix)) => {
                format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}")
            }
            (Some(_), None) | (None, Some(_)) | (None, None) => history,
        };
        summary.push_str(&self.file_lists.format());
        CompactionResult {
            summary,
            first_kept_entry_id: self.first_kept_entry_id,
            tokens_before: self.tokens_before,
            details: self.file_lists,
            from_hook: None,
        }
    }
}
