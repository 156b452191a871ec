//! `session/*` handlers: thin adapters from typed params to the session registry and actors.

use pi_protocol::v1::{
    EmptyResponse, ExportFormat, QueueState, SessionAttachParams, SessionAttachResponse,
    SessionBashParams, SessionBashResponse, SessionBeforeSwitchParams, SessionBeforeSwitchResponse,
    SessionCompactParams, SessionCompactResponse, SessionCreateParams, SessionEntryParams,
    SessionExportParams, SessionExportResponse, SessionForkResponse, SessionGetResponse,
    SessionIdParams, SessionImportParams, SessionInfo, SessionLabelParams, SessionListParams,
    SessionListResponse, SessionMessageParams, SessionNavigateParams, SessionNavigateResponse,
    SessionReadParams, SessionReadResponse, SessionSetDraftParams, SessionSetModelParams,
    SessionSetModelResponse, SessionSetNameParams, SessionSetThinkingParams,
    SessionSetThinkingResponse, SessionStatsResponse, SwitchReason, UiRequestNotification,
};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::compaction::Instructions;
use crate::rpc::dispatch::RequestContext;
use crate::rpc::errors;
use crate::session::params::absolute_path;
use crate::session::{Command, pi_format};

/// `session/create`.
pub async fn create(
    context: &RequestContext,
    params: SessionCreateParams,
) -> Result<SessionInfo, ErrorObject> {
    let flags: Vec<String> = params.extension_flags.keys().cloned().collect();
    let info = context
        .state
        .sessions
        .create(params)
        .await
        .map_err(errors::session)?;
    if !flags.is_empty() {
        check_extension_flags(context, &info.id, &flags).await?;
    }
    Ok(info)
}

/// pi refuses to start with a flag no extension registers: a session created with one is
/// deleted again, the error naming it, once its extensions loaded.
async fn check_extension_flags(
    context: &RequestContext,
    id: &str,
    flags: &[String],
) -> Result<(), ErrorObject> {
    let opening = match &context.state.extensions {
        Some(host) => host.opening(id).await,
        None => crate::extensions::Opening::Nothing,
    };
    let problems: Vec<String> = match opening {
        crate::extensions::Opening::Opened(set) => set
            .diagnostics
            .iter()
            .filter(|problem| {
                problem.error.starts_with("Unknown option: --")
                    || problem.error.starts_with("Extension flag \"--")
            })
            .map(|problem| problem.error.clone())
            .collect(),
        // Still loading (the extension host's first start installs pi's package): the
        // flags are checked as the set opens, an unknown one listed with the session's
        // extension problems (`extensions/list`).
        crate::extensions::Opening::Pending => {
            tracing::warn!(
                session = id,
                "the session's extensions are still loading; its extension flags are checked when they load"
            );
            Vec::new()
        }
        // Nothing loads for the session: no extension registers any flag.
        crate::extensions::Opening::Nothing => flags
            .iter()
            .map(|name| format!("Unknown option: --{name} (the session loads no extensions)"))
            .collect(),
    };
    if problems.is_empty() {
        return Ok(());
    }
    if let Err(error) = context.state.sessions.delete(id).await {
        tracing::warn!(session = id, %error, "cannot delete a session created with bad flags");
    }
    Err(
        ErrorObject::new(ErrorKind::InvalidParams, problems.join("; "))
            .with_field("extensionFlags"),
    )
}

/// `session/list`.
pub async fn list(
    context: &RequestContext,
    params: SessionListParams,
) -> Result<SessionListResponse, ErrorObject> {
    context
        .state
        .sessions
        .list(params)
        .await
        .map_err(errors::session)
}

/// `session/get`.
pub async fn get(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<SessionGetResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Get { reply })
        .await
        .map_err(errors::session)
}

/// `session/read`.
pub async fn read(
    context: &RequestContext,
    params: SessionReadParams,
) -> Result<SessionReadResponse, ErrorObject> {
    context
        .state
        .sessions
        .read(params)
        .await
        .map_err(errors::session)
}

/// `session/attach`.
pub async fn attach(
    context: &RequestContext,
    params: SessionAttachParams,
) -> Result<SessionAttachResponse, ErrorObject> {
    let connection = &context.connection;
    let attached = context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Attach {
            subscriber: connection.subscriber(),
            after_seq: params.after_seq,
            reply,
        })
        .await
        .map_err(errors::session)?;
    // Questions already asked in the session reach the newly attached connection too.
    for request in context.state.sessions.pending_questions(&params.session_id) {
        let _ = connection.notify::<UiRequestNotification>(&request);
    }
    Ok(attached)
}

/// `session/detach`.
pub async fn detach(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<EmptyResponse, ErrorObject> {
    let connection_id = context.connection.id();
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Detach {
            connection_id: connection_id.to_owned(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/setDraft`.
pub async fn set_draft(
    context: &RequestContext,
    params: SessionSetDraftParams,
) -> Result<EmptyResponse, ErrorObject> {
    let connection_id = context.connection.id();
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::SetDraft {
            connection_id: connection_id.to_owned(),
            text: params.text.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/prompt`.
pub async fn prompt(
    context: &RequestContext,
    params: SessionMessageParams,
) -> Result<pi_protocol::v1::SessionPromptResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Prompt {
            text: params.text.clone(),
            images: params.images.clone(),
            source: crate::session::hooks::InputSource::Interactive,
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/steer` (`steering`) and `session/followUp`.
pub async fn enqueue(
    context: &RequestContext,
    params: SessionMessageParams,
    steering: bool,
) -> Result<EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Enqueue {
            steering,
            text: params.text.clone(),
            images: params.images.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/abort`.
pub async fn abort(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<EmptyResponse, ErrorObject> {
    context.state.user_shells.abort(&params.session_id);
    let aborted = context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Abort { reply })
        .await;
    // Everything the agent set running stops too: its jobs, its kernels' cells.
    if let Some(jobs) = &context.state.jobs {
        jobs.kill_session(&params.session_id).await;
    }
    if let Some(kernels) = &context.state.kernels {
        kernels.interrupt_session(&params.session_id).await;
    }
    aborted.map_err(errors::session)
}

/// `session/abortRetry`.
pub async fn abort_retry(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::AbortRetry { reply })
        .await
        .map_err(errors::session)
}

/// `session/dequeue`.
pub async fn dequeue(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<QueueState, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Dequeue { reply })
        .await
        .map_err(errors::session)
}

/// `session/setModel`.
pub async fn set_model(
    context: &RequestContext,
    params: SessionSetModelParams,
) -> Result<SessionSetModelResponse, ErrorObject> {
    context
        .state
        .sessions
        .set_model(&params.session_id, &params.model)
        .await
        .map_err(errors::session)
}

/// `session/beforeSwitch`.
pub async fn before_switch(
    context: &RequestContext,
    params: SessionBeforeSwitchParams,
) -> Result<SessionBeforeSwitchResponse, ErrorObject> {
    let reason = match params.reason {
        SwitchReason::New => "new",
        SwitchReason::Resume => "resume",
    };
    let cancelled = context
        .state
        .sessions
        .before_switch(&params.session_id, reason, params.target_session_id.clone())
        .await
        .map_err(errors::session)?;
    Ok(SessionBeforeSwitchResponse { cancelled })
}

/// `session/setThinking`.
pub async fn set_thinking(
    context: &RequestContext,
    params: SessionSetThinkingParams,
) -> Result<SessionSetThinkingResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::SetThinking {
            level: params.level.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/setName`.
pub async fn set_name(
    context: &RequestContext,
    params: SessionSetNameParams,
) -> Result<EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::SetName {
            name: params.name.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/setPolicy`.
pub async fn set_policy(
    context: &RequestContext,
    params: pi_protocol::v1::SessionSetPolicyParams,
) -> Result<pi_protocol::v1::SessionSetPolicyResponse, ErrorObject> {
    let Some(mode) = crate::policy::rules::Mode::parse(&params.mode) else {
        return Err(ErrorObject::new(
            pi_protocol::ErrorKind::InvalidParams,
            format!(
                "mode must be yolo, ask-writes, ask-all or read-only, not \"{}\"",
                params.mode
            ),
        )
        .with_field("mode"));
    };
    // The session must exist.
    context
        .state
        .sessions
        .stored_info(&params.session_id)
        .await
        .map_err(errors::session)?;
    let Some(policy) = &context.state.policy else {
        return Err(ErrorObject::new(
            pi_protocol::ErrorKind::InvalidParams,
            "this daemon runs without approvals",
        ));
    };
    policy.set_mode(&params.session_id, mode);
    context
        .state
        .store
        .set_policy_mode(&params.session_id, mode.name())
        .await
        .map_err(|error| {
            ErrorObject::new(
                pi_protocol::ErrorKind::Storage,
                format!("the mode is set but could not be stored, so a daemon restart forgets it: {error}"),
            )
        })?;
    Ok(pi_protocol::v1::SessionSetPolicyResponse {
        mode: mode.name().to_owned(),
    })
}

/// `session/setEnv`.
pub async fn set_env(
    context: &RequestContext,
    params: pi_protocol::v1::SessionSetEnvParams,
) -> Result<pi_protocol::v1::SessionSetEnvResponse, ErrorObject> {
    context
        .state
        .sessions
        .set_env(&params.session_id, params.env)
        .await
        .map_err(errors::session)
}

/// `session/setTodos`.
pub async fn set_todos(
    context: &RequestContext,
    params: pi_protocol::v1::SessionSetTodosParams,
) -> Result<pi_protocol::v1::EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .set_todos(&params.session_id, params.todos)
        .await
        .map_err(errors::session)
}

/// `session/setPlanMode`.
pub async fn set_plan_mode(
    context: &RequestContext,
    params: pi_protocol::v1::SessionSetPlanModeParams,
) -> Result<pi_protocol::v1::EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .set_plan_mode(&params.session_id, params.enabled)
        .await
        .map_err(errors::session)
}

/// `session/setApiKey`.
pub async fn set_api_key(
    context: &RequestContext,
    params: pi_protocol::v1::SessionSetApiKeyParams,
) -> Result<pi_protocol::v1::EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .set_api_key(&params.session_id, &params.provider, params.key)
        .await
        .map_err(errors::session)
}

/// `session/label`.
pub async fn label(
    context: &RequestContext,
    params: SessionLabelParams,
) -> Result<EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Label {
            entry_id: params.entry_id.clone(),
            label: params.label.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/fork`.
pub async fn fork(
    context: &RequestContext,
    params: SessionEntryParams,
) -> Result<SessionForkResponse, ErrorObject> {
    context
        .state
        .sessions
        .fork(&params.session_id, &params.entry_id)
        .await
        .map_err(errors::session)
}

/// `session/navigate`.
pub async fn navigate(
    context: &RequestContext,
    params: SessionNavigateParams,
) -> Result<SessionNavigateResponse, ErrorObject> {
    let summary = params.summarize.then(|| match params.instructions.clone() {
        None => Instructions::Default,
        Some(text) if params.replace_instructions => Instructions::Replace(text),
        Some(text) => Instructions::Focus(text),
    });
    context
        .state
        .sessions
        .navigate(&params.session_id, &params.entry_id, summary)
        .await
        .map_err(errors::session)
}

/// `session/compact`.
pub async fn compact(
    context: &RequestContext,
    params: SessionCompactParams,
) -> Result<SessionCompactResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Compact {
            instructions: params.instructions.clone(),
            reply,
        })
        .await
        .map_err(errors::session)
}

/// `session/delete`.
pub async fn delete(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<EmptyResponse, ErrorObject> {
    context
        .state
        .sessions
        .delete(&params.session_id)
        .await
        .map_err(errors::session)
}

/// `session/stats`.
pub async fn stats(
    context: &RequestContext,
    params: SessionIdParams,
) -> Result<SessionStatsResponse, ErrorObject> {
    context
        .state
        .sessions
        .call(&params.session_id, |reply| Command::Stats { reply })
        .await
        .map_err(errors::session)
}

/// `session/import`.
pub async fn import(
    context: &RequestContext,
    params: SessionImportParams,
) -> Result<SessionInfo, ErrorObject> {
    context
        .state
        .sessions
        .import(&params.path, params.link)
        .await
        .map_err(errors::session)
}

/// `session/export`.
pub async fn export(
    context: &RequestContext,
    params: SessionExportParams,
) -> Result<SessionExportResponse, ErrorObject> {
    let sessions = &context.state.sessions;
    let content = match params.format {
        ExportFormat::Jsonl => {
            let (row, all) = sessions
                .all_entries(&params.session_id)
                .await
                .map_err(errors::session)?;
            pi_format::export_jsonl(&row, &all)
        }
        ExportFormat::Html => {
            let (row, all) = sessions
                .tree_entries(&params.session_id)
                .await
                .map_err(errors::session)?;
            crate::session::html::export_html(&row, &all)
        }
    };
    let Some(path) = params.path else {
        return Ok(SessionExportResponse {
            content: Some(content),
            path: None,
        });
    };
    let path = absolute_path("path", &path).map_err(errors::session)?;
    tokio::fs::write(&path, content).await.map_err(|error| {
        ErrorObject::new(
            ErrorKind::InvalidParams,
            format!("cannot write {}: {error}", path.display()),
        )
        .with_field("path")
    })?;
    Ok(SessionExportResponse {
        content: None,
        path: Some(path.display().to_string()),
    })
}

/// `session/bash`: runs the command outside the actor (the session stays responsive; one
/// command per session at a time; `session/abort` kills it), then has the actor record the
/// `bashExecution` message.
pub async fn bash(
    context: &RequestContext,
    params: SessionBashParams,
) -> Result<SessionBashResponse, ErrorObject> {
    let state = &context.state;
    let environment = state
        .sessions
        .environment(&params.session_id)
        .await
        .map_err(errors::session)?;
    let running = state
        .user_shells
        .start(&params.session_id, &state.shutdown)
        .ok_or_else(|| {
            ErrorObject::new(
                ErrorKind::Busy,
                "a shell command of this session is still running; wait for it or stop it with \
                 `session/abort`",
            )
        })?;
    // pi's `user_bash`: the session's extensions may answer for the command, or run it
    // their way (an aborted command aborts theirs).
    let hooks = state
        .sessions
        .hooks(&params.session_id)
        .await
        .map_err(errors::session)?;
    let intercepted = match hooks {
        Some(hooks) => {
            let asked = hooks.user_bash(
                params.command.clone(),
                params.exclude_from_context,
                environment.cwd.display().to_string(),
            );
            tokio::select! {
                answer = asked => answer.unwrap_or_else(|error| {
                    // As pi: a handler that failed leaves the command to run as usual.
                    tracing::warn!(session = params.session_id, %error, "user_bash failed; running the command");
                    None
                }),
                // Aborted while an extension ran it: recorded as cancelled, never run here.
                () = running.cancel.cancelled() => Some(serde_json::json!({
                    "output": "", "cancelled": true, "truncated": false,
                })),
            }
        }
        None => None,
    };
    let message = match intercepted {
        Some(result) => pi_agent::message::BashExecutionMessage {
            command: params.command.clone(),
            output: result["output"].as_str().unwrap_or_default().to_owned(),
            exit_code: result["exitCode"]
                .as_i64()
                .and_then(|code| i32::try_from(code).ok()),
            cancelled: result["cancelled"].as_bool() == Some(true),
            truncated: result["truncated"].as_bool() == Some(true),
            full_output_path: result["fullOutputPath"].as_str().map(str::to_owned),
            exclude_from_context: params.exclude_from_context,
            timestamp: pi_util::time::now_millis(),
        },
        None => crate::tools::user_bash(
            &environment,
            &state.artifacts,
            &state.spawner,
            &crate::tools::shell_config(
                &crate::coding::ResourceRoots::from_paths(&state.paths),
                &environment.cwd,
            ),
            &params.command,
            params.exclude_from_context,
            &running.cancel,
        )
        .await
        .map_err(|error| ErrorObject::new(ErrorKind::InvalidParams, error.to_string()))?,
    };
    drop(running);
    let entry_id = state
        .sessions
        .call(&params.session_id, |reply| Command::RecordBash {
            message: message.clone(),
            reply,
        })
        .await
        .map_err(errors::session)?;
    Ok(SessionBashResponse {
        output: message.output,
        exit_code: message.exit_code,
        cancelled: message.cancelled,
        truncated: message.truncated,
        full_output_path: message.full_output_path,
        entry_id,
    })
}
