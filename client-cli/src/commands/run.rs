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
use crate::daemon_client;
use crate::error::CliError;
use crate::output::{self, print_json, print_line};
use crate::pi_events::{PartialMode, PiEvents, assistant_texts};
use crate::pi_sessions;
use pi_client::model_scope;

/// Thinking levels, as pi names them.
pub const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// Session and model options shared by `pictl run`, `pictl rpc` and `pictl` itself: pi's
/// flags, with pi's meanings.
#[derive(Debug, Args)]
pub struct SessionOptions {
    /// Provider of --model (or, alone, use that provider's first model)
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Model: provider/id, an id, or part of a name, with an optional :thinking suffix
    #[arg(long, value_name = "PATTERN",
          add = clap_complete::engine::ArgValueCandidates::new(crate::complete::models))]
    pub model: Option<String>,
    /// API key for the model's provider, for this session only (beats auth.json and the
    /// environment)
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Model scope: comma-separated globs; without --model, the first match is used
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Thinking level: off, minimal, low, medium, high, xhigh (another value is a warning
    /// and ignored, as in pi)
    #[arg(long, value_name = "LEVEL",
          add = clap_complete::engine::ArgValueCandidates::new(crate::complete::thinking_levels))]
    pub thinking: Option<String>,
    /// Continue the most recent session in the working directory (a new one if none)
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["session", "fork", "new"])]
    pub continue_session: bool,
    /// Continue this session: a daemon session's id (or unique prefix), a pi session file's
    /// id prefix, or a pi session file (.jsonl)
    #[arg(long, value_name = "PATH|ID", conflicts_with_all = ["fork", "new", "no_session"],
          add = clap_complete::engine::ArgValueCandidates::new(crate::complete::sessions))]
    pub session: Option<String>,
    /// Copy this session (id, prefix or pi session file) into a new one and continue there
    #[arg(long, value_name = "PATH|ID", conflicts_with_all = ["new", "no_session"])]
    pub fork: Option<String>,
    /// Where pi's session files are looked up (default: $PI_CODING_AGENT_SESSION_DIR, else
    /// ~/.pi/agent/sessions)
    #[arg(long, value_name = "DIR")]
    pub session_dir: Option<PathBuf>,
    /// Start a new session (the default)
    #[arg(long)]
    pub new: bool,
    /// Use a new session and delete it afterwards
    #[arg(long)]
    pub no_session: bool,
    /// Allow only these tools, built-in or from extensions (comma-separated names)
    #[arg(short = 't', long, value_name = "NAMES", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// No tools at all, built-in or from extensions (-nt)
    #[arg(long)]
    pub no_tools: bool,
    /// No built-in tools; extension tools stay (-nbt)
    #[arg(long)]
    pub no_builtin_tools: bool,
    /// Approval mode of the session: yolo (default), ask-writes, ask-all, read-only
    #[arg(long, value_name = "MODE", value_parser = APPROVAL_MODES)]
    pub approval_mode: Option<String>,
    /// Replace the system prompt of a new session (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,
    /// Append to the system prompt of a new session (text, or a file to read it from;
    /// repeatable)
    #[arg(long, value_name = "TEXT|FILE")]
    pub append_system_prompt: Vec<String>,
    /// Load this skill file or directory too (repeatable)
    #[arg(long = "skill", value_name = "PATH")]
    pub skills: Vec<String>,
    /// Load no discovered or configured skills; --skill ones still load (-ns)
    #[arg(long)]
    pub no_skills: bool,
    /// Load this prompt template file or directory too (repeatable)
    #[arg(long = "prompt-template", value_name = "PATH")]
    pub prompt_templates: Vec<String>,
    /// Load no discovered or configured prompt templates (-np)
    #[arg(long)]
    pub no_prompt_templates: bool,
    /// Leave AGENTS.md and CLAUDE.md out of the system prompt (-nc)
    #[arg(long)]
    pub no_context_files: bool,
    /// Load this pi theme file or directory for the TUI (repeatable)
    #[arg(long = "theme", value_name = "PATH")]
    pub themes: Vec<String>,
    /// Discover no pi themes (only --theme's and the built-ins)
    #[arg(long)]
    pub no_themes: bool,
    /// Show the TUI's full startup header (key hints, what loaded) even with quietStartup
    #[arg(long)]
    pub verbose: bool,
    /// No startup network operations: the session's extensions see PI_OFFLINE=1
    #[arg(long)]
    pub offline: bool,
    /// Working directory of a new session, and where -c looks (default: the current one)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub extensions: super::attach::ExtensionArgs,
}

/// The daemon's approval modes (`--approval-mode`).
pub const APPROVAL_MODES: [&str; 4] = ["yolo", "ask-writes", "ask-all", "read-only"];

/// pi's output modes (`--mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// The final answer's text (pi's print mode).
    Text,
    /// Every event as a JSON line.
    Json,
    /// pi's RPC protocol on stdio.
    Rpc,
}

/// Parses `--mode`; the approval modes `--mode` used to take get a message naming the flag
/// that took them over.
pub fn parse_output_mode(value: &str) -> Result<OutputMode, String> {
    match value {
        "text" => Ok(OutputMode::Text),
        "json" => Ok(OutputMode::Json),
        "rpc" => Ok(OutputMode::Rpc),
        approval if APPROVAL_MODES.contains(&approval) => Err(format!(
            "--mode is pi's output mode now (text, json or rpc); the approval mode moved to \
             --approval-mode (use --approval-mode {approval})"
        )),
        other => Err(format!(
            "unknown output mode {other:?}: use text, json or rpc"
        )),
    }
}

/// Options of `pictl run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: SessionOptions,
    /// Output: text (the final answer, the default), json (every event as pi writes it) or
    /// rpc (pi's RPC protocol, as `pictl rpc`)
    #[arg(long, value_name = "MODE", value_parser = parse_output_mode)]
    pub mode: Option<OutputMode>,
    /// Print mode (what `pictl run` does anyway; accepted as pi's -p)
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Print every event as a JSON line, after a header line (deltas only; --mode json
    /// writes pi's exact lines)
    #[arg(long)]
    pub json: bool,
    /// With --json: include the cumulative partial message in message_update, as pi does
    #[arg(long, requires = "json")]
    pub pi_compat: bool,
    /// Files to attach (@path) and messages, each message a prompt of its own
    #[arg(value_name = "@FILE|MESSAGE")]
    pub inputs: Vec<String>,
    /// Piped stdin already read (by `pictl` itself, deciding on print mode).
    #[arg(skip)]
    pub piped: Option<String>,
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
    let (attachments, messages) = attachments::split_inputs(&args.inputs)?;
    let stdin = match args.piped.clone() {
        Some(piped) => Some(piped),
        None => attachments::read_piped_stdin()?,
    };
    // Images are fitted per `images.autoResize`, which the daemon knows: only then is it
    // asked before the message is complete.
    let mut connected = None;
    let resize = if attachments.has_images() {
        let early = daemon_client::connect_without_questions().await?;
        let resize = attachments::resize_setting(&early.client, &cwd).await;
        connected = Some(early);
        resize
    } else {
        true
    };
    let prompts = attachments::first_messages(stdin, attachments.finish(resize), &messages);
    if prompts.is_empty() {
        return Err(
            CliError::usage("nothing to send: give a message, an @file or piped input")
                .with_hint("pictl run \"explain this repository\""),
        );
    }

    // pi's `--mode json` writes its lines exactly (the cumulative partial included) and,
    // like pi, ends 0 when a run fails; `--json` writes deltas and ends 1.
    let pi_json = args.mode == Some(OutputMode::Json);
    let json_output = args.json || pi_json;
    let connected = match connected {
        Some(connected) => connected,
        None => daemon_client::connect_without_questions().await?,
    };
    let client = connected.client;
    let mut notifications = connected.notifications;
    daemon_client::warn_config_problems(&client, &cwd).await;
    let opened = open_session(&client, &args.options, &cwd).await?;
    let session = opened.info;
    let attached = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await?;
    // A session the daemon loaded again lacks the secret variables it never stores.
    client.supply_missing_env(&attached.snapshot.info).await?;
    let mode = if args.pi_compat || pi_json {
        PartialMode::Full
    } else {
        PartialMode::DeltaOnly
    };
    let mut converter = PiEvents::new(mode);
    converter.resume_partial(attached.snapshot.streaming_message);
    if json_output {
        let mut header = json!({
            "type": "session",
            "version": 3,
            "id": session.id,
            "timestamp": pi_util::time::iso_from_millis(session.created_at),
            "cwd": session.cwd,
        });
        if !pi_json {
            header["protocolVersion"] = json!(pi_protocol::PROTOCOL_VERSION);
        }
        print_json(&header);
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
            json_output,
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
    // A session this run made and nothing got into (no key, a model refused) is not kept:
    // `-c` must not come back to an empty one.
    let empty = opened.created && outcome.is_err() && {
        client
            .call::<SessionGet>(&SessionIdParams {
                session_id: session.id.clone(),
            })
            .await
            .is_ok_and(|details| details.info.message_count == 0)
    };
    if args.options.no_session || empty {
        let _ = client
            .call::<SessionDelete>(&SessionIdParams {
                session_id: session.id.clone(),
            })
            .await;
    }
    let last = match outcome {
        // pi's JSON mode: the failure is in the lines already; the exit is 0.
        Err(error) if pi_json && !error.is_interrupted() => {
            crate::output::eprint_line(error.message());
            return Ok(ExitCode::SUCCESS);
        }
        outcome => outcome?,
    };
    if !json_output && let Some(message) = last {
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
                // A person watching learns what the run does, and why the first answer
                // takes a while.
                if !json_output
                    && std::io::stderr().is_terminal()
                    && let Some(notice) = output::tools_wait_notice(&event.event)
                        .or_else(|| output::progress_notice(&event.event))
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

/// The session a command opened, and whether it made it.
pub struct OpenedSession {
    /// The session.
    pub info: SessionInfo,
    /// It is new (made by this command, not continued or named).
    pub created: bool,
}

/// The session a run or a bridge uses: new, continued, named, or forked — with the approval
/// mode and API key the command line gave.
pub async fn open_session(
    client: &Client,
    args: &SessionOptions,
    cwd: &std::path::Path,
) -> Result<OpenedSession, CliError> {
    // pi's rule: the key is for the model the command line names.
    if args.api_key.is_some()
        && args.model.is_none()
        && args.provider.is_none()
        && args.models.is_empty()
    {
        return Err(CliError::usage(
            "--api-key requires a model to be specified via --model, --provider/--model, or \
             --models",
        ));
    }
    let opened = open_or_create(client, args, cwd).await?;
    let id = &opened.info.id;
    if let Some(mode) = &args.approval_mode {
        client
            .call::<pi_protocol::v1::SessionSetPolicy>(&pi_protocol::v1::SessionSetPolicyParams {
                session_id: id.clone(),
                mode: mode.clone(),
            })
            .await?;
    }
    if let Some(key) = &args.api_key
        && let Some(model) = &opened.info.model
    {
        client
            .call::<pi_protocol::v1::SessionSetApiKey>(&pi_protocol::v1::SessionSetApiKeyParams {
                session_id: id.clone(),
                provider: model.provider.clone(),
                key: key.clone(),
            })
            .await?;
    }
    Ok(opened)
}

async fn open_or_create(
    client: &Client,
    args: &SessionOptions,
    cwd: &std::path::Path,
) -> Result<OpenedSession, CliError> {
    let thinking = args.thinking.as_ref().filter(|level| {
        let valid = THINKING_LEVELS.contains(&level.as_str());
        if !valid {
            crate::output::eprint_line(&format!(
                "Warning: Invalid thinking level \"{level}\". Valid values: {}",
                THINKING_LEVELS.join(", ")
            ));
        }
        valid
    });
    let system_prompt = args
        .system_prompt
        .as_deref()
        .map(text_or_file)
        .transpose()?;
    let appended: Vec<String> = args
        .append_system_prompt
        .iter()
        .map(|value| text_or_file(value))
        .collect::<Result<_, _>>()?;
    // pi joins several `--append-system-prompt`s with a blank line.
    let append_system_prompt = (!appended.is_empty()).then(|| appended.join("\n\n"));
    let cwd_text = cwd.display().to_string();
    let existing = if let Some(target) = &args.session {
        Some(pi_sessions::resolve(client, target, cwd, args.session_dir.as_deref()).await?)
    } else if let Some(source) = &args.fork {
        Some(pi_sessions::fork(client, source, cwd, args.session_dir.as_deref()).await?)
    } else if args.continue_session && !args.no_session {
        // (pi: `--no-session` wins over `-c`, a new session kept in memory.)
        pi_sessions::newest(client, cwd, args.session_dir.as_deref()).await?
    } else {
        None
    };
    if let Some(session) = existing {
        refuse_new_session_options(
            args,
            system_prompt.is_some() || append_system_prompt.is_some(),
        )?;
        if let Some(spec) = model_spec(client, args, None).await?.0 {
            let changed = client
                .call::<SessionSetModel>(&SessionSetModelParams {
                    session_id: session.id.clone(),
                    model: spec,
                })
                .await
                .map_err(model_error)?;
            print_warnings(&changed.warnings);
        }
        if let Some(level) = thinking {
            client
                .call::<SessionSetThinking>(&SessionSetThinkingParams {
                    session_id: session.id.clone(),
                    level: level.clone(),
                })
                .await?;
        }
        return Ok(OpenedSession {
            created: args.fork.is_some(),
            info: session,
        });
    }
    // `--provider` alone naming a provider the daemon does not have: perhaps one the new
    // session's extensions register, chosen once it exists.
    let (model, scoped_thinking, provider_later) = match model_spec(client, args, Some(cwd)).await {
        Err(error) if args.provider.is_some() && args.model.is_none() => (None, None, Some(error)),
        chosen => {
            let (model, thinking) = chosen?;
            (model, thinking, None)
        }
    };
    // pi's `--tools` allows those names among all tools; `--no-tools` none; and
    // `--no-builtin-tools` leaves the extensions' tools.
    let (tools, tool_allowlist) = match (&args.tools, args.no_tools, args.no_builtin_tools) {
        (Some(names), _, _) => (None, Some(names.clone())),
        (None, true, _) => (None, Some(Vec::new())),
        (None, false, true) => (Some(Vec::new()), None),
        (None, false, false) => (None, None),
    };
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    if args.offline {
        env.insert("PI_OFFLINE".to_owned(), "1".to_owned());
    }
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd_text,
            env: Some(env),
            model,
            thinking: thinking.cloned().or(scoped_thinking),
            tools,
            tool_allowlist,
            name: None,
            system_prompt,
            append_system_prompt,
            no_skills: args.no_skills,
            skills: args.skills.clone(),
            prompt_templates: args.prompt_templates.clone(),
            no_prompt_templates: args.no_prompt_templates,
            no_context_files: args.no_context_files,
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
                return Ok(OpenedSession {
                    info: SessionInfo {
                        model: Some(pi_protocol::v1::ModelRef {
                            provider: changed.model.provider,
                            id: changed.model.id,
                        }),
                        thinking_level: changed.thinking_level,
                        ..created
                    },
                    created: true,
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
    Ok(OpenedSession {
        info: created,
        created: true,
    })
}

/// An existing session keeps what it was created with: the options that shape a new one are
/// refused with it.
fn refuse_new_session_options(args: &SessionOptions, prompt_given: bool) -> Result<(), CliError> {
    if args.tools.is_some() || args.no_tools || args.no_builtin_tools {
        return Err(CliError::usage(
            "--tools, --no-tools and --no-builtin-tools apply to new sessions; an existing \
             session keeps its tools",
        ));
    }
    if prompt_given {
        return Err(CliError::usage(
            "--system-prompt and --append-system-prompt apply to new sessions",
        ));
    }
    if !args.skills.is_empty()
        || args.no_skills
        || !args.prompt_templates.is_empty()
        || args.no_prompt_templates
        || args.no_context_files
    {
        return Err(CliError::usage(
            "--skill, --no-skills, --prompt-template, --no-prompt-templates and \
             --no-context-files apply to new sessions; an existing session keeps its resources",
        ));
    }
    let chosen = &args.extensions;
    if !chosen.extensions.is_empty() || chosen.no_extensions || !chosen.extension_flags.is_empty() {
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
    Ok(())
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
    new_session: Option<&std::path::Path>,
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
        // pi's model scope picks the model of a new session only: `--models`, else the
        // settings' `enabledModels`; the default model when it is in scope, else the first.
        (None, None) => {
            let Some(cwd) = new_session else {
                return Ok((None, None));
            };
            let settings = daemon_client::settings_of(client, cwd).await;
            let patterns = if args.models.is_empty() {
                settings
                    .as_ref()
                    .map(|settings| settings.enabled_models.clone())
                    .unwrap_or_default()
            } else {
                args.models.clone()
            };
            if patterns.is_empty() {
                return Ok((None, None));
            }
            let models = daemon_client::models_with_keys(client).await?;
            let scoped = model_scope::scoped_models(&patterns, &models);
            let default = settings.as_ref().and_then(|settings| {
                scoped.iter().find(|scoped| {
                    settings.default_model.as_deref() == Some(scoped.model.id.as_str())
                        && settings
                            .default_provider
                            .as_deref()
                            .is_none_or(|provider| provider == scoped.model.provider)
                })
            });
            let chosen = match default.or(scoped.first()) {
                Some(chosen) => chosen.clone(),
                None if args.models.is_empty() => return Ok((None, None)),
                None => {
                    return Err(CliError::failed(format!(
                        "no model with a key matches --models {}",
                        args.models.join(",")
                    ))
                    .with_hint("`pictl models` lists the models and which have a key"));
                }
            };
            Ok((
                Some(format!("{}/{}", chosen.model.provider, chosen.model.id)),
                chosen.thinking,
            ))
        }
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
            env_names: pi_client::env_names(),
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
