//! pi's branch summaries (`branch-summarization.ts`): when the conversation moves to another
//! point of the tree, the abandoned part (from the old leaf back to the deepest common
//! ancestor with the target, compactions included) is summarized, newest messages first
//! within a token budget, and stored as a `branch_summary` entry at the new position.

use std::collections::HashSet;

use pi_agent::AgentMessage;

use crate::compaction::entry::{BranchEntry, BranchEntryKind};
use crate::compaction::files::{FileLists, FileOperations};
use crate::compaction::prompt::{
    BRANCH_SUMMARY_PREAMBLE, Instructions, SummaryRequest, branch_request,
};
use crate::compaction::tokens::estimate_tokens;

/// The summary of an empty branch (no request is made).
pub const NO_CONTENT: &str = "No content to summarize";

/// What a branch summary reads (pi's `BranchPreparation`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchPreparation {
    /// The messages within the budget, oldest first.
    pub messages: Vec<AgentMessage>,
    /// Files touched on the whole branch, earlier branch summaries included.
    pub file_ops: FileOperations,
    /// Estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// What a `branch_summary` entry stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchSummary {
    /// The summary, preamble and file lists included.
    pub summary: String,
    /// `details {readFiles, modifiedFiles}`.
    pub details: FileLists,
}

/// pi's `collectEntriesForBranchSummary` on two root-first paths: how many entries of
/// `old_path` (its start) are shared with `target_path`, so `old_path[start..]` is what the
/// move abandons (all of it when the paths share nothing).
pub fn abandoned_start(old_path: &[BranchEntry], target_path_ids: &[&str]) -> usize {
    let old_ids: HashSet<&str> = old_path.iter().map(|entry| entry.id.as_str()).collect();
    let Some(ancestor) = target_path_ids
        .iter()
        .rev()
        .find(|id| old_ids.contains(**id))
    else {
        return 0;
    };
    old_path
        .iter()
        .position(|entry| entry.id == *ancestor)
        .map_or(0, |index| index + 1)
}

/// pi's `prepareBranchEntries`: file operations from every entry (earlier pi-made branch
/// summaries' details and tool calls), then messages from newest to oldest while they fit
/// `token_budget` (0: no limit). Tool results are skipped; a summary that does not fit is
/// still taken while under 90 % of the budget, then the walk stops.
pub fn prepare_branch_entries(entries: &[BranchEntry], token_budget: u64) -> BranchPreparation {
    let mut preparation = BranchPreparation::default();
    for entry in entries {
        if let BranchEntryKind::BranchSummary {
            details: Some(details),
            from_hook: false,
            ..
        } = &entry.kind
        {
            preparation.file_ops.add_lists(details);
        }
    }
    let mut newest_first = Vec::new();
    for entry in entries.iter().rev() {
        let message = match &entry.kind {
            BranchEntryKind::Message(AgentMessage::ToolResult(_)) | BranchEntryKind::Other => {
                continue;
            }
            BranchEntryKind::Message(_)
            | BranchEntryKind::CustomMessage(_)
            | BranchEntryKind::BranchSummary { .. }
            | BranchEntryKind::Compaction { .. } => match entry.message() {
                Some(message) => message,
                None => continue,
            },
        };
        preparation.file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && preparation.total_tokens + tokens > token_budget {
            let is_summary = matches!(
                entry.kind,
                BranchEntryKind::BranchSummary { .. } | BranchEntryKind::Compaction { .. }
            );
            // `totalTokens < tokenBudget * 0.9`, in integers.
            if is_summary && preparation.total_tokens * 10 < token_budget * 9 {
                newest_first.push(message);
                preparation.total_tokens += tokens;
            }
            break;
        }
        newest_first.push(message);
        preparation.total_tokens += tokens;
    }
    newest_first.reverse();
    preparation.messages = newest_first;
    preparation
}

/// The budget pi gives a branch summary's input: `(contextWindow || 128000) - reserveTokens`.
pub fn branch_token_budget(context_window: u64, reserve_tokens: u64) -> u64 {
    let window = if context_window == 0 {
        128_000
    } else {
        context_window
    };
    window.saturating_sub(reserve_tokens)
}

impl BranchPreparation {
    /// The summarization request; `None` when there is nothing to read (the summary is then
    /// [`NO_CONTENT`]).
    pub fn request(&self, instructions: &Instructions) -> Option<SummaryRequest> {
        (!self.messages.is_empty()).then(|| branch_request(&self.messages, instructions))
    }
}

/// The stored summary: [`NO_CONTENT`] with empty lists without an answer; else the preamble,
/// the answer and the file lists.
pub fn finish_branch_summary(answer: Option<String>, file_ops: &FileOperations) -> BranchSummary {
    match answer {
        None => BranchSummary {
            summary: NO_CONTENT.to_owned(),
            details: FileLists::default(),
        },
        Some(text) => {
            let details = file_ops.lists();
            BranchSummary {
                summary: format!("{BRANCH_SUMMARY_PREAMBLE}{text}{}", details.format()),
                details,
            }
        }
    }
}
