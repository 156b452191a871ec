//! `pictl rpc`: a stdio bridge speaking pi's `--mode rpc` protocol against a daemon session, so
//! pi RPC integrations work unchanged.
//!
//! stdin carries one JSON command per line (LF only; a trailing CR is stripped; U+2028 and
//! U+2029 stay inside strings; a final line without LF still counts). stdout carries one JSON
//! object per line: responses, and the session's events in pi's exact shapes (the cumulative
//! partial included in `message_update`, `agent_end.messages` rebuilt). stderr is free-form.
//!
//! Differences from pi, all compatible: commands run one at a time in arrival order (`bash`
//! beside them), so responses come in request order; every response echoes the command's `id`
//! (pi drops it in most errors); a failed `prompt` gets one failure response instead of pi's
//! success-then-failure; `--ready` writes `{"type":"ready",...}` once the session is attached (pi writes
//! nothing at startup). Extension UI: the daemon's `ui/request`s for the session are written
//! as `extension_ui_request` lines and `extension_ui_response` lines answer them (`ui.rs`).
//! Events of a `prompt` are held until its response is written, so the
//! response comes first, as in pi. When stdin ends, the bridge waits for the running commands
//! and the active run, then exits 0; Ctrl+C exits 130. `--no-session` sessions (and those
//! `new_session` creates from them) are deleted at exit.

mod commands;
mod shapes;
mod ui;

use std::collections::{HashSet, VecDeque};
use std::process::ExitCode;

use clap::Args;
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::{
    SessionAttach, SessionAttachParams, SessionDelete, SessionDetach, SessionEvent,
    SessionEventNotification, SessionEventParams, SessionIdParams, SessionInfo, SessionStatus,
    UiRequestNotification, UiRequestParams, UiRespond, UiRespondParams,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::commands::run::{SessionOptions, open_session};
use crate::daemon_client;
use crate::error::CliError;
use crate::pi_events::{PartialMode, PiEvents};
use crate::rpc::commands::{Bridge, Outcome};
use crate::rpc::shapes::{LineSplitter, failure};

/// Options of `pictl rpc`.
#[derive(Debug, Args)]
pub struct RpcArgs {
    #[command(flatten)]
    pub options: SessionOptions,
    /// Write {"type":"ready",...} on stdout once the session is attached (pi has no ready line)
    #[arg(long)]
    pub ready: bool,
}

/// Runs the bridge until stdin ends (and the work it started is done) or Ctrl+C.
pub async fn run(args: RpcArgs) -> Result<ExitCode, CliError> {
    let cwd = std::env::current_dir()?;
    let session_cwd = daemon_client::working_directory(args.options.cwd.as_deref())?;
    let connected = daemon_client::connect().await?;
    let client = connected.client;
    let mut notifications = connected.notifications;
    let session = open_session(&client, &args.options, &session_cwd)
        .await?
        .info;
    let mut ephemeral = Vec::new();
    if args.options.no_session {
        ephemeral.push(session.id.clone());
    }

    // The writer owns stdout; every line goes through it, in order.
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let write = |value: &Value| {
        let _ = lines_tx.send(format!("{value}\n"));
    };

    let mut state = State {
        bridge: Bridge {
            client: client.clone(),
            session: session.clone(),
            cwd,
            scope: args.options.models.clone(),
            streaming: false,
            compacting: false,
            extensions: commands::Extensions {
                paths: args.options.extensions.extensions.clone(),
                none_configured: args.options.extensions.no_extensions,
                flags: args.options.extensions.extension_flags.clone(),
            },
        },
        events: PiEvents::new(PartialMode::Full),
        held: Vec::new(),
        prompts_in_flight: 0,
    };
    state.attach(session).await?;
    if args.ready {
        write(&json!({
            "type": "ready",
            "protocolVersion": pi_protocol::PROTOCOL_VERSION,
            "daemonVersion": client.initialize_response().daemon_version,
            "sessionId": state.bridge.session.id,
        }));
    }

    // stdin is read by its own task, as records.
    let (records_tx, mut records) = mpsc::channel::<String>(64);
    tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let mut splitter = LineSplitter::default();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let read = match stdin.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            for record in splitter.push(&buffer[..read]) {
                if records_tx.send(record).await.is_err() {
                    return;
                }
            }
        }
        if let Some(record) = splitter.finish() {
            let _ = records_tx.send(record).await;
        }
    });

    let mut interrupts = signal(SignalKind::interrupt())
        .map_err(|error| CliError::failed(format!("cannot handle Ctrl+C: {error}")))?;
    // One command runs at a time, in arrival order, so responses come in request order;
    // `bash` runs beside them (it may take long, and `abort_bash` must reach it).
    let mut tasks: JoinSet<(bool, Outcome)> = JoinSet::new();
    let mut background: JoinSet<Outcome> = JoinSet::new();
    let mut queue: VecDeque<Queued> = VecDeque::new();
    let mut stdin_open = true;
    // Extension UI requests already written (the daemon may send one twice around an attach).
    let mut ui_shown: HashSet<String> = HashSet::new();
    let result = loop {
        while tasks.is_empty()
            && let Some(next) = queue.pop_front()
        {
            match next {
                Queued::Answer(response) => write(&response),
                Queued::Command(command) if command["type"] == "bash" => {
                    let bridge = state.bridge.clone();
                    background.spawn(commands::handle(bridge, command));
                }
                Queued::Command(command) => {
                    let is_prompt = command["type"] == "prompt";
                    if is_prompt {
                        state.prompts_in_flight += 1;
                    }
                    let bridge = state.bridge.clone();
                    tasks
                        .spawn(async move { (is_prompt, commands::handle(bridge, command).await) });
                }
            }
        }
        if !stdin_open
            && tasks.is_empty()
            && background.is_empty()
            && queue.is_empty()
            && !state.bridge.streaming
        {
            break Ok(ExitCode::SUCCESS);
        }
        // Biased, notifications first: an event the daemon sent before a response is written
        // before that response (abort answers after the run's last events, as in pi).
        tokio::select! {
            biased;
            notification = notifications.next() => {
                let Some(notification) = notification else {
                    break Err(CliError::from(pi_client::ClientError::Disconnected {
                        reason: client.closed().await,
                    }));
                };
                if notification.method == UiRequestNotification::NAME {
                    let Some(params) = notification.params else { continue };
                    let Ok(request) = serde_json::from_value::<UiRequestParams>(params) else { continue };
                    if request.session_id == state.bridge.session.id
                        && ui_shown.insert(request.request_id.clone())
                    {
                        write(&ui::request_line(&request));
                    }
                    continue;
                }
                if notification.method == pi_protocol::v1::ExtensionUiNotification::NAME {
                    let Some(params) = notification.params else { continue };
                    let Ok(shown) = serde_json::from_value::<pi_protocol::v1::ExtensionUiParams>(params) else { continue };
                    if shown.session_id == state.bridge.session.id {
                        write(&ui::notice_line(&shown.ui));
                    }
                    continue;
                }
                if notification.method != SessionEventNotification::NAME {
                    continue;
                }
                let Some(params) = notification.params else { continue };
                let Ok(event) = serde_json::from_value::<SessionEventParams>(params) else { continue };
                if event.session_id != state.bridge.session.id {
                    continue;
                }
                if state.prompts_in_flight > 0 {
                    state.held.push(event.event);
                } else {
                    state.emit(&event.event, &write);
                }
            },
            record = records.recv(), if stdin_open => match record {
                None => stdin_open = false,
                Some(record) if record.trim().is_empty() => {}
                Some(record) => match serde_json::from_str::<Value>(&record) {
                    Err(error) => queue.push_back(Queued::Answer(failure(
                        None,
                        "parse",
                        format!("Failed to parse command: {error}"),
                    ))),
                    Ok(command) if command["type"] == "extension_ui_response" => {
                        // Answered beside the commands; an unknown or late id is ignored.
                        if let Some(request_id) = command["id"].as_str() {
                            let client = client.clone();
                            let params = UiRespondParams {
                                session_id: state.bridge.session.id.clone(),
                                request_id: request_id.to_owned(),
                                answer: ui::answer_of(&command),
                            };
                            tokio::spawn(async move {
                                let _ = client.call::<UiRespond>(&params).await;
                            });
                        }
                    }
                    Ok(command) => queue.push_back(Queued::Command(command)),
                },
            },
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                let Ok((is_prompt, outcome)) = joined else { continue };
                // A prompt an extension took starts no run: nothing streams.
                if is_prompt && outcome.started {
                    state.bridge.streaming = true;
                }
                write(&outcome.response);
                if is_prompt {
                    state.prompts_in_flight -= 1;
                    if state.prompts_in_flight == 0 {
                        for event in std::mem::take(&mut state.held) {
                            state.emit(&event, &write);
                        }
                    }
                }
                if let Some(next) = outcome.switch_to {
                    if ephemeral.contains(&state.bridge.session.id) {
                        ephemeral.push(next.id.clone());
                    }
                    state.switch(next).await?;
                }
            },
            Some(joined) = background.join_next(), if !background.is_empty() => {
                if let Ok(outcome) = joined {
                    write(&outcome.response);
                }
            },
            _ = interrupts.recv() => break Err(CliError::interrupted("interrupted")),
        }
    };
    for session_id in ephemeral {
        let _ = client
            .call::<SessionDelete>(&SessionIdParams { session_id })
            .await;
    }
    drop(lines_tx);
    let _ = writer.await;
    result
}

/// A line waiting for its turn.
enum Queued {
    /// A command to run.
    Command(Value),
    /// A response known already (an unparseable line).
    Answer(Value),
}

/// The bridge's mutable state, owned by the main loop.
struct State {
    bridge: Bridge,
    // Converts the current session's events to pi's shapes; reset on a switch.
    events: PiEvents,
    // Events that arrived while a `prompt` call was in flight, written after its response.
    held: Vec<SessionEvent>,
    prompts_in_flight: usize,
}

impl State {
    /// Writes one event in pi's shape and tracks whether a run is active.
    fn emit(&mut self, event: &SessionEvent, write: &impl Fn(&Value)) {
        match event {
            SessionEvent::AgentStart => self.bridge.streaming = true,
            SessionEvent::AgentEnd { .. } => self.bridge.streaming = false,
            SessionEvent::CompactionStart { .. } => self.bridge.compacting = true,
            SessionEvent::CompactionEnd { .. } => self.bridge.compacting = false,
            SessionEvent::SessionError { message } => {
                self.bridge.streaming = false;
                crate::output::eprint_line(&format!("pictl rpc: session error: {message}"));
            }
            _ => {}
        }
        if let Some(line) = self.events.convert(event) {
            write(&line);
        }
    }

    async fn attach(&mut self, session: SessionInfo) -> Result<(), CliError> {
        let attached = self
            .bridge
            .client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await?;
        self.bridge
            .client
            .supply_missing_env(&attached.snapshot.info)
            .await?;
        self.events = PiEvents::new(PartialMode::Full);
        self.events
            .resume_partial(attached.snapshot.streaming_message);
        self.bridge.streaming = attached.snapshot.info.status == SessionStatus::Running;
        self.bridge.compacting = false;
        self.bridge.session = attached.snapshot.info;
        Ok(())
    }

    async fn switch(&mut self, next: SessionInfo) -> Result<(), CliError> {
        let previous = self.bridge.session.id.clone();
        let _ = self
            .bridge
            .client
            .call::<SessionDetach>(&SessionIdParams {
                session_id: previous,
            })
            .await;
        self.held.clear();
        self.attach(next).await
    }
}
