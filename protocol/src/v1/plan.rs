//! oh-my-pi's plan mode: while it is on, the session's working tree is read-only (writes
//! only to `local://`, the session's scratch directory); the model writes its plan to
//! `local://PLAN.md` and calls `exit_plan_mode {title}`, and the user approves it (execute
//! in a fresh context, compact first, or keep the context), asks for a refinement, or saves
//! it for later. It belongs to the branch, like the todo list: it survives a restart and
//! follows navigation. `plan_mode_changed` announces every change.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `session/setPlanMode`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetPlanModeParams {
    /// The session.
    pub session_id: String,
    /// On or off. Turned on, it applies from the session's next run; turned off, at once.
    pub enabled: bool,
}

/// A plan the user approved (what subagents get as `§ Plan`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovedPlan {
    /// The title the model gave it.
    pub title: String,
    /// The plan file's text when it was approved.
    pub text: String,
}
