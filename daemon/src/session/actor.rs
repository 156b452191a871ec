//! The session actor: one task per loaded session owns its state (metadata, context, queues,
//! subscribers, the active run) and serves commands from a bounded channel in order.
//!
//! A run executes in its own task and reports agent events to the actor, which stores durable
//! ones (completed messages) before broadcasting anything, assigns every event the next `seq`,
//! and keeps the live state that `session/attach` snapshots (the streaming message, running
//! tools). Because one task does all of this, attach (snapshot + subscribe) is atomic with
//! respect to events: no gap, no duplicate.
//!
//! Architecture invariant: an entry is committed before the event announcing it is sent.
//! Architecture invariant: a panic in a run ends that run with a `session_error` event; the
//! actor and the daemon carry on.

mod branch_summary;
mod compaction;
mod job;

use std::sync::Arc;

use pi_agent::message::BashExecutionMessage;
use pi_agent::{AgentEvent, AgentMessage, MessageQueues, RunConfig, RunHandles, RunOutcome, Tool};
use pi_llm::{AssistantMessage, Model, StopReason, ThinkingLevel};
use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{
    EmptyResponse, QueueState, RunningTool, SessionAttachResponse, SessionCompactResponse,
    SessionEntry, SessionEvent, SessionEventNotification, SessionEventParams, SessionGetResponse,
    SessionInfo, SessionNavigateResponse, SessionSetModelResponse, SessionSetThinkingResponse,
    SessionSnapshot, SessionStatsResponse, SlashCommand,
};
use pi_protocol::{ErrorKind, ErrorObject, NotificationMethod as _};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::coding::Resources;
use crate::compaction::Instructions;
use crate::rpc::connection::ConnectionHandle;
use crate::rpc::wire::{self, transcode};
use crate::session::entries::{self, EntryBase, EntryIds};
use crate::session::presence::Presence;
use crate::session::retry::{AfterRun, AutoRetry};
use crate::session::services::{SessionServices, clamp_thinking};
use crate::session::{SessionMap, info, now_millis};
use crate::store::{SessionRow, Store};

/// Commands queued for one session before senders wait.
pub const COMMAND_BUFFER: usize = 64;
/// Agent events buffered between a run and its actor.
const RUN_EVENT_BUFFER: usize = 1024;

/// A reply channel.
pub type Reply<T> = oneshot::Sender<Result<T, ErrorObject>>;

/// What a session can be asked to do.
#[derive(Debug)]
pub enum Command {
    /// Subscribe a connection; snapshot + replay.
    Attach {
        /// The subscriber.
        connection: ConnectionHandle,
        /// Replay durable events after this seq.
        after_seq: Option<u64>,
        /// Answer.
        reply: Reply<SessionAttachResponse>,
    },
    /// Unsubscribe a connection.
    Detach {
        /// The connection id.
        connection_id: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Metadata, tools, queue.
    Get {
        /// Answer.
        reply: Reply<SessionGetResponse>,
    },
    /// Start a run.
    Prompt {
        /// Text.
        text: String,
        /// Images.
        images: Vec<ImageContent>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Queue a steering (`true`) or follow-up (`false`) message.
    Enqueue {
        /// Steering or follow-up.
        steering: bool,
        /// Text.
        text: String,
        /// Images.
        images: Vec<ImageContent>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Abort the run (and any pending retry); answered once idle.
    Abort {
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Cancel a pending automatic retry.
    AbortRetry {
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Switch model.
    SetModel {
        /// Model spec.
        spec: String,
        /// Answer.
        reply: Reply<SessionSetModelResponse>,
    },
    /// Set thinking level.
    SetThinking {
        /// Level name.
        level: String,
        /// Answer.
        reply: Reply<SessionSetThinkingResponse>,
    },
    /// Name the session.
    SetName {
        /// The name.
        name: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Label an entry.
    Label {
        /// Target entry.
        entry_id: String,
        /// Label (None clears).
        label: Option<String>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Move the leaf.
    Navigate {
        /// Target entry.
        entry_id: String,
        /// Summarize the branch left behind, with these instructions.
        summary: Option<Instructions>,
        /// Answer (after the summary, when one is asked for).
        reply: Reply<SessionNavigateResponse>,
    },
    /// Take the queued messages back.
    Dequeue {
        /// Answer: the texts taken.
        reply: Reply<QueueState>,
    },
    /// Record a subscriber's editor draft and tell the others.
    SetDraft {
        /// The connection id.
        connection_id: String,
        /// The draft (empty clears).
        text: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Compact now (aborting an active run first).
    Compact {
        /// Focus of the summary.
        instructions: Option<String>,
        /// Answered when the compaction has ended.
        reply: Reply<SessionCompactResponse>,
    },
    /// Counts over the context.
    Stats {
        /// Answer.
        reply: Reply<SessionStatsResponse>,
    },
    /// Record a user shell command (`session/bash`); deferred to the end of an active run, as
    /// in pi.
    RecordBash {
        /// The `bashExecution` message.
        message: BashExecutionMessage,
        /// Answer: the entry id, or `None` when deferred.
        reply: Reply<Option<String>>,
    },
    /// Send a notification that is not a session event (`ui/*`) to every subscriber.
    Notify {
        /// The notification's method.
        method: &'static str,
        /// The whole serialized notification.
        text: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Stop: abort any run, persist, exit.
    Close {
        /// Why (subscribers are told when the session is deleted).
        deleted: bool,
        /// Answered once the actor has stopped.
        reply: Reply<EmptyResponse>,
    },
}

/// A loaded session's address. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SessionHandle {
    /// The session id.
    pub id: Arc<str>,
    /// Distinguishes successive actors of one session (after an unload and reload).
    pub generation: u64,
    commands: mpsc::Sender<Command>,
}

/// The actor stopped before answering; the caller should look the session up again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

impl SessionHandle {
    /// Sends a command and waits for its answer.
    pub async fn call<T>(
        &self,
        make: impl FnOnce(Reply<T>) -> Command,
    ) -> Result<Result<T, ErrorObject>, Gone> {
        let (reply, answer) = oneshot::channel();
        self.commands.send(make(reply)).await.map_err(|_| Gone)?;
        answer.await.map_err(|_| Gone)
    }

    /// Whether the actor has stopped.
    pub fn is_closed(&self) -> bool {
        self.commands.is_closed()
    }
}

struct ActiveRun {
    cancel: CancellationToken,
    events: mpsc::Receiver<AgentEvent>,
    task: JoinHandle<RunOutcome>,
    // The assistant message being streamed, rebuilt from deltas for snapshots.
    streaming: Option<AssistantMessage>,
    running_tools: Vec<RunningTool>,
    abort_waiters: Vec<Reply<EmptyResponse>>,
}

/// The actor's state. Owned by its task; never shared.
pub struct SessionActor {
    store: Store,
    services: SessionServices,
    sessions: Arc<SessionMap>,
    generation: u64,
    row: SessionRow,
    entry_ids: EntryIds,
    context: Vec<AgentMessage>,
    model: Option<Model>,
    thinking: ThinkingLevel,
    tools: Vec<Arc<dyn Tool>>,
    // Settings, context files, skills and templates of the session's cwd; reloaded before
    // each run so edits apply to the next prompt.
    resources: Resources,
    queues: Arc<MessageQueues>,
    // Invariant: the seq of the last event assigned (broadcast or stored).
    seq: u64,
    subscribers: Vec<ConnectionHandle>,
    // Drafts of the subscribers, for `session/presence`.
    presence: Presence,
    run: Option<ActiveRun>,
    // Invariant: a compaction or branch summary; never set while `run` is.
    job: Option<job::ActiveJob>,
    // A manual compaction waiting for the run it aborted.
    pending_compaction: Option<job::PendingCompaction>,
    // Set when an overflow was compacted and retried; cleared by a prompt or a run that ends
    // without error, so a second overflow in a row is reported instead of compacted again.
    overflow_recovery_attempted: bool,
    // Invariant: `context[..compacted_prefix]` predates the latest compaction on the branch
    // (its summary and the kept messages); such messages never trigger a compaction. pi
    // compares timestamps instead, which cannot order a message and a compaction made in the
    // same millisecond.
    compacted_prefix: usize,
    // User shell commands that finished during a run; stored when the run ends.
    pending_bash: Vec<AgentMessage>,
    // Automatic retries of transient provider failures.
    retry: AutoRetry,
    commands: mpsc::Receiver<Command>,
    closing: Option<(bool, Reply<EmptyResponse>)>,
}

impl SessionActor {
    /// Loads a session from the store and starts its actor.
    pub(crate) async fn spawn(
        store: Store,
        services: SessionServices,
        sessions: Arc<SessionMap>,
        generation: u64,
        row: SessionRow,
    ) -> Result<SessionHandle, ErrorObject> {
        let branch: Vec<SessionEntry> = store
            .branch(&row.id, row.leaf_id.as_deref())
            .await
            .map_err(super::internal)?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(super::internal)?;
        let context = entries::build_context(&branch).map_err(super::internal)?;
        let ids = store.entry_ids(&row.id).await.map_err(super::internal)?;
        let model = row
            .model
            .as_ref()
            .and_then(|(provider, id)| services.models.find(provider, id));
        let thinking = row
            .thinking_level
            .parse()
            .unwrap_or(services.settings.default_thinking);
        let tool_env = super::tool_environment(&row);
        let tools = services
            .tools
            .tools(&tool_env, &row.tools)
            .unwrap_or_else(|error| {
                tracing::warn!(session = row.id, %error, "some tools are unavailable");
                Vec::new()
            });
        let (sender, commands) = mpsc::channel(COMMAND_BUFFER);
        let handle = SessionHandle {
            id: row.id.as_str().into(),
            generation,
            commands: sender,
        };
        let resources = crate::coding::resources::load_in_background(
            services.settings.resources.clone(),
            std::path::PathBuf::from(&row.cwd),
        )
        .await;
        let (steering_mode, follow_up_mode) = queue_modes(&services, &resources);
        let queues = Arc::new(MessageQueues::new(steering_mode, follow_up_mode));
        let actor = SessionActor {
            seq: row.last_seq,
            entry_ids: EntryIds::new(ids.iter().map(String::as_str)),
            compacted_prefix: context.compacted_prefix,
            context: context.messages,
            model,
            thinking,
            tools,
            resources,
            queues,
            subscribers: Vec::new(),
            presence: Presence::default(),
            run: None,
            job: None,
            pending_compaction: None,
            overflow_recovery_attempted: false,
            pending_bash: Vec::new(),
            retry: AutoRetry::default(),
            commands,
            closing: None,
            store,
            services,
            sessions,
            generation,
            row,
        };
        let span = tracing::info_span!("session", id = %handle.id);
        tokio::spawn(tracing::Instrument::instrument(actor.serve(), span));
        Ok(handle)
    }

    async fn serve(mut self) {
        tracing::debug!("loaded");
        loop {
            if self.run.is_none()
                && self.job.is_none()
                && let Some((deleted, reply)) = self.closing.take()
            {
                self.finish(deleted).await;
                let _ = reply.send(Ok(EmptyResponse {}));
                return;
            }
            let idle = self.run.is_none()
                && self.job.is_none()
                && !self.retry.is_pending()
                && self.prune_subscribers() == 0;
            let retry_due = self.retry.due().filter(|_| self.run.is_none());
            let idle_timeout = self.services.settings.idle_unload;
            tokio::select! {
                biased;
                event = next_run_event(&mut self.run) => match event {
                    Some(event) => self.on_agent_event(event).await,
                    None => self.on_run_finished().await,
                },
                outcome = job::next_job_outcome(&mut self.job) => {
                    self.on_job_finished(outcome).await
                }
                command = self.commands.recv() => match command {
                    Some(command) => self.handle(command).await,
                    None => return,
                },
                _ = any_closed(&self.subscribers), if !self.subscribers.is_empty() => {
                    self.prune_subscribers();
                },
                () = sleep_until_due(retry_due), if retry_due.is_some() => {
                    self.retry.start_due();
                    self.start_retry().await;
                }
                _ = tokio::time::sleep(idle_timeout), if idle && self.closing.is_none() => {
                    if self.unload().await {
                        return;
                    }
                }
            }
        }
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Attach {
                connection,
                after_seq,
                reply,
            } => {
                let _ = reply.send(self.attach(connection, after_seq).await);
            }
            Command::Detach {
                connection_id,
                reply,
            } => {
                self.subscribers
                    .retain(|subscriber| subscriber.id() != connection_id);
                self.presence.retain(&self.subscribers);
                self.presence.announce(&self.row.id, &self.subscribers);
                let _ = reply.send(Ok(EmptyResponse {}));
            }
            Command::SetDraft {
                connection_id,
                text,
                reply,
            } => {
                if self
                    .subscribers
                    .iter()
                    .any(|subscriber| subscriber.id() == connection_id)
                {
                    self.presence.set_draft(&connection_id, text);
                    self.presence.announce(&self.row.id, &self.subscribers);
                    let _ = reply.send(Ok(EmptyResponse {}));
                } else {
                    let _ = reply.send(Err(ErrorObject::new(
                        ErrorKind::InvalidParams,
                        "this connection is not attached to the session; call `session/attach` first",
                    )));
                }
            }
            Command::Get { reply } => {
                let _ = reply.send(Ok(self.get()));
            }
            Command::Prompt {
                text,
                images,
                reply,
            } => {
                let result = self.prompt(text.clone(), images).await;
                if result.is_ok() {
                    self.record_history(&text).await;
                }
                let _ = reply.send(result);
            }
            Command::Enqueue {
                steering,
                text,
                images,
                reply,
            } => {
                let result = self.enqueue(steering, text.clone(), images);
                if result.is_ok() {
                    self.record_history(&text).await;
                }
                let _ = reply.send(result);
            }
            Command::Abort { reply } => self.abort(reply),
            Command::Dequeue { reply } => {
                let taken = self.queue_state();
                if !self.queues.drain_all().is_empty() {
                    self.broadcast(SessionEvent::QueueUpdate {
                        steering: Vec::new(),
                        follow_up: Vec::new(),
                    });
                }
                let _ = reply.send(Ok(taken));
            }
            Command::AbortRetry { reply } => {
                self.cancel_retry();
                let _ = reply.send(Ok(EmptyResponse {}));
            }
            Command::SetModel { spec, reply } => {
                let _ = reply.send(self.set_model(&spec).await);
            }
            Command::SetThinking { level, reply } => {
                let _ = reply.send(self.set_thinking(&level).await);
            }
            Command::SetName { name, reply } => {
                let _ = reply.send(self.set_name(&name).await);
            }
            Command::Label {
                entry_id,
                label,
                reply,
            } => {
                let _ = reply.send(self.label(&entry_id, label).await);
            }
            Command::Navigate {
                entry_id,
                summary,
                reply,
            } => self.navigate(&entry_id, summary, reply).await,
            Command::Compact {
                instructions,
                reply,
            } => self.compact(instructions, reply).await,
            Command::Stats { reply } => {
                let _ = reply.send(Ok(super::stats::context_stats(&self.row.id, &self.context)));
            }
            Command::RecordBash { message, reply } => {
                let message = AgentMessage::BashExecution(message);
                if self.run.is_some() {
                    self.pending_bash.push(message);
                    let _ = reply.send(Ok(None));
                } else {
                    let _ = reply.send(self.record_message(message).await.map(Some));
                }
            }
            Command::Notify {
                method,
                text,
                reply,
            } => {
                self.subscribers.retain(|subscriber| {
                    subscriber
                        .send_notification_text(method, text.clone())
                        .is_ok()
                });
                let _ = reply.send(Ok(EmptyResponse {}));
            }
            Command::Close { deleted, reply } => {
                if let Some(run) = &self.run {
                    run.cancel.cancel();
                }
                self.cancel_job();
                self.cancel_retry();
                self.closing = Some((deleted, reply));
            }
        }
    }

    // ----- runs -----

    async fn prompt(
        &mut self,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<EmptyResponse, ErrorObject> {
        if self.run.is_some() {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                "the session is running; steer it with `session/steer`, queue a message with \
                 `session/followUp`, or stop it with `session/abort`",
            ));
        }
        if self.job.is_some() || self.pending_compaction.is_some() {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                "the session is compacting or summarizing; wait for `compaction_end`, queue a \
                 message with `session/followUp`, or stop it with `session/abort`",
            ));
        }
        if self.retry.is_pending() {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                "the session is waiting to retry a failed request; cancel the retry with \
                 `session/abortRetry` (or `session/abort`) first",
            ));
        }
        if self.closing.is_some() {
            return Err(ErrorObject::new(
                ErrorKind::ShuttingDown,
                "the session is closing",
            ));
        }
        self.model_and_key()?;
        self.resources = crate::coding::resources::load_in_background(
            self.services.settings.resources.clone(),
            std::path::PathBuf::from(&self.row.cwd),
        )
        .await;
        let message = user_message(self.expand_input(text), images)?;
        self.overflow_recovery_attempted = false;
        if let Some(prompts) = self.compact_before_prompt(vec![message]).await {
            self.start_run(prompts).await?;
        }
        Ok(EmptyResponse {})
    }

    /// The session's model and its key; the error says what to configure.
    fn model_and_key(&self) -> Result<(Model, Option<pi_llm::ApiKey>), ErrorObject> {
        let model = self.model.clone().ok_or_else(|| {
            let message = if self.services.models.default_model().is_none() {
                "no model is available: no provider has an API key. Set ANTHROPIC_API_KEY, \
                 OPENAI_API_KEY, GEMINI_API_KEY (or another provider's variable, see \
                 `pictl models`), or add the key to auth.json in the daemon's config directory \
                 or pi's ~/.pi/agent; then start a new session or choose a model with \
                 `session/setModel`"
            } else {
                "the session has no model; choose one with `session/setModel` (see `model/list`)"
            };
            ErrorObject::new(ErrorKind::InvalidParams, message)
        })?;
        let environment = super::tool_environment(&self.row);
        let api_key = self
            .services
            .models
            .api_key_in(&model, &environment.env)
            .map_err(|message| ErrorObject::new(ErrorKind::Unauthorized, message))?;
        Ok((model, api_key))
    }

    /// Starts a run with `prompts` (empty: continue from the context, as a retry does).
    async fn start_run(
        &mut self,
        prompts: Vec<AgentMessage>,
    ) -> Result<EmptyResponse, ErrorObject> {
        let (model, api_key) = self.model_and_key()?;
        let (steering_mode, follow_up_mode) = queue_modes(&self.services, &self.resources);
        self.queues.set_modes(steering_mode, follow_up_mode);
        let config = RunConfig {
            provider: self.services.models.provider(),
            model: model.clone(),
            thinking: clamp_thinking(&model, self.thinking),
            system_prompt: Some(self.system_prompt()),
            tools: self.tools.clone(),
            tool_execution: self.services.settings.tool_execution,
            session_id: Some(self.row.id.clone()),
            api_key,
        };
        self.row.running = true;
        self.row.updated_at = now_millis();
        self.store
            .update_session(&self.row)
            .await
            .map_err(super::internal)?;
        let cancel = CancellationToken::new();
        let (events_sender, events) = mpsc::channel(RUN_EVENT_BUFFER);
        let handles = RunHandles {
            cancel: cancel.clone(),
            queues: self.queues.clone(),
            events: events_sender,
        };
        let context = self.context.clone();
        let task =
            tokio::spawn(async move { pi_agent::run(&config, &handles, context, prompts).await });
        self.run = Some(ActiveRun {
            cancel,
            events,
            task,
            streaming: None,
            running_tools: Vec::new(),
            abort_waiters: Vec::new(),
        });
        Ok(EmptyResponse {})
    }

    fn enqueue(
        &mut self,
        steering: bool,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<EmptyResponse, ErrorObject> {
        let message = user_message(self.expand_input(text), images)?;
        if steering {
            self.queues.push_steering(message);
        } else {
            self.queues.push_follow_up(message);
        }
        let texts = self.queues.texts();
        self.broadcast(SessionEvent::QueueUpdate {
            steering: texts.steering,
            follow_up: texts.follow_up,
        });
        Ok(EmptyResponse {})
    }

    async fn on_agent_event(&mut self, event: AgentEvent) {
        let mut entry_id = None;
        let mut stored_seq = None;
        let mut retry_end = None;
        match &event {
            AgentEvent::MessageStart {
                message: AgentMessage::Assistant(partial),
            } => {
                if let Some(run) = &mut self.run {
                    run.streaming = Some(partial.clone());
                }
            }
            AgentEvent::MessageUpdate { event } => {
                if let Some(partial) = self.run.as_mut().and_then(|run| run.streaming.as_mut()) {
                    pi_llm::apply_event(partial, event);
                }
            }
            AgentEvent::MessageEnd { message } => {
                if let Some(run) = &mut self.run {
                    run.streaming = None;
                }
                if let AgentMessage::Assistant(assistant) = message
                    && !matches!(
                        assistant.stop_reason,
                        StopReason::Error | StopReason::Aborted
                    )
                {
                    retry_end = self.retry.on_assistant_success();
                }
                match self.store_message(message).await {
                    Ok((id, seq)) => {
                        entry_id = Some(id);
                        stored_seq = Some(seq);
                    }
                    Err(error) => {
                        self.broadcast(SessionEvent::SessionError {
                            message: error.message.clone(),
                        });
                    }
                }
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                if let Some(run) = &mut self.run {
                    run.running_tools.push(RunningTool {
                        tool_call_id: tool_call_id.clone(),
                        tool_name: tool_name.clone(),
                        args: args.clone(),
                        partial_result: None,
                    });
                }
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => {
                if let Some(tool) = self.run.as_mut().and_then(|run| {
                    run.running_tools
                        .iter_mut()
                        .find(|t| &t.tool_call_id == tool_call_id)
                }) {
                    tool.partial_result = wire::tool_output_to_wire(partial_result).ok();
                }
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                if let Some(run) = &mut self.run {
                    run.running_tools
                        .retain(|tool| &tool.tool_call_id != tool_call_id);
                }
            }
            AgentEvent::MessageStart { .. }
            | AgentEvent::AgentStart
            | AgentEvent::AgentEnd { .. }
            | AgentEvent::TurnStart
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::QueueUpdate { .. } => {}
        }
        match wire::event_to_wire(&event, entry_id) {
            Ok(event) => self.broadcast_with_seq(event, stored_seq),
            Err(error) => tracing::error!(%error, "cannot convert an agent event"),
        }
        if let Some(event) = retry_end {
            self.broadcast(event);
        }
    }

    /// Stores a completed message as an entry; returns its id and seq. The event is broadcast
    /// after, with that seq.
    async fn store_message(
        &mut self,
        message: &AgentMessage,
    ) -> Result<(String, u64), ErrorObject> {
        let base = EntryBase::new(&mut self.entry_ids, self.row.leaf_id.clone(), now_millis());
        let entry = entries::message_entry(base, message).map_err(super::internal)?;
        let mut row = self.row.clone();
        row.message_count += 1;
        match message {
            AgentMessage::User(_) if row.first_message.is_none() => {
                row.first_message = message.user_text()
            }
            AgentMessage::Assistant(assistant) => {
                row.model = Some((assistant.provider.clone(), assistant.model.clone()))
            }
            _ => {}
        }
        let committed = self.commit_entries(row, vec![entry]).await?;
        self.context.push(message.clone());
        committed
            .into_iter()
            .next()
            .ok_or_else(|| super::internal("no entry was committed"))
    }

    /// Commits entries (children of the leaf, in order) with the given row changes; the new
    /// leaf is the last entry. Returns each entry's id and seq. Nothing is broadcast.
    async fn commit_entries(
        &mut self,
        mut row: SessionRow,
        new: Vec<SessionEntry>,
    ) -> Result<Vec<(String, u64)>, ErrorObject> {
        let mut stored = Vec::with_capacity(new.len());
        let mut ids = Vec::with_capacity(new.len());
        for (offset, entry) in new.iter().enumerate() {
            let seq = self.seq + 1 + offset as u64;
            let new_entry = entries::new_entry(entry, seq).map_err(super::internal)?;
            ids.push((new_entry.id.clone(), seq));
            stored.push(new_entry);
        }
        if let Some((last, seq)) = ids.last() {
            row.leaf_id = Some(last.clone());
            row.last_seq = *seq;
        }
        row.updated_at = now_millis();
        self.store
            .append_entries(&row, &stored)
            .await
            .map_err(super::internal)?;
        self.seq += ids.len() as u64;
        self.row = row;
        Ok(ids)
    }

    /// Appends non-message entries, chained from the leaf, and announces each.
    async fn append_entries(
        &mut self,
        row: SessionRow,
        kinds: Vec<EntryKind>,
    ) -> Result<(), ErrorObject> {
        let mut parent = self.row.leaf_id.clone();
        let mut new = Vec::with_capacity(kinds.len());
        for kind in kinds {
            let base = EntryBase::new(&mut self.entry_ids, parent.clone(), now_millis());
            parent = Some(base.id.clone());
            new.push(kind.into_entry(base));
        }
        let ids = self.commit_entries(row, new.clone()).await?;
        for (entry, (_, seq)) in new.into_iter().zip(ids) {
            self.broadcast_with_seq(SessionEvent::EntryAdded { entry }, Some(seq));
        }
        let info = self.info();
        self.broadcast(SessionEvent::SessionUpdated { info });
        Ok(())
    }

    async fn on_run_finished(&mut self) {
        let Some(run) = self.run.take() else { return };
        let mut last_assistant = None;
        match run.task.await {
            Ok(outcome) => {
                tracing::debug!(
                    aborted = outcome.aborted(),
                    failed = outcome.failed(),
                    "run finished"
                );
                last_assistant = outcome.last_assistant;
            }
            Err(error) => {
                tracing::error!(%error, "the run panicked");
                self.broadcast(SessionEvent::SessionError {
                    message: "the run ended with an internal error (see the daemon log); the session is still usable".to_owned(),
                });
            }
        }
        self.row.running = false;
        self.row.last_seq = self.seq;
        if let Err(error) = self.store.update_session(&self.row).await {
            tracing::error!(%error, "cannot record the end of a run");
        }
        for message in std::mem::take(&mut self.pending_bash) {
            if let Err(error) = self.record_message(message).await {
                tracing::error!(error = error.message, "cannot record a user shell command");
            }
        }
        // A run the user aborted, or a closing session, is never retried.
        let wants_stop = !run.abort_waiters.is_empty() || self.closing.is_some();
        let retry_settings = self.resources.settings.retry;
        let context_window = self.model.as_ref().map_or(0, |model| model.context_window);
        let last = last_assistant.as_ref().filter(|_| !wants_stop);
        let mut retry_scheduled = false;
        match self.retry.after_run(last, &retry_settings, context_window) {
            AfterRun::Idle => {}
            AfterRun::Scheduled(event) => {
                retry_scheduled = true;
                // The failed reply stays in the tree, but the retry continues without it.
                if matches!(self.context.last(), Some(AgentMessage::Assistant(m)) if m.stop_reason == StopReason::Error)
                {
                    self.context.pop();
                }
                self.broadcast(event);
            }
            AfterRun::GaveUp(event) => self.broadcast(event),
        }
        for waiter in run.abort_waiters {
            let _ = waiter.send(Ok(EmptyResponse {}));
        }
        // pi checks for compaction after every run, unless a retry was scheduled for it.
        if !retry_scheduled {
            self.after_run(last_assistant).await;
        }
    }

    /// Remembers a sent message in the prompt history; a failure only loses the entry.
    async fn record_history(&self, text: &str) {
        if let Err(error) = self
            .store
            .record_prompt(text, &self.row.cwd, now_millis())
            .await
        {
            tracing::warn!(%error, "cannot record the prompt in the history");
        }
    }

    /// Starts the pending retry: continues the run from the context.
    async fn start_retry(&mut self) {
        if let Err(error) = self.start_run(Vec::new()).await {
            let attempt = self.retry.cancel();
            self.broadcast(SessionEvent::SessionError {
                message: format!("cannot retry: {}", error.message),
            });
            if let Some(SessionEvent::AutoRetryEnd { attempt, .. }) = attempt {
                self.broadcast(SessionEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some(error.message),
                });
            }
        }
    }

    /// Cancels a pending retry, announcing it.
    fn cancel_retry(&mut self) {
        if let Some(event) = self.retry.cancel() {
            self.broadcast(event);
        }
    }

    /// Stores a message outside a run and announces it like a run's completed message.
    async fn record_message(&mut self, message: AgentMessage) -> Result<String, ErrorObject> {
        let (entry_id, seq) = self.store_message(&message).await?;
        let event = AgentEvent::MessageEnd { message };
        match wire::event_to_wire(&event, Some(entry_id.clone())) {
            Ok(event) => self.broadcast_with_seq(event, Some(seq)),
            Err(error) => tracing::error!(%error, "cannot convert a recorded message"),
        }
        let info = self.info();
        self.broadcast(SessionEvent::SessionUpdated { info });
        Ok(entry_id)
    }

    // ----- subscribers -----

    async fn attach(
        &mut self,
        connection: ConnectionHandle,
        after_seq: Option<u64>,
    ) -> Result<SessionAttachResponse, ErrorObject> {
        let replay = match after_seq {
            None => Vec::new(),
            Some(after) => self.replay(after).await?,
        };
        self.subscribers
            .retain(|subscriber| subscriber.id() != connection.id());
        self.subscribers.push(connection);
        let attached_clients = self.prune_subscribers();
        let run = self.run.as_ref();
        let snapshot = SessionSnapshot {
            info: self.info(),
            streaming_message: run
                .and_then(|run| run.streaming.as_ref())
                .map(|message| transcode("streaming message", message))
                .transpose()
                .map_err(super::internal)?,
            running_tools: run.map(|run| run.running_tools.clone()).unwrap_or_default(),
            queue: self.queue_state(),
            attached_clients,
            clients: self.presence.clients(&self.subscribers),
        };
        self.presence.announce(&self.row.id, &self.subscribers);
        Ok(SessionAttachResponse { snapshot, replay })
    }

    async fn replay(&self, after: u64) -> Result<Vec<SessionEventParams>, ErrorObject> {
        if after > self.seq {
            return Err(ErrorObject::new(
                ErrorKind::ResyncRequired,
                format!(
                    "cursor {after} is ahead of this session's history (last seq {}), so the daemon restarted \
                     since; re-read the session with `session/read` and attach without `afterSeq`",
                    self.seq
                ),
            ));
        }
        let limit = self.services.settings.replay_limit;
        let stored = self
            .store
            .entries_after_seq(&self.row.id, after, limit + 1)
            .await
            .map_err(super::internal)?;
        if stored.len() > limit as usize {
            return Err(ErrorObject::new(
                ErrorKind::ResyncRequired,
                format!(
                    "more than {limit} events happened after seq {after}; re-read the session with \
                     `session/read` and attach without `afterSeq`"
                ),
            ));
        }
        stored
            .iter()
            .map(|stored| {
                let entry = entries::parse_entry(stored).map_err(super::internal)?;
                let event = match entry {
                    SessionEntry::Message { id, message, .. } => SessionEvent::MessageEnd {
                        message,
                        entry_id: Some(id),
                    },
                    other => SessionEvent::EntryAdded { entry: other },
                };
                Ok(SessionEventParams {
                    session_id: self.row.id.clone(),
                    seq: stored.seq,
                    event,
                })
            })
            .collect()
    }

    fn broadcast(&mut self, event: SessionEvent) {
        self.broadcast_with_seq(event, None);
    }

    /// Sends an event to every subscriber; `seq` is the event's reserved seq (stored entries)
    /// or `None` to take the next one.
    fn broadcast_with_seq(&mut self, event: SessionEvent, seq: Option<u64>) {
        let seq = match seq {
            Some(seq) => seq,
            None => {
                self.seq += 1;
                self.seq
            }
        };
        let params = SessionEventParams {
            session_id: self.row.id.clone(),
            seq,
            event,
        };
        let notification = pi_protocol::Notification::new(
            SessionEventNotification::NAME,
            serde_json::to_value(&params).ok(),
        );
        let Ok(text) = serde_json::to_string(&notification) else {
            tracing::error!(seq, "cannot serialize a session event");
            return;
        };
        self.subscribers.retain(|subscriber| {
            subscriber
                .send_notification_text(SessionEventNotification::NAME, text.clone())
                .is_ok()
        });
    }

    /// Drops subscribers whose connection has closed (telling the others when any left);
    /// returns how many remain.
    fn prune_subscribers(&mut self) -> u32 {
        let before = self.subscribers.len();
        self.subscribers
            .retain(|subscriber| !subscriber.is_closed());
        if self.subscribers.len() != before {
            self.presence.retain(&self.subscribers);
            self.presence.announce(&self.row.id, &self.subscribers);
        }
        self.subscribers.len() as u32
    }

    // ----- metadata -----

    fn info(&self) -> SessionInfo {
        info(
            &self.row,
            self.run.is_some() || self.job.is_some(),
            self.seq,
        )
    }

    fn queue_state(&self) -> QueueState {
        let texts = self.queues.texts();
        QueueState {
            steering: texts.steering,
            follow_up: texts.follow_up,
        }
    }

    fn get(&mut self) -> SessionGetResponse {
        SessionGetResponse {
            info: self.info(),
            tools: self
                .tools
                .iter()
                .map(|tool| tool.name().to_owned())
                .collect(),
            queue: self.queue_state(),
            attached_clients: self.prune_subscribers(),
            system_prompt: Some(self.system_prompt()),
            resource_diagnostics: self
                .resources
                .diagnostics
                .iter()
                .map(wire::settings::diagnostic)
                .collect(),
            commands: self.slash_commands(),
        }
    }

    /// The session's prompt templates and (when enabled) skills as slash commands.
    fn slash_commands(&self) -> Vec<SlashCommand> {
        let templates = self
            .resources
            .templates
            .iter()
            .map(|template| SlashCommand {
                name: template.name.clone(),
                description: template.description.clone(),
                source: "template".to_owned(),
            });
        let skills = self
            .resources
            .skills
            .iter()
            .filter(|_| self.resources.settings.enable_skill_commands)
            .map(|skill| SlashCommand {
                name: format!("skill:{}", skill.name),
                description: skill.description.clone(),
                source: "skill".to_owned(),
            });
        templates.chain(skills).collect()
    }

    /// The system prompt of the next run: today's date, the session's tools and resources.
    /// The session's own `systemPrompt` / `appendSystemPrompt` (from `session/create`, pi's
    /// `--system-prompt` and `--append-system-prompt`) win over `SYSTEM.md` and
    /// `APPEND_SYSTEM.md`, as pi's flags do.
    fn system_prompt(&self) -> String {
        let tools = crate::coding::system_prompt::tool_summaries(&self.tools);
        let today = super::time::iso_from_millis(now_millis());
        let date = today.get(..10).unwrap_or_default();
        let resources = &self.resources;
        crate::coding::system_prompt::build(&crate::coding::system_prompt::SystemPromptInput {
            tools: &tools,
            cwd: &self.row.cwd,
            date,
            context_files: &resources.context_files,
            skills: &resources.skills,
            custom_prompt: self
                .row
                .system_prompt
                .as_deref()
                .or(resources.custom_prompt.as_deref()),
            append_prompt: self
                .row
                .append_system_prompt
                .as_deref()
                .or(resources.append_prompt.as_deref()),
        })
    }

    /// `/skill:name args` and `/template args` expanded (pi expands before sending).
    fn expand_input(&self, text: String) -> String {
        let (expanded, problem) = self.resources.expand_input(&text);
        if let Some(problem) = problem {
            tracing::warn!(%problem, "skill expansion failed");
        }
        expanded
    }

    async fn set_model(&mut self, spec: &str) -> Result<SessionSetModelResponse, ErrorObject> {
        let (model, level) = self
            .services
            .models
            .resolve(spec)
            .map_err(|message| ErrorObject::new(ErrorKind::NotFound, message))?;
        let thinking = clamp_thinking(&model, level.unwrap_or(self.thinking));
        let mut kinds = vec![EntryKind::ModelChange {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
        }];
        if thinking != self.thinking {
            kinds.push(EntryKind::ThinkingLevelChange(thinking));
        }
        let mut row = self.row.clone();
        row.model = Some((model.provider.clone(), model.id.clone()));
        row.thinking_level = thinking.as_str().to_owned();
        self.append_entries(row, kinds).await?;
        let has_key = self.services.models.api_key(&model).is_ok();
        self.model = Some(model.clone());
        self.thinking = thinking;
        Ok(SessionSetModelResponse {
            model: super::model_info(&model, has_key),
            thinking_level: thinking.as_str().to_owned(),
        })
    }

    async fn set_thinking(
        &mut self,
        level: &str,
    ) -> Result<SessionSetThinkingResponse, ErrorObject> {
        let requested: ThinkingLevel =
            level
                .parse()
                .map_err(|error: pi_llm::model::UnknownThinkingLevel| {
                    ErrorObject::new(ErrorKind::InvalidParams, error.to_string())
                        .with_field("level")
                })?;
        let level = match &self.model {
            Some(model) => clamp_thinking(model, requested),
            None => requested,
        };
        if level != self.thinking {
            let mut row = self.row.clone();
            row.thinking_level = level.as_str().to_owned();
            self.append_entries(row, vec![EntryKind::ThinkingLevelChange(level)])
                .await?;
            self.thinking = level;
        }
        Ok(SessionSetThinkingResponse {
            level: level.as_str().to_owned(),
        })
    }

    async fn set_name(&mut self, name: &str) -> Result<EmptyResponse, ErrorObject> {
        let name = name.trim();
        if name.is_empty() {
            return Err(
                ErrorObject::new(ErrorKind::InvalidParams, "Session name cannot be empty")
                    .with_field("name"),
            );
        }
        let mut row = self.row.clone();
        row.name = Some(name.to_owned());
        self.append_entries(row, vec![EntryKind::SessionInfo(name.to_owned())])
            .await?;
        Ok(EmptyResponse {})
    }

    async fn label(
        &mut self,
        entry_id: &str,
        label: Option<String>,
    ) -> Result<EmptyResponse, ErrorObject> {
        if self
            .store
            .entry(&self.row.id, entry_id)
            .await
            .map_err(super::internal)?
            .is_none()
        {
            return Err(super::entry_not_found(entry_id));
        }
        let label = label
            .map(|label| label.trim().to_owned())
            .filter(|label| !label.is_empty());
        let row = self.row.clone();
        self.append_entries(
            row,
            vec![EntryKind::Label {
                target_id: entry_id.to_owned(),
                label,
            }],
        )
        .await?;
        Ok(EmptyResponse {})
    }

    /// `session/navigate`: moves the leaf, after summarizing the branch left behind when
    /// `summary` asks for it (answered when the summary is stored).
    async fn navigate(
        &mut self,
        entry_id: &str,
        summary: Option<Instructions>,
        reply: Reply<SessionNavigateResponse>,
    ) {
        let (leaf_id, text) = match self.navigation_target(entry_id).await {
            Ok(target) => target,
            Err(error) => {
                let _ = reply.send(Err(error));
                return;
            }
        };
        let reply = match summary {
            Some(instructions) if leaf_id != self.row.leaf_id && self.row.leaf_id.is_some() => {
                let started = self
                    .start_branch_summary(
                        leaf_id.clone(),
                        entry_id,
                        text.clone(),
                        instructions,
                        reply,
                    )
                    .await;
                match started {
                    // Nothing is abandoned: a plain move.
                    Some(reply) => reply,
                    None => return,
                }
            }
            Some(_) | None => reply,
        };
        let _ = reply.send(self.move_leaf(leaf_id, text).await);
    }

    /// Where navigating to `entry_id` puts the leaf, and the text handed back for editing.
    async fn navigation_target(
        &mut self,
        entry_id: &str,
    ) -> Result<(Option<String>, Option<String>), ErrorObject> {
        if self.run.is_some() || self.job.is_some() {
            return Err(ErrorObject::new(
                ErrorKind::Busy,
                "the session is running; abort it before moving in the tree",
            ));
        }
        let stored = self
            .store
            .entry(&self.row.id, entry_id)
            .await
            .map_err(super::internal)?
            .ok_or_else(|| super::entry_not_found(entry_id))?;
        let entry = entries::parse_entry(&stored).map_err(super::internal)?;
        // A user or custom message: continue from its parent, and hand its text back to edit.
        Ok(match &entry {
            SessionEntry::Message {
                parent_id,
                message: pi_protocol::v1::message::AgentMessage::User(user),
                ..
            } => (
                parent_id.clone(),
                Some(super::user_content_text(&user.content)),
            ),
            SessionEntry::CustomMessage {
                parent_id, content, ..
            } => (parent_id.clone(), Some(super::user_content_text(content))),
            _ => (Some(stored.id.clone()), None),
        })
    }

    /// Moves the leaf (persisted) and rebuilds the context.
    async fn move_leaf(
        &mut self,
        leaf_id: Option<String>,
        text: Option<String>,
    ) -> Result<SessionNavigateResponse, ErrorObject> {
        if leaf_id != self.row.leaf_id {
            let mut row = self.row.clone();
            row.leaf_id = leaf_id.clone();
            row.updated_at = now_millis();
            self.store
                .update_session(&row)
                .await
                .map_err(super::internal)?;
            self.row = row;
            self.reload_context().await?;
            self.broadcast(SessionEvent::LeafChanged {
                leaf_id: leaf_id.clone(),
            });
        }
        Ok(SessionNavigateResponse {
            leaf_id,
            text,
            summary_entry_id: None,
            aborted: false,
        })
    }

    // ----- lifecycle -----

    /// Unloads if still idle: persists, leaves the registry, refuses queued commands (their
    /// callers retry against a fresh actor). Returns whether the actor should stop.
    async fn unload(&mut self) -> bool {
        {
            let Ok(mut sessions) = self.sessions.lock() else {
                return false;
            };
            if !self.commands.is_empty() {
                return false;
            }
            if sessions
                .get(&self.row.id)
                .is_some_and(|handle| handle.generation == self.generation)
            {
                sessions.remove(&self.row.id);
            }
        }
        self.commands.close();
        while self.commands.try_recv().is_ok() {}
        self.finish(false).await;
        tracing::debug!("unloaded");
        true
    }

    async fn finish(&mut self, deleted: bool) {
        if deleted {
            self.broadcast(SessionEvent::SessionError {
                message: "the session was deleted".to_owned(),
            });
            return;
        }
        self.row.running = false;
        self.row.last_seq = self.seq;
        if let Err(error) = self.store.update_session(&self.row).await {
            tracing::error!(%error, "cannot save the session");
        }
    }
}

/// Completes when any of the subscribers' connections has ended.
async fn any_closed(subscribers: &[ConnectionHandle]) {
    let closed: Vec<_> = subscribers
        .iter()
        .map(|subscriber| Box::pin(subscriber.closed()))
        .collect();
    futures_util::future::select_all(closed).await;
}

impl Drop for SessionActor {
    fn drop(&mut self) {
        if let Ok(mut sessions) = self.sessions.lock()
            && sessions
                .get(&self.row.id)
                .is_some_and(|handle| handle.generation == self.generation)
        {
            sessions.remove(&self.row.id);
        }
    }
}

/// Resolves at `due` (never, without one).
async fn sleep_until_due(due: Option<tokio::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

async fn next_run_event(run: &mut Option<ActiveRun>) -> Option<AgentEvent> {
    match run {
        Some(run) => run.events.recv().await,
        None => std::future::pending().await,
    }
}

/// A non-message entry to append.
enum EntryKind {
    ModelChange {
        provider: String,
        model_id: String,
    },
    ThinkingLevelChange(ThinkingLevel),
    SessionInfo(String),
    Label {
        target_id: String,
        label: Option<String>,
    },
}

impl EntryKind {
    fn into_entry(self, base: EntryBase) -> SessionEntry {
        let EntryBase {
            id,
            parent_id,
            timestamp,
        } = base;
        match self {
            EntryKind::ModelChange { provider, model_id } => SessionEntry::ModelChange {
                id,
                parent_id,
                timestamp,
                provider,
                model_id,
            },
            EntryKind::ThinkingLevelChange(level) => SessionEntry::ThinkingLevelChange {
                id,
                parent_id,
                timestamp,
                thinking_level: level.as_str().to_owned(),
            },
            EntryKind::SessionInfo(name) => SessionEntry::SessionInfo {
                id,
                parent_id,
                timestamp,
                name: Some(name),
            },
            EntryKind::Label { target_id, label } => SessionEntry::Label {
                id,
                parent_id,
                timestamp,
                target_id,
                label,
            },
        }
    }
}

fn user_message(text: String, images: Vec<ImageContent>) -> Result<AgentMessage, ErrorObject> {
    let images: Vec<pi_llm::ImageContent> =
        transcode("images", &images).map_err(super::internal)?;
    Ok(AgentMessage::user(text, images, now_millis()))
}

/// Queue modes: the settings files', else the daemon's.
fn queue_modes(
    services: &SessionServices,
    resources: &Resources,
) -> (pi_agent::QueueMode, pi_agent::QueueMode) {
    let settings = &resources.settings;
    (
        settings
            .steering_mode
            .unwrap_or(services.settings.steering_mode),
        settings
            .follow_up_mode
            .unwrap_or(services.settings.follow_up_mode),
    )
}
