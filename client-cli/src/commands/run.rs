//! `pictl run`: one-shot prompts, a drop-in for `pi -p` (print mode) and `pi --mode json`.
//!
//! The command opens a session (new by default; `-c` the newest in the working directory;
//! `--session` a given one; `--no-session` a new one deleted afterwards), attaches to it, and
//! sends each message as its own prompt, waiting for each run's `agent_end`. Piped stdin and
//! `@file` text go before the first message (see `attachments`).
//!
//! Output: print mode writes the text blocks of the final assistant message, one per line;
//! `--json` writes a header line and then every event in pi's JSON-mode shapes (see
//! `pi_events`). A run that ends in an error or abort exits 1 with its error on stderr;
//! Ctrl+C aborts the run (the session stays consistent) and exits 130, a second Ctrl+C exits
//! at once.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use pi_client::{Client, Notifications};
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::message::{AgentMessage, AssistantMessage, ImageContent, StopReason};
use pi_protocol::v1::{
    ModelList, ModelListParams, SessionAbort, SessionAttach, SessionAttachParams, SessionCreate,
    SessionCreateParams, SessionDelete, SessionEvent, SessionEventNotification, SessionGet,
    SessionIdParams, SessionInfo, SessionMessageParams, SessionPrompt, SessionSetModel,
    SessionSetModelParams, SessionSetThinking, SessionSetThinkingParams, SessionStatus,
};
use serde_json::json;
use tokio::signal::unix::{SignalKind, signal};

use crate::attachments;
use crate::daemon_client::{self, all_sessions, find_session};
use crate::error::CliError;
use crate::model_scope;
use crate::output::{self, print_json, print_line};
use crate::pi_events::{PartialMode, PiEvents, assistant_texts};

/// Thinking levels, as pi names them.
pub const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// Session and model options shared by `pictl run` and `pictl rpc` (pi's flags).
#[derive(Debug, Args)]
pub struct SessionOptions {
    /// Provider of --model (or, alone, use that provider's first model)
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Model: provider/id, an id, or part of a name, with an optional :thinking suffix
    #[arg(long, value_name = "PATTERN")]
    pub model: Option<String>,
    /// Model scope: comma-separated globs; without --model, the first match is used
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Thinking level
    #[arg(long, value_name = "LEVEL", value_parser = THINKING_LEVELS)]
    pub thinking: Option<String>,
    /// Continue the most recent session in the working directory (a new one if none)
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["session", "new", "no_session"])]
    pub continue_session: bool,
    /// Continue this session (a full id or a unique prefix)
    #[arg(long, value_name = "ID", conflicts_with_all = ["new", "no_session"])]
    pub session: Option<String>,
    /// Start a new session (the default)
    #[arg(long)]
    pub new: bool,
    /// Use a new session and delete it afterwards
    #[arg(long)]
    pub no_session: bool,
    /// Tools of a new session (comma-separated names)
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Give a new session no tools (combine with --tools to add some back)
    #[arg(long)]
    pub no_tools: bool,
    /// Approval mode of the session: yolo (default), ask-writes, ask-all, read-only
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Replace the system prompt of a new session (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,
    /// Append to the system prompt of a new session (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub append_system_prompt: Option<String>,
    /// Working directory of a new session, and where -c looks (default: the current one)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub extensions: super::attach::ExtensionArgs,
}

/// Options of `pictl run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: SessionOptions,
    /// Print every event as a JSON line (pi's JSON mode), after a header line
    #[arg(long)]
    pub json: bool,
    /// With --json: include the cumulative partial message in message_update, as pi does
    #[arg(long, requires = "json")]
    pub pi_compat: bool,
    /// Files to attach (@path) and messages, each message a prompt of its own
    #[arg(value_name = "@FILE|MESSAGE")]
    pub inputs: Vec<String>,
}

/// How a run loop ended.
#[derive(Debug)]
enum RunEnd {
    /// `agent_end` arrived; the last assistant message of the run, if any.
    Finished(Option<Box<AssistantMessage>>),
    /// The run failed inside the daemon (`session_error`).
    Failed(String),
    /// Ctrl+C: the run was aborted (`true`) or the user gave up waiting (`false`).
    Interrupted,
}

/// Runs `pictl run`.
pub async fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let cwd = daemon_client::working_directory(args.options.cwd.as_deref())?;
    let (files, messages): (Vec<String>, Vec<String>) = args
        .inputs
        .iter()
        .cloned()
        .partition(|input| input.starts_with('@'));
    let files: Vec<String> = files.into_iter().map(|file| file[1..].to_owned()).collect();
    let attachments = attachments::read_files(&files, &std::env::current_dir()?)?;
    let stdin = attachments::read_piped_stdin()?;
    let prompts = attachments::first_messages(stdin, attachments, &messages);
    if prompts.is_empty() {
        return Err(
            CliError::usage("nothing to send: give a message, an @file or piped input")
                .with_hint("pictl run \"explain this repository\""),
        );
    }

    let connected = daemon_client::connect_without_questions().await?;
    let client = connected.client;
    let mut notifications = connected.notifications;
    let session = open_session(&client, &args.options, &cwd).await?;
    if let Some(mode) = &args.options.mode {
        client
            .call::<pi_protocol::v1::SessionSetPolicy>(&pi_protocol::v1::SessionSetPolicyParams {
                session_id: session.id.clone(),
                mode: mode.clone(),
            })
            .await?;
    }
    let attached = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await?;
    // A session the daemon loaded again lacks the secret variables it never stores.
    client.supply_missing_env(&attached.snapshot.info).await?;
    let mode = if args.pi_compat {
        PartialMode::Full
    } else {
        PartialMode::DeltaOnly
    };
    let mut converter = PiEvents::new(mode);
    converter.resume_partial(attached.snapshot.streaming_message);
    if args.json {
        print_json(&json!({
            "type": "session",
            "version": 3,
            "id": session.id,
            "timestamp": pi_util::time::iso_from_millis(session.created_at),
            "cwd": session.cwd,
            "protocolVersion": pi_protocol::PROTOCOL_VERSION,
        }));
    }

    let mut interrupts = signal(SignalKind::interrupt())
        .map_err(|error| CliError::failed(format!("cannot handle Ctrl+C: {error}")))?;
    let mut outcome = Ok(None);
    for (text, images) in prompts {
        let end = run_prompt(
            &client,
            &mut notifications,
            &mut interrupts,
            &mut converter,
            &session.id,
            text,
            images,
            args.json,
        )
        .await;
        match end {
            Ok(RunEnd::Finished(last)) => {
                if let Some(message) = &last
                    && matches!(message.stop_reason, StopReason::Error | StopReason::Aborted)
                {
                    outcome = Err(run_error(message));
                    break;
                }
                outcome = Ok(last);
            }
            Ok(RunEnd::Failed(message)) => {
                outcome = Err(CliError::failed(message));
                break;
            }
            Ok(RunEnd::Interrupted) => {
                outcome = Err(CliError::interrupted("interrupted; the run was aborted"));
                break;
            }
            Err(error) => {
                outcome = Err(error);
                break;
            }
        }
    }
    // What went wrong with the session's pi extensions (one that did not load, threw, or
    // was not approved) is said on stderr, as pi says it when it starts.
    warn_extension_problems(&client, &session.id).await;
    if args.options.no_session {
        let _ = client
            .call::<SessionDelete>(&SessionIdParams {
                session_id: session.id.clone(),
            })
            .await;
    }
    let last = outcome?;
    if !args.json
        && let Some(message) = last
    {
        for text in assistant_texts(&message) {
            print_line(text);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the problems of session `id`'s pi extensions as warnings on stderr.
async fn warn_extension_problems(client: &Client, id: &str) {
    let Ok(list) = client
        .call::<pi_protocol::v1::ExtensionsList>(&pi_protocol::v1::ExtensionsListParams {
            session_id: Some(id.to_owned()),
        })
        .await
    else {
        return;
    };
    for session in &list.sessions {
        for problem in &session.diagnostics {
            crate::output::eprint_line(&format!(
                "warning: extension {}: {}",
                problem.path,
                problem.error.replace('\n', " ")
            ));
        }
        for skipped in &session.skipped {
            crate::output::eprint_line(&format!(
                "warning: extension {} skipped: {}",
                skipped.path, skipped.error
            ));
        }
    }
}

/// Sends one prompt and follows the session's events until the run ends.
#[allow(clippy::too_many_arguments, reason = "one call site; the loop's state")]
async fn run_prompt(
    client: &Client,
    notifications: &mut Notifications,
    interrupts: &mut tokio::signal::unix::Signal,
    converter: &mut PiEvents,
    session_id: &str,
    text: String,
    images: Vec<ImageContent>,
    json_output: bool,
) -> Result<RunEnd, CliError> {
    let sent = client
        .call::<SessionPrompt>(&SessionMessageParams {
            session_id: session_id.to_owned(),
            text,
            images,
        })
        .await?;
    // An extension took the prompt (its command, or an `input` handler that answered it):
    // no run follows, as in pi's print mode.
    if !sent.started {
        return Ok(RunEnd::Finished(None));
    }
    let mut last_assistant = None;
    let mut aborting = false;
    // After a failed run wound down: an `auto_retry_start` already received means a retry
    // follows; none means the run is over.
    let mut retry_check = false;
    loop {
        tokio::select! {
            // Biased: with `retry_check`, every event already received is read before deciding.
            biased;
            notification = notifications.next() => {
                let Some(notification) = notification else {
                    return Err(CliError::from(pi_client::ClientError::Disconnected {
                        reason: client.closed().await,
                    }));
                };
                if notification.method != SessionEventNotification::NAME {
                    continue;
                }
                let Some(params) = notification.params else { continue };
                let Ok(event) = serde_json::from_value::<pi_protocol::v1::SessionEventParams>(params) else {
                    continue;
                };
                if event.session_id != session_id {
                    continue;
                }
                if json_output && let Some(line) = converter.convert(&event.event) {
                    print_json(&line);
                }
                // A person watching learns why the first answer takes a while.
                if !json_output
                    && let Some(notice) = output::tools_wait_notice(&event.event)
                    && std::io::stderr().is_terminal()
                {
                    output::eprint_line(&notice);
                }
                match event.event {
                    SessionEvent::MessageEnd { message: AgentMessage::Assistant(message), .. } => {
                        last_assistant = Some(message);
                    }
                    SessionEvent::AgentEnd { .. } if aborting => return Ok(RunEnd::Interrupted),
                    SessionEvent::AgentEnd { .. }
                        if last_assistant
                            .as_ref()
                            .is_some_and(|m| m.stop_reason == StopReason::Error) =>
                    {
                        // The daemon decides on an automatic retry after `agent_end`; pi's
                        // print mode waits for the retries, and so does this.
                        wait_until_idle(client, session_id).await?;
                        retry_check = true;
                    }
                    SessionEvent::AgentEnd { .. } => return Ok(RunEnd::Finished(last_assistant.map(Box::new))),
                    SessionEvent::AutoRetryStart { .. } => retry_check = false,
                    SessionEvent::SessionError { message } => return Ok(RunEnd::Failed(message)),
                    _ => {}
                }
            }
            () = std::future::ready(()), if retry_check => {
                return Ok(RunEnd::Finished(last_assistant.map(Box::new)));
            }
            _ = interrupts.recv() => {
                if aborting {
                    return Ok(RunEnd::Interrupted);
                }
                aborting = true;
                let client = client.clone();
                let session_id = session_id.to_owned();
                tokio::spawn(async move {
                    let _ = client.call::<SessionAbort>(&SessionIdParams { session_id }).await;
                });
            }
        }
    }
}

/// Waits until the session has no run (the daemon has decided whether to retry). Events sent
/// before that decision are in the notification stream once this returns.
async fn wait_until_idle(client: &Client, session_id: &str) -> Result<(), CliError> {
    loop {
        let details = client
            .call::<SessionGet>(&SessionIdParams {
                session_id: session_id.to_owned(),
            })
            .await?;
        if details.info.status == SessionStatus::Idle {
            return Ok(());
        }
        // Polling: a run that ends without a retry sends no event after `agent_end`.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The session a run or a bridge uses: new, continued, or named.
pub async fn open_session(
    client: &Client,
    args: &SessionOptions,
    cwd: &std::path::Path,
) -> Result<SessionInfo, CliError> {
    let system_prompt = args
        .system_prompt
        .as_deref()
        .map(text_or_file)
        .transpose()?;
    let append_system_prompt = args
        .append_system_prompt
        .as_deref()
        .map(text_or_file)
        .transpose()?;
    let cwd_text = cwd.display().to_string();
    let existing = if let Some(id) = &args.session {
        Some(find_session(client, id).await?)
    } else if args.continue_session {
        all_sessions(client, Some(&cwd_text))
            .await?
            .into_iter()
            .next()
    } else {
        None
    };
    if let Some(session) = existing {
        if args.tools.is_some() || args.no_tools {
            return Err(CliError::usage(
                "--tools and --no-tools apply to new sessions; an existing session keeps its tools",
            ));
        }
        if system_prompt.is_some() || append_system_prompt.is_some() {
            return Err(CliError::usage(
                "--system-prompt and --append-system-prompt apply to new sessions",
            ));
        }
        let chosen = &args.extensions;
        if !chosen.extensions.is_empty()
            || chosen.no_extensions
            || !chosen.extension_flags.is_empty()
        {
            let flags: Vec<String> = chosen
                .extension_flags
                .keys()
                .map(|name| format!("--{name}"))
                .collect();
            let given = [
                (!chosen.extensions.is_empty()).then(|| "-e/--extension".to_owned()),
                chosen.no_extensions.then(|| "--no-extensions".to_owned()),
                (!flags.is_empty()).then(|| flags.join(", ")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            return Err(CliError::usage(format!(
                "{given} apply to new sessions; an existing session keeps the extensions and \
                 extension flags it was created with (start a new session to change them)"
            )));
        }
        if let Some(spec) = model_spec(client, args).await?.0 {
            let changed = client
                .call::<SessionSetModel>(&SessionSetModelParams {
                    session_id: session.id.clone(),
                    model: spec,
                })
                .await
                .map_err(model_error)?;
            print_warnings(&changed.warnings);
        }
        if let Some(level) = &args.thinking {
            client
                .call::<SessionSetThinking>(&SessionSetThinkingParams {
                    session_id: session.id.clone(),
                    level: level.clone(),
                })
                .await?;
        }
        return Ok(session);
    }
    // `--provider` alone naming a provider the daemon does not have: perhaps one the new
    // session's extensions register, chosen once it exists.
    let (model, scoped_thinking, provider_later) = match model_spec(client, args).await {
        Err(error) if args.provider.is_some() && args.model.is_none() => (None, None, Some(error)),
        chosen => {
            let (model, thinking) = chosen?;
            (model, thinking, None)
        }
    };
    let tools = match (&args.tools, args.no_tools) {
        (Some(tools), _) => Some(tools.clone()),
        (None, true) => Some(Vec::new()),
        (None, false) => None,
    };
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd_text,
            env: Some(std::env::vars().collect()),
            model,
            thinking: args.thinking.clone().or(scoped_thinking),
            tools,
            name: None,
            system_prompt,
            append_system_prompt,
            no_skills: false,
            no_context_files: false,
            extensions: args.extensions.extensions.clone(),
            no_extensions: args.extensions.no_extensions,
            extension_flags: args.extensions.extension_flags.clone(),
        })
        .await
        .map_err(model_error)?;
    print_warnings(&created.warnings);
    if let (Some(refused), Some(provider)) = (provider_later, &args.provider) {
        let chosen = match provider_model(client, provider, Some(&created.id)).await {
            Ok(spec) => client
                .call::<SessionSetModel>(&SessionSetModelParams {
                    session_id: created.id.clone(),
                    model: spec,
                })
                .await
                .map_err(model_error),
            Err(_) => Err(refused),
        };
        match chosen {
            Ok(changed) => {
                print_warnings(&changed.warnings);
                return Ok(SessionInfo {
                    model: Some(pi_protocol::v1::ModelRef {
                        provider: changed.model.provider,
                        id: changed.model.id,
                    }),
                    thinking_level: changed.thinking_level,
                    ..created
                });
            }
            Err(error) => {
                let _ = client
                    .call::<pi_protocol::v1::SessionDelete>(&pi_protocol::v1::SessionIdParams {
                        session_id: created.id.clone(),
                    })
                    .await;
                return Err(error);
            }
        }
    }
    Ok(created)
}

/// The daemon's warnings for the user, on stderr as pi prints them.
fn print_warnings(warnings: &[String]) {
    for warning in warnings {
        crate::output::eprint_line(&format!("Warning: {warning}"));
    }
}

/// The model spec to ask for (and a thinking level from a `--models` pattern).
async fn model_spec(
    client: &Client,
    args: &SessionOptions,
) -> Result<(Option<String>, Option<String>), CliError> {
    match (&args.provider, &args.model) {
        (Some(provider), Some(model)) => {
            let prefix = format!("{provider}/");
            if model.to_lowercase().starts_with(&prefix.to_lowercase()) {
                Ok((Some(model.clone()), None))
            } else {
                Ok((Some(format!("{provider}/{model}")), None))
            }
        }
        (None, Some(model)) => Ok((Some(model.clone()), None)),
        (Some(provider), None) => Ok((Some(provider_model(client, provider, None).await?), None)),
        (None, None) if !args.models.is_empty() => {
            let models = client
                .call::<ModelList>(&ModelListParams {
                    available_only: true,
                    session_id: None,
                })
                .await?
                .models;
            let scoped = model_scope::scoped_models(&args.models, &models);
            let first = scoped.into_iter().next().ok_or_else(|| {
                CliError::failed(format!(
                    "no model with a key matches --models {}",
                    args.models.join(",")
                ))
                .with_hint("`pictl models` lists the models and which have a key")
            })?;
            Ok((
                Some(format!("{}/{}", first.model.provider, first.model.id)),
                first.thinking,
            ))
        }
        (None, None) => Ok((None, None)),
    }
}

/// pi's `--provider` alone: the provider's model with a key (else its first), among the
/// daemon's models and, with `session`, that session's extensions' providers' too.
async fn provider_model(
    client: &Client,
    provider: &str,
    session: Option<&str>,
) -> Result<String, CliError> {
    let models = client
        .call::<ModelList>(&ModelListParams {
            available_only: false,
            session_id: session.map(str::to_owned),
        })
        .await?
        .models;
    let of_provider: Vec<_> = models
        .iter()
        .filter(|model| model.provider.eq_ignore_ascii_case(provider))
        .collect();
    let chosen = of_provider
        .iter()
        .find(|model| model.has_key)
        .or(of_provider.first())
        .ok_or_else(|| {
            let mut providers: Vec<&str> =
                models.iter().map(|model| model.provider.as_str()).collect();
            providers.dedup();
            CliError::failed(format!(
                "no models of provider {provider:?}; known providers: {}",
                providers.join(", ")
            ))
        })?;
    Ok(format!("{}/{}", chosen.provider, chosen.id))
}

fn model_error(error: pi_client::ClientError) -> CliError {
    CliError::from(error)
}

/// The error of a run whose final assistant message failed or was aborted (pi's text).
fn run_error(message: &AssistantMessage) -> CliError {
    let reason = match message.stop_reason {
        StopReason::Aborted => "aborted",
        StopReason::Error | StopReason::Stop | StopReason::Length | StopReason::ToolUse => "error",
    };
    CliError::failed(
        message
            .error_message
            .clone()
            .unwrap_or_else(|| format!("Request {reason}")),
    )
}

/// pi's `--system-prompt` value: the content of an existing file, or the text itself.
fn text_or_file(value: &str) -> Result<String, CliError> {
    let path = std::path::Path::new(value);
    if path.is_file() {
        return std::fs::read_to_string(path)
            .map_err(|error| CliError::failed(format!("cannot read {value}: {error}")));
    }
    Ok(value.to_owned())
}
