//! The `ask` tool: the model asks the people watching the session a question — pick one
//! option, pick several, or type an answer — through `ui/request` to every attached client
//! (the first answer wins; ACP editors get it as a permission prompt). With no client able
//! to answer, it says so at once instead of waiting.

use std::sync::{Arc, LazyLock};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_protocol::v1::{UiAnswer, UiRequest};
use pi_session::SessionsWeak;
use serde_json::{Value, json};

/// The tool's name.
pub const NAME: &str = "ask";

/// The choice that lets the user type an answer instead of picking an option.
pub const OTHER: &str = "Other (type an answer)";

/// The `ask` tool of one session.
pub struct AskTool {
    sessions: SessionsWeak,
    session_id: String,
}

impl AskTool {
    /// The tool of session `session_id`.
    pub fn new(sessions: SessionsWeak, session_id: String) -> AskTool {
        AskTool {
            sessions,
            session_id,
        }
    }
}

static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, complete on its own"},
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Choices to pick from; without them the user types an answer"
            },
            "multiple": {"type": "boolean", "description": "Several options may be picked (default false)"},
            "other": {"type": "boolean", "description": "Besides the options, the user may type an answer (default false)"}
        },
        "required": ["question"]
    })
});

const DESCRIPTION: &str = "Ask the user a question and wait for the answer: pick one of \
`options`, several with `multiple`, or type an answer (no options, or `other`). Use it when a \
decision is theirs to make and you cannot proceed well without it; do not ask what you can find \
out yourself.";

/// What the call asks.
struct Asked {
    question: String,
    options: Vec<String>,
    multiple: bool,
    other: bool,
}

fn asked(arguments: &Value) -> Result<Asked, String> {
    let question = arguments["question"]
        .as_str()
        .map(str::trim)
        .filter(|question| !question.is_empty())
        .ok_or("`question` is empty; say what you want to know")?
        .to_owned();
    let mut options: Vec<String> = Vec::new();
    for option in arguments["options"].as_array().into_iter().flatten() {
        let option = option.as_str().map(str::trim).unwrap_or_default();
        if option.is_empty() {
            return Err("an option is empty; give every option some text".to_owned());
        }
        if !options.iter().any(|known| known == option) {
            options.push(option.to_owned());
        }
    }
    let multiple = arguments["multiple"].as_bool().unwrap_or(false);
    if multiple && options.is_empty() {
        return Err("`multiple` needs `options` to pick from".to_owned());
    }
    Ok(Asked {
        question,
        options,
        multiple,
        other: arguments["other"].as_bool().unwrap_or(false),
    })
}

impl Tool for AskTool {
    fn name(&self) -> &str {
        NAME
    }

    fn label(&self) -> &str {
        "Ask"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some(
            "Ask the user a question (options, several choices, or free text) and wait for the answer",
        )
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let asked = match asked(&invocation.arguments) {
                Ok(asked) => asked,
                Err(error) => return ToolOutput::error(format!("Cannot ask: {error}")),
            };
            let Some(sessions) = self.sessions.upgrade() else {
                return ToolOutput::error("The daemon is stopping; nobody can answer");
            };
            if sessions.question_hearers(&self.session_id).await == 0 {
                return ToolOutput::error(
                    "Nobody can answer: no client that shows questions is attached to this \
                     session. Do not wait for an answer: make the most reasonable choice \
                     yourself, say which and why, and go on.",
                );
            }
            let ask = |request: UiRequest| crate::ask_person(&sessions, &self.session_id, request);
            let first = if asked.options.is_empty() {
                UiRequest::Input {
                    title: asked.question.clone(),
                    placeholder: None,
                }
            } else {
                let mut options = asked.options.clone();
                if asked.other {
                    options.push(OTHER.to_owned());
                }
                UiRequest::Select {
                    title: asked.question.clone(),
                    options,
                    multiple: asked.multiple,
                }
            };
            let answered = tokio::select! {
                answered = ask(first) => answered,
                () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
            };
            let mut response = match answered {
                Ok(response) => response,
                Err(error) => return ToolOutput::error(format!("Cannot ask: {error}")),
            };
            // "Other": the typed answer, in a second dialog (with the options ticked beside
            // it, for several choices).
            let other_ticked = response.answer.values.iter().any(|value| value == OTHER);
            if response.answer.value.as_deref() == Some(OTHER) || other_ticked {
                let ticked: Vec<String> = response
                    .answer
                    .values
                    .iter()
                    .filter(|value| *value != OTHER)
                    .cloned()
                    .collect();
                let typed = tokio::select! {
                    answered = ask(UiRequest::Input { title: asked.question.clone(), placeholder: None }) => answered,
                    () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
                };
                response = match typed {
                    Ok(response) => response,
                    Err(error) => return ToolOutput::error(format!("Cannot ask: {error}")),
                };
                if asked.multiple && !response.answer.cancelled {
                    let mut values = ticked;
                    values.extend(
                        response
                            .answer
                            .value
                            .take()
                            .filter(|typed| !typed.trim().is_empty()),
                    );
                    response.answer.values = values;
                }
            }
            answer_output(&asked, &response.answer, response.answered_by.as_deref())
        })
    }
}

fn answer_output(asked: &Asked, answer: &UiAnswer, by: Option<&str>) -> ToolOutput {
    if answer.cancelled {
        return ToolOutput::error(
            "The user dismissed the question without answering. Do not ask it again right \
             away: go on with the most reasonable choice, or stop and say what you need.",
        );
    }
    let details = json!({
        "question": asked.question,
        "options": asked.options,
        "answer": answer,
        "answeredBy": by,
    });
    let text = if asked.multiple {
        if answer.values.is_empty() {
            "The user picked none of the options.".to_owned()
        } else {
            format!("The user picked: {}", answer.values.join("; "))
        }
    } else {
        match answer.value.as_deref().map(str::trim) {
            Some("") | None => "The user gave an empty answer.".to_owned(),
            Some(value) if asked.options.iter().any(|option| option == value) => {
                format!("The user picked: {value}")
            }
            Some(value) => format!("The user answered: {value}"),
        }
    };
    ToolOutput::text(text).with_details(details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_with_clear_errors() {
        let cases = [
            (
                json!({"question": " "}),
                "`question` is empty; say what you want to know",
            ),
            (
                json!({"question": "Which?", "options": ["a", ""]}),
                "an option is empty; give every option some text",
            ),
            (
                json!({"question": "Which?", "multiple": true}),
                "`multiple` needs `options` to pick from",
            ),
        ];
        for (arguments, message) in cases {
            assert_eq!(asked(&arguments).err().as_deref(), Some(message));
        }
        let ok = asked(&json!({"question": "Which?", "options": ["a", "a", "b"], "other": true}))
            .unwrap();
        assert_eq!(ok.options, ["a", "b"]);
        assert!(ok.other);
    }

    #[test]
    fn answers_read_as_the_model_needs_them() {
        let asked = asked(&json!({"question": "Which?", "options": ["a", "b"]})).unwrap();
        let picked = UiAnswer {
            value: Some("b".into()),
            ..UiAnswer::default()
        };
        let output = answer_output(&asked, &picked, Some("pictl attach"));
        assert_eq!(
            output.content,
            ToolOutput::text("The user picked: b").content
        );
        assert_eq!(output.details["answeredBy"], "pictl attach");
        let typed = UiAnswer {
            value: Some("neither".into()),
            ..UiAnswer::default()
        };
        let output = answer_output(&asked, &typed, None);
        assert_eq!(
            output.content,
            ToolOutput::text("The user answered: neither").content
        );
        let cancelled = UiAnswer {
            cancelled: true,
            ..UiAnswer::default()
        };
        assert!(answer_output(&asked, &cancelled, None).is_error);
    }
}
