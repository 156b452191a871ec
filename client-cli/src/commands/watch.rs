//! `pictl watch ID [--after-seq N] [--json]`: follow a session's events live.
//!
//! Attaches to the session (replaying the durable events after `--after-seq`) and prints until
//! the connection ends or Ctrl+C (exit 130). Humans get user messages as `> text`, the
//! assistant's text as it streams, and one line per tool call and result; `--json` prints the
//! attach snapshot as `{"snapshot": ...}` and then every event as the daemon sends it
//! (`{"sessionId","seq","event"}`), so a consumer can resume with `--after-seq` its last seq.

use std::process::ExitCode;

use clap::Args;
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::message::{
    AgentMessage, AssistantContent, AssistantMessageEvent, UserContent,
};
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionEvent, SessionEventNotification, SessionEventParams,
};
use serde_json::json;
use tokio::signal::unix::{SignalKind, signal};

use crate::daemon_client::{self, find_session};
use crate::error::CliError;
use crate::output::{Style, one_line, print_json, print_text};

/// Options of `pictl watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Session id or unique prefix
    pub id: String,
    /// Replay the durable events after this seq first
    #[arg(long, value_name = "N")]
    pub after_seq: Option<u64>,
    /// Print the snapshot and every event as JSON lines
    #[arg(long)]
    pub json: bool,
}

/// Runs `pictl watch`.
pub async fn run(args: WatchArgs) -> Result<ExitCode, CliError> {
    let connected = daemon_client::connect().await?;
    let client = connected.client;
    let mut notifications = connected.notifications;
    let session = find_session(&client, &args.id).await?;
    let attached = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: args.after_seq,
        })
        .await
        .map_err(|error| {
            let resync = error.rpc_kind() == Some(pi_protocol::ErrorKind::ResyncRequired);
            let cli = CliError::from(error);
            if resync {
                cli.with_hint(
                    "watch without --after-seq, and read the history with `pictl session show`",
                )
            } else {
                cli
            }
        })?;
    let mut printer = HumanPrinter {
        style: Style::stdout(),
        in_text: false,
    };
    if args.json {
        print_json(&json!({ "snapshot": attached.snapshot }));
    } else if !attached.gapless {
        // A gapless replay carries the running tools' starts and the streaming message's
        // deltas itself; otherwise the snapshot says what is under way right now.
        for tool in &attached.snapshot.running_tools {
            printer.event(&pi_protocol::v1::SessionEvent::ToolExecutionStart {
                tool_call_id: tool.tool_call_id.clone(),
                tool_name: tool.tool_name.clone(),
                args: tool.args.clone(),
            });
        }
        if let Some(streaming) = &attached.snapshot.streaming_message {
            for block in &streaming.content {
                if let AssistantContent::Text(text) = block {
                    printer.text(&text.text);
                }
            }
        }
    }
    for event in &attached.replay {
        print_event(event, args.json, &mut printer);
    }
    let mut interrupts = signal(SignalKind::interrupt())
        .map_err(|error| CliError::failed(format!("cannot handle Ctrl+C: {error}")))?;
    loop {
        tokio::select! {
            notification = notifications.next() => {
                let Some(notification) = notification else {
                    printer.end_text();
                    return Err(CliError::from(pi_client::ClientError::Disconnected {
                        reason: client.closed().await,
                    }));
                };
                if notification.method != SessionEventNotification::NAME {
                    continue;
                }
                let Some(params) = notification.params else { continue };
                let Ok(event) = serde_json::from_value::<SessionEventParams>(params) else { continue };
                if event.session_id == session.id {
                    print_event(&event, args.json, &mut printer);
                }
            }
            _ = interrupts.recv() => {
                printer.end_text();
                return Err(CliError::interrupted("interrupted"));
            }
        }
    }
}

fn print_event(event: &SessionEventParams, json_output: bool, printer: &mut HumanPrinter) {
    if json_output {
        print_json(&serde_json::to_value(event).unwrap_or_default());
    } else {
        printer.event(&event.event);
    }
}

/// Human rendering of events, one line per message or tool call, text streamed.
struct HumanPrinter {
    style: Style,
    // Invariant: an assistant text line is open (no newline written yet).
    in_text: bool,
}

impl HumanPrinter {
    fn event(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            } => self.text(delta),
            SessionEvent::MessageEnd { message, .. } => self.message_end(message),
            SessionEvent::ToolExecutionStart {
                tool_name, args, ..
            } => self.line(&self.style.cyan(&format!(
                "-> {tool_name} {}",
                one_line(&args.to_string(), 120)
            ))),
            SessionEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } => {
                let text = content_text(&result.content);
                let status = if *is_error {
                    self.style.red("error")
                } else {
                    self.style.green("ok")
                };
                self.line(&format!(
                    "<- {tool_name} {status}: {}",
                    one_line(&text, 120)
                ));
            }
            SessionEvent::SessionError { message } => {
                self.line(&self.style.red(&format!("session error: {message}")));
            }
            SessionEvent::PlanModeChanged { enabled } => {
                self.line(&self.style.dim(if *enabled {
                    "plan mode on (the working tree is read-only)"
                } else {
                    "plan mode off"
                }));
            }
            SessionEvent::TodosUpdated { todos } => {
                let total = todos.tasks().count();
                let done = todos
                    .tasks()
                    .filter(|task| task.status == pi_protocol::v1::TodoStatus::Completed)
                    .count();
                let current = todos
                    .tasks()
                    .find(|task| task.status == pi_protocol::v1::TodoStatus::InProgress)
                    .map(|task| {
                        format!(
                            " · in progress: {}",
                            one_line(&format!("{} {}", task.id, task.content), 120)
                        )
                    })
                    .unwrap_or_default();
                self.line(
                    &self
                        .style
                        .dim(&format!("todo {done}/{total} done{current}")),
                );
            }
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => self.line(&self.style.dim(&format!(
                "retry {attempt}/{max_attempts} in {delay_ms} ms: {}",
                one_line(error_message, 120)
            ))),
            SessionEvent::CompactionStart { reason } => {
                self.line(
                    &self
                        .style
                        .dim(&format!("compacting ({reason:?})").to_lowercase()),
                );
            }
            SessionEvent::CompactionEnd {
                error_message: Some(error),
                ..
            } => self.line(&self.style.red(&format!("compaction failed: {error}"))),
            SessionEvent::ToolsWaitStart { .. } | SessionEvent::ToolsWaitEnd { .. } => {
                if let Some(notice) = crate::output::tools_wait_notice(event) {
                    self.line(&self.style.dim(&notice));
                }
            }
            SessionEvent::AgentStart
            | SessionEvent::AgentEnd { .. }
            | SessionEvent::TurnStart
            | SessionEvent::TurnEnd { .. }
            | SessionEvent::MessageStart { .. }
            | SessionEvent::MessageUpdate { .. }
            | SessionEvent::ToolExecutionUpdate { .. }
            | SessionEvent::QueueUpdate { .. }
            | SessionEvent::AutoRetryEnd { .. }
            | SessionEvent::CompactionEnd { .. }
            | SessionEvent::EntryAdded { .. }
            | SessionEvent::LeafChanged { .. }
            | SessionEvent::SessionUpdated { .. } => {}
        }
    }

    fn message_end(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::User(user) => {
                self.line(&format!(
                    "> {}",
                    one_line(&content_text(&user.content), 200)
                ));
            }
            AgentMessage::Assistant(assistant) => {
                // Streamed text was printed as it came; a replayed message prints whole.
                if !self.in_text {
                    for block in &assistant.content {
                        if let AssistantContent::Text(text) = block {
                            self.text(&text.text);
                        }
                    }
                }
                self.end_text();
                if let Some(error) = &assistant.error_message {
                    self.line(&self.style.red(&format!("error: {error}")));
                }
            }
            AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => {}
        }
    }

    fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.in_text = true;
            print_text(text);
        }
    }

    fn end_text(&mut self) {
        if self.in_text {
            self.in_text = false;
            print_text("\n");
        }
    }

    fn line(&mut self, line: &str) {
        self.end_text();
        print_text(&format!("{line}\n"));
    }
}

fn content_text(content: &[UserContent]) -> String {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => text.text.clone(),
            UserContent::Image(image) => format!("[{}]", image.mime_type),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
