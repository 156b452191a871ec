//! `pictl acp`: an Agent Client Protocol agent on stdio (Zed's `agent_servers`, Neovim's ACP
//! adapters) over daemon sessions. ACP v1: newline-delimited JSON-RPC 2.0 on stdin/stdout (`pi-jsonrpc`'s peer)
//! ([decision 0011](../../docs/decisions/0011-acp-bridge.md): the messages are built here as
//! JSON and checked against the official TypeScript SDK in the tests).
//!
//! - `initialize`: image and embedded-context prompts, `session/load`, MCP over HTTP.
//! - `session/new` creates a daemon session (this process's environment, as `pictl run`);
//!   `session/load` replays its stored history as `session/update`s; both attach, so the
//!   session's events stream to the editor while `pictl attach` shows it too.
//! - `session/prompt`: text, images, resource links (`@path`) and embedded resources (fenced
//!   blocks) become one daemon prompt; the response waits for the run's `agent_end`.
//!   `session/cancel` aborts the run (`stopReason: cancelled`).
//! - Events: text and thinking deltas → message and thought chunks; tool starts → `tool_call`
//!   (kind, title, locations, raw input); tool ends → `tool_call_update` (text, and a diff of
//!   the whole file: for `write`, the text it wrote against the before-image the tool reports
//!   — none for a new file, no diff for a previous file past the tool's bound —; for `edit`,
//!   the file read at the call's start and at its end, left out when the two are equal, which
//!   is what a start read that came after the edit looks like).
//! - Modes are the daemon's approval modes (`session/set_mode` → `session/setPolicy`).
//! - Questions (`ui/request`: approvals, selections, confirmations) → `session/request_permission`;
//!   the editor's choice goes back with `ui/respond` (another client may answer first).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use clap::Args;
use pi_client::Client;
use pi_jsonrpc::{Framing, OutboundLimits, Peer, PeerConfig, Transport};
use pi_protocol::v1::{
    SessionAbort, SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams,
    SessionIdParams, SessionPrompt, SessionRead, SessionReadParams, SessionSetPolicy,
    SessionSetPolicyParams, UiAnswer, UiRespond, UiRespondParams,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::daemon_client;
use crate::error::CliError;

/// The ACP protocol version spoken.
const PROTOCOL_VERSION: u64 = 1;
/// The approval modes offered as ACP session modes.
const MODES: [(&str, &str, &str); 4] = [
    (
        "yolo",
        "Yolo",
        "Everything runs without asking (pi's behaviour)",
    ),
    (
        "ask-writes",
        "Ask before writes",
        "Reads run; edits, writes and commands that may write ask",
    ),
    ("ask-all", "Ask for everything", "Every tool call asks"),
    (
        "read-only",
        "Read-only",
        "Reads run; everything else is denied",
    ),
];

/// `pictl acp`.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Model for new sessions (`provider/id`); the daemon's default otherwise
    #[arg(long)]
    model: Option<String>,
}

/// What the bridge knows about one attached session.
#[derive(Debug, Default)]
struct SessionState {
    cwd: PathBuf,
    // The run's end: bumped at each `agent_end`.
    ended: Option<watch::Sender<u64>>,
    cancelled: bool,
    // The file a running `edit`/`write` changes, by tool call id.
    changing: HashMap<String, Change>,
    // The tool call running now (what a question is about).
    current_call: Option<(String, String)>,
}

/// A file a running tool call changes, for its diff.
#[derive(Debug)]
struct Change {
    path: PathBuf,
    what: ChangeKind,
}

#[derive(Debug)]
enum ChangeKind {
    /// `write`: the text it writes (its `content` argument); the result's details say what
    /// the file was.
    Write { text: String },
    /// `edit`: the file when the call's start arrived (it may have been edited already).
    Edit { before: Option<String> },
}

struct Bridge {
    client: Client,
    // The editor: `pi-jsonrpc`'s peer over stdin and stdout, one message per line.
    editor: Peer,
    sessions: Mutex<HashMap<String, SessionState>>,
    model: Option<String>,
}

impl Bridge {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionState>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, session_id: &str, update: Value) {
        // Fails only when the editor is gone or stopped reading; the bridge then ends.
        let _ = self.editor.notify(
            "session/update",
            json!({"sessionId": session_id, "update": update}),
        );
    }

    /// Sends a request to the editor; its result (or `None` when it failed or the editor left).
    async fn request(&self, method: &str, params: Value) -> Option<Value> {
        self.editor.request(method, params, None).await.ok()
    }
}

/// What the editor sends on its own: requests (`initialize`, `session/*`) answered by
/// [`handle`], and `session/cancel`.
struct Editor {
    bridge: Weak<Bridge>,
}

impl pi_jsonrpc::Handler for Editor {
    fn notification(&self, method: &str, params: Value) -> Option<pi_jsonrpc::Held> {
        if method == "session/cancel"
            && let (Some(bridge), Some(session_id)) =
                (self.bridge.upgrade(), params["sessionId"].as_str())
        {
            let session_id = session_id.to_owned();
            tokio::spawn(async move { cancel(&bridge, &session_id).await });
        }
        None
    }

    fn request(&self, method: &str, params: Value) -> pi_jsonrpc::Answer {
        let bridge = self.bridge.upgrade();
        let method = method.to_owned();
        Box::pin(async move {
            match bridge {
                Some(bridge) => handle(&bridge, &method, params).await,
                None => Err((-32603, "the bridge is stopping".to_owned())),
            }
        })
    }
}

/// Messages from and to the editor: one per line, at most 64 MiB (an embedded resource).
const EDITOR: PeerConfig = PeerConfig {
    max_message: 64 * 1024 * 1024,
    outbound: OutboundLimits {
        write_timeout: std::time::Duration::from_secs(300),
        queued_bytes: 64 * 1024 * 1024,
    },
    cancel_notification: None,
    answer_malformed: true,
    name: "editor",
};

/// Runs `pictl acp` until stdin closes.
pub async fn run(args: AcpArgs) -> Result<ExitCode, CliError> {
    let connected = daemon_client::connect().await?;
    let bridge = Arc::new_cyclic(|bridge: &Weak<Bridge>| Bridge {
        client: connected.client,
        editor: Peer::start(
            Transport::bytes(tokio::io::stdout(), tokio::io::stdin(), Framing::Lines),
            Arc::new(Editor {
                bridge: bridge.clone(),
            }),
            EDITOR,
        ),
        sessions: Mutex::new(HashMap::new()),
        model: args.model,
    });
    let mut notifications = connected.notifications;
    let events = {
        let bridge = bridge.clone();
        tokio::spawn(async move {
            while let Some(notification) = notifications.next().await {
                let params = notification.params.unwrap_or(Value::Null);
                match notification.method.as_str() {
                    "session/event" => on_event(&bridge, &params),
                    "auth/loginEvent" => on_login_step(&params),
                    "ui/request" => {
                        let bridge = bridge.clone();
                        tokio::spawn(async move { on_question(&bridge, params).await });
                    }
                    _ => {}
                }
            }
        })
    };
    // Until the editor closes stdin (or sends something too big to be a message).
    bridge.editor.closed().await;
    // Requests it sent before are answered (a prompt runs to its end), with their updates.
    bridge.editor.answered().await;
    events.abort();
    // What was answered before reaches the editor.
    bridge.editor.flush().await;
    Ok(ExitCode::SUCCESS)
}

type Failure = (i64, String);

/// The subscription logins an editor may offer (ACP `authMethods`): the daemon runs them and
/// stores the tokens in pi's `auth.json`.
fn auth_methods() -> Value {
    json!([
        {"id": "anthropic", "name": "Claude Pro/Max",
         "description": "Log in with your Claude subscription in the browser (pi shares the login)"},
        {"id": "openai-codex", "name": "ChatGPT Plus/Pro",
         "description": "Log in with your ChatGPT subscription in the browser (pi shares the login)"},
        {"id": "github-copilot", "name": "GitHub Copilot",
         "description": "Log in with GitHub's device flow: open the URL and enter the code the agent's log shows"},
    ])
}

/// ACP `authenticate {methodId}`: the daemon's login of that subscription, its URL opened in
/// the browser (and written to the agent's log, stderr, with the code to enter); answered
/// when the login completed.
async fn authenticate(bridge: &Bridge, params: &Value) -> Result<Value, Failure> {
    let method = params["methodId"].as_str().unwrap_or_default();
    let known = ["anthropic", "openai-codex", "github-copilot"];
    if !known.contains(&method) {
        return Err(invalid(format!(
            "unknown authentication method {method:?}; use one of {}",
            known.join(", ")
        )));
    }
    let answer = bridge
        .client
        .call::<pi_protocol::v1::AuthLogin>(&pi_protocol::v1::AuthLoginParams {
            provider: method.to_owned(),
            // An editor has no place to ask for a GitHub Enterprise domain: github.com.
            enterprise_domain: (method == "github-copilot").then(String::new),
        })
        .await
        .map_err(daemon_error)?;
    crate::output::eprint_line(&format!(
        "pi: logged in to {method}; the tokens are in {}",
        answer.path
    ));
    Ok(json!({}))
}

/// A step of a login an editor started: the URL opened and everything said on stderr (the
/// editor's log of the agent). Questions are not asked: the browser completes the login.
fn on_login_step(params: &Value) {
    let Ok(event) = serde_json::from_value::<pi_protocol::v1::AuthLoginEventParams>(params.clone())
    else {
        return;
    };
    match event.step {
        pi_protocol::v1::LoginStep::OpenUrl { url, instructions } => {
            crate::output::eprint_line(&format!("pi: open {url} to log in. {instructions}"));
            crate::commands::login::open_browser(&url);
        }
        pi_protocol::v1::LoginStep::Progress { message } => {
            crate::output::eprint_line(&format!("pi: {message}"));
        }
        pi_protocol::v1::LoginStep::Prompt { .. } => {}
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    (-32602, message.into())
}

/// A daemon error for the editor: what was wrong with the request keeps its JSON-RPC code
/// (`-32602`, `-32601`), a session that does not exist is ACP's "resource not found"
/// (`-32002`), the daemon's own kinds keep their codes (`-32000`…`-32099`), and only a
/// failure of the daemon or the connection is `-32603`.
fn daemon_error(error: pi_client::ClientError) -> Failure {
    use pi_protocol::ErrorKind;
    let code = match error.rpc_kind() {
        Some(ErrorKind::NotFound) => -32002,
        Some(ErrorKind::Internal | ErrorKind::Storage) | None => -32603,
        Some(kind) => kind.code(),
    };
    (code, error.to_string())
}

async fn handle(bridge: &Arc<Bridge>, method: &str, params: Value) -> Result<Value, Failure> {
    match method {
        "initialize" => Ok(json!({
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": false},
            },
            "agentInfo": {"name": "pi", "title": "pi (daemon)", "version": env!("CARGO_PKG_VERSION")},
            "authMethods": auth_methods(),
        })),
        "authenticate" => authenticate(bridge, &params).await,
        "session/new" => {
            let cwd = absolute_cwd(&params)?;
            let created = bridge
                .client
                .call::<SessionCreate>(&SessionCreateParams {
                    cwd: cwd.display().to_string(),
                    env: Some(std::env::vars().collect()),
                    model: bridge.model.clone(),
                    ..SessionCreateParams::default()
                })
                .await
                .map_err(daemon_error)?;
            give_mcp_servers(bridge, &created.id, &params).await?;
            attach(bridge, &created.id, &cwd).await?;
            announce_commands_soon(bridge, created.id.clone());
            let model = created.model.as_ref().map(model_name);
            Ok(json!({
                "sessionId": created.id,
                "modes": modes("yolo"),
                "configOptions": config_options(bridge, model).await,
            }))
        }
        "session/load" => {
            let session_id = session_id(&params)?;
            let cwd = absolute_cwd(&params)?;
            replay(bridge, &session_id).await?;
            give_mcp_servers(bridge, &session_id, &params).await?;
            let model = attach(bridge, &session_id, &cwd).await?;
            announce_commands_soon(bridge, session_id.clone());
            Ok(
                json!({"modes": modes("yolo"), "configOptions": config_options(bridge, model).await}),
            )
        }
        "session/set_mode" => {
            let session_id = session_id(&params)?;
            let mode = params["modeId"].as_str().unwrap_or_default().to_owned();
            bridge
                .client
                .call::<SessionSetPolicy>(&SessionSetPolicyParams {
                    session_id: session_id.clone(),
                    mode: mode.clone(),
                })
                .await
                .map_err(daemon_error)?;
            bridge.update(
                &session_id,
                json!({"sessionUpdate": "current_mode_update", "currentModeId": mode}),
            );
            Ok(json!({}))
        }
        "session/prompt" => prompt(bridge, params).await,
        "session/set_config_option" => {
            let session_id = session_id(&params)?;
            if params["configId"] != "model" {
                return Err(invalid(format!(
                    "unknown configuration option {}; `pictl acp` offers \"model\"",
                    params["configId"]
                )));
            }
            let model = params["value"]
                .as_str()
                .ok_or_else(|| invalid("`value` must be a model (`provider/id`)"))?;
            let changed = bridge
                .client
                .call::<pi_protocol::v1::SessionSetModel>(&pi_protocol::v1::SessionSetModelParams {
                    session_id,
                    model: model.to_owned(),
                })
                .await
                .map_err(daemon_error)?;
            let current = serde_json::to_value(&changed).ok().and_then(|changed| {
                let model = &changed["model"];
                Some(format!(
                    "{}/{}",
                    model["provider"].as_str()?,
                    model["id"].as_str()?
                ))
            });
            Ok(
                json!({"configOptions": config_options(bridge, current.or(Some(model.to_owned()))).await}),
            )
        }
        other => Err((
            -32601,
            format!("`pictl acp` does not support the method {other:?}"),
        )),
    }
}

fn session_id(params: &Value) -> Result<String, Failure> {
    params["sessionId"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| invalid("`sessionId` is missing"))
}

fn absolute_cwd(params: &Value) -> Result<PathBuf, Failure> {
    let cwd = params["cwd"]
        .as_str()
        .ok_or_else(|| invalid("`cwd` is missing"))?;
    let cwd = PathBuf::from(cwd);
    if !cwd.is_absolute() {
        return Err(invalid(format!(
            "`cwd` must be an absolute path, not {}",
            cwd.display()
        )));
    }
    Ok(cwd)
}

fn modes(current: &str) -> Value {
    json!({
        "currentModeId": current,
        "availableModes": MODES.iter().map(|(id, name, description)| json!({
            "id": id, "name": name, "description": description,
        })).collect::<Vec<_>>(),
    })
}

/// The session's settings an editor can change: the model (those with a key).
async fn config_options(bridge: &Bridge, current: Option<String>) -> Value {
    let models = bridge
        .client
        .call::<pi_protocol::v1::ModelList>(&Default::default())
        .await
        .map(|list| list.models)
        .unwrap_or_default();
    let options: Vec<Value> = models
        .iter()
        .filter(|model| model.has_key)
        .map(|model| {
            json!({"value": format!("{}/{}", model.provider, model.id), "name": model.name,
                "description": format!("{} · {} tokens of context", model.provider, model.context_window)})
        })
        .collect();
    json!([{
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": current.unwrap_or_default(),
        "options": options,
    }])
}

/// The editor's `mcpServers` for the session (`mcp/setSessionServers`): stdio and HTTP ones.
async fn give_mcp_servers(
    bridge: &Bridge,
    session_id: &str,
    params: &Value,
) -> Result<(), Failure> {
    let pairs = |list: &Value| -> std::collections::BTreeMap<String, String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|pair| {
                Some((
                    pair["name"].as_str()?.to_owned(),
                    pair["value"].as_str()?.to_owned(),
                ))
            })
            .collect()
    };
    let servers: Vec<pi_protocol::v1::McpSessionServer> = params["mcpServers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|server| {
            let name = server["name"].as_str()?.to_owned();
            match server["type"].as_str() {
                Some("http") => Some(pi_protocol::v1::McpSessionServer {
                    name,
                    url: server["url"].as_str().map(str::to_owned),
                    headers: pairs(&server["headers"]),
                    ..Default::default()
                }),
                // SSE is not offered (`mcpCapabilities.sse` is false).
                Some("sse") => None,
                _ => Some(pi_protocol::v1::McpSessionServer {
                    name,
                    command: server["command"].as_str().map(str::to_owned),
                    args: server["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                    env: pairs(&server["env"]),
                    ..Default::default()
                }),
            }
        })
        .collect();
    if servers.is_empty() {
        return Ok(());
    }
    bridge
        .client
        .call::<pi_protocol::v1::McpSetSessionServers>(
            &pi_protocol::v1::McpSetSessionServersParams {
                session_id: session_id.to_owned(),
                servers,
            },
        )
        .await
        .map_err(daemon_error)?;
    Ok(())
}

/// Attaches; the session's model (`provider/id`).
async fn attach(
    bridge: &Arc<Bridge>,
    session_id: &str,
    cwd: &Path,
) -> Result<Option<String>, Failure> {
    bridge.sessions().insert(
        session_id.to_owned(),
        SessionState {
            cwd: cwd.to_path_buf(),
            ..SessionState::default()
        },
    );
    let attached = bridge
        .client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.to_owned(),
            after_seq: None,
        })
        .await
        .map_err(daemon_error)?;
    Ok(attached.snapshot.info.model.as_ref().map(model_name))
}

/// `provider/id`.
fn model_name(model: &pi_protocol::v1::ModelRef) -> String {
    format!("{}/{}", model.provider, model.id)
}

async fn prompt(bridge: &Arc<Bridge>, params: Value) -> Result<Value, Failure> {
    let session_id = session_id(&params)?;
    let blocks = params["prompt"].as_array().map_or(&[][..], Vec::as_slice);
    let (text, images) = prompt_content(blocks);
    let mut ended = {
        let mut sessions = bridge.sessions();
        let state = sessions.get_mut(&session_id).ok_or_else(|| {
            invalid(format!(
                "no session {session_id} on this connection; use session/new or session/load first"
            ))
        })?;
        state.cancelled = false;
        state
            .ended
            .get_or_insert_with(|| watch::channel(0).0)
            .subscribe()
    };
    let before = *ended.borrow_and_update();
    let sent = bridge
        .client
        .call::<SessionPrompt>(&pi_protocol::v1::SessionMessageParams {
            session_id: session_id.clone(),
            text,
            images,
        })
        .await
        .map_err(daemon_error)?;
    // An extension took the prompt (a command, a handled `input`): the turn is over.
    if sent.started {
        let _ = ended.wait_for(|count| *count > before).await;
    }
    let cancelled = bridge
        .sessions()
        .get(&session_id)
        .is_some_and(|state| state.cancelled);
    // Extensions may have loaded or registered commands during the turn.
    announce_commands(bridge, &session_id).await;
    Ok(json!({"stopReason": if cancelled { "cancelled" } else { "end_turn" }}))
}

/// ACP's `available_commands_update`: the session's slash commands (its pi extensions',
/// prompt templates', skills', MCP servers' prompts), as `session/get` lists them.
async fn announce_commands(bridge: &Bridge, session_id: &str) {
    let Ok(got) = bridge
        .client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: session_id.to_owned(),
        })
        .await
    else {
        return;
    };
    let commands: Vec<Value> = got
        .commands
        .iter()
        .map(|command| json!({"name": command.name, "description": command.description}))
        .collect();
    bridge.update(
        session_id,
        json!({"sessionUpdate": "available_commands_update", "availableCommands": commands}),
    );
}

/// Announces the session's commands once the answer that names the session went out.
fn announce_commands_soon(bridge: &Arc<Bridge>, session_id: String) {
    let bridge = bridge.clone();
    tokio::spawn(async move { announce_commands(&bridge, &session_id).await });
}

/// A prompt's content blocks as the daemon's text and images: text as it is, images as
/// attachments, a `resource_link` as an `@path` mention (a `file://` URI decoded to its
/// path), an embedded `resource` quoted with its URI.
fn prompt_content(blocks: &[Value]) -> (String, Vec<pi_protocol::v1::message::ImageContent>) {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("image") => images.push(pi_protocol::v1::message::ImageContent {
                data: block["data"].as_str().unwrap_or_default().to_owned(),
                mime_type: block["mimeType"].as_str().unwrap_or("image/png").to_owned(),
            }),
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                let file = url::Url::parse(uri)
                    .ok()
                    .filter(|url| url.scheme() == "file")
                    .and_then(|url| url.to_file_path().ok());
                match file {
                    Some(path) => text.push_str(&format!(" @{}", path.display())),
                    None => text.push_str(&format!(" @{uri}")),
                }
            }
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                if let Some(body) = resource["text"].as_str() {
                    text.push_str(&format!("\n\n{uri}\n```\n{body}\n```\n"));
                }
            }
            _ => {}
        }
    }
    (text, images)
}

async fn cancel(bridge: &Arc<Bridge>, session_id: &str) {
    if let Some(state) = bridge.sessions().get_mut(session_id) {
        state.cancelled = true;
    }
    let _ = bridge
        .client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: session_id.to_owned(),
        })
        .await;
}

/// ACP's tool kind for one of our tools.
fn kind(tool: &str) -> &'static str {
    match tool {
        "read" | "ls" | "lsp" => "read",
        "edit" | "write" => "edit",
        "bash" | "python" | "job" => "execute",
        "grep" | "find" => "search",
        "task" | "delegate_to_subagents" => "think",
        _ => "other",
    }
}

/// A title for a tool call: the tool and its main argument.
fn title(tool: &str, args: &Value) -> String {
    let main = ["command", "path", "pattern", "code"]
        .iter()
        .find_map(|key| args[key].as_str());
    match main {
        Some(main) => {
            let first = main.lines().next().unwrap_or_default();
            format!("{tool}: {first}")
        }
        None => tool.to_owned(),
    }
}

fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path.strip_prefix('@').unwrap_or(path));
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// The (old, new) texts of a finished call's diff (`None` old: a new file); `None` when no
/// honest diff can be made.
fn diff_texts(what: ChangeKind, path: &Path, result: &Value) -> Option<(Option<String>, String)> {
    match what {
        ChangeKind::Write { text } => {
            let details = &result["details"];
            if details["created"] == true {
                return Some((None, text));
            }
            // Past the tool's bound (or not UTF-8) the before-image is unknown.
            let previous = details["previousText"].as_str()?;
            Some((Some(previous.to_owned()), text))
        }
        ChangeKind::Edit { before } => {
            let after = std::fs::read_to_string(path).ok()?;
            // Equal texts: the start was read after the edit (or nothing changed).
            (before.as_deref() != Some(after.as_str())).then_some((before, after))
        }
    }
}

fn on_event(bridge: &Arc<Bridge>, params: &Value) {
    let Some(session_id) = params["sessionId"].as_str() else {
        return;
    };
    let event = &params["event"];
    let cwd = match bridge.sessions().get(session_id) {
        Some(state) => state.cwd.clone(),
        None => return,
    };
    match event["type"].as_str().unwrap_or_default() {
        "message_update" => {
            let delta = &event["assistantMessageEvent"];
            let chunk = match delta["type"].as_str() {
                Some("text_delta") => "agent_message_chunk",
                Some("thinking_delta") => "agent_thought_chunk",
                _ => return,
            };
            bridge.update(
                session_id,
                json!({"sessionUpdate": chunk,
                    "content": {"type": "text", "text": delta["delta"].as_str().unwrap_or_default()}}),
            );
        }
        "tool_execution_start" => {
            let id = event["toolCallId"].as_str().unwrap_or_default().to_owned();
            let tool = event["toolName"].as_str().unwrap_or_default().to_owned();
            let args = &event["args"];
            let location = args["path"].as_str().map(|path| resolve(&cwd, path));
            if let Some(state) = bridge.sessions().get_mut(session_id) {
                let what = match (tool.as_str(), &location) {
                    ("write", Some(_)) => args["content"].as_str().map(|text| ChangeKind::Write {
                        text: text.to_owned(),
                    }),
                    ("edit", Some(path)) => Some(ChangeKind::Edit {
                        before: std::fs::read_to_string(path).ok(),
                    }),
                    _ => None,
                };
                if let (Some(what), Some(path)) = (what, &location) {
                    state.changing.insert(
                        id.clone(),
                        Change {
                            path: path.clone(),
                            what,
                        },
                    );
                }
                state.current_call = Some((id.clone(), title(&tool, args)));
            }
            bridge.update(
                session_id,
                json!({
                    "sessionUpdate": "tool_call",
                    "toolCallId": id,
                    "title": title(&tool, args),
                    "kind": kind(&tool),
                    "status": "in_progress",
                    "locations": location.map(|path| vec![json!({"path": path})]).unwrap_or_default(),
                    "rawInput": args,
                }),
            );
        }
        "tool_execution_end" => {
            let id = event["toolCallId"].as_str().unwrap_or_default().to_owned();
            let failed = event["isError"].as_bool().unwrap_or(false);
            let change = bridge
                .sessions()
                .get_mut(session_id)
                .and_then(|state| state.changing.remove(&id));
            let mut content = Vec::new();
            if let Some(change) = change
                && !failed
                && let Some((old, new)) = diff_texts(change.what, &change.path, &event["result"])
            {
                content.push(
                    json!({"type": "diff", "path": change.path, "oldText": old, "newText": new}),
                );
            }
            let text: String = event["result"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            if !text.is_empty() {
                content.push(json!({"type": "content", "content": {"type": "text", "text": text}}));
            }
            bridge.update(
                session_id,
                json!({
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": id,
                    "status": if failed { "failed" } else { "completed" },
                    "content": content,
                }),
            );
        }
        "todos_updated" => bridge.update(session_id, plan_update(&event["todos"])),
        "agent_end" => {
            if let Some(state) = bridge.sessions().get_mut(session_id) {
                state.current_call = None;
                if let Some(ended) = &state.ended {
                    ended.send_modify(|count| *count += 1);
                }
            }
        }
        _ => {}
    }
}

/// The session's todo list as ACP's `plan` update: every task an entry (ACP knows pending,
/// in progress and completed; a blocked task is pending and says what blocks it, an
/// abandoned one is completed and says it was dropped).
fn plan_update(todos: &Value) -> Value {
    let entries: Vec<Value> = todos["phases"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|phase| phase["tasks"].as_array().into_iter().flatten())
        .map(|task| {
            let content = task["content"].as_str().unwrap_or_default();
            let (status, content) = match task["status"].as_str().unwrap_or_default() {
                "in_progress" => ("in_progress", content.to_owned()),
                "completed" => ("completed", content.to_owned()),
                "abandoned" => ("completed", format!("{content} (dropped)")),
                "blocked" => (
                    "pending",
                    format!(
                        "{content} (blocked: {})",
                        task["blocker"].as_str().unwrap_or("unknown")
                    ),
                ),
                _ => ("pending", content.to_owned()),
            };
            json!({"content": content, "priority": "medium", "status": status})
        })
        .collect();
    json!({"sessionUpdate": "plan", "entries": entries})
}

/// A daemon question → `session/request_permission`; the choice → `ui/respond`.
async fn on_question(bridge: &Arc<Bridge>, params: Value) {
    let Some(session_id) = params["sessionId"].as_str().map(str::to_owned) else {
        return;
    };
    let request_id = params["requestId"].as_str().unwrap_or_default().to_owned();
    let request = &params["request"];
    let current = match bridge.sessions().get(&session_id) {
        Some(state) => state.current_call.clone(),
        None => return,
    };
    let (options, confirm) = match request["method"].as_str() {
        Some("select") => (
            request["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|option| {
                    let lower = option.to_lowercase();
                    let kind = if lower.starts_with("deny") || lower.starts_with("no") {
                        "reject_once"
                    } else if lower.contains("always") || lower.contains("this session") {
                        "allow_always"
                    } else {
                        "allow_once"
                    };
                    json!({"optionId": option, "name": option, "kind": kind})
                })
                .collect::<Vec<_>>(),
            false,
        ),
        Some("confirm") => (
            vec![
                json!({"optionId": "yes", "name": "Yes", "kind": "allow_once"}),
                json!({"optionId": "no", "name": "No", "kind": "reject_once"}),
            ],
            true,
        ),
        // Text input has no ACP form; another client answers it.
        _ => return,
    };
    let question = request["title"].as_str().unwrap_or_default();
    let (call_id, call_title) =
        current.unwrap_or_else(|| (request_id.clone(), question.to_owned()));
    let result = bridge
        .request(
            "session/request_permission",
            json!({
                "sessionId": session_id,
                "toolCall": {"toolCallId": call_id, "title": call_title,
                    "content": [{"type": "content", "content": {"type": "text", "text": question}}]},
                "options": options,
            }),
        )
        .await;
    let outcome = result.as_ref().map(|result| &result["outcome"]);
    let chosen = outcome
        .filter(|outcome| outcome["outcome"] == "selected")
        .and_then(|outcome| outcome["optionId"].as_str())
        .map(str::to_owned);
    let answer = match (chosen, confirm) {
        (None, _) => UiAnswer {
            cancelled: true,
            ..UiAnswer::default()
        },
        (Some(choice), true) => UiAnswer {
            confirmed: Some(choice == "yes"),
            ..UiAnswer::default()
        },
        (Some(choice), false) => UiAnswer {
            value: Some(choice),
            ..UiAnswer::default()
        },
    };
    // Another client may have answered first; then this answer is refused, which is fine.
    let _ = bridge
        .client
        .call::<UiRespond>(&UiRespondParams {
            session_id,
            request_id,
            answer,
        })
        .await;
}

/// Sends a stored session's history as updates (`session/load`).
async fn replay(bridge: &Arc<Bridge>, session_id: &str) -> Result<(), Failure> {
    let mut cursor = None;
    loop {
        let page = bridge
            .client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.to_owned(),
                scope: Default::default(),
                limit: Some(1000),
                cursor: cursor.clone(),
            })
            .await
            .map_err(daemon_error)?;
        for record in &page.entries {
            let entry = serde_json::to_value(&record.entry).unwrap_or(Value::Null);
            replay_entry(bridge, session_id, &entry);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(()),
        }
    }
}

fn replay_entry(bridge: &Bridge, session_id: &str, entry: &Value) {
    if entry["type"] != "message" {
        return;
    }
    let message = &entry["message"];
    let blocks: Vec<Value> = match &message["content"] {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    };
    match message["role"].as_str() {
        Some("user") => {
            for block in blocks.iter().filter(|block| block["type"] == "text") {
                bridge.update(
                    session_id,
                    json!({"sessionUpdate": "user_message_chunk",
                        "content": {"type": "text", "text": block["text"]}}),
                );
            }
        }
        Some("assistant") => {
            for block in &blocks {
                match block["type"].as_str() {
                    Some("text") => bridge.update(
                        session_id,
                        json!({"sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": block["text"]}}),
                    ),
                    Some("thinking") => bridge.update(
                        session_id,
                        json!({"sessionUpdate": "agent_thought_chunk",
                            "content": {"type": "text", "text": block["thinking"]}}),
                    ),
                    Some("toolCall") => {
                        let tool = block["name"].as_str().unwrap_or_default();
                        bridge.update(
                            session_id,
                            json!({"sessionUpdate": "tool_call",
                                "toolCallId": block["id"],
                                "title": title(tool, &block["arguments"]),
                                "kind": kind(tool),
                                "status": "in_progress",
                                "rawInput": block["arguments"]}),
                        );
                    }
                    _ => {}
                }
            }
        }
        Some("toolResult") => {
            let text: String = blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            bridge.update(
                session_id,
                json!({"sessionUpdate": "tool_call_update",
                    "toolCallId": message["toolCallId"],
                    "status": if message["isError"] == true { "failed" } else { "completed" },
                    "content": [{"type": "content", "content": {"type": "text", "text": text}}]}),
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_errors_keep_their_kind_for_the_editor() {
        use pi_protocol::{ErrorKind, ErrorObject};
        let code =
            |kind| daemon_error(pi_client::ClientError::Rpc(ErrorObject::new(kind, "why"))).0;
        assert_eq!(code(ErrorKind::InvalidParams), -32602);
        assert_eq!(code(ErrorKind::NotFound), -32002);
        assert_eq!(code(ErrorKind::Busy), -32011);
        assert_eq!(code(ErrorKind::Internal), -32603);
        let (_, message) = daemon_error(pi_client::ClientError::Rpc(ErrorObject::new(
            ErrorKind::InvalidParams,
            "mode must be yolo, ask-writes, ask-all or read-only, not \"x\"",
        )));
        assert!(message.contains("mode must be yolo"), "{message}");
    }

    #[test]
    fn resource_links_become_mentions_of_decoded_paths() {
        let blocks = [
            json!({"type": "text", "text": "look at"}),
            json!({"type": "resource_link", "uri": "file:///tmp/a%20dir/caf%C3%A9.rs", "name": "x"}),
            json!({"type": "resource_link", "uri": "https://example.com/a%20b"}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}),
        ];
        let (text, images) = prompt_content(&blocks);
        assert_eq!(
            text,
            "look at @/tmp/a dir/café.rs @https://example.com/a%20b"
        );
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].mime_type, "image/jpeg");
    }

    fn write(text: &str) -> ChangeKind {
        ChangeKind::Write {
            text: text.to_owned(),
        }
    }

    #[test]
    fn a_diff_comes_from_what_the_tool_saw_or_is_left_out() {
        let nowhere = Path::new("/nonexistent/file.txt");
        // `write`: the tool's before-image.
        let created = json!({"details": {"created": true}});
        assert_eq!(
            diff_texts(write("new\n"), nowhere, &created),
            Some((None, "new\n".to_owned()))
        );
        let replaced =
            json!({"details": {"created": false, "previousBytes": 4, "previousText": "old\n"}});
        assert_eq!(
            diff_texts(write("new\n"), nowhere, &replaced),
            Some((Some("old\n".to_owned()), "new\n".to_owned()))
        );
        // Past the tool's bound: no before-image, no diff.
        let big = json!({"details": {"created": false, "previousBytes": 60000}});
        assert_eq!(diff_texts(write("new\n"), nowhere, &big), None);

        // `edit`: the start read, unless it already saw the edited file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "after\n").unwrap();
        let edited = ChangeKind::Edit {
            before: Some("before\n".to_owned()),
        };
        assert_eq!(
            diff_texts(edited, &path, &Value::Null),
            Some((Some("before\n".to_owned()), "after\n".to_owned()))
        );
        let too_late = ChangeKind::Edit {
            before: Some("after\n".to_owned()),
        };
        assert_eq!(diff_texts(too_late, &path, &Value::Null), None);
    }
}
