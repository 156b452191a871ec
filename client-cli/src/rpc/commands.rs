//! pi's RPC commands, each mapped to daemon methods.
//!
//! A handler gets the bridge's current state ([`Bridge`]) and one parsed command, and returns
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
    SessionAbortRetry, SessionBash, SessionBashParams, SessionCompact, SessionCompactParams,
    SessionCreate, SessionCreateParams, SessionEntry, SessionEntryParams, SessionExport,
    SessionExportParams, SessionFollowUp, SessionFork, SessionGet, SessionIdParams, SessionImport,
    SessionImportParams, SessionInfo, SessionMessageParams, SessionPrompt, SessionRead,
    SessionReadParams, SessionSetModel, SessionSetModelParams, SessionSetName,
    SessionSetNameParams, SessionSetThinking, SessionSetThinkingParams, SessionStats, SessionSteer,
    SettingsGet, SettingsGetParams, SettingsSetDefault, SettingsSetDefaultParams,
};
use serde_json::{Value, json};

use crate::commands::sessions::branch;
use crate::daemon_client::find_session;
use crate::model_scope;
use crate::rpc::shapes::{context_messages, failure, pi_model, success};

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
}

/// A command's answer.
#[derive(Debug)]
pub struct Outcome {
    /// The response line.
    pub response: Value,
    /// The session to switch to afterwards.
    pub switch_to: Option<SessionInfo>,
}

/// Handles one command.
pub async fn handle(bridge: Bridge, command: Value) -> Outcome {
    let id = command.get("id").cloned();
    let kind = command["type"].as_str().unwrap_or_default().to_owned();
    match dispatch(&bridge, &kind, &command).await {
        Ok((data, switch_to)) => Outcome {
            response: success(id.as_ref(), &kind, data),
            switch_to,
        },
        Err(message) => Outcome {
            response: failure(id.as_ref(), &kind, message),
            switch_to: None,
        },
    }
}

type Handled = Result<(Option<Value>, Option<SessionInfo>), String>;

async fn dispatch(bridge: &Bridge, kind: &str, command: &Value) -> Handled {
    let client = &bridge.client;
    let session_id = bridge.session.id.clone();
    let none = |_: ()| (None, None);
    match kind {
        "prompt" => prompt(bridge, command).await.map(none),
        "steer" => {
            let params = message_params(&session_id, command)?;
            client.call::<SessionSteer>(&params).await.map_err(text)?;
            Ok((None, None))
        }
        "follow_up" => {
            let params = message_params(&session_id, command)?;
            client
                .call::<SessionFollowUp>(&params)
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        "abort" => {
            client
                .call::<SessionAbort>(&SessionIdParams { session_id })
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        "new_session" => {
            let session = &current_info(bridge).await?;
            let created = client
                .call::<SessionCreate>(&SessionCreateParams {
                    cwd: session.cwd.clone(),
                    env: Some(std::env::vars().collect()),
                    model: session
                        .model
                        .as_ref()
                        .map(|model| format!("{}/{}", model.provider, model.id)),
                    thinking: Some(session.thinking_level.clone()),
                    ..SessionCreateParams::default()
                })
                .await
                .map_err(text)?;
            Ok((Some(json!({"cancelled": false})), Some(created)))
        }
        "get_state" => get_state(bridge).await.map(|data| (Some(data), None)),
        "set_model" => set_model(bridge, command)
            .await
            .map(|data| (Some(data), None)),
        "cycle_model" => cycle_model(bridge).await.map(|data| (Some(data), None)),
        "get_available_models" => {
            let models = available_models(client).await?;
            let models: Vec<Value> = models.iter().map(pi_model).collect();
            Ok((Some(json!({ "models": models })), None))
        }
        "set_thinking_level" => {
            let level = string_field(command, "level")?;
            client
                .call::<SessionSetThinking>(&SessionSetThinkingParams { session_id, level })
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        "cycle_thinking_level" => cycle_thinking(bridge).await.map(|data| (Some(data), None)),
        "get_session_stats" => {
            let stats = client
                .call::<SessionStats>(&SessionIdParams { session_id })
                .await
                .map_err(text)?;
            Ok((Some(serde_json::to_value(stats).unwrap_or_default()), None))
        }
        "export_html" => {
            let path = match command["outputPath"].as_str() {
                Some(path) => bridge.cwd.join(path),
                None => bridge.cwd.join(format!("pi-session-{session_id}.html")),
            };
            let exported = client
                .call::<SessionExport>(&SessionExportParams {
                    session_id,
                    format: ExportFormat::Html,
                    path: Some(path.display().to_string()),
                })
                .await
                .map_err(text)?;
            Ok((Some(json!({ "path": exported.path })), None))
        }
        "switch_session" => {
            let target = string_field(command, "sessionPath")?;
            let session = switch_target(client, &bridge.cwd, &target).await?;
            Ok((Some(json!({"cancelled": false})), Some(session)))
        }
        "fork" => {
            let entry_id = string_field(command, "entryId")?;
            let forked = client
                .call::<SessionFork>(&SessionEntryParams {
                    session_id,
                    entry_id,
                })
                .await
                .map_err(text)?;
            Ok((
                Some(json!({"text": forked.text, "cancelled": false})),
                Some(forked.session),
            ))
        }
        "get_fork_messages" => {
            let messages = fork_messages(client, &session_id).await?;
            Ok((Some(json!({ "messages": messages })), None))
        }
        "get_last_assistant_text" => {
            let entries = branch(client, &session_id)
                .await
                .map_err(|e| e.message().to_owned())?;
            let text = last_assistant_text(&entries);
            Ok((
                Some(text.map_or_else(|| json!({}), |text| json!({ "text": text }))),
                None,
            ))
        }
        "set_session_name" => {
            let name = string_field(command, "name")?;
            if name.trim().is_empty() {
                return Err("Session name cannot be empty".to_owned());
            }
            client
                .call::<SessionSetName>(&SessionSetNameParams { session_id, name })
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        "get_messages" => {
            let entries = branch(client, &session_id)
                .await
                .map_err(|e| e.message().to_owned())?;
            let messages = context_messages(&entries);
            Ok((Some(json!({ "messages": messages })), None))
        }
        "compact" => {
            let compacted = client
                .call::<SessionCompact>(&SessionCompactParams {
                    session_id,
                    instructions: command["customInstructions"].as_str().map(str::to_owned),
                })
                .await
                .map_err(text)?;
            match compacted.result {
                Some(result) => Ok((Some(serde_json::to_value(result).unwrap_or_default()), None)),
                None => Err("Compaction cancelled".to_owned()),
            }
        }
        "abort_retry" => {
            client
                .call::<SessionAbortRetry>(&SessionIdParams { session_id })
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        "bash" => {
            let ran = client
                .call::<SessionBash>(&SessionBashParams {
                    session_id,
                    command: string_field(command, "command")?,
                    exclude_from_context: false,
                })
                .await
                .map_err(text)?;
            let mut data = serde_json::to_value(ran).unwrap_or_default();
            if let Some(object) = data.as_object_mut() {
                object.shift_remove("entryId");
            }
            Ok((Some(data), None))
        }
        // The daemon kills a session's shell command with `session/abort` (which also aborts a
        // run in progress).
        "abort_bash" => {
            client
                .call::<SessionAbort>(&SessionIdParams { session_id })
                .await
                .map_err(text)?;
            Ok((None, None))
        }
        // pi writes these to the global settings, and so does the bridge.
        "set_auto_compaction" => {
            let enabled = bool_field(command, "enabled")?;
            set_default(client, json!({"compaction": {"enabled": enabled}})).await
        }
        "set_auto_retry" => {
            let enabled = bool_field(command, "enabled")?;
            set_default(client, json!({"retry": {"enabled": enabled}})).await
        }
        "set_steering_mode" => {
            let mode = queue_mode(command)?;
            set_default(client, json!({ "steeringMode": mode })).await
        }
        "set_follow_up_mode" => {
            let mode = queue_mode(command)?;
            set_default(client, json!({ "followUpMode": mode })).await
        }
        "clone" => {
            let cloned = clone_session(client, &session_id).await?;
            Ok((Some(json!({"cancelled": false})), Some(cloned)))
        }
        "get_commands" => get_commands(bridge).await.map(|data| (Some(data), None)),
        other => Err(format!("Unknown command: {other}")),
    }
}

async fn prompt(bridge: &Bridge, command: &Value) -> Result<(), String> {
    let params = message_params(&bridge.session.id, command)?;
    let client = &bridge.client;
    match client.call::<SessionPrompt>(&params).await {
        Ok(_) => Ok(()),
        Err(error) if error.rpc_kind() == Some(ErrorKind::Busy) => {
            match command["streamingBehavior"].as_str() {
                Some("steer") => client.call::<SessionSteer>(&params).await.map(drop),
                Some("followUp") => client.call::<SessionFollowUp>(&params).await.map(drop),
                _ => {
                    return Err(
                        "Agent is already processing. Specify streamingBehavior ('steer' \
                                or 'followUp') to queue the message."
                            .to_owned(),
                    );
                }
            }
            .map_err(text)
        }
        Err(error) => Err(text(error)),
    }
}

/// pi's `get_commands`: the session's prompt templates (`source: "prompt"`) and skills
/// (`skill:name`, `source: "skill"`), as the daemon lists them in `session/get`. There are no
/// extension commands.
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
        let models = client
            .call::<ModelList>(&ModelListParams::default())
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

async fn set_model(bridge: &Bridge, command: &Value) -> Result<Value, String> {
    let provider = string_field(command, "provider")?;
    let model_id = string_field(command, "modelId")?;
    let available = available_models(&bridge.client).await?;
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
    let available = available_models(&bridge.client).await?;
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

async fn available_models(client: &Client) -> Result<Vec<ModelInfo>, String> {
    Ok(client
        .call::<ModelList>(&ModelListParams {
            available_only: true,
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
        return client
            .call::<SessionImport>(&SessionImportParams {
                path: path.display().to_string(),
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

fn message_params(session_id: &str, command: &Value) -> Result<SessionMessageParams, String> {
    let text = string_field(command, "message")?;
    let images: Vec<ImageContent> = match command.get("images") {
        None | Some(Value::Null) => Vec::new(),
        Some(images) => {
            serde_json::from_value(images.clone()).map_err(|error| format!("images: {error}"))?
        }
    };
    Ok(SessionMessageParams {
        session_id: session_id.to_owned(),
        text,
        images,
    })
}

/// Writes global defaults (`settings/setDefault`).
async fn set_default(client: &Client, values: Value) -> Handled {
    client
        .call::<SettingsSetDefault>(&SettingsSetDefaultParams {
            values: values.as_object().cloned().unwrap_or_default(),
            unset: Vec::new(),
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

fn queue_mode(command: &Value) -> Result<String, String> {
    let mode = string_field(command, "mode")?;
    match mode.as_str() {
        "all" | "one-at-a-time" => Ok(mode),
        _ => Err(format!(
            "mode must be \"all\" or \"one-at-a-time\", not {mode:?}"
        )),
    }
}

fn bool_field(command: &Value, field: &str) -> Result<bool, String> {
    command[field]
        .as_bool()
        .ok_or_else(|| format!("missing boolean field `{field}`"))
}

fn string_field(command: &Value, field: &str) -> Result<String, String> {
    command[field]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("missing string field `{field}`"))
}

/// A daemon error as the sentence pi clients show.
fn text(error: ClientError) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
