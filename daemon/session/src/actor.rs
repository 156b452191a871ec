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
mod command;
mod compaction;
mod job;
mod metadata;
mod plan;
mod prepare;
mod runs;
mod subscribers;

pub use command::{Command, Deliver, Gone, Reply, ResolvedModel, SessionHandle};

use std::sync::Arc;

use pi_agent::{AgentEvent, AgentMessage, MessageQueues, RunOutcome, Tool};
use pi_llm::{AssistantMessage, Model, ThinkingLevel};
use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{
    EmptyResponse, RunningTool, SessionEntry, SessionEvent, SessionPromptResponse,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::convert::transcode;
use crate::entries::{self, EntryBase, EntryIds};
use crate::events::{EventEncoder, Subscriber};
use crate::presence::Presence;
use crate::recent::{RecentEvents, WindowShare};
use crate::retry::AutoRetry;
use crate::services::{SessionServices, SessionsWeak};
use crate::{SessionError, SessionMap};
use pi_coding::Resources;
use pi_store::{SessionRow, Store};
use pi_util::time::now_millis;

/// Commands queued for one session before senders wait.
pub const COMMAND_BUFFER: usize = 64;
/// Agent events buffered between a run and its actor.
const RUN_EVENT_BUFFER: usize = 16;
/// Run events handled after one another before the actor looks at commands again.
const RUN_EVENT_BATCH: usize = 256;

struct ActiveRun {
    cancel: CancellationToken,
    events: mpsc::Receiver<Box<AgentEvent>>,
    task: JoinHandle<RunOutcome>,
    // The assistant message being streamed, rebuilt from deltas for snapshots.
    streaming: Option<AssistantMessage>,
    running_tools: Vec<RunningTool>,
    abort_waiters: Vec<Reply<EmptyResponse>>,
    // The run said `agent_end`: a client that heard it may send the next prompt at once, so
    // a command arriving now waits for the run's last steps instead of finding it running.
    ended: bool,
}

/// What an actor starts from: the session's current branch, the ids of all its entries, and
/// the resources of its cwd.
pub(crate) struct Loaded {
    pub(crate) branch: Vec<SessionEntry>,
    pub(crate) entry_ids: EntryIds,
    pub(crate) resources: Resources,
    /// The session's tools, when the caller built them already.
    pub(crate) tools: Option<Vec<Arc<dyn Tool>>>,
    /// Every event numbered at or below this seq is a stored entry (no live event was ever
    /// numbered there): a session just created, forked or imported, whose entries are all
    /// there is of its history. 0 when that is not known.
    pub(crate) stored_through: u64,
}

/// The actor's state. Owned by its task; never shared.
pub struct SessionActor {
    store: Store,
    services: SessionServices,
    sessions: Arc<SessionMap>,
    // The registry, weakly: in the environment the session's tools are built with.
    registry: SessionsWeak,
    generation: u64,
    row: SessionRow,
    entry_ids: EntryIds,
    // The conversation the next run starts from. Its messages are shared with the run and
    // with the events that announced them (one copy of each message).
    context: Vec<Arc<AgentMessage>>,
    model: Option<Model>,
    thinking: ThinkingLevel,
    tools: Vec<Arc<dyn Tool>>,
    // Settings, context files, skills and templates of the session's cwd; reloaded before
    // each run so edits apply to the next prompt.
    resources: Resources,
    queues: Arc<MessageQueues>,
    // Invariant: the seq of the last event assigned (broadcast or stored).
    seq: u64,
    // Invariant: every event numbered at or below it is a stored entry, so the store replays
    // them all; what follows is in `recent` until the window moves on (see `replay`).
    stored_through: u64,
    // The session id every event carries (shared, not copied, per event).
    id: Arc<str>,
    // Makes the bytes of every event and notice, once, for all subscribers (the daemon's
    // JSON-RPC encoder with its frame arena); given by the registry.
    encoder: Box<dyn EventEncoder>,
    // Who events go to: connections, watchers in this process. One that fails a delivery is
    // dropped.
    subscribers: Vec<Arc<dyn Subscriber>>,
    // The newest events, for gapless replay to reconnecting subscribers.
    recent: RecentEvents,
    // What the window takes from the daemon-wide budget while nobody watches.
    window_share: Option<WindowShare>,
    // Since when the session has had no subscriber and no work (`None` while it has either).
    idle_since: Option<tokio::time::Instant>,
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
    commands: mpsc::Receiver<Box<Command>>,
    closing: Option<(bool, Reply<EmptyResponse>)>,
    // `Command::WhenSettled` callers, answered once nothing runs, compacts or waits to retry.
    settled_waiters: Vec<Reply<EmptyResponse>>,
    // The session's extensions at its hook points; `None` (nothing to pay) without any.
    hooks: Option<Arc<dyn crate::hooks::Hooks>>,
    // A prompt whose hooks run (in a task: they may ask this actor's clients).
    preparing: Option<prepare::Preparing>,
    // Extensions' slash commands that run (they do not make the session busy).
    running_commands: futures_util::stream::FuturesUnordered<prepare::CommandRun>,
    // Who waits for each of them, by id.
    command_replies: std::collections::HashMap<u64, Reply<SessionPromptResponse>>,
    next_command: u64,
    // The system prompt `before_agent_start` handlers chose for the latest prompt's runs
    // (retries included); `None`: the session's own.
    run_system_prompt: Option<String>,
    // What the extensions show that lasts (status texts, widgets, the title), by what it
    // replaces: told to every client that attaches.
    kept_ui: std::collections::BTreeMap<String, crate::events::Notice>,
    // Extensions' messages for the next prompt (pi's `deliverAs: "nextTurn"`).
    next_turn: Vec<AgentMessage>,
    // Invariant: the todo list the branch's entries record, with the changes of the run in
    // flight (whose tool results record them when their messages end).
    todos: crate::todos::Recorded,
    // Reminders of open todos sent since the latest prompt.
    todo_reminders: u32,
    // Invariant: the plan mode the branch's entries record; `planning` is its `enabled`,
    // shared with the gate of the run in flight.
    plan: crate::plan::PlanState,
    planning: Arc<std::sync::atomic::AtomicBool>,
    // What an approved plan asks for once the run that approved it has ended.
    after_plan: Option<crate::plan::PlanDecision>,
}

impl SessionActor {
    /// Loads a session from the store and starts its actor.
    pub(crate) async fn spawn(
        store: Store,
        services: SessionServices,
        sessions: Arc<SessionMap>,
        registry: SessionsWeak,
        generation: u64,
        row: SessionRow,
        encoder: Box<dyn EventEncoder>,
    ) -> Result<SessionHandle, SessionError> {
        let branch: Vec<SessionEntry> = store
            .branch(&row.id, row.leaf_id.as_deref())
            .await
            .map_err(super::storage(&store))?
            .iter()
            .map(entries::parse_entry)
            .collect::<Result<_, _>>()
            .map_err(SessionError::internal)?;
        let ids = store
            .entry_ids(&row.id)
            .await
            .map_err(super::storage(&store))?;
        let resources = pi_coding::resources::load_in_background(
            services.settings.resources.clone(),
            std::path::PathBuf::from(&row.cwd),
            crate::resource_choice(&row),
        )
        .await;
        // Entries have distinct seqs no higher than the row's `last_seq` (stored with them), so
        // as many entries as seqs means no live event was ever numbered: a session that never
        // ran since it was forked or imported.
        let stored_through = if ids.len() as u64 == row.last_seq {
            row.last_seq
        } else {
            0
        };
        let loaded = Loaded {
            entry_ids: EntryIds::new(ids.iter().map(String::as_str)),
            branch,
            resources,
            tools: None,
            stored_through,
        };
        Self::start(
            store, services, sessions, registry, generation, row, loaded, encoder,
        )
    }

    /// Starts the actor of a session whose stored state the caller holds (`session/create`
    /// just wrote it), without reading it back.
    #[allow(clippy::too_many_arguments, reason = "the registry's two call sites")]
    pub(crate) fn start(
        store: Store,
        services: SessionServices,
        sessions: Arc<SessionMap>,
        registry: SessionsWeak,
        generation: u64,
        row: SessionRow,
        loaded: Loaded,
        encoder: Box<dyn EventEncoder>,
    ) -> Result<SessionHandle, SessionError> {
        let Loaded {
            branch,
            entry_ids,
            resources,
            tools,
            stored_through,
        } = loaded;
        let context = entries::build_context(&branch).map_err(SessionError::internal)?;
        let todos = crate::todos::of_branch(&branch);
        let plan = crate::plan::of_branch(&branch);
        let model = row
            .model
            .as_ref()
            .and_then(|(provider, id)| services.models.find_or_custom(provider, id));
        let thinking = row
            .thinking_level
            .parse()
            .unwrap_or(services.settings.default_thinking);
        let tools = tools.unwrap_or_else(|| {
            services
                .tools
                .tools(&super::tool_environment(&row, &registry), &row.tools)
                .unwrap_or_else(|error| {
                    tracing::warn!(session = row.id, %error, "some tools are unavailable");
                    Vec::new()
                })
        });
        let hooks = services
            .hooks
            .session(&super::tool_environment(&row, &registry));
        let (sender, commands) = mpsc::channel(COMMAND_BUFFER);
        let handle = SessionHandle {
            id: row.id.as_str().into(),
            generation,
            commands: sender,
        };
        let (steering_mode, follow_up_mode) = queue_modes(&services, &resources);
        let queues = Arc::new(MessageQueues::new(steering_mode, follow_up_mode));
        let actor = SessionActor {
            seq: row.last_seq,
            stored_through,
            entry_ids,
            compacted_prefix: context.compacted_prefix,
            context: context.messages.into_iter().map(Arc::new).collect(),
            model,
            thinking,
            tools,
            resources,
            queues,
            id: handle.id.clone(),
            encoder,
            subscribers: Vec::new(),
            recent: RecentEvents::in_pool(services.settings.recent_windows.clone()),
            window_share: None,
            idle_since: None,
            presence: Presence::default(),
            run: None,
            job: None,
            pending_compaction: None,
            overflow_recovery_attempted: false,
            pending_bash: Vec::new(),
            retry: AutoRetry::default(),
            commands,
            closing: None,
            settled_waiters: Vec::new(),
            hooks,
            preparing: None,
            running_commands: futures_util::stream::FuturesUnordered::new(),
            command_replies: std::collections::HashMap::new(),
            next_command: 0,
            run_system_prompt: None,
            kept_ui: std::collections::BTreeMap::new(),
            next_turn: Vec::new(),
            todos,
            todo_reminders: 0,
            planning: Arc::new(std::sync::atomic::AtomicBool::new(plan.enabled)),
            plan,
            after_plan: None,
            store,
            services,
            sessions,
            registry,
            generation,
            row,
        };
        let span = tracing::info_span!("session", id = %handle.id);
        tokio::spawn(tracing::Instrument::instrument(actor.serve(), span));
        Ok(handle)
    }

    /// Nothing runs, compacts, summarizes or waits to retry.
    fn is_settled(&self) -> bool {
        self.run.is_none()
            && self.job.is_none()
            && self.preparing.is_none()
            && self.pending_compaction.is_none()
            && !self.retry.is_pending()
    }

    async fn serve(mut self) {
        tracing::debug!("loaded");
        self.tell_hooks(None);
        loop {
            if !self.settled_waiters.is_empty() && self.is_settled() {
                for waiter in self.settled_waiters.drain(..) {
                    let _ = waiter.send(Ok(EmptyResponse {}));
                }
            }
            if self.run.is_none()
                && self.job.is_none()
                && let Some((deleted, reply)) = self.closing.take()
            {
                self.abandon_preparing();
                Box::pin(self.finish(deleted)).await;
                let _ = reply.send(Ok(EmptyResponse {}));
                return;
            }
            // Pruning, presence and timers are for quiet times; while a run streams, closed
            // subscribers are dropped by the broadcasts themselves.
            let quiet = self.run.is_none()
                && self.job.is_none()
                && self.preparing.is_none()
                && self.running_commands.is_empty();
            if quiet {
                self.encoder.quiet();
            }
            let idle = quiet && !self.retry.is_pending() && self.prune_subscribers() == 0;
            let retry_due = self.retry.due().filter(|_| self.run.is_none());
            let unload_at = (idle && self.closing.is_none())
                .then(|| tokio::time::Instant::now() + self.services.settings.idle_unload);
            // Counted from when the session became idle: commands that leave it idle (a
            // `session/get`) do not put it off.
            let idle_since = if idle {
                *self
                    .idle_since
                    .get_or_insert_with(tokio::time::Instant::now)
            } else {
                self.idle_since = None;
                tokio::time::Instant::now()
            };
            self.share_window(idle);
            let forget_recent_at = (idle && !self.recent.is_empty())
                .then(|| idle_since + self.services.settings.recent_kept_while_idle);
            tokio::select! {
                biased;
                event = next_run_event(&mut self.run) => match event {
                    Some(event) => {
                        // Whatever else the run has produced meanwhile is handled in one go,
                        // without a round through this loop per event; live events (the
                        // per-token path) without an await.
                        let mut next = Some(event);
                        let mut handled = 0;
                        while let Some(event) = next.take() {
                            self.on_run_event(*event).await;
                            handled += 1;
                            if handled < RUN_EVENT_BATCH {
                                next = self.run.as_mut().and_then(|run| run.events.try_recv().ok());
                            }
                        }
                    }
                    None => Box::pin(self.on_run_finished()).await,
                },
                outcome = job::next_job_outcome(&mut self.job) => {
                    Box::pin(self.on_job_finished(outcome)).await
                }
                (outcome, reply) = prepare::next_prepared(&mut self.preparing) => {
                    Box::pin(self.on_prepared(outcome, reply)).await
                }
                Some(done) = futures_util::StreamExt::next(&mut self.running_commands),
                    if !self.running_commands.is_empty() => {
                    Box::pin(self.on_command_done(done)).await
                }
                command = self.commands.recv() => match command {
                    // Boxed, as the other rarely taken branches: the actor's future stays
                    // small, which an idle session holds for its whole life.
                    Some(command) => {
                        Box::pin(self.finish_ended_run()).await;
                        Box::pin(self.handle(*command)).await
                    }
                    None => return,
                },
                _ = any_closed(&self.subscribers), if quiet && !self.subscribers.is_empty() => {
                    self.prune_subscribers();
                },
                () = sleep_until_due(retry_due), if retry_due.is_some() => {
                    self.retry.start_due();
                    Box::pin(self.start_retry()).await;
                }
                () = sleep_until_due(forget_recent_at), if forget_recent_at.is_some() => {
                    self.recent.clear();
                    self.window_share = None;
                }
                () = sleep_until_due(unload_at), if unload_at.is_some() => {
                    if Box::pin(self.unload()).await {
                        return;
                    }
                }
            }
        }
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Attach {
                subscriber,
                after_seq,
                reply,
            } => {
                let _ = reply.send(self.attach(subscriber, after_seq).await);
            }
            Command::Detach {
                connection_id,
                reply,
            } => {
                self.subscribers
                    .retain(|subscriber| subscriber.id() != connection_id);
                self.presence.retain(&self.subscribers);
                self.announce_presence();
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
                    self.announce_presence();
                    let _ = reply.send(Ok(EmptyResponse {}));
                } else {
                    let _ = reply.send(Err(SessionError::NotAttached));
                }
            }
            Command::Get { reply } => {
                let _ = reply.send(Ok(self.get()));
            }
            Command::Prompt {
                text,
                images,
                source,
                reply,
            } => {
                // Like pi's editor, the history keeps what was sent even if the session
                // refuses it (busy, no model), so that it can be recalled and sent again.
                // Recorded alongside the prompt: the two writes can share a transaction.
                // A subagent's prompts come from its parent's `task` call, not a person.
                let remembered = if self.row.task_name.is_some() {
                    ""
                } else {
                    text.as_str()
                };
                let history = runs::record_history(self.store.clone(), &self.row.cwd, remembered);
                if let Some(hooks) = self.hooks.clone() {
                    history.await;
                    self.prompt_with_hooks(hooks, text, images, source, reply)
                        .await;
                } else {
                    let (result, ()) = tokio::join!(self.prompt(text.clone(), images), history);
                    let _ = reply.send(result.map(|_| SessionPromptResponse { started: true }));
                }
            }
            Command::Enqueue {
                steering,
                text,
                images,
                reply,
            } => {
                let result = self.enqueue(steering, text.clone(), images);
                if result.is_ok() && self.row.task_name.is_none() {
                    runs::record_history(self.store.clone(), &self.row.cwd, &text).await;
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
            Command::SetModel {
                spec,
                resolved,
                reply,
            } => {
                let _ = reply.send(self.set_model(&spec, resolved).await);
                self.tell_hooks(None);
            }
            Command::SetThinking { level, reply } => {
                let _ = reply.send(self.set_thinking(&level).await);
                self.tell_hooks(None);
            }
            Command::Hooks { reply } => {
                let _ = reply.send(Ok(self.hooks.clone().map(crate::hooks::HooksHandle)));
            }
            Command::SetActiveTools { names, reply } => {
                let names = names.unwrap_or_else(|| self.row.tools.clone());
                let _ = reply.send(self.set_active_tools(&names));
                self.tell_hooks(None);
            }
            Command::SetName { name, reply } => {
                let _ = reply.send(self.set_name(&name).await);
                self.tell_hooks(None);
            }
            Command::Record {
                custom_type,
                data,
                reply,
            } => {
                let row = self.row.clone();
                let recorded = self
                    .append_entries(row, vec![EntryKind::Custom { custom_type, data }])
                    .await
                    .map(|()| EmptyResponse {});
                let _ = reply.send(recorded);
            }
            Command::WhenSettled { reply } => {
                if self.is_settled() {
                    let _ = reply.send(Ok(EmptyResponse {}));
                } else {
                    self.settled_waiters.push(reply);
                }
            }
            Command::Environment { reply } => {
                let _ = reply.send(Ok(crate::tool_environment(&self.row, &self.registry)));
            }
            Command::SetEnv { env, any, reply } => {
                let _ = reply.send(Ok(self.set_env(env, any)));
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
                written,
                reply,
            } => self.navigate(&entry_id, summary, written, reply).await,
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
            Command::SendCustom {
                message,
                trigger,
                deliver,
                reply,
            } => {
                let _ = reply.send(self.send_custom(*message, trigger, deliver).await);
            }
            Command::Notify { notice, reply } => {
                self.keep_ui(&notice);
                self.notify(notice);
                let _ = reply.send(Ok(EmptyResponse {}));
            }
            Command::TodoReminder { reply } => {
                let _ = reply.send(Ok(self.todo_reminder()));
            }
            Command::Todos { change, reply } => {
                let _ = reply.send(self.change_todos(change).await);
            }
            Command::SetPlanMode { enabled, reply } => {
                let _ = reply.send(self.set_plan_mode(enabled).await);
            }
            Command::DecidePlan { decision, reply } => {
                let _ = reply.send(self.decide_plan(decision).await);
            }
            Command::ApprovedPlan { reply } => {
                let _ = reply.send(Ok(self.plan.approved.clone()));
            }
            Command::QuestionHearers { reply } => {
                let hearers = self
                    .subscribers
                    .iter()
                    .filter(|subscriber| {
                        !subscriber.is_closed()
                            && subscriber.wants(crate::events::DeliveryKind::Question)
                    })
                    .count();
                let _ = reply.send(Ok(hearers));
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

    // ----- lifecycle -----

    /// Unloads if still idle: persists, leaves the registry, refuses queued commands (their
    /// callers retry against a fresh actor). Returns whether the actor should stop.
    async fn unload(&mut self) -> bool {
        {
            let mut sessions = self
                .sessions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
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

/// Completes when any of the subscribers is gone.
async fn any_closed(subscribers: &[Arc<dyn Subscriber>]) {
    let closed: Vec<_> = subscribers
        .iter()
        .map(|subscriber| subscriber.closed())
        .collect();
    futures_util::future::select_all(closed).await;
}

impl Drop for SessionActor {
    fn drop(&mut self) {
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Another actor of this session is registered (this one lost a race to register):
        // what the session uses is that actor's.
        let replaced = sessions
            .get(&self.row.id)
            .is_some_and(|handle| handle.generation != self.generation);
        if !replaced {
            sessions.remove(&self.row.id);
        }
        drop(sessions);
        // However the actor ends (unload, close, delete, a panic), it no longer uses the
        // MCP servers, language servers or extensions its runs used.
        if !replaced {
            self.services.tools.session_closed(&self.row.id);
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

async fn next_run_event(run: &mut Option<ActiveRun>) -> Option<Box<AgentEvent>> {
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
    Custom {
        custom_type: String,
        data: serde_json::Value,
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
            EntryKind::Custom { custom_type, data } => SessionEntry::Custom {
                id,
                parent_id,
                timestamp,
                custom_type,
                data: Some(data),
            },
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

fn user_message(text: String, images: Vec<ImageContent>) -> Result<AgentMessage, SessionError> {
    let images: Vec<pi_llm::ImageContent> =
        transcode("images", &images).map_err(SessionError::internal)?;
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
