//! oh-my-pi's plan mode: the state a branch records, the gate in front of a planning run's
//! tools, and what the user's answer to `exit_plan_mode` makes the session do.
//!
//! Invariants: the state of a branch is the last `plan-mode` custom entry on it (none: off,
//! nothing approved). While it is on, a run's tools (its own and those that join it) are
//! behind [`PlanGate`]: a call runs only when the tool factory says it only reads, or it
//! writes to `local://` (the session's scratch directory), or it is `exit_plan_mode`;
//! anything else is refused with a message that tells the model how to go on. The gate
//! reads a shared flag, so turning plan mode off (an approved plan) opens the tools of the
//! run at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolLayer, ToolOutput, ToolSource, ToolWait};
use pi_protocol::v1::{ApprovedPlan, SessionEntry};
use serde_json::{Value, json};

use crate::services::ToolFactory;

/// The custom entry that records the state.
pub const PLAN_ENTRY: &str = "plan-mode";
/// The tool that ends planning.
pub const EXIT_TOOL: &str = "exit_plan_mode";
/// The custom type of the message that starts executing an approved plan.
pub const APPROVED_MESSAGE: &str = "plan-approved";

/// Tools whose `path` argument may name `local://` to write there while planning.
const FILE_WRITERS: [&str; 3] = ["write", "edit", "ast_edit"];

/// A branch's plan mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanState {
    /// Plan mode is on.
    pub enabled: bool,
    /// The plan approved last.
    pub approved: Option<ApprovedPlan>,
}

impl PlanState {
    /// The entry data that records this state.
    pub fn to_value(&self) -> Value {
        match &self.approved {
            Some(plan) => json!({"enabled": self.enabled, "approved": plan}),
            None => json!({"enabled": self.enabled}),
        }
    }
}

/// The state of `branch`: its last `plan-mode` entry's.
pub fn of_branch(branch: &[SessionEntry]) -> PlanState {
    branch
        .iter()
        .rev()
        .find_map(|entry| match entry {
            SessionEntry::Custom {
                custom_type, data, ..
            } if custom_type == PLAN_ENTRY => {
                let data = data.as_ref()?;
                Some(PlanState {
                    enabled: data["enabled"].as_bool().unwrap_or(false),
                    approved: serde_json::from_value(data["approved"].clone()).ok(),
                })
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// What the user chose for a plan the model proposed (oh-my-pi's choices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanChoice {
    /// Approve and execute it in a fresh context seeded with the plan.
    Execute,
    /// Approve, compact the context, then execute it.
    Compact,
    /// Approve and execute it in this context.
    Keep,
    /// Stay in plan mode and revise it.
    Refine,
    /// Keep the plan for later; stop.
    SaveAndQuit,
}

impl PlanChoice {
    /// Every choice, as the dialog lists them.
    pub const ALL: [PlanChoice; 5] = [
        PlanChoice::Execute,
        PlanChoice::Compact,
        PlanChoice::Keep,
        PlanChoice::Refine,
        PlanChoice::SaveAndQuit,
    ];

    /// The option's text.
    pub fn label(self) -> &'static str {
        match self {
            PlanChoice::Execute => "Approve and execute (fresh context)",
            PlanChoice::Compact => "Approve and compact context",
            PlanChoice::Keep => "Approve and keep context",
            PlanChoice::Refine => "Refine plan",
            PlanChoice::SaveAndQuit => "Save and quit",
        }
    }

    /// The choice an option's text names.
    pub fn from_label(label: &str) -> Option<PlanChoice> {
        PlanChoice::ALL
            .into_iter()
            .find(|choice| choice.label() == label)
    }

    /// Whether the plan is approved (plan mode ends).
    pub fn approves(self) -> bool {
        matches!(
            self,
            PlanChoice::Execute | PlanChoice::Compact | PlanChoice::Keep
        )
    }
}

/// The user's decision on a proposed plan, for the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanDecision {
    /// What they chose.
    pub choice: PlanChoice,
    /// The plan.
    pub plan: ApprovedPlan,
}

/// The message a run that executes an approved plan starts with (visible: the user sees
/// what the agent was told).
pub fn execute_message(plan: &ApprovedPlan) -> pi_agent::AgentMessage {
    pi_agent::AgentMessage::Custom(pi_agent::message::CustomMessage {
        custom_type: APPROVED_MESSAGE.to_owned(),
        content: vec![pi_llm::UserContent::text(format!(
            "The user approved the plan \"{}\". Execute it now, step by step; all tools are \
             available again. The plan (also in local://PLAN.md):\n\n{}",
            plan.title,
            plan.text.trim()
        ))],
        display: true,
        details: Some(json!({"title": plan.title})),
        timestamp: pi_util::time::now_millis(),
    })
}

/// The system prompt's section for a planning run.
pub const PROMPT: &str = "\n\n# Plan mode\n\nPlan mode is on: explore and design, do not change \
anything yet. The working tree is read-only: tools that write files or run commands that \
change things are refused. You may write to local:// (your scratch directory). Read what you \
need, then write the plan to local://PLAN.md: the goal, the steps in order, the files each \
step changes, and how to verify the result. When it is ready, call exit_plan_mode with a \
short title; the user approves it (you then execute it), asks for changes, or keeps it for \
later.";

/// The gate in front of a planning run's tools.
#[derive(Clone)]
pub struct PlanGate {
    /// Plan mode is on (shared with the session: turning it off opens the gate).
    pub enabled: Arc<AtomicBool>,
    /// Which calls only read.
    pub factory: Arc<dyn ToolFactory>,
}

impl PlanGate {
    /// Whether `tool` may run with `arguments` now.
    fn allows(&self, tool: &str, arguments: &Value) -> bool {
        !self.enabled.load(Ordering::Acquire)
            || tool == EXIT_TOOL
            || self.factory.reads_only(tool, arguments)
            || (FILE_WRITERS.contains(&tool)
                && arguments["path"]
                    .as_str()
                    .is_some_and(|path| path.starts_with("local://")))
    }

    /// `tools` behind the gate.
    pub fn wrap(&self, tools: Vec<Arc<dyn Tool>>) -> Vec<Arc<dyn Tool>> {
        tools
            .into_iter()
            .map(|tool| pi_agent::layered(tool, self.clone()))
            .collect()
    }
}

impl ToolLayer for PlanGate {
    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture {
        if self.allows(inner.name(), &invocation.arguments) {
            return inner.execute(invocation);
        }
        let name = inner.name().to_owned();
        Box::pin(async move {
            ToolOutput::error(format!(
                "Plan mode: the working tree is read-only while you plan, so `{name}` was not \
                 run. Read and search freely; write only to local:// (the plan goes to \
                 local://PLAN.md), then call exit_plan_mode with a title for the user to \
                 approve."
            ))
        })
    }
}

/// A run's tool source with its tools behind the gate.
pub struct GatedSource {
    /// The source.
    pub inner: Arc<dyn ToolSource>,
    /// The gate.
    pub gate: PlanGate,
}

impl ToolSource for GatedSource {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.gate.wrap(self.inner.tools())
    }

    fn awaited(&self) -> Option<ToolWait> {
        self.inner.awaited()
    }

    fn overrides(&self, name: &str) -> bool {
        self.inner.overrides(name)
    }

    fn active(&self) -> Option<Vec<String>> {
        self.inner.active()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(data: Value) -> SessionEntry {
        SessionEntry::Custom {
            id: "e".to_owned(),
            parent_id: None,
            timestamp: String::new(),
            custom_type: PLAN_ENTRY.to_owned(),
            data: Some(data),
        }
    }

    #[test]
    fn the_last_entry_of_the_branch_decides() {
        assert_eq!(of_branch(&[]), PlanState::default());
        let approved = ApprovedPlan {
            title: "Split the parser".to_owned(),
            text: "1. Move the lexer.".to_owned(),
        };
        let on = PlanState {
            enabled: true,
            approved: None,
        };
        let off = PlanState {
            enabled: false,
            approved: Some(approved),
        };
        let branch = [entry(on.to_value()), entry(off.to_value())];
        assert_eq!(of_branch(&branch), off);
        assert_eq!(of_branch(&branch[..1]), on);
    }

    #[test]
    fn every_choice_is_found_by_its_label() {
        for choice in PlanChoice::ALL {
            assert_eq!(PlanChoice::from_label(choice.label()), Some(choice));
        }
        assert_eq!(PlanChoice::from_label("Approve"), None);
        assert!(PlanChoice::Keep.approves() && !PlanChoice::Refine.approves());
    }
}
