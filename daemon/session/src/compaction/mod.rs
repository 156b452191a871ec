//! Compaction and branch summaries exactly as pi does them (`core/compaction/` in pi's
//! coding agent), as pure functions over a branch's entries and messages: no storage, no model
//! calls, no clock. The session actor loads the branch, runs the [`SummaryRequest`]s these
//! functions build through the session's model, and stores what [`CompactionPlan::finish`] and
//! [`branch::finish_branch_summary`] return.
//!
//! - `entry`: the branch as these functions see it ([`BranchEntry`]).
//! - `tokens`: pi's token accounting (`estimateTokens`, `estimateContextTokens`,
//!   `shouldCompact`).
//! - `cut`: valid cut points, the cut point for `keepRecentTokens`, split turns.
//! - `files`: read/modified file tracking from tool calls and earlier summaries.
//! - `serialize`: the `[User]: …` transcript the summarizer reads.
//! - `prompt`: pi's summarization prompts and the requests built from them.
//! - `prepare`: `prepareCompaction` and the plan of summarization calls.
//! - `branch`: branch summaries for tree navigation.
//!
//! Architecture invariant: a cut never separates a tool result from its tool call: only
//! entries that are not tool results start the kept part of a branch.
//! Architecture invariant: everything here is deterministic in its inputs; the prompts are
//! pi's, byte for byte.

pub mod branch;
pub mod cut;
pub mod entry;
pub mod files;
pub mod prepare;
pub mod prompt;
pub mod serialize;
pub mod tokens;

pub use branch::{BranchPreparation, BranchSummary, finish_branch_summary, prepare_branch_entries};
pub use cut::{CutPoint, find_cut_point};
pub use entry::{BranchEntry, BranchEntryKind};
pub use files::{FileLists, FileOperations};
pub use prepare::{
    CompactionPlan, CompactionPreparation, CompactionResult, NothingToCompact, prepare_compaction,
};
pub use prompt::{Instructions, SummaryRequest};
pub use tokens::{
    ContextEstimate, calculate_context_tokens, estimate_context_tokens, estimate_tokens,
    should_compact,
};

/// pi's `compaction` settings (`settings.json`, read by `pi_coding`). Manual compaction
/// ignores `enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    /// Compact automatically (after a run over the threshold, or on a context overflow).
    pub enabled: bool,
    /// Headroom for the response: the threshold is `contextWindow - reserveTokens`; the
    /// summary may use `0.8 × reserveTokens` output tokens.
    pub reserve_tokens: u64,
    /// About this many of the most recent tokens are kept verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

/// pi's `branchSummary` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchSummarySettings {
    /// The summarized branch may fill `contextWindow - reserveTokens` tokens.
    pub reserve_tokens: u64,
}

impl Default for BranchSummarySettings {
    fn default() -> Self {
        BranchSummarySettings {
            reserve_tokens: 16_384,
        }
    }
}

#[cfg(test)]
mod tests;
