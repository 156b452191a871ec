//! The session actor's jobs: a compaction or a branch summary running in its own task next
//! to the actor, so attach, abort and queries keep being served while the model writes the
//! summary. This module holds the job's state, abort, and the dispatch of its outcome to
//! `compaction.rs` or `branch_summary.rs`.
//!
//! Invariant: at most one job, never at the same time as a run; `session/abort` cancels it
//! and is answered once it has ended.

use std::sync::Arc;

use pi_agent::AgentMessage;
use pi_protocol::v1::{
    CompactionReason, EmptyResponse, SessionCompactResponse, SessionEntry, SessionEvent,
    SessionNavigateResponse,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Reply, SessionActor};
use crate::SessionError;
use crate::compaction::{BranchSummary, CompactionResult};
use crate::entries;
use crate::summarize::SummaryError;

/// A compaction or branch summary running next to the actor.
pub(super) struct ActiveJob {
    // Cancelling aborts the summary's model calls; the task then ends with `Aborted`.
    pub(super) cancel: CancellationToken,
    // The job; the actor awaits it in its loop.
    pub(super) task: JoinHandle<JobOutcome>,
    pub(super) kind: JobKind,
    // `session/abort` callers, answered when the job has ended.
    pub(super) abort_waiters: Vec<Reply<EmptyResponse>>,
}

/// What a job produced.
pub(super) enum JobOutcome {
    /// A compaction's result.
    Compaction(Result<CompactionResult, SummaryError>),
    /// A branch summary's result.
    BranchSummary(Result<BranchSummary, SummaryError>),
}

/// What a job is for, and who waits for it.
pub(super) enum JobKind {
    /// A compaction.
    Compaction {
        // Why it runs.
        reason: CompactionReason,
        // What follows it.
        then: AfterCompaction,
        // `session/compact`'s caller, for manual compactions.
        reply: Option<Reply<SessionCompactResponse>>,
    },
    /// A branch summary for `session/navigate`.
    BranchSummary {
        // The leaf the summary is written under (`None`: the root).
        new_leaf: Option<String>,
        // The text handed back for editing.
        text: Option<String>,
        // `session/navigate`'s caller.
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
    // Focus of the summary.
    pub(super) instructions: Option<String>,
    // `session/compact`'s caller.
    pub(super) reply: Reply<SessionCompactResponse>,
}

impl SessionActor {
    /// `session/abort`: cancels the run, the job, a manual compaction waiting for the run and
    /// a pending automatic retry; `reply` is answered once the session is idle.
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
            self.cancel_retry();
            let _ = reply.send(Ok(EmptyResponse {}));
        }
    }

    /// Cancels a running job (the session is closing).
    pub(super) fn cancel_job(&mut self) {
        if let Some(job) = &self.job {
            job.cancel.cancel();
        }
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
                let error = SessionError::internal(&message);
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

    /// Commits `entry` as the new leaf, announces it, and rebuilds the context.
    pub(super) async fn append_and_reload(
        &mut self,
        entry: SessionEntry,
    ) -> Result<String, SessionError> {
        let row = self.row.clone();
        let committed = self.commit_entries(row, vec![entry.clone()]).await?;
        let Some((id, seq)) = committed.into_iter().next() else {
            return Err(SessionError::internal("no entry was committed"));
        };
        self.broadcast_with_seq(SessionEvent::EntryAdded { entry }, Some(seq));
        self.reload_context().await?;
        Ok(id)
    }

    /// Rebuilds the context from the stored branch.
    pub(super) async fn reload_context(&mut self) -> Result<(), SessionError> {
        let branch: Vec<SessionEntry> = self
            .store
            .branch(&self.row.id, self.row.leaf_id.as_deref())
            .await
            .map_err(crate::storage(&self.store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        let context = entries::build_context(&branch).map_err(SessionError::internal)?;
        self.context = context.messages.into_iter().map(Arc::new).collect();
        self.compacted_prefix = context.compacted_prefix;
        self.set_todos(crate::todos::of_branch(&branch));
        self.set_plan(crate::plan::of_branch(&branch));
        Ok(())
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
