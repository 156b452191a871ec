//! The actor's plan mode (oh-my-pi's): turning it on and off, the user's decision on a
//! proposed plan, and what an approved plan starts once the run that approved it has ended.

use std::sync::atomic::Ordering;

use pi_protocol::v1::{CompactionReason, EmptyResponse, SessionEvent};

use super::job::AfterCompaction;
use super::{EntryKind, SessionActor};
use crate::error::SessionError;
use crate::plan::{self, PlanChoice, PlanDecision, PlanState};

/// What the compaction before executing a plan keeps in focus.
const COMPACT_FOR_PLAN: &str = "The user approved a plan that the next turn executes: keep \
what was learned while planning that the plan's steps need (files, names, decisions).";

impl SessionActor {
    /// `session/setPlanMode`.
    pub(super) async fn set_plan_mode(
        &mut self,
        enabled: bool,
    ) -> Result<EmptyResponse, SessionError> {
        if enabled != self.plan.enabled {
            self.record_plan(PlanState {
                enabled,
                approved: self.plan.approved.clone(),
            })
            .await?;
        }
        Ok(EmptyResponse {})
    }

    /// The user's answer to `exit_plan_mode`.
    pub(super) async fn decide_plan(
        &mut self,
        decision: PlanDecision,
    ) -> Result<EmptyResponse, SessionError> {
        if !decision.choice.approves() {
            return Ok(EmptyResponse {});
        }
        self.record_plan(PlanState {
            enabled: false,
            approved: Some(decision.plan.clone()),
        })
        .await?;
        if matches!(decision.choice, PlanChoice::Execute | PlanChoice::Compact) {
            self.after_plan = Some(decision);
        }
        Ok(EmptyResponse {})
    }

    /// Records `state` at the leaf and makes it the session's.
    async fn record_plan(&mut self, state: PlanState) -> Result<(), SessionError> {
        let row = self.row.clone();
        self.append_entries(
            row,
            vec![EntryKind::Custom {
                custom_type: plan::PLAN_ENTRY.to_owned(),
                data: state.to_value(),
            }],
        )
        .await?;
        self.set_plan(state);
        Ok(())
    }

    /// Makes `state` the session's (announced when plan mode changes).
    pub(super) fn set_plan(&mut self, state: PlanState) {
        let changed = state.enabled != self.plan.enabled;
        self.planning.store(state.enabled, Ordering::Release);
        self.plan = state;
        if changed {
            self.broadcast(SessionEvent::PlanModeChanged {
                enabled: self.plan.enabled,
            });
        }
    }

    /// After a run: executes the plan it approved, if it asked for a fresh or compacted
    /// context. `false` when there is nothing to do.
    pub(super) async fn execute_approved_plan(&mut self) -> bool {
        let Some(decision) = self.after_plan.take() else {
            return false;
        };
        if self.closing.is_some() || self.pending_compaction.is_some() {
            return false;
        }
        let message = plan::execute_message(&decision.plan);
        match decision.choice {
            PlanChoice::Compact => {
                self.start_compaction(
                    CompactionReason::Manual,
                    AfterCompaction::Prompt(vec![message]),
                    Some(COMPACT_FOR_PLAN.to_owned()),
                    None,
                )
                .await;
            }
            _ => {
                // A fresh context: a new branch from the root, which records the approved
                // plan (for subagents) and starts with it.
                let started = async {
                    self.move_leaf(None, None).await?;
                    self.record_plan(PlanState {
                        enabled: false,
                        approved: Some(decision.plan.clone()),
                    })
                    .await?;
                    self.start_run(vec![message]).await
                };
                if let Err(error) = started.await {
                    tracing::warn!(%error, "cannot execute the approved plan");
                    self.broadcast(SessionEvent::SessionError {
                        message: format!(
                            "the approved plan could not be started: {error}; it is in local://PLAN.md"
                        ),
                    });
                }
            }
        }
        true
    }
}
