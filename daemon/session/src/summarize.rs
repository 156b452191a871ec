//! The model side of compaction and branch summaries: runs the [`SummaryRequest`]s that
//! `crate::compaction` builds through the session's model and key, cancellably, and turns the
//! answers into what is stored. Used from tasks the session actor spawns, so a summary never
//! blocks the actor.
//!
//! Errors carry pi's wording (`Summarization failed: …`, `Turn prefix summarization failed:
//! …`), which the actor prefixes as pi does (`Auto-compaction failed: …`).

use std::sync::Arc;

use pi_llm::{ApiKey, AssistantContent, Model, Provider, StopReason, StreamOptions, ThinkingLevel};
use tokio_util::sync::CancellationToken;

use crate::compaction::branch::{abandoned_start, branch_token_budget};
use crate::compaction::{
    BranchEntry, BranchSummary, BranchSummarySettings, CompactionResult, CompactionSettings,
    Instructions, NothingToCompact, SummaryRequest, finish_branch_summary, prepare_branch_entries,
    prepare_compaction,
};
use crate::convert::WireError;
use crate::entries;
use pi_store::StoredEntry;

/// The session's model, as summaries use it.
#[derive(Clone)]
pub struct SummaryModel {
    /// The provider router.
    pub provider: Arc<dyn Provider>,
    /// The session's current model.
    pub model: Model,
    /// Its key.
    pub api_key: Option<ApiKey>,
    /// The session id (prompt-cache key).
    pub session_id: String,
}

impl std::fmt::Debug for SummaryModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryModel")
            .field("model", &self.model.id)
            .finish_non_exhaustive()
    }
}

/// Why a summary was not produced.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// Cancelled (`session/abort`); nothing is stored and nothing else needs doing.
    #[error("Compaction cancelled")]
    Aborted,
    /// There is nothing to compact; tell the user, store nothing.
    #[error(transparent)]
    Nothing(#[from] NothingToCompact),
    /// The model failed; the message says how, in pi's words. Report it.
    #[error("{0}")]
    Failed(String),
    /// A stored entry could not be read (a bug); report it.
    #[error(transparent)]
    Corrupt(#[from] WireError),
}

impl SummaryModel {
    /// Runs one request and returns the answer's text blocks joined by newlines. `what` names
    /// the summary in the error (`Summarization failed: …`).
    pub async fn complete(
        &self,
        request: &SummaryRequest,
        what: &str,
        cancel: &CancellationToken,
    ) -> Result<String, SummaryError> {
        let options = StreamOptions {
            api_key: self.api_key.clone(),
            thinking: if request.reasoning && self.model.reasoning {
                ThinkingLevel::High
            } else {
                ThinkingLevel::Off
            },
            max_tokens: Some(request.max_tokens),
            session_id: Some(self.session_id.clone()),
            cancel: cancel.clone(),
            payload: None,
            response: None,
            thinking_budgets: pi_llm::ThinkingBudgets::default(),
            request_timeout: None,
            provider_retries: None,
            max_retry_delay: None,
            transport: pi_llm::Transport::Auto,
            cache_retention: pi_llm::CacheRetention::from_env_value(
                std::env::var("PI_CACHE_RETENTION").ok().as_deref(),
            ),
            env: None,
        };
        let context = request.context(pi_util::time::now_millis());
        let message = self
            .provider
            .stream(&self.model, &context, options)
            .result()
            .await;
        if cancel.is_cancelled() {
            return Err(SummaryError::Aborted);
        }
        match message.stop_reason {
            StopReason::Aborted => Err(SummaryError::Aborted),
            StopReason::Error => Err(SummaryError::Failed(format!(
                "{what} failed: {}",
                message
                    .error_message
                    .as_deref()
                    .filter(|text| !text.is_empty())
                    .unwrap_or("Unknown error")
            ))),
            StopReason::Stop | StopReason::Length | StopReason::ToolUse => {
                let texts: Vec<&str> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Text(text) => Some(text.text.as_str()),
                        AssistantContent::Thinking(_) | AssistantContent::ToolCall(_) => None,
                    })
                    .collect();
                Ok(texts.join("\n"))
            }
        }
    }

    /// pi's `compact`: prepares the branch (stored entries, root first); then the session's
    /// `session_before_compact` handlers (`hooks`) may cancel it or write the summary
    /// themselves; otherwise runs the history and turn-prefix summaries (in parallel for a
    /// split turn). Returns what to store.
    pub async fn compact(
        &self,
        branch: Vec<StoredEntry>,
        settings: CompactionSettings,
        instructions: Option<String>,
        cancel: CancellationToken,
        hooks: Option<std::sync::Arc<dyn crate::hooks::Hooks>>,
    ) -> Result<CompactionResult, SummaryError> {
        let entries = branch_entries(&branch)?;
        let preparation = prepare_compaction(&entries, &settings)?;
        drop(entries);
        if let Some(hooks) = hooks {
            let pi_branch: Vec<serde_json::Value> = branch
                .iter()
                .filter_map(|stored| serde_json::from_str(&stored.body).ok())
                .collect();
            drop(branch);
            let asked = hooks.before_compact(preparation.to_pi(), pi_branch, instructions.clone());
            let decided = tokio::select! {
                decided = asked => decided,
                () = cancel.cancelled() => return Err(SummaryError::Aborted),
            };
            match decided {
                Ok(crate::hooks::BeforeCompact::Continue) => {}
                Ok(crate::hooks::BeforeCompact::Cancel) => return Err(SummaryError::Aborted),
                Ok(crate::hooks::BeforeCompact::Write(written)) => {
                    return Ok(CompactionResult {
                        summary: written.summary,
                        first_kept_entry_id: written.first_kept_entry_id,
                        tokens_before: written.tokens_before,
                        details: Default::default(),
                        from_hook: Some(written.details),
                    });
                }
                // A handler that failed is reported by the hooks; the summary is pi's own.
                Err(error) => {
                    tracing::warn!(%error, "session_before_compact failed; compacting as usual");
                }
            }
        }
        let plan = preparation.plan(instructions.as_deref(), self.model.reasoning);
        drop(preparation);
        let history = async {
            match &plan.history {
                Some(request) => self.complete(request, "Summarization", &cancel).await,
                None => Ok(String::new()),
            }
        };
        let turn_prefix = async {
            match &plan.turn_prefix {
                Some(request) => self
                    .complete(request, "Turn prefix summarization", &cancel)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        };
        let (history, turn_prefix) = tokio::try_join!(history, turn_prefix)?;
        Ok(plan.finish(history, turn_prefix))
    }

    /// pi's branch summary of the entries a navigation abandons (see [`abandoned_entries`]):
    /// the newest messages within `contextWindow - reserveTokens`, summarized with
    /// `instructions`; `No content to summarize` without a request when nothing is left.
    pub async fn summarize_branch(
        &self,
        abandoned: Vec<BranchEntry>,
        settings: BranchSummarySettings,
        instructions: Instructions,
        cancel: CancellationToken,
    ) -> Result<BranchSummary, SummaryError> {
        let budget = branch_token_budget(self.model.context_window, settings.reserve_tokens);
        let preparation = prepare_branch_entries(&abandoned, budget);
        let answer = match preparation.request(&instructions) {
            Some(request) => Some(self.complete(&request, "Summarization", &cancel).await?),
            None => None,
        };
        Ok(finish_branch_summary(answer, &preparation.file_ops))
    }
}

/// Stored entries as compaction sees them.
pub fn branch_entries(stored: &[StoredEntry]) -> Result<Vec<BranchEntry>, WireError> {
    stored
        .iter()
        .map(|stored| entries::branch_entry(&entries::parse_entry(stored)?))
        .collect()
}

/// The entries a move from the leaf of `old_branch` to the end of `target_branch` abandons
/// (both root first): those after their deepest common entry.
pub fn abandoned_entries(
    old_branch: &[StoredEntry],
    target_branch: &[StoredEntry],
) -> Result<Vec<BranchEntry>, WireError> {
    let old_path = branch_entries(old_branch)?;
    let target_ids: Vec<&str> = target_branch
        .iter()
        .map(|entry| entry.id.as_str())
        .collect();
    let start = abandoned_start(&old_path, &target_ids);
    Ok(old_path.into_iter().skip(start).collect())
}
