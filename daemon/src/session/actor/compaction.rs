//! The session actor's compactions and branch summaries (pi's `_checkCompaction`,
//! `_runAutoCompaction`, `compact` and `navigateTree`): deciding when to compact, running the
//! summary as a job next to the actor (so attach, abort and queries keep being served), and
//! applying its outcome: the entry, the rebuilt context, the events and what runs next.
//!
//! Events, in order: `compaction_start {reason}`; on success `entry_added` (the `compaction`
//! entry, durable) then `compaction_end {reason, result, aborted: false, willRetry}`; on failure
//! or abort `compaction_end` with `errorMessage` or `aborted: true`.
//!
//! Invariant: at most one job, never at the same time as a run.
//! Invariant: an overflow is retried once per user prompt; a second overflow ends with an
//! error event and no further compaction.

use pi_agent::AgentMessage;
use pi_llm::{AssistantMessage, StopReason};
use pi_protocol::v1::{
    CompactionReason, EmptyResponse, SessionCompactResponse, SessionEntry, SessionEvent,
    SessionNavigateResponse,
};
use pi_protocol::{ErrorKind, ErrorObject};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Reply, SessionActor};
use crate::compaction::{
    BranchSummary, CompactionResult, Instructions, calculate_context_tokens,
    estimate_context_tokens, should_compact,
};
use crate::rpc::wire;
use crate::session::entries::{self, EntryBase};
use crate::session::now_millis;
use crate::session::summarize::{SummaryError, SummaryModel, abandoned_entries};

/// What pi says when an overflow comes back after one compact-and-retry.
pub const OVERFLOW_RECOVERY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// A compaction or branch summary running next to the actor.
pub(super) struct ActiveJob {
    // Cancelling aborts the summary's model calls; the task then ends with `Aborted`.
    cancel: CancellationToken,
    // The job; the actor awaits it in its loop.
    pub(super) task: JoinHandle<JobOutcome>,
    kind: JobKind,
    // `session/abort` callers, answered when the job has ended.
    abort_waiters: Vec<Reply<EmptyResponse>>,
}

/// What a job produced.
pub(super) enum JobOutcome {
    /// A compaction's result.
    Compaction(Result<CompactionResult, SummaryError>),
    /// A branch summary's result.
    BranchSummary(Result<BranchSummary, SummaryError>),
}

enum JobKind {
    Compaction {
        reason: CompactionReason,
        then: AfterCompaction,
        // `session/compact`'s caller, for manual compactions.
        reply: Option<Reply<SessionCompactResponse>>,
    },
    BranchSummary {
        // The leaf the summary is written under (`None`: the root).
        new_leaf: Option<String>,
        // The text handed back for editing.
        text: Option<String>,
        reply: Reply<SessionNavigateResponse>,
    },
}

/// What happens once a compaction has ended.
pub(super) enum AfterCompaction {
    /// Nothing (manual compaction).
    Nothing,
    /// Retry the turn that overflowed (on success only).
    Retry,
    /// Deliver queued steering or follow-up messages (threshold compaction after a run).
    ContinueQueued,
    /// Start the run of a prompt that waited for this compaction (pre-prompt check).
    Prompt(Vec<AgentMessage>),
}

/// A manual compaction waiting for the run it aborted to end.
pub(super) struct PendingCompaction {
    instructions: Option<String>,
    reply: Reply<SessionCompactResponse>,
}

/// A compaction a check asks for.
pub(super) struct Trigger {
    reason: CompactionReason,
    retry: bool,
}

impl SessionActor {
    /// `session/abort`: cancels the run, the job, and a manual compaction waiting for the run;
    /// `reply` is answered once the session is idle.
    pub(super) fn abort(&mut self, reply: Reply<EmptyResponse>) {
        if let Some(pending) = self.pending_compaction.take() {
            let _ = pending.reply.send(Ok(SessionCompactResponse {
                result: None,
                aborted: true,
            }));
        }
        if let Some(run) = &mut self.run {
            run.cancel.cancel();
            run.abort_waiters.push(reply);
        } else if let Some(job) = &mut self.job {
            job.cancel.cancel();
            job.abort_waiters.push(reply);
        } else {
            let _ = reply.send(Ok(EmptyResponse {}));
        }
    }

    /// Cancels a running job (the session is closing).
    pub(super) fn cancel_job(&mut self) {
        if let Some(job) = &self.job {
            job.cancel.cancel();
        }
    }

    /// `session/compact`: compacts now, aborting an active run first.
    pub(super) async fn compact(
        &mut self,
        instructions: Option<String>,
        reply: Reply<SessionCompactResponse>,
    ) {
        if self.job.is_some() || self.pending_compaction.is_some() {
            let _ = reply.send(Err(ErrorObject::new(
                ErrorKind::Busy,
                "the session is already compacting or summarizing; wait for it, or stop it with \
                 `session/abort`",
            )));
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
                let _ = pending.reply.send(Err(ErrorObject::new(
                    ErrorKind::ShuttingDown,
                    "the session is closing",
                )));
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
            .find_map(|message| match message {
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
        let settings = self.services.settings.compaction;
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
                if matches!(self.context.last(), Some(AgentMessage::Assistant(_))) {
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
    async fn start_compaction(
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
                let error = crate::session::internal(error);
                self.end_compaction_early(reason, then, reply, error).await;
                return;
            }
        };
        let settings = self.services.settings.compaction;
        let cancel = CancellationToken::new();
        let task_cancel = cancel.clone();
        let task = tokio::spawn(async move {
            JobOutcome::Compaction(
                summary_model
                    .compact(branch, settings, instructions, task_cancel)
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
        error: ErrorObject,
    ) {
        let error_message = reply
            .is_some()
            .then(|| format!("Compaction failed: {}", error.message));
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

    /// The session's model and key, for summaries.
    fn summary_model(&self) -> Result<SummaryModel, ErrorObject> {
        let model = self.model.clone().ok_or_else(|| {
            ErrorObject::new(
                ErrorKind::InvalidParams,
                "the session has no model; choose one with `session/setModel` (see `model/list`)",
            )
        })?;
        let api_key = self
            .services
            .models
            .api_key(&model)
            .map_err(|message| ErrorObject::new(ErrorKind::Unauthorized, message))?;
        Ok(SummaryModel {
            provider: self.services.models.provider(),
            model,
            api_key,
            session_id: self.row.id.clone(),
        })
    }

    /// Applies what a job produced.
    pub(super) async fn on_job_finished(
        &mut self,
        outcome: Result<JobOutcome, tokio::task::JoinError>,
    ) {
        let Some(job) = self.job.take() else { return };
        match (job.kind, outcome) {
            (
                JobKind::Compaction {
                    reason,
                    then,
                    reply,
                },
                Ok(JobOutcome::Compaction(result)),
            ) => self.finish_compaction(reason, then, reply, result).await,
            (
                JobKind::BranchSummary {
                    new_leaf,
                    text,
                    reply,
                },
                Ok(JobOutcome::BranchSummary(result)),
            ) => {
                let answer = self.finish_branch_summary(new_leaf, text, result).await;
                let _ = reply.send(answer);
            }
            (kind, outcome) => {
                let message = match outcome {
                    Err(error) => format!("the summary task failed: {error}"),
                    Ok(_) => "the summary task returned the wrong outcome".to_owned(),
                };
                tracing::error!(%message, "summary job failed");
                let error = crate::session::internal(&message);
                match kind {
                    JobKind::Compaction {
                        reason,
                        then,
                        reply,
                    } => {
                        self.finish_compaction(
                            reason,
                            then,
                            reply,
                            Err(SummaryError::Failed(message)),
                        )
                        .await
                    }
                    JobKind::BranchSummary { reply, .. } => {
                        let _ = reply.send(Err(error));
                    }
                }
            }
        }
        for waiter in job.abort_waiters {
            let _ = waiter.send(Ok(EmptyResponse {}));
        }
    }

    async fn finish_compaction(
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
                Some(wire::compaction_result_to_wire(&result)),
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
                let kind = match &error {
                    SummaryError::Nothing(_) => ErrorKind::InvalidParams,
                    SummaryError::Failed(_) => ErrorKind::ProviderError,
                    SummaryError::Aborted | SummaryError::Corrupt(_) => ErrorKind::Internal,
                };
                let message = format!("{prefix}: {error}");
                (
                    None,
                    false,
                    Some(message.clone()),
                    Some(ErrorObject::new(kind, message)),
                )
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
            details: Some(result.details.to_details()),
            from_hook: Some(false),
        };
        self.append_and_reload(entry)
            .await
            .map_err(|error| SummaryError::Failed(error.message))?;
        Ok(())
    }

    /// Commits `entry` as the new leaf, announces it, and rebuilds the context.
    async fn append_and_reload(&mut self, entry: SessionEntry) -> Result<String, ErrorObject> {
        let row = self.row.clone();
        let committed = self.commit_entries(row, vec![entry.clone()]).await?;
        let Some((id, seq)) = committed.into_iter().next() else {
            return Err(crate::session::internal("no entry was committed"));
        };
        self.broadcast_with_seq(SessionEvent::EntryAdded { entry }, Some(seq));
        self.reload_context().await?;
        Ok(id)
    }

    /// Rebuilds the context from the stored branch.
    pub(super) async fn reload_context(&mut self) -> Result<(), ErrorObject> {
        let branch: Vec<SessionEntry> = self
            .store
            .branch(&self.row.id, self.row.leaf_id.as_deref())
            .await
            .map_err(crate::session::internal)?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(crate::session::internal)?;
        let context = entries::build_context(&branch).map_err(crate::session::internal)?;
        self.context = context.messages;
        self.compacted_prefix = context.compacted_prefix;
        Ok(())
    }

    async fn continue_after_compaction(&mut self, then: AfterCompaction, succeeded: bool) {
        let prompts = match then {
            AfterCompaction::Nothing => return,
            AfterCompaction::Retry if succeeded => {
                // The failed message stays in the tree; the model does not see it again.
                if let Some(AgentMessage::Assistant(last)) = self.context.last()
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
                message: error.message,
            });
        }
    }

    /// `session/navigate` with a summary: summarizes the branch being left in a job; the
    /// leaf moves when the summary is stored. `Ok(None)` when nothing is abandoned (a plain
    /// move follows).
    pub(super) async fn start_branch_summary(
        &mut self,
        new_leaf: Option<String>,
        target_id: &str,
        text: Option<String>,
        instructions: Instructions,
        reply: Reply<SessionNavigateResponse>,
    ) -> Option<Reply<SessionNavigateResponse>> {
        let prepared = async {
            let old_branch = self
                .store
                .branch(&self.row.id, self.row.leaf_id.as_deref())
                .await
                .map_err(crate::session::internal)?;
            let target_branch = self
                .store
                .branch(&self.row.id, Some(target_id))
                .await
                .map_err(crate::session::internal)?;
            abandoned_entries(&old_branch, &target_branch).map_err(crate::session::internal)
        };
        let abandoned = match prepared.await {
            Ok(abandoned) => abandoned,
            Err(error) => {
                let _ = reply.send(Err(error));
                return None;
            }
        };
        if abandoned.is_empty() {
            return Some(reply);
        }
        let summary_model = match self.summary_model() {
            Ok(model) => model,
            Err(error) => {
                let _ = reply.send(Err(error));
                return None;
            }
        };
        let settings = self.services.settings.branch_summary;
        let cancel = CancellationToken::new();
        let task_cancel = cancel.clone();
        let task = tokio::spawn(async move {
            JobOutcome::BranchSummary(
                summary_model
                    .summarize_branch(abandoned, settings, instructions, task_cancel)
                    .await,
            )
        });
        self.job = Some(ActiveJob {
            cancel,
            task,
            kind: JobKind::BranchSummary {
                new_leaf,
                text,
                reply,
            },
            abort_waiters: Vec::new(),
        });
        None
    }

    /// Stores the `branch_summary` entry under the new leaf (pi: `fromId` is that leaf, or
    /// `root`) and moves the leaf to it.
    async fn finish_branch_summary(
        &mut self,
        new_leaf: Option<String>,
        text: Option<String>,
        result: Result<BranchSummary, SummaryError>,
    ) -> Result<SessionNavigateResponse, ErrorObject> {
        let summary = match result {
            Ok(summary) => summary,
            Err(SummaryError::Aborted) => {
                return Ok(SessionNavigateResponse {
                    leaf_id: self.row.leaf_id.clone(),
                    text: None,
                    summary_entry_id: None,
                    aborted: true,
                });
            }
            Err(error @ (SummaryError::Failed(_) | SummaryError::Nothing(_))) => {
                return Err(ErrorObject::new(
                    ErrorKind::ProviderError,
                    error.to_string(),
                ));
            }
            Err(error @ SummaryError::Corrupt(_)) => {
                return Err(crate::session::internal(error));
            }
        };
        let base = EntryBase::new(&mut self.entry_ids, new_leaf.clone(), now_millis());
        let entry = SessionEntry::BranchSummary {
            id: base.id,
            parent_id: base.parent_id,
            timestamp: base.timestamp,
            from_id: new_leaf.unwrap_or_else(|| "root".to_owned()),
            summary: summary.summary,
            details: Some(summary.details.to_details()),
            from_hook: Some(false),
        };
        let id = self.append_and_reload(entry).await?;
        self.broadcast(SessionEvent::LeafChanged {
            leaf_id: Some(id.clone()),
        });
        Ok(SessionNavigateResponse {
            leaf_id: Some(id.clone()),
            text,
            summary_entry_id: Some(id),
            aborted: false,
        })
    }
}

/// Waits for the job's outcome; pending forever without a job.
pub(super) async fn next_job_outcome(
    job: &mut Option<ActiveJob>,
) -> Result<JobOutcome, tokio::task::JoinError> {
    match job {
        Some(job) => (&mut job.task).await,
        None => std::future::pending().await,
    }
}
