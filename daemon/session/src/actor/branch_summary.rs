//! Branch summaries for `session/navigate {summarize}` (pi's `navigateTree`): the entries the
//! move abandons are summarized in a job; the `branch_summary` entry is then stored under the
//! new leaf and becomes the leaf. An aborted summary leaves the leaf where it was.

use pi_protocol::v1::{SessionEntry, SessionEvent, SessionNavigateResponse};
use tokio_util::sync::CancellationToken;

use super::job::{ActiveJob, JobKind, JobOutcome};
use super::{Reply, SessionActor};
use crate::SessionError;
use crate::compaction::{BranchSummary, BranchSummarySettings, Instructions};
use crate::entries::EntryBase;
use crate::summarize::{SummaryError, abandoned_entries};
use pi_util::time::now_millis;

impl SessionActor {
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
                .map_err(crate::storage(&self.store))?;
            let target_branch = self
                .store
                .branch(&self.row.id, Some(target_id))
                .await
                .map_err(crate::storage(&self.store))?;
            abandoned_entries(&old_branch, &target_branch).map_err(SessionError::internal)
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
        let settings = BranchSummarySettings {
            reserve_tokens: self.resources.settings.branch_summary.reserve_tokens,
        };
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
    pub(super) async fn finish_branch_summary(
        &mut self,
        new_leaf: Option<String>,
        text: Option<String>,
        result: Result<BranchSummary, SummaryError>,
    ) -> Result<SessionNavigateResponse, SessionError> {
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
                return Err(SessionError::Provider(error.to_string()));
            }
            Err(error @ SummaryError::Corrupt(_)) => {
                return Err(SessionError::internal(error));
            }
        };
        self.store_branch_summary(
            new_leaf,
            text,
            summary.summary,
            Some(summary.details.to_details()),
            false,
        )
        .await
    }

    /// Stores a `branch_summary` entry (pi's own, or one an extension wrote: `from_hook`)
    /// under the new leaf and moves the leaf to it.
    pub(super) async fn store_branch_summary(
        &mut self,
        new_leaf: Option<String>,
        text: Option<String>,
        summary: String,
        details: Option<serde_json::Value>,
        from_hook: bool,
    ) -> Result<SessionNavigateResponse, SessionError> {
        let base = EntryBase::new(&mut self.entry_ids, new_leaf.clone(), now_millis());
        let entry = SessionEntry::BranchSummary {
            id: base.id,
            parent_id: base.parent_id,
            timestamp: base.timestamp,
            from_id: new_leaf.unwrap_or_else(|| "root".to_owned()),
            summary,
            details: details.filter(|details| !details.is_null()),
            from_hook: Some(from_hook),
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
