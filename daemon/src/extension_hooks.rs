//! pi's extensions in the session core: the session's [`Hooks`] over the extension host
//! (commands, `input`, `before_agent_start`, observed events, the state extensions read),
//! and the [`ExtensionPort`] through which the host reaches a session (dialogs, actions,
//! what extensions show). The session core decides where hooks fire; this module only
//! translates between pi's JSON and the core's types.

use std::sync::{Arc, Mutex, PoisonError};

use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{ExtensionUi, ExtensionUiParams, NotifyLevel, SessionEvent};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};

use crate::extensions::{ExtensionHost, SessionSet};
use crate::session::hooks::{
    BeforeAgentStart, BeforeCompact, BeforeTree, HookError, HookFuture, HookState, Hooks, Input,
    InputSource, WrittenCompaction,
};
use crate::session::services::SessionHooks;
use crate::session::{Command, Deliver, SessionsWeak, ToolEnvironment};

/// Sessions' hooks: their pi extensions, where any could load.
pub struct ExtensionHooks {
    host: Arc<ExtensionHost>,
}

impl ExtensionHooks {
    /// Hooks over `host`.
    pub fn new(host: Arc<ExtensionHost>) -> Self {
        ExtensionHooks { host }
    }
}

impl SessionHooks for ExtensionHooks {
    fn could_hook(
        &self,
        cwd: &std::path::Path,
        extensions: &[String],
        no_extensions: bool,
    ) -> bool {
        self.host.configured(
            cwd,
            &crate::extensions::Choice {
                paths: extensions.to_vec(),
                no_extensions,
                flags: Default::default(),
            },
        )
    }

    fn session(&self, environment: &ToolEnvironment) -> Option<Arc<dyn Hooks>> {
        if !self.host.configured(&environment.cwd, &choice(environment)) {
            return None;
        }
        Some(Arc::new(SessionExtensions {
            host: self.host.clone(),
            environment: environment.clone(),
            set: std::sync::OnceLock::new(),
            told: Mutex::new(Told::default()),
        }))
    }
}

/// What the host was told last, so that only changes are sent, and all of it for a host
/// that opens the session later.
#[derive(Default)]
struct Told {
    model: Option<Value>,
    tools: Vec<String>,
    state: Map<String, Value>,
}

/// One session's extensions. They open on the first hook (the session's actor is registered
/// by then: their notices and dialogs go through it), or when the daemon warms the session up.
struct SessionExtensions {
    host: Arc<ExtensionHost>,
    environment: ToolEnvironment,
    set: std::sync::OnceLock<watch::Receiver<Option<Arc<SessionSet>>>>,
    told: Mutex<Told>,
}

impl SessionExtensions {
    /// The session's extensions open (once), told what they read of the session.
    fn open(&self) {
        if self.set.get().is_some() {
            return;
        }
        let environment = &self.environment;
        self.host.warm_up(
            &environment.session_id,
            &environment.cwd,
            &choice(environment),
            port(environment),
        );
        if let Some(set) = self.host.watch(&environment.session_id) {
            let state = self
                .told
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .state
                .clone();
            self.host.state(&environment.session_id, state);
            let _ = self.set.set(set);
        }
    }

    /// Keeps the host's copy of the session's entries (`ctx.sessionManager`) current.
    fn mirror(&self, event: &SessionEvent) {
        let session_id = &self.environment.session_id;
        if self.set.get().is_none() {
            return;
        }
        match event {
            SessionEvent::MessageEnd {
                message,
                entry_id: Some(id),
            } => self.host.entry(
                session_id,
                json!({"type": "message", "id": id, "parentId": null,
                    "timestamp": pi_util::time::iso_from_millis(pi_util::time::now_millis()),
                    "message": message}),
            ),
            SessionEvent::EntryAdded { entry } => {
                if let Ok(entry) = serde_json::to_value(entry) {
                    self.host.entry(session_id, entry);
                }
            }
            SessionEvent::LeafChanged { leaf_id } => self.host.leaf(session_id, leaf_id.as_deref()),
            _ => {}
        }
    }

    /// The session's set as loaded now (by a first hook, or by the daemon's warm-up of a
    /// new session), without opening it.
    fn current(&self) -> Option<Arc<SessionSet>> {
        match self.set.get() {
            Some(set) => set.borrow().clone(),
            None => self.host.current(&self.environment.session_id),
        }
    }
}

impl Hooks for SessionExtensions {
    fn commands(&self) -> Vec<(String, String)> {
        // Asked through the session's actor (`session/get`): the extensions may open now,
        // so that a client attaching to a session loaded again sees their commands soon.
        self.open();
        self.current()
            .iter()
            .flat_map(|set| set.commands.iter())
            .map(|command| (command.name.clone(), command.description.clone()))
            .collect()
    }

    fn command(
        self: Arc<Self>,
        name: String,
        args: String,
    ) -> HookFuture<Option<Result<(), HookError>>> {
        self.open();
        Box::pin(async move {
            let ran = self
                .host
                .run_command(&self.environment.session_id, &name, &args)
                .await?;
            Some(ran.map_err(HookError::from))
        })
    }

    fn models(self: Arc<Self>) -> HookFuture<Vec<(pi_llm::Model, bool)>> {
        self.open();
        Box::pin(async move {
            self.host
                .models_loaded(&self.environment.session_id)
                .await
                .into_iter()
                .map(|provided| (provided.model, provided.has_key))
                .collect()
        })
    }

    fn provider_for(&self, model: &pi_llm::Model) -> Option<Arc<dyn pi_llm::Provider>> {
        let set = self.current()?;
        // Every model of such a provider, a custom id of it too (pi: the provider's
        // defaults with that id).
        set.models
            .iter()
            .any(|provided| provided.model.provider == model.provider)
            .then(|| {
                self.host
                    .provider(&self.environment.session_id, self.environment.env.clone())
            })
    }

    fn input(
        self: Arc<Self>,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
    ) -> HookFuture<Result<Input, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = self
                .host
                .input(
                    &self.environment.session_id,
                    &text,
                    images_to_pi(&images),
                    source.as_str(),
                )
                .await?;
            Ok(match answer["action"].as_str() {
                Some("handled") => Input::Handled,
                Some("transform") => Input::Transform {
                    text: answer["text"].as_str().unwrap_or(&text).to_owned(),
                    images: images_from_pi(&answer["images"]),
                },
                _ => Input::Continue,
            })
        })
    }

    fn before_agent_start(
        self: Arc<Self>,
        prompt: String,
        images: Vec<ImageContent>,
        system_prompt: String,
    ) -> HookFuture<Result<BeforeAgentStart, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = self
                .host
                .before_agent_start(
                    &self.environment.session_id,
                    &prompt,
                    images_to_pi(&images),
                    &system_prompt,
                )
                .await?;
            let messages = answer["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(custom_message)
                .collect();
            Ok(BeforeAgentStart {
                system_prompt: answer["systemPrompt"].as_str().map(str::to_owned),
                messages,
            })
        })
    }

    fn context_hook(&self) -> Option<pi_agent::ContextHook> {
        if !self.current()?.handles("context") {
            return None;
        }
        let (host, session_id) = (self.host.clone(), self.environment.session_id.clone());
        Some(Arc::new(
            move |messages: Vec<Arc<pi_agent::AgentMessage>>| {
                let (host, session_id) = (host.clone(), session_id.clone());
                Box::pin(async move {
                    let Ok(sent) = serde_json::to_value(&messages) else {
                        return messages;
                    };
                    match host.context(&session_id, sent).await {
                    Ok(Value::Array(changed)) => changed
                        .into_iter()
                        .map(serde_json::from_value::<pi_agent::AgentMessage>)
                        .collect::<Result<Vec<_>, _>>()
                        .map(|changed| changed.into_iter().map(Arc::new).collect())
                        .unwrap_or_else(|error| {
                            tracing::warn!(session = session_id, %error, "a context handler gave messages pid cannot read; the request goes with the session's");
                            messages
                        }),
                    Ok(_) => messages,
                    Err(error) => {
                        tracing::warn!(session = session_id, %error, "the context handlers failed; the request goes with the session's messages");
                        messages
                    }
                }
                })
            },
        ))
    }

    fn payload_hook(&self) -> Option<pi_llm::PayloadHook> {
        if !self.current()?.handles("before_provider_request") {
            return None;
        }
        let (host, session_id) = (self.host.clone(), self.environment.session_id.clone());
        Some(pi_llm::PayloadHook(Arc::new(move |payload: Value| {
            let (host, session_id) = (host.clone(), session_id.clone());
            Box::pin(async move {
                match host.provider_request(&session_id, payload.clone()).await {
                    Ok(Value::Null) => payload,
                    Ok(changed) => changed,
                    Err(error) => {
                        tracing::warn!(session = session_id, %error, "the before_provider_request handlers failed; the request goes as built");
                        payload
                    }
                }
            })
        })))
    }

    fn response_hook(&self) -> Option<pi_llm::ResponseHook> {
        if !self.current()?.handles("after_provider_response") {
            return None;
        }
        let (host, session_id) = (self.host.clone(), self.environment.session_id.clone());
        Some(pi_llm::ResponseHook(Arc::new(
            move |status: u16, headers: Vec<(String, String)>| {
                let (host, session_id) = (host.clone(), session_id.clone());
                Box::pin(async move {
                    let headers: Map<String, Value> = headers
                        .into_iter()
                        .map(|(name, value)| (name, Value::from(value)))
                        .collect();
                    if let Err(error) = host.provider_response(&session_id, status, headers).await {
                        tracing::warn!(session = session_id, %error, "the after_provider_response handlers failed");
                    }
                })
            },
        )))
    }

    fn before_compact(
        self: Arc<Self>,
        preparation: Value,
        branch: Vec<Value>,
        instructions: Option<String>,
    ) -> HookFuture<Result<BeforeCompact, HookError>> {
        self.open();
        let preparation_first_kept = preparation["firstKeptEntryId"].as_str().map(str::to_owned);
        let preparation_tokens_before = preparation["tokensBefore"].as_u64().unwrap_or_default();
        Box::pin(async move {
            let answer = self
                .host
                .before_compact(
                    &self.environment.session_id,
                    preparation,
                    branch,
                    instructions,
                )
                .await?;
            if answer["cancel"].as_bool() == Some(true) {
                return Ok(BeforeCompact::Cancel);
            }
            let written = &answer["compaction"];
            let Some(summary) = written["summary"].as_str() else {
                return Ok(BeforeCompact::Continue);
            };
            // What a handler leaves out is the preparation's.
            Ok(BeforeCompact::Write(WrittenCompaction {
                summary: summary.to_owned(),
                first_kept_entry_id: written["firstKeptEntryId"]
                    .as_str()
                    .or(preparation_first_kept.as_deref())
                    .unwrap_or_default()
                    .to_owned(),
                tokens_before: written["tokensBefore"]
                    .as_u64()
                    .unwrap_or(preparation_tokens_before),
                details: written["details"].clone(),
            }))
        })
    }

    fn shortcuts(&self) -> Vec<(String, String)> {
        self.current()
            .iter()
            .flat_map(|set| set.shortcuts.iter())
            .map(|shortcut| (shortcut.key.clone(), shortcut.description.clone()))
            .collect()
    }

    fn extensions(&self) -> Vec<String> {
        self.current()
            .iter()
            .flat_map(|set| set.extensions.iter())
            .map(|extension| extension.path.clone())
            .collect()
    }

    fn before_switch(
        self: Arc<Self>,
        reason: String,
        target: Option<String>,
    ) -> HookFuture<Result<bool, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = self
                .host
                .before_switch(&self.environment.session_id, &reason, target.as_deref())
                .await?;
            Ok(answer["cancel"].as_bool() == Some(true))
        })
    }

    fn handles(&self, event: &str) -> bool {
        self.open();
        self.current().is_some_and(|set| set.handles(event))
    }

    fn before_tree(
        self: Arc<Self>,
        preparation: Value,
    ) -> HookFuture<Result<BeforeTree, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = self
                .host
                .before_tree(&self.environment.session_id, preparation)
                .await?;
            let text = |key: &str| answer[key].as_str().map(str::to_owned);
            Ok(BeforeTree {
                cancel: answer["cancel"].as_bool() == Some(true),
                summary: answer["summary"]["summary"]
                    .as_str()
                    .map(|summary| (summary.to_owned(), answer["summary"]["details"].clone())),
                instructions: text("customInstructions"),
                replace_instructions: answer["replaceInstructions"].as_bool(),
                label: text("label"),
            })
        })
    }

    fn before_fork(self: Arc<Self>, entry_id: String) -> HookFuture<Result<bool, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = self
                .host
                .before_fork(&self.environment.session_id, &entry_id)
                .await?;
            Ok(answer["cancel"].as_bool() == Some(true))
        })
    }

    fn user_bash(
        self: Arc<Self>,
        command: String,
        exclude_from_context: bool,
        cwd: String,
    ) -> HookFuture<Result<Option<Value>, HookError>> {
        self.open();
        Box::pin(async move {
            let answer = match self
                .host
                .user_bash(
                    &self.environment.session_id,
                    &command,
                    exclude_from_context,
                    &cwd,
                )
                .await
            {
                Ok(answer) => answer,
                // Given up on while an extension may still run it: recorded as cancelled
                // (the host was told to abort it), never run a second time by pid.
                Err(error @ crate::extensions::ExtensionError::Timeout { .. }) => {
                    return Ok(Some(json!({"output": error.to_string(), "cancelled": true,
                        "truncated": false})));
                }
                Err(error) => return Err(error.into()),
            };
            Ok(Some(answer["result"].clone()).filter(|result| result.is_object()))
        })
    }

    fn observe(&self, event: &SessionEvent, streaming: Option<&pi_llm::AssistantMessage>) {
        self.mirror(event);
        // pi's `session_compact`, once the compaction's entry is stored.
        if let SessionEvent::EntryAdded { entry } = event
            && let pi_protocol::v1::SessionEntry::Compaction { from_hook, .. } = entry
            && self
                .current()
                .is_some_and(|set| set.handles("session_compact"))
        {
            self.host.event(
                &self.environment.session_id,
                json!({"type": "session_compact", "compactionEntry": entry,
                    "fromExtension": from_hook.unwrap_or(false)}),
            );
        }
        let Some(kind) = kind_of(event) else {
            return;
        };
        let hears = self.set.get().is_some_and(|set| {
            set.borrow()
                .as_ref()
                .is_some_and(|set| ExtensionHost::hears(set, kind))
        });
        if !hears {
            return;
        }
        let Ok(mut value) = serde_json::to_value(event) else {
            return;
        };
        if let (Some(message), Value::Object(fields)) = (streaming, &mut value)
            && kind == "message_update"
            && let Ok(message) = serde_json::to_value(message)
        {
            fields.insert("message".to_owned(), message);
        }
        self.host.event(&self.environment.session_id, value);
    }

    fn state(&self, state: HookState<'_>) {
        let mut changes = Map::new();
        let model = state
            .model
            .and_then(|model| serde_json::to_value(model).ok());
        let tools: Vec<String> = state
            .tools
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        let previous_model = {
            let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
            if told.tools != tools {
                changes.insert("activeTools".to_owned(), json!(tools));
                changes.insert(
                    "allTools".to_owned(),
                    Value::Array(
                        state
                            .tools
                            .iter()
                            .map(|tool| {
                                json!({"name": tool.name(), "description": tool.description(),
                                    "parameters": tool.parameters()})
                            })
                            .collect(),
                    ),
                );
                told.tools = tools;
            }
            if told.model == model {
                None
            } else {
                Some(std::mem::replace(&mut told.model, model.clone()))
            }
        };
        changes.insert("model".to_owned(), model.clone().unwrap_or(Value::Null));
        changes.insert("thinkingLevel".to_owned(), json!(state.thinking));
        changes.insert("sessionName".to_owned(), json!(state.name));
        if let Some(prompt) = state.system_prompt {
            changes.insert("systemPrompt".to_owned(), Value::from(prompt));
        }
        self.told
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .state
            .extend(changes.clone());
        let session_id = &self.environment.session_id;
        if self.set.get().is_none() {
            return;
        }
        self.host.state(session_id, changes);
        // pi's `model_select`, when the model changed after the session started.
        if let Some(Some(previous)) = previous_model
            && self
                .current()
                .is_some_and(|set| ExtensionHost::hears(&set, "model_select"))
        {
            self.host.event(
                session_id,
                json!({"type": "model_select", "model": model, "previousModel": previous,
                    "source": "set"}),
            );
        }
    }
}

/// What a session chose to load besides and instead of the configured extensions.
pub fn choice(environment: &ToolEnvironment) -> crate::extensions::Choice {
    crate::extensions::Choice {
        paths: environment.extensions.to_vec(),
        no_extensions: environment.no_extensions,
        flags: (*environment.extension_flags).clone(),
    }
}

/// pi's name of the observe-only events extensions hear.
fn kind_of(event: &SessionEvent) -> Option<&'static str> {
    Some(match event {
        SessionEvent::AgentStart => "agent_start",
        SessionEvent::AgentEnd { .. } => "agent_end",
        SessionEvent::TurnStart => "turn_start",
        SessionEvent::TurnEnd { .. } => "turn_end",
        SessionEvent::MessageStart { .. } => "message_start",
        SessionEvent::MessageUpdate { .. } => "message_update",
        SessionEvent::MessageEnd { .. } => "message_end",
        SessionEvent::ToolExecutionStart { .. } => "tool_execution_start",
        SessionEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
        SessionEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        _ => return None,
    })
}

/// Images as pi's content blocks.
fn images_to_pi(images: &[ImageContent]) -> Value {
    Value::Array(
        images
            .iter()
            .map(|image| json!({"type": "image", "data": image.data, "mimeType": image.mime_type}))
            .collect(),
    )
}

/// pi's image blocks (`None` when there are none to take).
fn images_from_pi(value: &Value) -> Option<Vec<ImageContent>> {
    let blocks = value.as_array()?;
    Some(
        blocks
            .iter()
            .filter(|block| block["type"] == "image")
            .filter_map(|block| serde_json::from_value(block.clone()).ok())
            .collect(),
    )
}

/// pi's content (`string` or text and image blocks) as a message's content.
fn content_of(value: &Value) -> Vec<pi_llm::UserContent> {
    match value {
        Value::String(text) => vec![pi_llm::UserContent::text(text.clone())],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| serde_json::from_value(block.clone()).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// pi's custom message `{customType, content, display, details}`.
fn custom_message(value: &Value) -> Option<pi_agent::AgentMessage> {
    Some(pi_agent::AgentMessage::Custom(
        pi_agent::message::CustomMessage {
            custom_type: value["customType"].as_str()?.to_owned(),
            content: content_of(&value["content"]),
            display: value["display"].as_bool().unwrap_or(true),
            details: Some(value["details"].clone()).filter(|details| !details.is_null()),
            timestamp: pi_util::time::now_millis(),
        },
    ))
}

/// What a session's extensions reach of it: its clients' answers, its actions, what they
/// show. Actions and notices reach the session in the order the host sent them.
pub fn port(environment: &ToolEnvironment) -> Arc<dyn crate::extensions::SessionPort> {
    let (sender, receiver) = mpsc::channel(PORT_QUEUE);
    tokio::spawn(carry_out(
        environment.sessions.clone(),
        environment.session_id.clone(),
        receiver,
    ));
    Arc::new(ExtensionPort {
        sessions: environment.sessions.clone(),
        session_id: environment.session_id.clone(),
        sender,
    })
}

/// Actions and notices waiting for the session, at most.
const PORT_QUEUE: usize = 1024;

enum FromHost {
    Action(Value),
    Show(ExtensionUi),
}

struct ExtensionPort {
    sessions: SessionsWeak,
    session_id: String,
    sender: mpsc::Sender<FromHost>,
}

impl ExtensionPort {
    fn queue(&self, item: FromHost) {
        if self.sender.try_send(item).is_err() {
            tracing::warn!(
                session = self.session_id,
                "the session is not keeping up with its extensions; an action or notice was dropped"
            );
        }
    }
}

impl crate::extensions::SessionPort for ExtensionPort {
    fn ask(
        &self,
        request: pi_protocol::v1::UiRequest,
        timeout: Option<std::time::Duration>,
    ) -> futures_util::future::BoxFuture<'_, Option<pi_protocol::v1::UiAnswer>> {
        Box::pin(async move {
            let sessions = self.sessions.upgrade()?;
            sessions
                .ask(pi_protocol::v1::UiAskParams {
                    session_id: self.session_id.clone(),
                    request,
                    timeout_ms: timeout.map(|timeout| timeout.as_millis() as u64),
                })
                .await
                .ok()
                .map(|response| response.answer)
        })
    }

    fn has_ui(&self) -> futures_util::future::BoxFuture<'_, bool> {
        Box::pin(async move {
            let Some(sessions) = self.sessions.upgrade() else {
                return false;
            };
            sessions
                .call_loaded(&self.session_id, |reply| Command::QuestionHearers { reply })
                .await
                .is_some_and(|hearers| hearers.is_ok_and(|hearers| hearers > 0))
        })
    }

    fn action(&self, action: Value) {
        self.queue(FromHost::Action(action));
    }

    fn show(&self, ui: ExtensionUi) {
        self.queue(FromHost::Show(ui));
    }

    fn entries(&self) -> futures_util::future::BoxFuture<'_, (Vec<Value>, Option<String>)> {
        Box::pin(async move {
            let Some(sessions) = self.sessions.upgrade() else {
                return (Vec::new(), None);
            };
            match sessions.all_entries(&self.session_id).await {
                Ok((row, bodies)) => (
                    bodies
                        .iter()
                        .filter_map(|body| serde_json::from_str(body).ok())
                        .collect(),
                    row.leaf_id,
                ),
                Err(error) => {
                    tracing::warn!(session = self.session_id, %error, "cannot read the session's entries for its extensions");
                    (Vec::new(), None)
                }
            }
        })
    }
}

/// Carries out a session's extensions' actions and notices, in order.
async fn carry_out(
    sessions: SessionsWeak,
    session_id: String,
    mut receiver: mpsc::Receiver<FromHost>,
) {
    while let Some(item) = receiver.recv().await {
        let Some(registry) = sessions.upgrade() else {
            return;
        };
        let outcome = match item {
            FromHost::Show(ui) => notify(&registry, &session_id, ui).await,
            FromHost::Action(action) => act(&registry, &session_id, &action).await,
        };
        if let Err(error) = outcome {
            tracing::warn!(session = session_id, %error, "an extension's action failed");
            // The user hears why what an extension asked for did not happen.
            let ui = ExtensionUi::Notify {
                message: error.to_string(),
                level: NotifyLevel::Error,
            };
            let _ = notify(&registry, &session_id, ui).await;
        }
    }
}

async fn notify(
    registry: &crate::session::SessionRegistry,
    session_id: &str,
    ui: ExtensionUi,
) -> Result<(), crate::session::SessionError> {
    let notice = crate::session::events::Notice::ExtensionUi(ExtensionUiParams {
        session_id: session_id.to_owned(),
        ui,
    });
    send(registry, session_id, |reply| Command::Notify {
        notice: notice.clone(),
        reply,
    })
    .await
    .map(|_| ())
}

/// A command for the session if its actor is loaded: what its extensions do never loads it
/// again (a session that unloaded closed its extensions).
async fn send<T>(
    registry: &crate::session::SessionRegistry,
    session_id: &str,
    make: impl Fn(crate::session::Reply<T>) -> Command,
) -> Result<T, crate::session::SessionError> {
    registry
        .call_loaded(session_id, make)
        .await
        .unwrap_or(Err(crate::session::SessionError::Closing))
}

/// One action of pi's extension API on the session.
async fn act(
    registry: &crate::session::SessionRegistry,
    session_id: &str,
    action: &Value,
) -> Result<(), crate::session::SessionError> {
    let name = action["action"].as_str().unwrap_or_default();
    let text = |key: &str| action[key].as_str().unwrap_or_default().to_owned();
    let deliver = match action["options"]["deliverAs"].as_str() {
        Some("steer") => Some(Deliver::Steer),
        Some("followUp") => Some(Deliver::FollowUp),
        Some("nextTurn") => Some(Deliver::NextTurn),
        _ => None,
    };
    match name {
        "appendEntry" => {
            let (custom_type, data) = (text("customType"), action["data"].clone());
            send(registry, session_id, |reply| Command::Record {
                custom_type: custom_type.clone(),
                data: data.clone(),
                reply,
            })
            .await?;
        }
        "sendUserMessage" => {
            let content = content_of(&action["content"]);
            let prompt_text = content
                .iter()
                .filter_map(|block| match block {
                    pi_llm::UserContent::Text(text) => Some(text.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let images: Vec<ImageContent> = images_from_pi(&action["content"]).unwrap_or_default();
            match deliver {
                Some(Deliver::Steer | Deliver::FollowUp) => {
                    send(registry, session_id, |reply| Command::Enqueue {
                        steering: deliver == Some(Deliver::Steer),
                        text: prompt_text.clone(),
                        images: images.clone(),
                        reply,
                    })
                    .await?;
                }
                _ => {
                    send(registry, session_id, |reply| Command::Prompt {
                        text: prompt_text.clone(),
                        images: images.clone(),
                        source: InputSource::Extension,
                        reply,
                    })
                    .await?;
                }
            }
        }
        "sendMessage" => {
            let Some(message) = custom_message(&action["message"]) else {
                return Err(crate::session::SessionError::invalid(
                    "message",
                    "sendMessage needs a message with a customType",
                ));
            };
            let trigger = action["options"]["triggerTurn"].as_bool() == Some(true);
            send(registry, session_id, |reply| Command::SendCustom {
                message: Box::new(message.clone()),
                trigger,
                deliver,
                reply,
            })
            .await?;
        }
        "setSessionName" => {
            let name = text("name");
            send(registry, session_id, |reply| Command::SetName {
                name: name.clone(),
                reply,
            })
            .await?;
        }
        "setLabel" => {
            let (entry_id, label) = (text("entryId"), action["label"].as_str().map(str::to_owned));
            send(registry, session_id, |reply| Command::Label {
                entry_id: entry_id.clone(),
                label: label.clone(),
                reply,
            })
            .await?;
        }
        "setActiveTools" => {
            let names: Vec<String> = action["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect();
            send(registry, session_id, |reply| Command::SetActiveTools {
                names: Some(names.clone()),
                reply,
            })
            .await?;
        }
        // The extensions that narrowed the tools were unloaded (refused): the session's own
        // tools again.
        "resetActiveTools" => {
            send(registry, session_id, |reply| Command::SetActiveTools {
                names: None,
                reply,
            })
            .await?;
        }
        "setThinkingLevel" => {
            let level = text("level");
            send(registry, session_id, |reply| Command::SetThinking {
                level: level.clone(),
                reply,
            })
            .await?;
        }
        "setModel" => {
            let spec = format!("{}/{}", text("provider"), text("id"));
            if !registry.is_loaded(session_id) {
                return Err(crate::session::SessionError::Closing);
            }
            registry.set_model(session_id, &spec).await?;
        }
        "abort" => {
            send(registry, session_id, |reply| Command::Abort { reply }).await?;
        }
        "compact" => {
            let instructions = action["customInstructions"].as_str().map(str::to_owned);
            send(registry, session_id, |reply| Command::Compact {
                instructions: instructions.clone(),
                reply,
            })
            .await?;
        }
        other => {
            return Err(crate::session::SessionError::invalid(
                "action",
                format!(
                    "an extension called {other}, which pid does not carry out yet; it had no effect"
                ),
            ));
        }
    }
    Ok(())
}
