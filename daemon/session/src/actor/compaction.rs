//! The session actor's compactions (pi's `_checkCompaction`, `_runAutoCompaction` and
//! `compact`): deciding when to compact, starting the summary as a job (see `job.rs`), and
//! applying its outcome: the entry, the rebuilt context, the events and what runs next.
//!
//! Events, in order: `compaction_start {reason}`; on success `entry_added` (the `compaction`
//! entry, durable) then `compaction_end {reason, result, aborted: false, willRetry}`; on failure
//! or abort `compaction_end` with `errorMessage` or `aborted: true`.
//!
//! Invariant: an overflow is retried once per user prompt; a second overflow ends with an
//! error event and no further compaction.

use pi_agent::AgentMessage;
use pi_llm::{AssistantMessage, StopReason};
use pi_protocol::v1::{CompactionReason, SessionCompactResponse, SessionEntry, SessionEvent};
use tokio_util::sync::CancellationToken;

use super::job::{ActiveJob, AfterCompaction, JobKind, JobOutcome, PendingCompaction};
use super::{Reply, SessionActor};
use crate::compaction::{
    CompactionResult, CompactionSettings, calculate_context_tokens, estimate_context_tokens,
    should_compact,
};
use crate::convert;
use crate::entries::EntryBase;
use crate::error::{Busy, SessionError};
use crate::summarize::{SummaryError, SummaryModel};
use pi_util::time::now_millis;

/// What pi says when an overflow comes back after one compact-and-retry.
pub const OVERFLOW_RECOVERY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// A compaction a check asks for.
pub(super) struct Trigger {
    reason: CompactionReason,
    retry: bool,
}

impl SessionActor {
    /// `session/compact`: compacts now, aborting an active run first.
    pub(super) async fn compact(
        &mut self,
        instructions: Option<String>,
        reply: Reply<SessionCompactResponse>,
    ) {
        if self.job.is_some() || self.pending_compaction.is_some() {
            let _ = reply.send(Err(SessionError::Busy(Busy::AlreadyCompacting)));
            return;
        }
        if let Some(run) = &self.run {
            run.cancel.cancel();
            self.pending_compaction = Some(PendingCompaction {
                instructions,
                reply,
            });
            return;
        }
        self.start_compaction(
            CompactionReason::Manual,
            AfterCompaction::Nothing,
            instructions,
            Some(reply),
        )
        .await;
    }

    /// What to do after a run ended: a manual compaction that waited for it, or pi's
    /// `_checkCompaction` on the run's last assistant message.
    pub(super) async fn after_run(&mut self, last_assistant: Option<AssistantMessage>) {
        if self.closing.is_some() {
            if let Some(pending) = self.pending_compaction.take() {
                let _ = pending.reply.send(Err(SessionError::Closing));
            }
            return;
        }
        if let Some(pending) = self.pending_compaction.take() {
            self.start_compaction(
                CompactionReason::Manual,
                AfterCompaction::Nothing,
                pending.instructions,
                Some(pending.reply),
            )
            .await;
            return;
        }
        let Some(assistant) = last_assistant else {
            return;
        };
        if !matches!(
            assistant.stop_reason,
            StopReason::Error | StopReason::Aborted
        ) {
            self.overflow_recovery_attempted = false;
        }
        // The run's own message: newer than any compaction.
        let Some(trigger) = self.check_compaction(&assistant, true) else {
            return;
        };
        let then = if trigger.retry {
            AfterCompaction::Retry
        } else {
            AfterCompaction::ContinueQueued
        };
        self.start_compaction(trigger.reason, then, None, None)
            .await;
    }

    /// pi's pre-prompt check on the last assistant message of the context (aborted ones
    /// included). Returns the prompt back when no compaction is needed; otherwise compacts and
    /// runs the prompt afterwards.
    pub(super) async fn compact_before_prompt(
        &mut self,
        prompts: Vec<AgentMessage>,
    ) -> Option<Vec<AgentMessage>> {
        // Only a message newer than the latest compaction can trigger one.
        let last_assistant = self.context[self.compacted_prefix.min(self.context.len())..]
            .iter()
            .rev()
            .find_map(|message| match &**message {
                AgentMessage::Assistant(assistant) => Some(assistant.clone()),
                AgentMessage::User(_)
                | AgentMessage::ToolResult(_)
                | AgentMessage::BashExecution(_)
                | AgentMessage::Custom(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_) => None,
            });
        let Some(trigger) = last_assistant.and_then(|a| self.check_compaction(&a, false)) else {
            return Some(prompts);
        };
        self.start_compaction(trigger.reason, AfterCompaction::Prompt(prompts), None, None)
            .await;
        None
    }

    /// pi's `_checkCompaction` on an assistant message newer than the latest compaction: an
    /// overflow of the current model compacts and retries once (the failed message leaves the
    /// context, not the tree); a context over `contextWindow - reserveTokens` compacts.
    fn check_compaction(
        &mut self,
        assistant: &AssistantMessage,
        skip_aborted: bool,
    ) -> Option<Trigger> {
        let settings = self.compaction_settings();
        if !settings.enabled || (skip_aborted && assistant.stop_reason == StopReason::Aborted) {
            return None;
        }
        let model = self.model.as_ref()?;
        let context_window = model.context_window;
        let same_model = assistant.provider == model.provider && assistant.model == model.id;
        if same_model && pi_llm::is_context_overflow(assistant, Some(context_window)) {
            // A completed answer over the window is compacted but cannot be retried.
            let retry = assistant.stop_reason != StopReason::Stop;
            if retry {
                if self.overflow_recovery_attempted {
                    self.broadcast(SessionEvent::CompactionEnd {
                        reason: CompactionReason::Overflow,
                        result: None,
                        aborted: false,
                        will_retry: false,
                        error_message: Some(OVERFLOW_RECOVERY_FAILED.to_owned()),
                    });
                    return None;
                }
                self.overflow_recovery_attempted = true;
                if matches!(
                    self.context.last().map(|message| &**message),
                    Some(AgentMessage::Assistant(_))
                ) {
                    self.context.pop();
                    self.compacted_prefix = self.compacted_prefix.min(self.context.len());
                }
            }
            return Some(Trigger {
                reason: CompactionReason::Overflow,
                retry,
            });
        }
        let context_tokens = if assistant.stop_reason == StopReason::Error {
            // Usage from before the latest compaction measured a context that is gone.
            let estimate = estimate_context_tokens(&self.context);
            if estimate.last_usage_index? < self.compacted_prefix {
                return None;
            }
            estimate.tokens
        } else {
            calculate_context_tokens(&assistant.usage)
        };
        should_compact(context_tokens, context_window, &settings).then_some(Trigger {
            reason: CompactionReason::Threshold,
            retry: false,
        })
    }

    /// Starts a compaction job: `compaction_start`, then the summary in its own task.
    pub(super) async fn start_compaction(
        &mut self,
        reason: CompactionReason,
        then: AfterCompaction,
        instructions: Option<String>,
        reply: Option<Reply<SessionCompactResponse>>,
    ) {
        self.broadcast(SessionEvent::CompactionStart { reason });
        let summary_model = match self.summary_model() {
            Ok(model) => model,
            Err(error) => {
                self.end_compaction_early(reason, then, reply, error).await;
                return;
            }
        };
        let branch = match self
            .store
            .branch(&self.row.id, self.row.leaf_id.as_deref())
            .await
        {
            Ok(branch) => branch,
            Err(error) => {
                let error = SessionError::internal(error);
                self.end_compaction_early(reason, then, reply, error).await;
                return;
            }
        };
        let settings = self.compaction_settings();
        let cancel = CancellationToken::new();
        let task_cancel = cancel.clone();
        let hooks = self.hooks.clone();
        let task = tokio::spawn(async move {
            JobOutcome::Compaction(
                summary_model
                    .compact(branch, settings, instructions, task_cancel, hooks)
                    .await,
            )
        });
        self.job = Some(ActiveJob {
            cancel,
            task,
            kind: JobKind::Compaction {
                reason,
                then,
                reply,
            },
            abort_waiters: Vec::new(),
        });
    }

    /// A compaction that could not start (no model or key, a store failure): pi's end event
    /// without a message for automatic ones; the error for manual ones.
    async fn end_compaction_early(
        &mut self,
        reason: CompactionReason,
        then: AfterCompaction,
        reply: Option<Reply<SessionCompactResponse>>,
        error: SessionError,
    ) {
        let error_message = reply
            .is_some()
            .then(|| format!("Compaction failed: {error}"));
        self.broadcast(SessionEvent::CompactionEnd {
            reason,
            result: None,
            aborted: false,
            will_retry: false,
            error_message,
        });
        if let Some(reply) = reply {
            let _ = reply.send(Err(error));
        }
        self.continue_after_compaction(then, false).await;
    }

    /// pi's `compaction` settings of the session's working directory (`settings.json`).
    pub(super) fn compaction_settings(&self) -> CompactionSettings {
        let settings = &self.resources.settings.compaction;
        CompactionSettings {
            enabled: settings.enabled,
            reserve_tokens: settings.reserve_tokens,
            keep_recent_tokens: settings.keep_recent_tokens,
        }
    }

    /// The session's model and key (as its runs see them), for summaries.
    pub(super) fn summary_model(&self) -> Result<SummaryModel, SessionError> {
        let (model, api_key) = self.model_and_key()?;
        Ok(SummaryModel {
            provider: self.provider_for(&model),
            model,
            api_key,
            session_id: self.row.id.clone(),
        })
    }

    /// Stores a compaction's result, reports `compaction_end`, answers `session/compact` and
    /// does what follows (retry, queued messages, a waiting prompt) unless it was aborted.
    pub(super) async fn finish_compaction(
        &mut self,
        reason: CompactionReason,
        then: AfterCompaction,
        reply: Option<Reply<SessionCompactResponse>>,
        result: Result<CompactionResult, SummaryError>,
    ) {
        let stored = match result {
            Ok(result) => self.store_compaction(&result).await.map(|()| result),
            Err(error) => Err(error),
        };
        let (wire_result, aborted, error_message, error) = match stored {
            Ok(result) => (
                Some(convert::compaction_result_to_wire(&result)),
                false,
                None,
                None,
            ),
            Err(SummaryError::Aborted) => (None, true, None, None),
            Err(error @ SummaryError::Nothing(_)) if reply.is_none() => {
                tracing::debug!(%error, "nothing to compact");
                (None, false, None, None)
            }
            Err(error) => {
                let prefix = match reason {
                    CompactionReason::Manual => "Compaction failed",
                    CompactionReason::Threshold => "Auto-compaction failed",
                    CompactionReason::Overflow => "Context overflow recovery failed",
                };
                let error = SessionError::Summary { prefix, error };
                (None, false, Some(error.to_string()), Some(error))
            }
        };
        let succeeded = wire_result.is_some();
        let will_retry = succeeded && matches!(then, AfterCompaction::Retry);
        self.broadcast(SessionEvent::CompactionEnd {
            reason,
            result: wire_result.clone(),
            aborted,
            will_retry,
            error_message,
        });
        if let Some(reply) = reply {
            let _ = reply.send(match error {
                Some(error) => Err(error),
                None => Ok(SessionCompactResponse {
                    result: wire_result,
                    aborted,
                }),
            });
        }
        if !aborted {
            self.continue_after_compaction(then, succeeded).await;
        }
    }

    /// Appends the `compaction` entry and rebuilds the context from the branch.
    async fn store_compaction(&mut self, result: &CompactionResult) -> Result<(), SummaryError> {
        let base = EntryBase::new(&mut self.entry_ids, self.row.leaf_id.clone(), now_millis());
        let entry = SessionEntry::Compaction {
            id: base.id,
            parent_id: base.parent_id,
            timestamp: base.timestamp,
            summary: result.summary.clone(),
            first_kept_entry_id: result.first_kept_entry_id.clone(),
            tokens_before: result.tokens_before,
            details: result.details_value(),
            from_hook: Some(result.from_hook.is_some()),
        };
        self.append_and_reload(entry)
            .await
            .map_err(|error| SummaryError::Failed(error.to_string()))?;
        Ok(())
    }

    /// What follows a compaction: the retry of an overflowed turn (on success), queued
    /// messages after a threshold compaction, or the prompt that waited for it.
    async fn continue_after_compaction(&mut self, then: AfterCompaction, succeeded: bool) {
        if self.closing.is_some() {
            return;
        }
        let prompts = match then {
            AfterCompaction::Nothing => return,
            AfterCompaction::Retry if succeeded => {
                // The failed message stays in the tree; the model does not see it again.
                if let Some(AgentMessage::Assistant(last)) =
                    self.context.last().map(|message| &**message)
                    && last.stop_reason == StopReason::Error
                {
                    self.context.pop();
                    self.compacted_prefix = self.compacted_prefix.min(self.context.len());
                }
                Vec::new()
            }
            AfterCompaction::Retry => return,
            AfterCompaction::ContinueQueued => {
                let mut queued = self.queues.take_steering();
                if queued.is_empty() {
                    queued = self.queues.take_follow_up();
                }
                if queued.is_empty() {
                    return;
                }
                let texts = self.queues.texts();
                self.broadcast(SessionEvent::QueueUpdate {
                    steering: texts.steering,
                    follow_up: texts.follow_up,
                });
                queued
            }
            AfterCompaction::Prompt(prompts) => prompts,
        };
        if let Err(error) = self.start_run(prompts).await {
            self.broadcast(SessionEvent::SessionError {
                message: error.to_string(),
            });
        }
    }
}
