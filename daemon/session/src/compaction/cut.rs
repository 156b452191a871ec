//! Where a compaction cuts the branch (pi's `findCutPoint`): walking back from the newest
//! message until `keepRecentTokens` are kept, then moving forward to the nearest valid cut
//! point, so the kept part never starts with a tool result.
//!
//! Valid cut points are `message` entries of every role but `toolResult`, plus
//! `custom_message` and `branch_summary` entries. When the cut lands inside a turn (on an
//! assistant message after the turn's user message), the turn is split: its prefix is
//! summarized separately (see `prepare`).

use pi_agent::AgentMessage;

use crate::compaction::entry::{BranchEntry, BranchEntryKind};
use crate::compaction::tokens::estimate_tokens;

/// Where to cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry kept verbatim.
    pub first_kept_entry_index: usize,
    /// When the cut splits a turn: the index of the entry that started it.
    pub turn_start_index: Option<usize>,
    /// The cut is inside a turn (it is not a user message and a turn start precedes it).
    pub is_split_turn: bool,
}

/// pi's `findCutPoint` over `entries[start..end]`: the cut that keeps at least
/// `keep_recent_tokens` (estimated over `message` entries) when the window holds that many,
/// else everything from the first valid cut point. Non-message entries (settings changes,
/// labels) directly before the cut are kept with it.
pub fn find_cut_point(
    entries: &[BranchEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let cut_points: Vec<usize> = (start..end)
        .filter(|&index| is_valid_cut_point(&entries[index]))
        .collect();
    let Some(&first_cut_point) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    let mut cut_index = first_cut_point;
    let mut accumulated = 0;
    for index in (start..end).rev() {
        let Some(message) = entries[index].as_message() else {
            continue;
        };
        accumulated += estimate_tokens(message);
        if accumulated >= keep_recent_tokens {
            // The closest valid cut point at or after this entry; none means the default.
            let position = cut_points.partition_point(|&cut| cut < index);
            if let Some(&cut) = cut_points.get(position) {
                cut_index = cut;
            }
            break;
        }
    }
    // Keep the non-message entries right before the cut (settings changes, labels, ...),
    // stopping at a message or a compaction.
    while cut_index > start {
        match &entries[cut_index - 1].kind {
            BranchEntryKind::Message(_) | BranchEntryKind::Compaction { .. } => break,
            BranchEntryKind::CustomMessage(_)
            | BranchEntryKind::BranchSummary { .. }
            | BranchEntryKind::Other => cut_index -= 1,
        }
    }
    let cut_is_user_message = matches!(
        entries[cut_index].kind,
        BranchEntryKind::Message(AgentMessage::User(_))
    );
    let turn_start_index = if cut_is_user_message {
        None
    } else {
        find_turn_start_index(entries, cut_index, start)
    };
    CutPoint {
        first_kept_entry_index: cut_index,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

/// pi's `findTurnStartIndex`: the nearest entry at or before `entry_index` (not before
/// `start`) that starts a turn: a user or bash-execution message, a custom message or a branch
/// summary.
pub fn find_turn_start_index(
    entries: &[BranchEntry],
    entry_index: usize,
    start: usize,
) -> Option<usize> {
    (start..=entry_index)
        .rev()
        .find(|&index| match &entries[index].kind {
            BranchEntryKind::CustomMessage(_) | BranchEntryKind::BranchSummary { .. } => true,
            BranchEntryKind::Message(message) => matches!(
                message,
                AgentMessage::User(_) | AgentMessage::BashExecution(_)
            ),
            BranchEntryKind::Compaction { .. } | BranchEntryKind::Other => false,
        })
}

/// Whether the kept part of a branch may start at `entry`: never at a tool result, which
/// must stay with the assistant message that called the tool.
pub fn is_valid_cut_point(entry: &BranchEntry) -> bool {
    match &entry.kind {
        BranchEntryKind::Message(message) => match message {
            AgentMessage::ToolResult(_) => false,
            AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => true,
        },
        BranchEntryKind::CustomMessage(_) | BranchEntryKind::BranchSummary { .. } => true,
        BranchEntryKind::Compaction { .. } | BranchEntryKind::Other => false,
    }
}
