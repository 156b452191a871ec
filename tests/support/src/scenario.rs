//! A ten-turn tool scenario that many sessions can run at once against one
//! [`ModelServer`](crate::model_server::ModelServer): the responder computes each session's
//! next turn from the conversation in the request (how many tool results it holds), so no
//! shared FIFO orders the sessions, and it checks every tool result against what the tools
//! must have answered before it moves on.
//!
//! The session's first user message names the scenario's marker ([`prompt`]). The turns:
//! `write notes.txt`, `read notes.txt`, `edit notes.txt`, `bash cat`, `ls .`,
//! `write sub/data.txt`, `bash wc -w`, `read sub/data.txt`, `edit sub/data.txt`, then a
//! closing text. Paths are relative, so each session works in its own directory.
//! [`check_workspace`] checks the files the scenario leaves behind.
//!
//! Requests must be `openai-completions` (the OpenAI-compatible servers most local models
//! use); tool results are the `tool` messages.

use std::path::Path;

use serde_json::{Value, json};

use crate::model_server::{Api, RecordedRequest, ScriptStop, ScriptUsage, Turn};

/// Model requests one scenario makes: nine tool turns and the closing text.
pub const TURNS: usize = 10;
/// The closing text of a finished scenario.
pub const FINISHED: &str = "Scenario finished.";

/// `pictl run --no-session` of the scenario with `marker` in `dir`, with the scenario's tools
/// on the scripted model, `extra` arguments before the prompt, stdin closed.
pub fn pictl_run(
    pictl: &Path,
    marker: &str,
    dir: &Path,
    env: Vec<(String, String)>,
    extra: &[&str],
) -> std::process::Command {
    let mut args = vec!["--no-session"];
    args.extend_from_slice(extra);
    scenario_command(pictl, marker, dir, env, &args)
}

/// [`pictl_run`] keeping its session: it stays in the store and loaded in the daemon (idle)
/// after the run, as a user's `pictl run` leaves it.
pub fn pictl_run_kept(
    pictl: &Path,
    marker: &str,
    dir: &Path,
    env: Vec<(String, String)>,
) -> std::process::Command {
    scenario_command(pictl, marker, dir, env, &[])
}

fn scenario_command(
    pictl: &Path,
    marker: &str,
    dir: &Path,
    env: Vec<(String, String)>,
    extra: &[&str],
) -> std::process::Command {
    let mut command = std::process::Command::new(pictl);
    command
        .args([
            "run",
            "--tools",
            "read,bash,edit,write,ls",
            "--model",
            "scripted/scripted-model",
        ])
        .args(extra)
        .arg(prompt(marker))
        .current_dir(dir)
        .envs(env)
        .stdin(std::process::Stdio::null());
    command
}

/// The prompt that starts the scenario with `marker` (letters, digits, `-`).
pub fn prompt(marker: &str) -> String {
    format!("Run the tool scenario {marker} in this directory.")
}

/// One tool turn: the call and a check of its result.
struct Step {
    tool: &'static str,
    arguments: Value,
    // What the result text must be (`Exact`) or contain (`Contains`), `{m}` the marker.
    expect: Expect,
}

enum Expect {
    Exact(String),
    Contains(Vec<String>),
}

fn steps(marker: &str) -> Vec<Step> {
    vec![
        Step {
            tool: "write",
            arguments: json!({"path": "notes.txt", "content": format!("alpha {marker}\nbeta\n")}),
            expect: Expect::Contains(vec![
                "Successfully wrote".to_owned(),
                "notes.txt".to_owned(),
            ]),
        },
        Step {
            tool: "read",
            arguments: json!({"path": "notes.txt"}),
            expect: Expect::Exact(format!("alpha {marker}\nbeta\n")),
        },
        Step {
            tool: "edit",
            arguments: json!({"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
            expect: Expect::Contains(vec!["Successfully replaced 1 block(s)".to_owned()]),
        },
        Step {
            tool: "bash",
            arguments: json!({"command": format!("cat notes.txt && echo done-{marker}")}),
            expect: Expect::Exact(format!("alpha {marker}\ngamma\ndone-{marker}\n")),
        },
        Step {
            tool: "ls",
            arguments: json!({"path": "."}),
            expect: Expect::Exact("notes.txt".to_owned()),
        },
        Step {
            tool: "write",
            arguments: json!({"path": "sub/data.txt", "content": "1 2 3"}),
            expect: Expect::Contains(vec!["Successfully wrote 5 bytes".to_owned()]),
        },
        Step {
            tool: "bash",
            arguments: json!({"command": "wc -w < sub/data.txt"}),
            expect: Expect::Exact("3\n".to_owned()),
        },
        Step {
            tool: "read",
            arguments: json!({"path": "sub/data.txt"}),
            expect: Expect::Exact("1 2 3".to_owned()),
        },
        Step {
            tool: "edit",
            arguments: json!({"path": "sub/data.txt", "edits": [{"oldText": "2", "newText": "two"}]}),
            expect: Expect::Contains(vec!["Successfully replaced 1 block(s)".to_owned()]),
        },
    ]
}

/// The responder for [`ModelServer::respond_with`](crate::model_server::ModelServer::respond_with):
/// the next turn of the scenario named in the request's first user message, after checking
/// the last tool result.
pub fn respond(request: &RecordedRequest) -> Result<Turn, String> {
    if request.api != Api::OpenAiCompletions {
        return Err(format!(
            "the tool scenario speaks openai-completions, not {}",
            request.api
        ));
    }
    let messages = request.body["messages"]
        .as_array()
        .ok_or("the request has no messages")?;
    let first_user = messages
        .iter()
        .find(|message| message["role"] == "user")
        .map(message_text)
        .ok_or("the request has no user message")?;
    let marker = first_user
        .split_whitespace()
        .skip_while(|word| *word != "scenario")
        .nth(1)
        .ok_or_else(|| format!("no scenario marker in {first_user:?}"))?
        .to_owned();
    let results: Vec<String> = messages
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(message_text)
        .collect();
    let steps = steps(&marker);
    if let Some(last) = results.len().checked_sub(1) {
        let step = steps
            .get(last)
            .ok_or_else(|| format!("scenario {marker}: more tool results than steps"))?;
        let result = &results[last];
        let matches = match &step.expect {
            Expect::Exact(text) => {
                // `ls` lists the directory; `notes.txt` must be there (with `sub/` later).
                if step.tool == "ls" {
                    result.lines().any(|line| line == text)
                } else {
                    result == text
                }
            }
            Expect::Contains(parts) => parts.iter().all(|part| result.contains(part.as_str())),
        };
        if !matches {
            return Err(format!(
                "scenario {marker}: step {} ({}) answered {result:?}",
                last + 1,
                step.tool
            ));
        }
    }
    let usage = ScriptUsage {
        input: 100 + 10 * results.len() as u64,
        output: 20,
        ..ScriptUsage::default()
    };
    Ok(match steps.get(results.len()) {
        Some(step) => Turn::reply()
            .text(format!("Step {} of scenario {marker}.", results.len() + 1))
            .tool_call(
                format!("call_{marker}_{}", results.len() + 1),
                step.tool,
                step.arguments.clone(),
            )
            .usage(usage)
            .stop(ScriptStop::ToolUse)
            .into(),
        None => Turn::reply()
            .text(FINISHED)
            .usage(usage)
            .stop(ScriptStop::Stop)
            .into(),
    })
}

/// Checks the files a finished scenario `marker` leaves in `dir`.
pub fn check_workspace(dir: &Path, marker: &str) -> Result<(), String> {
    let notes = std::fs::read_to_string(dir.join("notes.txt"))
        .map_err(|error| format!("{}: notes.txt: {error}", dir.display()))?;
    if notes != format!("alpha {marker}\ngamma\n") {
        return Err(format!("{}: notes.txt is {notes:?}", dir.display()));
    }
    let data = std::fs::read_to_string(dir.join("sub/data.txt"))
        .map_err(|error| format!("{}: sub/data.txt: {error}", dir.display()))?;
    if data != "1 two 3" {
        return Err(format!("{}: sub/data.txt is {data:?}", dir.display()));
    }
    Ok(())
}

/// The text of a chat-completions message (a string, or text parts).
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
