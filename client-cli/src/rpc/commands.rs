//! pi's RPC commands, each mapped to daemon methods.
//!
//! A line is parsed into a [`PiCommand`] (serde, tagged by `type`; pi's camelCase field
//! names), then handled. A handler gets the bridge's current state ([`Bridge`]) and the command, and returns
//! the response line and, for `new_session`, `switch_session` and `fork`, the session to
//! switch to. Errors always carry the command's `id` and name (pi reports most of them as an
//! id-less `parse` error).

use std::path::PathBuf;

use pi_client::{Client, ClientError};
use pi_protocol::ErrorKind;
use pi_protocol::v1::message::{
    AgentMessage, AssistantContent, ImageContent, StopReason, UserContent,
};
use pi_protocol::v1::{
    ExportFormat, ModelInfo, ModelList, ModelListParams, ReadScope, SessionAbort,
    SessionAbortRetry, SessionBash, SessionBashParams, SessionBeforeSwitch,
    SessionBeforeSwitchParams, SessionCompact, SessionCompactParams, SessionCreate,
    SessionCreateParams, SessionEntry, SessionEntryParams, SessionExport, SessionExportParams,
    SessionFollowUp, SessionFork, SessionGet, SessionIdParams, SessionImport, SessionImportParams,
    SessionInfo, SessionMessageParams, SessionPrompt, SessionRead, SessionReadParams,
    SessionSetModel, SessionSetModelParams, SessionSetName, SessionSetNameParams,
    SessionSetThinking, SessionSetThinkingParams, SessionStats, SessionSteer, SettingsGet,
    SettingsGetParams, SettingsSetDefault, SettingsSetDefaultParams, SwitchReason,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::commands::sessions::branch;
use crate::daemon_client::find_session;
use crate::rpc::shapes::{context_messages, failure, pi_model, success};
use pi_client::model_scope;

/// What a command handler sees of the bridge.
#[derive(Clone, Debug)]
pub struct Bridge {
    /// The daemon connection.
    pub client: Client,
    /// The session commands act on.
    pub session: SessionInfo,
    /// The bridge's working directory (relative `export_html` paths).
    pub cwd: PathBuf,
    /// `--models` patterns, the cycle of `cycle_model`.
    pub scope: Vec<String>,
    /// Whether a run is active (from the event stream).
    pub streaming: bool,
    /// Whether a compaction is running (from the event stream).
    pub compacting: bool,
    /// The bridge's choice of pi extensions (`-e`, `--no-extensions`, extension flags),
    /// for the sessions `new_session` starts.
    pub extensions: Extensions,
}

/// What sessions the bridge starts load besides and instead of the configured extensions.
#[derive(Clone, Debug, Default)]
pub struct Extensions {
    /// `-e` sources.
    pub paths: Vec<String>,
    /// `--no-extensions`.
    pub none_configured: bool,
    /// Extension flags.
    pub flags: std::collections::BTreeMap<String, serde_json::Value>,
}

/// A command's answer.
#[derive(Debug)]
pub struct Outcome {
    /// The response line.
    pub response: Value,
    /// The session to switch to afterwards.
    pub switch_to: Option<SessionInfo>,
    /// A prompt that started a run: events follow up to `agent_end` (`false` for everything
    /// else, and for a prompt an extension took).
    pub started: bool,
}

/// One of pi's RPC commands, by its `type` (other fields of the line, like `id`, are the
/// envelope's).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PiCommand {
    Prompt(Message),
    Steer(Message),
    FollowUp(Message),
    Abort,
    NewSession,
    GetState,
    SetModel {
        provider: String,
        #[serde(rename = "modelId")]
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    GetSessionStats,
    ExportHtml {
        #[serde(rename = "outputPath")]
        output_path: Option<String>,
    },
    SwitchSession {
        #[serde(rename = "sessionPath")]
        session_path: String,
    },
    Fork {
        #[serde(rename = "entryId")]
        entry_id: String,
    },
    GetForkMessages,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetMessages,
    Compact {
        #[serde(rename = "customInstructions")]
        custom_instructions: Option<String>,
    },
    AbortRetry,
    Bash {
        command: String,
    },
    AbortBash,
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    SetSteeringMode {
        mode: String,
    },
    SetFollowUpMode {
        mode: String,
    },
    Clone,
    GetCommands,
    /// A type pi does not have.
    #[serde(other)]
    Unknown,
}

/// What `prompt`, `steer` and `follow_up` send.
#[derive(Debug, Deserialize)]
struct Message {
    message: String,
    #[serde(default)]
    images: Option<Vec<ImageContent>>,
    /// What a prompt does while a run is active (`steer`, `followUp`); else it fails.
    #[serde(rename = "streamingBehavior", default)]
    streaming_behavior: Option<String>,
}

impl Message {
    fn params(self, session_id: &str) -> SessionMessageParams {
        SessionMessageParams {
            session_id: session_id.to_owned(),
            text: self.message,
            images: self.images.unwrap_or_default(),
        }
    }
}

/// Handles one command.
pub async fn handle(bridge: Bridge, command: Value) -> Outcome {
    let id = command.get("id").cloned();
    let kind = command["type"].as_str().unwrap_or_default().to_owned();
    let mut started = false;
    let handled = match PiCommand::deserialize(&command) {
        Ok(PiCommand::Unknown) => Err(format!("Unknown command: {kind}")),
        Ok(PiCommand::Prompt(message)) => prompt(&bridge, message).await.map(|ran| {
            started = ran;
            (None, None)
        }),
        Ok(parsed) => dispatch(&bridge, parsed).await,
        Err(error) => Err(error.to_string()),
    };
    match handled {
        Ok((data, switch_to)) => Outcome {
            response: success(id.as_ref(), &kind, data),
            switch_to,
            started,
        },
        Err(message) => Outcome {
            response: failure(id.as_ref(), &kind, message),
            switch_to: None,
            started: false,
        },
    }
}

type Handled = Result<(Option<Value>, Option<SessionInfo>), String>;

/// Runs one command: one arm each, the work in the functions below.
async fn dispatch(bridge: &Bridge, command: PiCommand) -> Handled {
    let client = &bridge.client;
    let session = || SessionIdParams {
        session_id: bridge.session.id.clone(),
    };
    let data = |data: Value| (Some(data), None);
    match command {
        PiCommand::Prompt(message) => prompt(bridge, message).await.map(|_| (None, None)),
        PiCommand::Steer(message) => done(
            client
                .call::<SessionSteer>(&message.params(&session().session_id))
                .await,
        ),
        PiCommand::FollowUp(message) => done(
            client
                .call::<SessionFollowUp>(&message.params(&session().session_id))
                .await,
        ),
        PiCommand::Abort => done(client.call::<SessionAbort>(&session()).await),
        PiCommand::NewSession => new_session(bridge).await,
        PiCommand::GetState => get_state(bridge).await.map(data),
        PiCommand::SetModel { provider, model_id } => {
            set_model(bridge, provider, model_id).await.map(data)
        }
        PiCommand::CycleModel => cycle_model(bridge).await.map(data),
        PiCommand::GetAvailableModels => {
            let models: Vec<Value> = available_models(client, &bridge.session.id)
                .await?
                .iter()
                .map(pi_model)
                .collect();
            Ok(data(json!({ "models": models })))
        }
        PiCommand::SetThinkingLevel { level } => done(
            client
                .call::<SessionSetThinking>(&SessionSetThinkingParams {
                    session_id: session().session_id,
                    level,
                })
                .await,
        ),
        PiCommand::CycleThinkingLevel => cycle_thinking(bridge).await.map(data),
        PiCommand::GetSessionStats => {
            let stats = client
                .call::<SessionStats>(&session())
                .await
                .map_err(text)?;
            Ok(data(serde_json::to_value(stats).unwrap_or_default()))
        }
        PiCommand::ExportHtml { output_path } => export_html(bridge, output_path).await.map(data),
        PiCommand::SwitchSession { session_path } => {
            let session = switch_target(client, &bridge.cwd, &session_path).await?;
            if stays(bridge, SwitchReason::Resume, Some(session.id.clone())).await? {
                return Ok((Some(json!({"cancelled": true})), None));
            }
            Ok((Some(json!({"cancelled": false})), Some(session)))
        }
        PiCommand::Fork { entry_id } => fork(bridge, entry_id).await,
        PiCommand::GetForkMessages => {
            let messages = fork_messages(client, &bridge.session.id).await?;
            Ok(data(json!({ "messages": messages })))
        }
        PiCommand::GetLastAssistantText => {
            let text = last_assistant_text(&stored_branch(bridge).await?);
            Ok(data(
                text.map_or_else(|| json!({}), |text| json!({ "text": text })),
            ))
        }
        PiCommand::SetSessionName { name } => set_session_name(bridge, name).await,
        PiCommand::GetMessages => {
            let messages = context_messages(&stored_branch(bridge).await?);
            Ok(data(json!({ "messages": messages })))
        }
        PiCommand::Compact {
            custom_instructions,
        } => compact(bridge, custom_instructions).await.map(data),
        PiCommand::AbortRetry => done(client.call::<SessionAbortRetry>(&session()).await),
        PiCommand::Bash { command } => bash(bridge, command).await.map(data),
        // The daemon kills a session's shell command with `session/abort` (which also aborts a
        // run in progress).
        PiCommand::AbortBash => done(client.call::<SessionAbort>(&session()).await),
        // pi writes these to the global settings, and so does the bridge.
        PiCommand::SetAutoCompaction { enabled } => {
            set_default(client, json!({"compaction": {"enabled": enabled}})).await
        }
        PiCommand::SetAutoRetry { enabled } => {
            set_default(client, json!({"retry": {"enabled": enabled}})).await
        }
        PiCommand::SetSteeringMode { mode } => {
            set_default(client, json!({ "steeringMode": queue_mode(mode)? })).await
        }
        PiCommand::SetFollowUpMode { mode } => {
            set_default(client, json!({ "followUpMode": queue_mode(mode)? })).await
        }
        PiCommand::Clone => {
            let cloned = clone_session(client, &bridge.session.id).await?;
            Ok((Some(json!({"cancelled": false})), Some(cloned)))
        }
        PiCommand::GetCommands => get_commands(bridge).await.map(data),
        PiCommand::Unknown => Err("Unknown command".to_owned()),
    }
}

/// A command whose daemon call answers nothing pi shows.
fn done<T>(called: Result<T, ClientError>) -> Handled {
    called.map(|_| (None, None)).map_err(text)
}

/// The session's current branch as stored.
async fn stored_branch(bridge: &Bridge) -> Result<Vec<SessionEntry>, String> {
    branch(&bridge.client, &bridge.session.id)
        .await
        .map_err(|e| e.message().to_owned())
}

/// pi's `session_before_switch`: whether the current session's extensions keep the bridge
/// where it is.
async fn stays(
    bridge: &Bridge,
    reason: SwitchReason,
    target: Option<String>,
) -> Result<bool, String> {
    Ok(bridge
        .client
        .call::<SessionBeforeSwitch>(&SessionBeforeSwitchParams {
            session_id: bridge.session.id.clone(),
            reason,
            target_session_id: target,
        })
        .await
        .map_err(text)?
        .cancelled)
}

/// `new_session`: a session like the current one (directory, model, thinking), switched to
/// unless the current session's extensions keep the bridge there.
async fn new_session(bridge: &Bridge) -> Handled {
    if stays(bridge, SwitchReason::New, None).await? {
        return Ok((Some(json!({"cancelled": true})), None));
    }
    let session = &current_info(bridge).await?;
    let created = bridge
        .client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: session.cwd.clone(),
            env: Some(std::env::vars().collect()),
            model: session
                .model
                .as_ref()
                .map(|model| format!("{}/{}", model.provider, model.id)),
            thinking: Some(session.thinking_level.clone()),
            extensions: bridge.extensions.paths.clone(),
            no_extensions: bridge.extensions.none_configured,
            extension_flags: bridge.extensions.flags.clone(),
            ..SessionCreateParams::default()
        })
        .await
        .map_err(text)?;
    Ok((Some(json!({"cancelled": false})), Some(created)))
}

/// `export_html`: to `output_path` (relative to the bridge's directory) or pi's default name.
async fn export_html(bridge: &Bridge, output_path: Option<String>) -> Result<Value, String> {
    let session_id = bridge.session.id.clone();
    let path = match output_path {
        Some(path) => bridge.cwd.join(path),
        None => bridge.cwd.join(format!("pi-session-{session_id}.html")),
    };
    let exported = bridge
        .client
        .call::<SessionExport>(&SessionExportParams {
            session_id,
            format: ExportFormat::Html,
            path: Some(path.display().to_string()),
        })
        .await
        .map_err(text)?;
    Ok(json!({ "path": exported.path }))
}

/// `fork`: a new session from before `entry_id`, switched to; its text is the forked
/// message's.
async fn fork(bridge: &Bridge, entry_id: String) -> Handled {
    let forked = match bridge
        .client
        .call::<SessionFork>(&SessionEntryParams {
            session_id: bridge.session.id.clone(),
            entry_id,
        })
        .await
    {
        Ok(forked) => forked,
        // pi answers a fork its extensions cancelled as a success that says so.
        Err(error) if error.rpc_kind() == Some(pi_protocol::ErrorKind::Cancelled) => {
            return Ok((Some(json!({"cancelled": true})), None));
        }
        Err(error) => return Err(text(error)),
    };
    Ok((
        Some(json!({"text": forked.text, "cancelled": false})),
        Some(forked.session),
    ))
}

async fn set_session_name(bridge: &Bridge, name: String) -> Handled {
    if name.trim().is_empty() {
        return Err("Session name cannot be empty".to_owned());
    }
    done(
        bridge
            .client
            .call::<SessionSetName>(&SessionSetNameParams {
                session_id: bridge.session.id.clone(),
                name,
            })
            .await,
    )
}

async fn compact(bridge: &Bridge, instructions: Option<String>) -> Result<Value, String> {
    let compacted = bridge
        .client
        .call::<SessionCompact>(&SessionCompactParams {
            session_id: bridge.session.id.clone(),
            instructions,
        })
        .await
        .map_err(text)?;
    match compacted.result {
        Some(result) => Ok(serde_json::to_value(result).unwrap_or_default()),
        None => Err("Compaction cancelled".to_owned()),
    }
}

/// `bash`: pi's `BashResult` (without the daemon's entry id).
async fn bash(bridge: &Bridge, command: String) -> Result<Value, String> {
    let ran = bridge
        .client
        .call::<SessionBash>(&SessionBashParams {
            session_id: bridge.session.id.clone(),
            command,
            exclude_from_context: false,
        })
        .await
        .map_err(text)?;
    let mut data = serde_json::to_value(ran).unwrap_or_default();
    if let Some(object) = data.as_object_mut() {
        object.shift_remove("entryId");
    }
    Ok(data)
}

/// Sends a prompt (or, while the session is busy, queues it as `streamingBehavior` says);
/// `true` when a run follows (events up to `agent_end`).
async fn prompt(bridge: &Bridge, message: Message) -> Result<bool, String> {
    let behaviour = message.streaming_behavior.clone();
    let params = message.params(&bridge.session.id);
    let client = &bridge.client;
    match client.call::<SessionPrompt>(&params).await {
        Ok(sent) => Ok(sent.started),
        Err(error) if error.rpc_kind() == Some(ErrorKind::Busy) => match behaviour.as_deref() {
            Some("steer") => client.call::<SessionSteer>(&params).await.map(|_| false),
            Some("followUp") => client.call::<SessionFollowUp>(&params).await.map(|_| false),
            _ => {
                return Err(
                    "Agent is already processing. Specify streamingBehavior ('steer' \
                                or 'followUp') to queue the message."
                        .to_owned(),
                );
            }
        }
        .map_err(text),
        Err(error) => Err(text(error)),
    }
}

/// pi's `get_commands`: the session's extensions' commands (`source: "extension"`), prompt
/// templates (`source: "prompt"`) and skills (`skill:name`, `source: "skill"`), as the
/// daemon lists them in `session/get`.
async fn get_commands(bridge: &Bridge) -> Result<Value, String> {
    let details = bridge
        .client
        .call::<SessionGet>(&SessionIdParams {
            session_id: bridge.session.id.clone(),
        })
        .await
        .map_err(text)?;
    let commands: Vec<Value> = details
        .commands
        .iter()
        .map(|command| {
            let source = match command.source.as_str() {
                "template" => "prompt",
                other => other,
            };
            json!({"name": command.name, "description": command.description, "source": source})
        })
        .collect();
    Ok(json!({ "commands": commands }))
}

async fn get_state(bridge: &Bridge) -> Result<Value, String> {
    let client = &bridge.client;
    let details = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: bridge.session.id.clone(),
        })
        .await
        .map_err(text)?;
    let info = &details.info;
    let entries = branch(client, &info.id)
        .await
        .map_err(|e| e.message().to_owned())?;
    let settings = client
        .call::<SettingsGet>(&SettingsGetParams {
            cwd: Some(info.cwd.clone()),
        })
        .await
        .map_err(text)?
        .settings;
    let mut state = json!({
        "thinkingLevel": info.thinking_level,
        "isStreaming": bridge.streaming,
        "isCompacting": bridge.compacting,
        "steeringMode": settings.steering_mode,
        "followUpMode": settings.follow_up_mode,
        "sessionId": info.id,
        "autoCompactionEnabled": settings.compaction.enabled,
        "messageCount": context_messages(&entries).len(),
        "pendingMessageCount": details.queue.steering.len() + details.queue.follow_up.len(),
    });
    if let Some(model) = &info.model {
        // With the session's extensions' providers.
        let models = client
            .call::<ModelList>(&ModelListParams {
                available_only: false,
                session_id: Some(info.id.clone()),
                env_names: pi_client::env_names(),
            })
            .await
            .map_err(text)?
            .models;
        if let Some(found) = models
            .iter()
            .find(|m| m.provider == model.provider && m.id == model.id)
        {
            state["model"] = pi_model(found);
        }
    }
    if let Some(name) = &info.name {
        state["sessionName"] = json!(name);
    }
    Ok(state)
}

async fn set_model(bridge: &Bridge, provider: String, model_id: String) -> Result<Value, String> {
    let available = available_models(&bridge.client, &bridge.session.id).await?;
    if !available
        .iter()
        .any(|model| model.provider == provider && model.id == model_id)
    {
        return Err(format!("Model not found: {provider}/{model_id}"));
    }
    let changed = bridge
        .client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: bridge.session.id.clone(),
            model: format!("{provider}/{model_id}"),
        })
        .await
        .map_err(text)?;
    Ok(pi_model(&changed.model))
}

async fn cycle_model(bridge: &Bridge) -> Result<Value, String> {
    let available = available_models(&bridge.client, &bridge.session.id).await?;
    let scoped = model_scope::scoped_models(&bridge.scope, &available);
    let is_scoped = !scoped.is_empty();
    let candidates: Vec<model_scope::Scoped> = if is_scoped {
        scoped
    } else {
        available
            .into_iter()
            .map(|model| model_scope::Scoped {
                model,
                thinking: None,
            })
            .collect()
    };
    if candidates.len() <= 1 {
        return Ok(Value::Null);
    }
    let info = current_info(bridge).await?;
    let current = candidates.iter().position(|candidate| {
        info.model.as_ref().is_some_and(|model| {
            model.provider == candidate.model.provider && model.id == candidate.model.id
        })
    });
    let next = &candidates[current.map_or(0, |index| (index + 1) % candidates.len())];
    let spec = match &next.thinking {
        Some(level) => format!("{}/{}:{level}", next.model.provider, next.model.id),
        None => format!("{}/{}", next.model.provider, next.model.id),
    };
    let changed = bridge
        .client
        .call::<SessionSetModel>(&SessionSetModelParams {
            session_id: bridge.session.id.clone(),
            model: spec,
        })
        .await
        .map_err(text)?;
    Ok(json!({
        "model": pi_model(&changed.model),
        "thinkingLevel": changed.thinking_level,
        "isScoped": is_scoped,
    }))
}

async fn cycle_thinking(bridge: &Bridge) -> Result<Value, String> {
    const ORDER: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];
    let client = &bridge.client;
    let details = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: bridge.session.id.clone(),
        })
        .await
        .map_err(text)?;
    let Some(model) = &details.info.model else {
        return Ok(Value::Null);
    };
    let models = client
        .call::<ModelList>(&ModelListParams::default())
        .await
        .map_err(text)?
        .models;
    let reasoning = models
        .iter()
        .find(|m| m.provider == model.provider && m.id == model.id)
        .is_some_and(|m| m.reasoning);
    if !reasoning {
        return Ok(Value::Null);
    }
    let current = details.info.thinking_level.clone();
    let start = ORDER
        .iter()
        .position(|level| *level == current)
        .unwrap_or(0);
    // The daemon clamps a level the model lacks (xhigh) to the nearest one; a clamp back to
    // where we were means "skip it".
    for step in 1..ORDER.len() {
        let level = ORDER[(start + step) % ORDER.len()];
        let set = client
            .call::<SessionSetThinking>(&SessionSetThinkingParams {
                session_id: bridge.session.id.clone(),
                level: level.to_owned(),
            })
            .await
            .map_err(text)?;
        if set.level == level {
            return Ok(json!({ "level": set.level }));
        }
    }
    Ok(json!({ "level": current }))
}

/// The session's metadata now (the bridge's copy may predate a model change).
async fn current_info(bridge: &Bridge) -> Result<SessionInfo, String> {
    Ok(bridge
        .client
        .call::<SessionGet>(&SessionIdParams {
            session_id: bridge.session.id.clone(),
        })
        .await
        .map_err(text)?
        .info)
}

/// The models with a key, the session's extensions' providers' too.
async fn available_models(client: &Client, session_id: &str) -> Result<Vec<ModelInfo>, String> {
    Ok(client
        .call::<ModelList>(&ModelListParams {
            available_only: true,
            session_id: Some(session_id.to_owned()),
            env_names: pi_client::env_names(),
        })
        .await
        .map_err(text)?
        .models)
}

/// `switch_session`'s target: a pi session file (the daemon's copy when it was imported
/// before, else imported now), or a session id or unique prefix.
async fn switch_target(
    client: &Client,
    cwd: &std::path::Path,
    target: &str,
) -> Result<SessionInfo, String> {
    let path = cwd.join(target);
    if path.is_file() {
        let header = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.lines().next().map(str::to_owned))
            .and_then(|line| serde_json::from_str::<Value>(&line).ok());
        if let Some(id) = header.as_ref().and_then(|h| h["id"].as_str())
            && let Ok(session) = find_session(client, id).await
        {
            return Ok(session);
        }
        // pi's `switch_session` opens the file: the daemon session is the file's.
        return client
            .call::<SessionImport>(&SessionImportParams {
                path: path.display().to_string(),
                link: true,
            })
            .await
            .map_err(text);
    }
    // pi's file names end in `_<uuid>.jsonl`.
    let id = target
        .rsplit('/')
        .next()
        .and_then(|name| name.strip_suffix(".jsonl"))
        .map(|stem| stem.rsplit('_').next().unwrap_or(stem))
        .unwrap_or(target);
    find_session(client, id)
        .await
        .map_err(|error| error.message().to_owned())
}

async fn fork_messages(client: &Client, session_id: &str) -> Result<Vec<Value>, String> {
    let mut messages = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.to_owned(),
                scope: ReadScope::Tree,
                limit: Some(1000),
                cursor,
            })
            .await
            .map_err(text)?;
        for record in page.entries {
            if let SessionEntry::Message {
                id,
                message: AgentMessage::User(user),
                ..
            } = record.entry
            {
                messages.push(json!({"entryId": id, "text": user_text(&user.content)}));
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(messages),
        }
    }
}

/// The text of the last assistant message with any, skipping empty aborted ones (pi's rule).
fn last_assistant_text(entries: &[SessionEntry]) -> Option<String> {
    entries.iter().rev().find_map(|entry| match entry {
        SessionEntry::Message {
            message: AgentMessage::Assistant(message),
            ..
        } => {
            let text: String = message
                .content
                .iter()
                .filter_map(|block| match block {
                    AssistantContent::Text(text) => Some(text.text.as_str()),
                    AssistantContent::Thinking(_) | AssistantContent::ToolCall(_) => None,
                })
                .collect();
            let text = text.trim().to_owned();
            if text.is_empty() && message.stop_reason == StopReason::Aborted {
                None
            } else {
                Some(text).filter(|text| !text.is_empty())
            }
        }
        _ => None,
    })
}

fn user_text(content: &[UserContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes global defaults (`settings/setDefault`).
async fn set_default(client: &Client, values: Value) -> Handled {
    client
        .call::<SettingsSetDefault>(&SettingsSetDefaultParams {
            values: values.as_object().cloned().unwrap_or_default(),
            unset: Vec::new(),
            ..SettingsSetDefaultParams::default()
        })
        .await
        .map_err(text)?;
    Ok((None, None))
}

/// pi's `clone`: a copy of the whole session (export, then import as a new session; ids and
/// timestamps are kept, the leaf is the last entry).
async fn clone_session(client: &Client, session_id: &str) -> Result<SessionInfo, String> {
    let file = tempfile_path(session_id);
    client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session_id.to_owned(),
            format: ExportFormat::Jsonl,
            path: Some(file.display().to_string()),
        })
        .await
        .map_err(text)?;
    let imported = client
        .call::<SessionImport>(&SessionImportParams {
            path: file.display().to_string(),
            link: false,
        })
        .await
        .map_err(text);
    let _ = std::fs::remove_file(&file);
    imported
}

fn tempfile_path(session_id: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "pictl-clone-{session_id}-{}.jsonl",
        std::process::id()
    ))
}

fn queue_mode(mode: String) -> Result<String, String> {
    match mode.as_str() {
        "all" | "one-at-a-time" => Ok(mode),
        _ => Err(format!(
            "mode must be \"all\" or \"one-at-a-time\", not {mode:?}"
        )),
    }
}

/// A daemon error as the sentence pi clients show.
fn text(error: ClientError) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_by_type_with_pis_field_names() {
        let parse = |line: Value| PiCommand::deserialize(&line).map_err(|e| e.to_string());
        assert!(matches!(
            parse(json!({"id": "1", "type": "set_model", "provider": "p", "modelId": "m"})),
            Ok(PiCommand::SetModel { provider, model_id }) if provider == "p" && model_id == "m"
        ));
        assert!(matches!(
            parse(json!({"type": "prompt", "message": "hi", "images": null, "streamingBehavior": "steer"})),
            Ok(PiCommand::Prompt(Message { message, images: None, streaming_behavior: Some(b) }))
                if message == "hi" && b == "steer"
        ));
        assert!(matches!(
            parse(json!({"type": "export_html"})),
            Ok(PiCommand::ExportHtml { output_path: None })
        ));
        assert!(matches!(
            parse(json!({"type": "frobnicate"})),
            Ok(PiCommand::Unknown)
        ));
        assert_eq!(
            parse(json!({"type": "set_thinking_level"}))
                .err()
                .as_deref(),
            Some("missing field `level`")
        );
        assert_eq!(
            parse(json!({"type": "set_auto_retry", "enabled": "yes"}))
                .err()
                .as_deref(),
            Some("invalid type: string \"yes\", expected a boolean")
        );
    }

    #[test]
    fn the_last_assistant_text_skips_empty_aborted_messages() {
        let entries: Vec<SessionEntry> = serde_json::from_value(json!([
            {"type": "message", "id": "a", "parentId": null, "timestamp": "2026-03-15T10:00:00.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": " Hello \n"}],
                         "api": "x", "provider": "p", "model": "m", "usage": {"input": 0, "output": 0,
                         "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0,
                         "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                         "stopReason": "stop", "timestamp": 1}},
            {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-03-15T10:00:00.000Z",
             "message": {"role": "assistant", "content": [],
                         "api": "x", "provider": "p", "model": "m", "usage": {"input": 0, "output": 0,
                         "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0,
                         "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                         "stopReason": "aborted", "timestamp": 2}},
        ]))
        .unwrap();
        assert_eq!(last_assistant_text(&entries).as_deref(), Some("Hello"));
        assert_eq!(last_assistant_text(&[]), None);
    }
}
