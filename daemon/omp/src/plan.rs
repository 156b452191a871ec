//! `exit_plan_mode {title}`: offered only to a session in plan mode. It reads the plan the
//! model wrote to `local://PLAN.md`, asks the people attached what to do with it (oh-my-pi's
//! choices: execute in a fresh context, compact and execute, execute in this context, refine,
//! save and quit) and hands the answer to the session, which records it and does the rest.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_protocol::v1::{ApprovedPlan, UiRequest};
use pi_session::SessionsWeak;
use pi_session::plan::{EXIT_TOOL, PlanChoice, PlanDecision};
use serde_json::{Value, json};

/// The tool's name.
pub const NAME: &str = EXIT_TOOL;

/// The plan file, as the model names it.
pub const PLAN_URL: &str = "local://PLAN.md";

/// How much of the plan the approval question shows.
const PLAN_LINES_SHOWN: usize = 40;

/// The `exit_plan_mode` tool of one session.
pub struct ExitPlanModeTool {
    sessions: SessionsWeak,
    session_id: String,
    // `local://PLAN.md` on disk.
    plan_file: PathBuf,
}

impl ExitPlanModeTool {
    /// The tool of session `session_id`, whose `local://PLAN.md` is `plan_file`.
    pub fn new(sessions: SessionsWeak, session_id: String, plan_file: PathBuf) -> ExitPlanModeTool {
        ExitPlanModeTool {
            sessions,
            session_id,
            plan_file,
        }
    }
}

static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "A short title for the plan (a few words)"}
        },
        "required": ["title"]
    })
});

const DESCRIPTION: &str = "Propose the plan in local://PLAN.md to the user and leave plan mode \
once they approve it. Call it only when the plan file is complete. The user may approve it \
(then execute it), ask for changes (revise the file and call this again), or keep it for later \
(then stop).";

impl Tool for ExitPlanModeTool {
    fn name(&self) -> &str {
        NAME
    }

    fn label(&self) -> &str {
        "Exit plan mode"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Propose the plan in local://PLAN.md for the user's approval")
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let title = invocation.arguments["title"]
                .as_str()
                .map(str::trim)
                .unwrap_or_default()
                .to_owned();
            if title.is_empty() {
                return ToolOutput::error("`title` is empty; give the plan a short title");
            }
            let text = match tokio::fs::read_to_string(&self.plan_file).await {
                Ok(text) if !text.trim().is_empty() => text,
                Ok(_) => {
                    return ToolOutput::error(format!(
                        "{PLAN_URL} is empty: write the plan there first, then call {NAME} again"
                    ));
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    return ToolOutput::error(format!(
                        "There is no plan yet: write it to {PLAN_URL} (with `write`), then call \
                         {NAME} again"
                    ));
                }
                Err(error) => {
                    return ToolOutput::error(format!("Cannot read {PLAN_URL}: {error}"));
                }
            };
            let Some(sessions) = self.sessions.upgrade() else {
                return ToolOutput::error("The daemon is stopping; nobody can approve the plan");
            };
            if sessions.question_hearers(&self.session_id).await == 0 {
                return ToolOutput::error(format!(
                    "Nobody can approve the plan: no client that shows questions is attached to \
                     this session. Stop here and say that the plan \"{title}\" is ready in \
                     {PLAN_URL}; plan mode stays on until the user decides."
                ));
            }
            // The plan itself in the question, so it is read before it is approved.
            let lines: Vec<&str> = text.trim_end().lines().collect();
            let mut shown = lines
                .iter()
                .take(PLAN_LINES_SHOWN)
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            if lines.len() > PLAN_LINES_SHOWN {
                shown.push_str(&format!(
                    "\n… {} more lines in {PLAN_URL}",
                    lines.len() - PLAN_LINES_SHOWN
                ));
            }
            let ask = |request: UiRequest| crate::ask_person(&sessions, &self.session_id, request);
            let request = UiRequest::Select {
                title: format!("Plan \"{title}\" ({PLAN_URL}):\n\n{shown}\n\nWhat now?"),
                options: PlanChoice::ALL
                    .iter()
                    .map(|choice| choice.label().to_owned())
                    .collect(),
                multiple: false,
            };
            let answered = tokio::select! {
                answered = ask(request) => answered,
                () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
            };
            let answer = match answered {
                Ok(response) => response.answer,
                Err(error) => {
                    return ToolOutput::error(format!("Cannot ask for approval: {error}"));
                }
            };
            if answer.cancelled {
                return ToolOutput::error(
                    "The user dismissed the plan without deciding. Plan mode stays on: stop here \
                     and wait for them.",
                );
            }
            let Some(choice) = answer.value.as_deref().and_then(PlanChoice::from_label) else {
                // A typed answer: what they want changed.
                let wanted = answer.value.unwrap_or_default();
                return ToolOutput::text(format!(
                    "The user did not approve the plan yet and said: {wanted}\nRevise {PLAN_URL} \
                     accordingly and call {NAME} again."
                ));
            };
            let mut note = None;
            if choice == PlanChoice::Refine {
                let typed = tokio::select! {
                    typed = ask(UiRequest::Input {
                        title: "What should change in the plan?".to_owned(),
                        placeholder: None,
                    }) => typed,
                    () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
                };
                note = typed
                    .ok()
                    .filter(|typed| !typed.answer.cancelled)
                    .and_then(|typed| typed.answer.value)
                    .filter(|note| !note.trim().is_empty());
            }
            let plan = ApprovedPlan {
                title: title.clone(),
                text,
            };
            if let Err(error) = sessions
                .decide_plan(&self.session_id, PlanDecision { choice, plan })
                .await
            {
                return ToolOutput::error(format!(
                    "Cannot record the decision on the plan: {error}"
                ));
            }
            let details = json!({"title": title, "choice": choice.label()});
            let output = match choice {
                PlanChoice::Execute => ending(ToolOutput::text(
                    "The user approved the plan. It is executed in a fresh context that starts \
                     with the plan; stop here.",
                )),
                PlanChoice::Compact => ending(ToolOutput::text(
                    "The user approved the plan. The context is compacted, then the plan is \
                     executed; stop here.",
                )),
                PlanChoice::Keep => ToolOutput::text(format!(
                    "The user approved the plan. Plan mode is off and every tool is available: \
                     execute the plan in {PLAN_URL} now, step by step."
                )),
                PlanChoice::Refine => ToolOutput::text(match note {
                    Some(note) => format!(
                        "The user wants the plan refined: {note}\nRevise {PLAN_URL} and call \
                         {NAME} again."
                    ),
                    None => format!(
                        "The user wants the plan refined. Ask what should change if it is not \
                         clear, revise {PLAN_URL} and call {NAME} again."
                    ),
                }),
                PlanChoice::SaveAndQuit => ending(ToolOutput::text(format!(
                    "The user kept the plan in {PLAN_URL} for later. Stop here: do not execute \
                     it."
                ))),
            };
            output.with_details(details)
        })
    }
}

/// `output`, ending the run (what the session does next is its own).
fn ending(mut output: ToolOutput) -> ToolOutput {
    output.terminate = true;
    output
}
