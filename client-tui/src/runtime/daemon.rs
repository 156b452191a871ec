//! Talking to the daemon for the shell: attaching (fresh, or resuming from a `seq`), creating
//! sessions, and performing the requests `update` asks for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pi_client::{Client, ClientError};
use pi_protocol::ErrorKind;
use pi_protocol::v1::{
    ExportFormat, HistorySearch, HistorySearchParams, ModelList, ModelListParams, ReadScope,
    SessionAbort, SessionAbortRetry, SessionAttach, SessionAttachParams, SessionBash,
    SessionBashParams, SessionBeforeSwitch, SessionBeforeSwitchParams, SessionCompact,
    SessionCompactParams, SessionCreate, SessionCreateParams, SessionDequeue, SessionEntryParams,
    SessionExport, SessionExportParams, SessionFollowUp, SessionFork, SessionGet, SessionIdParams,
    SessionInfo, SessionLabel, SessionLabelParams, SessionList, SessionListParams,
    SessionMessageParams, SessionNavigate, SessionNavigateParams, SessionPrompt, SessionRead,
    SessionReadParams, SessionSetModel, SessionSetModelParams, SessionSetName,
    SessionSetNameParams, SessionSetThinking, SessionSetThinkingParams, SessionStats, SessionSteer,
    SwitchReason,
};

use super::world::read_image;
use crate::effect::{Message, Request};
use crate::input::{Attachment, Reply};
use crate::state::PI_FILE_PREFIX;

/// Entries read per `session/read` page.
const READ_PAGE: u32 = 1000;

/// Attaches without a cursor and reads the current branch: the transcript is rebuilt.
pub async fn attach_fresh(client: &Client, session_id: &str) -> Result<Attachment, ClientError> {
    let response = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.to_owned(),
            after_seq: None,
        })
        .await?;
    client.supply_missing_env(&response.snapshot.info).await?;
    let mut entries = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.to_owned(),
                scope: ReadScope::Branch,
                limit: Some(READ_PAGE),
                cursor,
            })
            .await?;
        entries.extend(page.entries);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(Attachment {
        connection_id: client.initialize_response().connection_id.clone(),
        response,
        history: Some(entries),
    })
}

/// Attaches with the replay cursor; falls back to a fresh attach when the daemon says the
/// cursor cannot be served (`resync_required`: it restarted, or too much happened).
pub async fn attach_resume(
    client: &Client,
    session_id: &str,
    after_seq: u64,
) -> Result<Attachment, ClientError> {
    let resumed = client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.to_owned(),
            after_seq: Some(after_seq),
        })
        .await;
    match resumed {
        Ok(response) => {
            client.supply_missing_env(&response.snapshot.info).await?;
            Ok(Attachment {
                connection_id: client.initialize_response().connection_id.clone(),
                response,
                history: None,
            })
        }
        Err(error) if error.rpc_kind() == Some(ErrorKind::ResyncRequired) => {
            attach_fresh(client, session_id).await
        }
        Err(error) => Err(error),
    }
}

/// What new sessions load besides and instead of the configured pi extensions (pi's `-e`,
/// `--no-extensions` and the flags extensions register).
#[derive(Clone, Debug, Default)]
pub struct Extensions {
    /// `-e` sources.
    pub paths: Vec<String>,
    /// `--no-extensions`.
    pub none_configured: bool,
    /// Extension flags.
    pub flags: BTreeMap<String, serde_json::Value>,
}

/// Creates a session in `cwd` with this process's environment.
pub async fn create_session(
    client: &Client,
    cwd: &Path,
    model: Option<String>,
    thinking: Option<String>,
    extensions: &Extensions,
) -> Result<SessionInfo, ClientError> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            env: Some(env),
            model,
            thinking,
            extensions: extensions.paths.clone(),
            no_extensions: extensions.none_configured,
            extension_flags: extensions.flags.clone(),
            ..SessionCreateParams::default()
        })
        .await
}

/// The most recent sessions in `cwd`: the daemon's, and pi's own session files of `cwd` not
/// opened in the daemon yet (as [`PI_FILE_PREFIX`] ids), newest first.
pub async fn recent_sessions(client: &Client, cwd: &Path) -> Result<Vec<SessionInfo>, ClientError> {
    let mut sessions = client
        .call::<SessionList>(&SessionListParams {
            cwd: Some(cwd.display().to_string()),
            limit: Some(100),
            cursor: None,
            parent_id: None,
        })
        .await?
        .sessions;
    let Ok(paths) = pi_client::Paths::from_env() else {
        return Ok(sessions);
    };
    let opened: std::collections::HashSet<String> = sessions
        .iter()
        .filter_map(|session| session.pi_file.clone())
        .collect();
    let dir = pi_client::pi_files::sessions_dir(None, &paths.pi_agent_dir);
    sessions.extend(
        pi_client::pi_files::list(&dir, Some(cwd))
            .into_iter()
            .filter(|file| !opened.contains(&file.path.display().to_string()))
            .map(|file| SessionInfo {
                id: format!("{PI_FILE_PREFIX}{}", file.path.display()),
                cwd: file.cwd,
                name: file.name,
                created_at: file.updated_at,
                updated_at: file.updated_at,
                model: None,
                thinking_level: String::new(),
                leaf_id: None,
                message_count: file.message_count,
                first_message: file.first_message,
                parent_session_id: None,
                task_name: None,
                missing_env: Vec::new(),
                status: pi_protocol::v1::SessionStatus::Idle,
                last_seq: 0,
                warnings: Vec::new(),
                pi_file: Some(file.path.display().to_string()),
                questions: 0,
            }),
    );
    sessions.sort_by_key(|session| std::cmp::Reverse(session.updated_at));
    Ok(sessions)
}

/// The daemon session of picker id `id`: one of pi's files is opened first.
pub async fn session_of(client: &Client, id: String) -> Result<String, ClientError> {
    match id.strip_prefix(PI_FILE_PREFIX) {
        Some(path) => Ok(client
            .call::<pi_protocol::v1::SessionImport>(&pi_protocol::v1::SessionImportParams {
                path: path.to_owned(),
                link: true,
            })
            .await?
            .id),
        None => Ok(id),
    }
}

/// Performs one request; `None` when success needs no reply (events will show it).
pub async fn perform(
    client: Client,
    session_id: String,
    cwd: PathBuf,
    request: Request,
) -> Option<Reply> {
    let id = || SessionIdParams {
        session_id: session_id.clone(),
    };
    let client = &client;
    match request {
        // pi's `session_before_switch`: the session's extensions may keep the client (they
        // say why themselves); a daemon that cannot ask lets it go.
        Request::BeforeSwitch(target) => {
            let (reason, target_session_id) = match &target {
                crate::effect::SwitchTo::New { .. } => (SwitchReason::New, None),
                crate::effect::SwitchTo::Existing(id) => (SwitchReason::Resume, Some(id.clone())),
            };
            if session_id.is_empty() {
                return Some(Reply::Switch(target));
            }
            match client
                .call::<SessionBeforeSwitch>(&SessionBeforeSwitchParams {
                    session_id,
                    reason,
                    target_session_id,
                })
                .await
            {
                Ok(answer) if answer.cancelled => None,
                _ => Some(Reply::Switch(target)),
            }
        }
        Request::Prompt(message) => {
            send_message(client, session_id, &cwd, MessageKind::Prompt, message).await
        }
        Request::Steer(message) => {
            send_message(client, session_id, &cwd, MessageKind::Steer, message).await
        }
        Request::FollowUp(message) => {
            send_message(client, session_id, &cwd, MessageKind::FollowUp, message).await
        }
        Request::Dequeue => match client.call::<SessionDequeue>(&id()).await {
            Ok(taken) => Some(Reply::Dequeued(taken)),
            Err(error) => failed("take the queued messages back", error),
        },
        Request::DequeueAndAbort => dequeue_and_abort(client, id()).await,
        Request::Shortcut(key) => quiet(
            client
                .call::<pi_protocol::v1::ExtensionsShortcut>(
                    &pi_protocol::v1::ExtensionsShortcutParams { session_id, key },
                )
                .await,
            "run the extension's shortcut",
        ),
        Request::AbortRetry => quiet(
            client.call::<SessionAbortRetry>(&id()).await,
            "cancel the retry",
        ),
        Request::Bash {
            command,
            exclude_from_context,
        } => match client
            .call::<SessionBash>(&SessionBashParams {
                session_id,
                command,
                exclude_from_context,
            })
            .await
        {
            Ok(_) => Some(Reply::BashFinished),
            Err(error) => failed("run the command", error),
        },
        Request::Abort => quiet(client.call::<SessionAbort>(&id()).await, "abort"),
        Request::SetModel(model) => match client
            .call::<SessionSetModel>(&SessionSetModelParams { session_id, model })
            .await
        {
            Ok(changed) => {
                // pi's: the model chosen is the default of the next session.
                remember_defaults(
                    client,
                    serde_json::json!({
                        "defaultProvider": changed.model.provider,
                        "defaultModel": changed.model.id,
                    }),
                )
                .await;
                (!changed.warnings.is_empty()).then_some(Reply::Warnings(changed.warnings))
            }
            Err(error) => failed("set the model", error),
        },
        Request::SetThinking(level) => match client
            .call::<SessionSetThinking>(&SessionSetThinkingParams { session_id, level })
            .await
        {
            Ok(set) => {
                remember_defaults(
                    client,
                    serde_json::json!({"defaultThinkingLevel": set.level}),
                )
                .await;
                None
            }
            Err(error) => failed("set the thinking level", error),
        },
        Request::SetPlanMode(enabled) => match client
            .call::<pi_protocol::v1::SessionSetPlanMode>(
                &pi_protocol::v1::SessionSetPlanModeParams {
                    session_id,
                    enabled,
                },
            )
            .await
        {
            Ok(_) => None,
            Err(error) => failed("change plan mode", error),
        },
        Request::SetPolicy(mode) => match client
            .call::<pi_protocol::v1::SessionSetPolicy>(&pi_protocol::v1::SessionSetPolicyParams {
                session_id,
                mode,
            })
            .await
        {
            Ok(set) => Some(Reply::Done(format!("Approval mode: {}.", set.mode))),
            Err(error) => failed("set the approval mode", error),
        },
        Request::SetName(name) => quiet(
            client
                .call::<SessionSetName>(&SessionSetNameParams { session_id, name })
                .await,
            "name the session",
        ),
        Request::Label { entry_id, label } => {
            label_entry(client, session_id, entry_id, label).await
        }
        Request::Fork(entry_id) => match client
            .call::<SessionFork>(&SessionEntryParams {
                session_id,
                entry_id,
            })
            .await
        {
            Ok(forked) => Some(Reply::Forked(Box::new(forked))),
            Err(error) => failed("fork", error),
        },
        Request::Navigate {
            entry_id,
            summarize,
        } => match client
            .call::<SessionNavigate>(&SessionNavigateParams {
                session_id,
                entry_id,
                summarize,
                instructions: None,
                replace_instructions: false,
            })
            .await
        {
            Ok(navigated) => Some(Reply::Navigated(navigated)),
            Err(error) => failed("move in the tree", error),
        },
        Request::Export(path) => export(client, session_id, &cwd, path).await,
        Request::Clone => match copy_session(client, &session_id).await {
            Ok(session) => Some(Reply::Opened {
                session_id: session.id,
                status: "Cloned to new session".to_owned(),
            }),
            Err(error) => failed("clone the session", error),
        },
        Request::Import(path) => import(client, &cwd, &path).await,
        Request::Share => share(client, session_id, &cwd).await,
        Request::Compact(instructions) => quiet(
            client
                .call::<SessionCompact>(&SessionCompactParams {
                    session_id,
                    instructions,
                })
                .await,
            "compact",
        ),
        Request::Stats => match client.call::<SessionStats>(&id()).await {
            Ok(stats) => Some(Reply::Stats(stats)),
            Err(error) => failed("read the session stats", error),
        },
        Request::ListModels => match client
            .call::<ModelList>(&ModelListParams {
                session_id: Some(session_id),
                env_names: pi_client::env_names(),
                ..ModelListParams::default()
            })
            .await
        {
            Ok(list) => Some(Reply::Models(list.models)),
            Err(error) => failed("list models", error),
        },
        Request::SaveSetting { key, value } => {
            // `a.b` → {"a": {"b": value}}.
            let mut nested = value;
            for part in key.rsplit('.') {
                let mut object = serde_json::Map::new();
                object.insert(part.to_owned(), nested);
                nested = serde_json::Value::Object(object);
            }
            let serde_json::Value::Object(values) = nested else {
                return None;
            };
            match client
                .call::<pi_protocol::v1::SettingsSetDefault>(
                    &pi_protocol::v1::SettingsSetDefaultParams {
                        values,
                        unset: Vec::new(),
                        // pi's keys, in pi's file: pi sees the change too.
                        target: pi_protocol::v1::SettingsTarget::Pi,
                    },
                )
                .await
            {
                Ok(saved) => Some(Reply::SettingSaved {
                    key,
                    // The global files, pi's first: the one written.
                    file: saved.files.first().cloned().unwrap_or(saved.writable_file),
                }),
                Err(error) => failed("save the setting", error),
            }
        }
        Request::Settings => match client
            .call::<pi_protocol::v1::SettingsGet>(&pi_protocol::v1::SettingsGetParams {
                cwd: Some(cwd.display().to_string()),
            })
            .await
        {
            Ok(got) => Some(Reply::Settings(Box::new(got.settings))),
            Err(error) => failed("read the settings", error),
        },
        Request::McpList => match client
            .call::<pi_protocol::v1::McpList>(&pi_protocol::v1::McpListParams::default())
            .await
        {
            Ok(list) => Some(Reply::McpServers(list.servers)),
            Err(error) => failed("list the MCP servers", error),
        },
        Request::Pools => pools(client, session_id).await,
        Request::LspList => match client
            .call::<pi_protocol::v1::LspList>(&pi_protocol::v1::LspListParams::default())
            .await
        {
            Ok(list) => Some(Reply::LspServers(list.servers)),
            Err(error) => failed("list the language servers", error),
        },
        Request::ExtensionsList => match client
            .call::<pi_protocol::v1::ExtensionsList>(&pi_protocol::v1::ExtensionsListParams {
                session_id: Some(session_id.clone()),
            })
            .await
        {
            Ok(list) => Some(Reply::Extensions(list)),
            Err(error) => failed("list the extensions", error),
        },
        Request::ExtensionsRestart => match client
            .call::<pi_protocol::v1::ExtensionsRestart>(
                &pi_protocol::v1::ExtensionsRestartParams {},
            )
            .await
        {
            // Said only when a host was running (`/reload` without extensions is quiet).
            Ok(restarted) => restarted.restarted.then(|| {
                Reply::Done("Ended the extension host; the next use starts it again.".to_owned())
            }),
            Err(error) => failed("restart the extension host", error),
        },
        Request::LspRestart(name) => match client
            .call::<pi_protocol::v1::LspRestart>(&pi_protocol::v1::LspRestartParams {
                name: name.clone(),
            })
            .await
        {
            Ok(_) => Some(Reply::Done(format!(
                "Restarted language server {name}; the next use starts it."
            ))),
            Err(error) => failed("restart the language server", error),
        },
        Request::McpRestart(name) => match client
            .call::<pi_protocol::v1::McpRestart>(&pi_protocol::v1::McpRestartParams {
                name: name.clone(),
            })
            .await
        {
            Ok(_) => Some(Reply::Done(format!("Restarted MCP server {name}."))),
            Err(error) => failed("restart the MCP server", error),
        },
        Request::McpSetEnabled { name, enabled } => {
            mcp_set_enabled(client, session_id, name, enabled).await
        }
        Request::UiRespond {
            session_id,
            request_id,
            answer,
        } => quiet(
            client
                .call::<pi_protocol::v1::UiRespond>(&pi_protocol::v1::UiRespondParams {
                    session_id,
                    request_id,
                    answer,
                })
                .await,
            "answer the question",
        ),
        Request::AuthList => match client
            .call::<pi_protocol::v1::AuthList>(&pi_protocol::v1::AuthListParams {})
            .await
        {
            Ok(list) => Some(Reply::AuthProviders(list.providers)),
            Err(error) => failed("list the logins", error),
        },
        Request::Login { provider } => login(client, provider).await,
        Request::LoginInput { login_id, text } => gone_is_fine(
            client
                .call::<pi_protocol::v1::AuthLoginInput>(&pi_protocol::v1::AuthLoginInputParams {
                    login_id,
                    text,
                })
                .await,
            "answer the login",
        ),
        Request::LoginCancel(login_id) => gone_is_fine(
            client
                .call::<pi_protocol::v1::AuthLoginCancel>(&pi_protocol::v1::AuthLoginCancelParams {
                    login_id,
                })
                .await,
            "cancel the login",
        ),
        Request::SetApiKey { provider, key } => match client
            .call::<pi_protocol::v1::AuthSetApiKey>(&pi_protocol::v1::AuthSetApiKeyParams {
                provider: provider.clone(),
                key,
            })
            .await
        {
            Ok(answer) => Some(Reply::Done(format!(
                "Stored the API key for {provider} in {}",
                answer.path
            ))),
            Err(error) => failed("store the API key", error),
        },
        Request::Logout(provider) => match client
            .call::<pi_protocol::v1::AuthLogout>(&pi_protocol::v1::AuthLogoutParams {
                provider: provider.clone(),
            })
            .await
        {
            Ok(answer) => Some(Reply::LoggedOut {
                provider,
                removed: answer.removed,
            }),
            Err(error) => failed("log out", error),
        },
        Request::ListCommands => match client.call::<SessionGet>(&id()).await {
            Ok(session) => Some(Reply::Commands(Box::new(session))),
            Err(error) => failed("list the session's commands", error),
        },
        Request::ListAgents { parent } => list_agents(client, session_id, parent).await,
        Request::ListSessions => match recent_sessions(client, &cwd).await {
            Ok(sessions) => Some(Reply::Sessions(sessions)),
            Err(error) => failed("list sessions", error),
        },
        Request::ReadTree { for_fork } => read_tree(client, session_id, for_fork).await,
        Request::RenameSession {
            session_id: renamed,
            name,
        } => match client
            .call::<SessionSetName>(&SessionSetNameParams {
                session_id: renamed,
                name,
            })
            .await
        {
            Ok(_) => match recent_sessions(client, &cwd).await {
                Ok(sessions) => Some(Reply::Sessions(sessions)),
                Err(error) => failed("list sessions", error),
            },
            Err(error) => failed("rename the session", error),
        },
        Request::DeleteSession(deleted) => match client
            .call::<pi_protocol::v1::SessionDelete>(&SessionIdParams {
                session_id: deleted,
            })
            .await
        {
            Ok(_) => match recent_sessions(client, &cwd).await {
                Ok(sessions) => Some(Reply::Sessions(sessions)),
                Err(error) => failed("list sessions", error),
            },
            Err(error) => failed("delete the session", error),
        },
        Request::LabelInTree { entry_id, label } => {
            match label_entry(client, session_id.clone(), entry_id, label).await {
                Some(Reply::Failed { action, message }) => Some(Reply::Failed { action, message }),
                _ => read_tree(client, session_id, false).await,
            }
        }
        Request::SearchHistory(query) => search_history(client, query).await,
    }
}

/// A request failed: what the user was doing and why.
/// Writes what the user chose as pi's defaults in pi's `settings.json` (as pi's interactive
/// mode does on every model or thinking change); a failure only loses the default.
async fn remember_defaults(client: &Client, values: serde_json::Value) {
    let serde_json::Value::Object(values) = values else {
        return;
    };
    let _ = client
        .call::<pi_protocol::v1::SettingsSetDefault>(&pi_protocol::v1::SettingsSetDefaultParams {
            values,
            unset: Vec::new(),
            target: pi_protocol::v1::SettingsTarget::Pi,
        })
        .await;
}

fn failed(action: &str, error: ClientError) -> Option<Reply> {
    Some(Reply::Failed {
        action: action.to_owned(),
        message: in_tui_words(&error.to_string()),
    })
}

/// The daemon's advice to protocol clients, as what a TUI user types instead.
pub fn in_tui_words(message: &str) -> String {
    const WORDS: [(&str, &str); 3] = [
        (
            "then start a new session or choose a model with `session/setModel`",
            "then choose a model with /model",
        ),
        (
            "choose one with `session/setModel` (see `model/list`)",
            "choose one with /model",
        ),
        (
            "`session/list` shows the stored sessions",
            "/resume lists the sessions",
        ),
    ];
    WORDS
        .iter()
        .fold(message.to_owned(), |text, (theirs, ours)| {
            text.replace(theirs, ours)
        })
}

/// A request whose success the session's events show: a reply only when it failed.
fn quiet<T>(called: Result<T, ClientError>, action: &str) -> Option<Reply> {
    called.err().and_then(|error| failed(action, error))
}

/// A subscription login, however long it takes (the person opens a URL, maybe answers a
/// prompt); its steps come meanwhile as `auth/loginEvent` notifications.
async fn login(client: &Client, provider: String) -> Option<Reply> {
    match client
        .call::<pi_protocol::v1::AuthLogin>(&pi_protocol::v1::AuthLoginParams {
            provider: provider.clone(),
            enterprise_domain: None,
        })
        .await
    {
        Ok(done) => Some(Reply::LoggedIn {
            provider,
            path: done.path,
        }),
        Err(error) => Some(Reply::LoginFailed {
            provider,
            cancelled: error.rpc_kind() == Some(ErrorKind::Cancelled),
            message: in_tui_words(&error.to_string()),
        }),
    }
}

/// A call about a login: a login no longer running (`not_found`: it completed, failed or was
/// cancelled meanwhile) needs no reply, its `auth/login` answer says how it ended.
fn gone_is_fine<T>(called: Result<T, ClientError>, action: &str) -> Option<Reply> {
    match called {
        Ok(_) => None,
        Err(error) if error.rpc_kind() == Some(ErrorKind::NotFound) => None,
        Err(error) => failed(action, error),
    }
}

/// Takes the queued messages back, then aborts — in this order, so a queued steering message
/// cannot slip into the run first.
async fn dequeue_and_abort(client: &Client, id: SessionIdParams) -> Option<Reply> {
    let taken = client.call::<SessionDequeue>(&id).await;
    if let Err(error) = client.call::<SessionAbort>(&id).await {
        return failed("abort", error);
    }
    match taken {
        Ok(taken) => Some(Reply::Dequeued(taken)),
        Err(error) => failed("take the queued messages back", error),
    }
}

async fn label_entry(
    client: &Client,
    session_id: String,
    entry_id: String,
    label: String,
) -> Option<Reply> {
    let cleared = label.is_empty();
    match client
        .call::<SessionLabel>(&SessionLabelParams {
            session_id,
            entry_id,
            label: (!cleared).then_some(label),
        })
        .await
    {
        Ok(_) => Some(Reply::Done(if cleared {
            "Label cleared.".to_owned()
        } else {
            "Labelled the latest entry.".to_owned()
        })),
        Err(error) => failed("label the entry", error),
    }
}

/// Exports to `path` (relative to `cwd`; JSONL by its extension, else HTML) or pi's default
/// name.
async fn export(
    client: &Client,
    session_id: String,
    cwd: &Path,
    path: Option<String>,
) -> Option<Reply> {
    let path = match path {
        Some(path) => cwd.join(path),
        None => cwd.join(format!(
            "pi-session-{}.html",
            session_id.chars().take(8).collect::<String>()
        )),
    };
    let format = if path
        .extension()
        .is_some_and(|extension| extension == "jsonl")
    {
        ExportFormat::Jsonl
    } else {
        ExportFormat::Html
    };
    match client
        .call::<SessionExport>(&SessionExportParams {
            session_id,
            format,
            path: Some(path.display().to_string()),
        })
        .await
    {
        Ok(_) => Some(Reply::Done(format!(
            "Exported the session to {}.",
            path.display()
        ))),
        Err(error) => failed("export", error),
    }
}

/// A copy of the session (its file exported, then imported as a new session).
async fn copy_session(client: &Client, session_id: &str) -> Result<SessionInfo, ClientError> {
    let file = std::env::temp_dir().join(format!(
        "pi-clone-{session_id}-{}.jsonl",
        std::process::id()
    ));
    let exported = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session_id.to_owned(),
            format: ExportFormat::Jsonl,
            path: Some(file.display().to_string()),
        })
        .await;
    let imported = match exported {
        Ok(_) => {
            client
                .call::<pi_protocol::v1::SessionImport>(&pi_protocol::v1::SessionImportParams {
                    path: file.display().to_string(),
                    link: false,
                })
                .await
        }
        Err(error) => Err(error),
    };
    let _ = std::fs::remove_file(&file);
    imported
}

/// pi's `/import FILE`: the file (relative to the working directory) copied into a new
/// session.
async fn import(client: &Client, cwd: &Path, path: &str) -> Option<Reply> {
    let path = cwd.join(path);
    if !path.is_file() {
        return Some(Reply::Failed {
            action: "import".to_owned(),
            message: format!("File not found: {}", path.display()),
        });
    }
    match client
        .call::<pi_protocol::v1::SessionImport>(&pi_protocol::v1::SessionImportParams {
            path: path.display().to_string(),
            link: false,
        })
        .await
    {
        Ok(session) => Some(Reply::Opened {
            session_id: session.id,
            status: format!("Imported {}", path.display()),
        }),
        Err(error) => failed("import", error),
    }
}

/// pi's `/share`: the session's HTML in a secret gist, through the GitHub CLI, which must be
/// logged in; the viewer's address (`PI_SHARE_VIEWER_URL`, else pi's) and the gist's.
async fn share(client: &Client, session_id: String, cwd: &Path) -> Option<Reply> {
    let failed_share = |message: String| {
        Some(Reply::Failed {
            action: "share".to_owned(),
            message,
        })
    };
    let gh = |args: &'static [&'static str]| {
        tokio::process::Command::new("gh")
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
    };
    // Without a gist to make, the page goes to a file here, and the reason is said.
    let no_gist = match gh(&["auth", "status"]).await {
        Ok(status) if status.status.success() => None,
        Ok(_) => Some("GitHub CLI is not logged in (run 'gh auth login' to share as a gist)"),
        Err(_) => {
            Some("GitHub CLI (gh) is not installed (https://cli.github.com/ shares as a gist)")
        }
    };
    if let Some(why) = no_gist {
        return match export(client, session_id, cwd, None).await {
            Some(Reply::Done(exported)) => Some(Reply::Done(format!("{why}. {exported}"))),
            other => other,
        };
    }
    let dir = std::env::temp_dir().join(format!("pi-share-{}-{session_id}", std::process::id()));
    if let Err(error) = std::fs::create_dir_all(&dir) {
        return failed_share(format!("Failed to export session: {error}"));
    }
    let file = dir.join("session.html");
    if let Err(error) = client
        .call::<SessionExport>(&SessionExportParams {
            session_id,
            format: ExportFormat::Html,
            path: Some(file.display().to_string()),
        })
        .await
    {
        let _ = std::fs::remove_dir_all(&dir);
        return failed_share(format!("Failed to export session: {error}"));
    }
    let created = tokio::process::Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    let _ = std::fs::remove_dir_all(&dir);
    let output = match created {
        Ok(output) => output,
        Err(error) => return failed_share(format!("Failed to create gist: {error}")),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return failed_share(format!(
            "Failed to create gist: {}",
            if stderr.is_empty() {
                "Unknown error"
            } else {
                &stderr
            }
        ));
    }
    let gist_url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let Some(gist_id) = gist_url.rsplit('/').next().filter(|id| !id.is_empty()) else {
        return failed_share("Failed to parse gist ID from gh output".to_owned());
    };
    let viewer = std::env::var("PI_SHARE_VIEWER_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| "https://pi.dev/session/".to_owned());
    Some(Reply::Done(format!(
        "Share URL: {viewer}#{gist_id}\nGist: {gist_url}"
    )))
}

/// The session's jobs and the daemon's kernels.
async fn pools(client: &Client, session_id: String) -> Option<Reply> {
    let jobs = client
        .call::<pi_protocol::v1::JobList>(&pi_protocol::v1::JobListParams {
            session_id: Some(session_id),
        })
        .await;
    let kernels = client
        .call::<pi_protocol::v1::KernelList>(&pi_protocol::v1::KernelListParams {})
        .await;
    match (jobs, kernels) {
        (Ok(jobs), Ok(kernels)) => Some(Reply::Pools {
            jobs: jobs.jobs,
            kernels: kernels.kernels,
        }),
        (Err(error), _) | (_, Err(error)) => failed("list the jobs and kernels", error),
    }
}

async fn mcp_set_enabled(
    client: &Client,
    session_id: String,
    name: String,
    enabled: bool,
) -> Option<Reply> {
    match client
        .call::<pi_protocol::v1::McpSetEnabled>(&pi_protocol::v1::McpSetEnabledParams {
            session_id,
            name: name.clone(),
            enabled,
        })
        .await
    {
        Ok(_) => Some(Reply::Done(if enabled {
            format!("MCP server {name} is on for this session from the next prompt.")
        } else {
            format!("MCP server {name} is off for this session from the next prompt.")
        })),
        Err(error) => failed("switch the MCP server", error),
    }
}

/// The session's subagents, and its parent when it is one.
async fn list_agents(client: &Client, session_id: String, parent: Option<String>) -> Option<Reply> {
    let children = client
        .call::<SessionList>(&SessionListParams {
            cwd: None,
            limit: Some(500),
            cursor: None,
            parent_id: Some(session_id),
        })
        .await;
    let parent = match parent {
        Some(parent) => client
            .call::<SessionGet>(&SessionIdParams { session_id: parent })
            .await
            .ok()
            .map(|got| Box::new(got.info)),
        None => None,
    };
    match children {
        Ok(children) => Some(Reply::Agents {
            parent,
            children: children.sessions,
        }),
        Err(error) => failed("list the subagents", error),
    }
}

/// The session's whole tree, page by page.
async fn read_tree(client: &Client, session_id: String, for_fork: bool) -> Option<Reply> {
    let mut entries = Vec::new();
    let mut cursor = None;
    let mut leaf_id = None;
    loop {
        match client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.clone(),
                scope: ReadScope::Tree,
                limit: Some(READ_PAGE),
                cursor,
            })
            .await
        {
            Ok(page) => {
                entries.extend(page.entries);
                leaf_id = page.leaf_id.or(leaf_id);
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            Err(error) => return failed("read the session tree", error),
        }
    }
    Some(Reply::Tree {
        entries,
        leaf_id,
        for_fork,
    })
}

async fn search_history(client: &Client, query: String) -> Option<Reply> {
    let result = client
        .call::<HistorySearch>(&HistorySearchParams {
            query: (!query.is_empty()).then(|| query.clone()),
            cwd: None,
            limit: Some(200),
        })
        .await;
    match result {
        Ok(found) => Some(Reply::History {
            query,
            entries: found.entries,
        }),
        // An older daemon without history: browsing just finds nothing.
        Err(error) if error.rpc_kind() == Some(ErrorKind::MethodNotFound) => None,
        Err(error) => failed("search the prompt history", error),
    }
}

/// Which queue a message goes to.
#[derive(Clone, Copy)]
enum MessageKind {
    Prompt,
    Steer,
    FollowUp,
}

/// Sends a prompt, steering or follow-up message with its images.
async fn send_message(
    client: &Client,
    session_id: String,
    cwd: &Path,
    kind: MessageKind,
    message: Message,
) -> Option<Reply> {
    // Off the loop's thread: fitting a large image takes a while, and the TUI keeps drawing.
    let (paths, fit, dir) = (
        message.image_paths.clone(),
        message.fit_images,
        cwd.to_path_buf(),
    );
    let read = tokio::task::spawn_blocking(move || {
        paths
            .iter()
            .filter_map(|path| read_image(&dir, path, fit).transpose())
            .collect::<Result<Vec<_>, String>>()
    })
    .await
    .unwrap_or_else(|_| Err("reading the images failed".to_owned()));
    let images = match read {
        Ok(images) => images,
        Err(message) => {
            return Some(Reply::Failed {
                action: "attach the image".to_owned(),
                message,
            });
        }
    };
    let params = SessionMessageParams {
        session_id,
        text: message.text,
        images,
    };
    let result = match kind {
        // Whether a run started shows in the events (`agent_start`).
        MessageKind::Prompt => client.call::<SessionPrompt>(&params).await.map(drop),
        MessageKind::Steer => client.call::<SessionSteer>(&params).await.map(drop),
        MessageKind::FollowUp => client.call::<SessionFollowUp>(&params).await.map(drop),
    };
    result.err().map(|error| Reply::Failed {
        action: "send the message".to_owned(),
        message: in_tui_words(&error.to_string()),
    })
}

#[cfg(test)]
mod words {
    #[test]
    fn the_daemons_protocol_advice_reads_as_what_a_tui_user_types() {
        assert_eq!(
            super::in_tui_words(
                "the session has no model; choose one with `session/setModel` (see `model/list`)"
            ),
            "the session has no model; choose one with /model"
        );
        assert_eq!(
            super::in_tui_words(
                "session 1 does not exist; `session/list` shows the stored sessions"
            ),
            "session 1 does not exist; /resume lists the sessions"
        );
    }
}
