//! The actor's runs: prompting, starting and continuing runs, storing each completed message
//! before announcing it, finishing runs (automatic retries) and recording messages outside a
//! run.

use std::sync::Arc;

use pi_agent::{AgentEvent, AgentMessage, RunConfig, RunHandles};
use pi_llm::{Model, StopReason};
use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{EmptyResponse, RunningTool, SessionEntry, SessionEvent};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ActiveRun, EntryKind, RUN_EVENT_BUFFER, SessionActor, queue_modes, user_message};
use crate::convert;
use crate::entries::{self, EntryBase};
use crate::error::SessionError;
use crate::retry::AfterRun;
use crate::services::clamp_thinking;
use pi_store::{SessionRow, Store};
use pi_util::time::now_millis;

impl SessionActor {
    pub(super) async fn prompt(
        &mut self,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<EmptyResponse, SessionError> {
        self.check_idle()?;
        self.model_and_key()?;
        self.resources = pi_coding::resources::load_in_background(
            self.services.settings.resources.clone(),
            std::path::PathBuf::from(&self.row.cwd),
            crate::resource_choice(&self.row),
        )
        .await;
        // `/mcp:<server>:<prompt> args`: the server's prompt, fetched now.
        let environment = crate::tool_environment(&self.row, &self.registry);
        let expanded = match self.services.tools.expand_command(&environment, &text) {
            Some(expanding) => {
                Some(
                    expanding
                        .await
                        .map_err(|error| SessionError::InvalidParams {
                            field: None,
                            message: error.to_string(),
                        })?,
                )
            }
            None => None,
        };
        let text = expanded.unwrap_or(text);
        let mut prompts = vec![user_message(self.expand_input(text), images)?];
        prompts.append(&mut self.next_turn);
        self.overflow_recovery_attempted = false;
        self.todo_reminders = 0;
        if let Some(prompts) = self.compact_before_prompt(prompts).await {
            self.start_run(prompts).await?;
        }
        Ok(EmptyResponse {})
    }

    /// The session's model and its key; the error says what to configure.
    pub(super) fn model_and_key(&self) -> Result<(Model, Option<pi_llm::ApiKey>), SessionError> {
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
            SessionError::InvalidParams {
                field: None,
                message: message.to_owned(),
            }
        })?;
        // A model of an extension's provider: its key is the extension host's to find.
        if self.extension_provider(&model).is_some() {
            return Ok((model, None));
        }
        if let Some(key) = crate::runtime_api_key(&self.row, &model.provider) {
            return Ok((model, Some(key)));
        }
        let environment = crate::tool_environment(&self.row, &self.registry);
        let api_key = self
            .services
            .models
            .api_key_in(&model, &environment.env)
            .map_err(|error| SessionError::NoKey(error.to_string()))?;
        Ok((model, api_key))
    }

    /// What streams `model` for this session: an extension's provider, or the daemon's.
    pub(super) fn provider_for(&self, model: &Model) -> Arc<dyn pi_llm::Provider> {
        self.extension_provider(model)
            .unwrap_or_else(|| self.services.models.provider())
    }

    fn extension_provider(&self, model: &Model) -> Option<Arc<dyn pi_llm::Provider>> {
        self.hooks.as_ref()?.provider_for(model)
    }

    /// Starts a run with `prompts` (empty: continue from the context, as a retry does).
    pub(super) async fn start_run(
        &mut self,
        prompts: Vec<AgentMessage>,
    ) -> Result<EmptyResponse, SessionError> {
        let (model, api_key) = self.model_and_key()?;
        let (steering_mode, follow_up_mode) = queue_modes(&self.services, &self.resources);
        self.queues.set_modes(steering_mode, follow_up_mode);
        // MCP servers' tools join the session's own before each request of the run (the
        // first waits for servers never seen before); a name the session's own tools use
        // keeps the session's tool.
        let environment = crate::tool_environment(&self.row, &self.registry);
        // Planning: the tools behind plan mode's gate, `exit_plan_mode` beside them.
        let gate = self.plan.enabled.then(|| crate::plan::PlanGate {
            enabled: self.planning.clone(),
            factory: self.services.tools.clone(),
        });
        let (tools, tool_source) = {
            let source = self.services.tools.tool_source(&environment);
            match &gate {
                None => (self.tools.clone(), source),
                Some(gate) => {
                    let mut tools = gate.wrap(self.tools.clone());
                    tools.extend(self.services.tools.plan_tool(&environment));
                    let source = source.map(|inner| {
                        Arc::new(crate::plan::GatedSource {
                            inner,
                            gate: gate.clone(),
                        }) as Arc<dyn pi_agent::ToolSource>
                    });
                    (tools, source)
                }
            }
        };
        let mut system_prompt = self
            .run_system_prompt
            .clone()
            .unwrap_or_else(|| self.system_prompt());
        if gate.is_some() {
            system_prompt.push_str(crate::plan::PROMPT);
        }
        let config = RunConfig {
            provider: self.provider_for(&model),
            model: model.clone(),
            thinking: clamp_thinking(&model, self.thinking),
            system_prompt: Some(system_prompt),
            tools,
            tool_source,
            tool_execution: self.services.settings.tool_execution,
            session_id: Some(self.row.id.clone()),
            api_key,
            context_hook: self.hooks.as_ref().and_then(|hooks| hooks.context_hook()),
            payload_hook: self.hooks.as_ref().and_then(|hooks| hooks.payload_hook()),
            response_hook: self.hooks.as_ref().and_then(|hooks| hooks.response_hook()),
            thinking_budgets: {
                let [minimal, low, medium, high] = self.resources.settings.thinking_budgets;
                pi_llm::ThinkingBudgets {
                    minimal,
                    low,
                    medium,
                    high,
                }
            },
            block_images: self.resources.settings.block_images,
            request_timeout: self
                .resources
                .settings
                .retry
                .provider_timeout_ms
                .map(std::time::Duration::from_millis),
            provider_retries: self.resources.settings.retry.provider_max_retries,
            // Applied only where the agent retries (pi's cap on its waits); 0: none.
            max_retry_delay: Some(self.resources.settings.retry.max_delay_ms)
                .filter(|ms| *ms > 0 && self.resources.settings.retry.enabled)
                .map(std::time::Duration::from_millis),
            transport: self.resources.settings.transport,
            // pi reads its environment: here the session's (its client's), else the daemon's.
            cache_retention: pi_llm::CacheRetention::from_env_value(
                environment
                    .env
                    .get("PI_CACHE_RETENTION")
                    .cloned()
                    .or_else(|| std::env::var("PI_CACHE_RETENTION").ok())
                    .as_deref(),
            ),
            env: Some(environment.env.clone()),
            // oh-my-pi's stream rules, when the session's project has any.
            stream_watch: pi_coding::ttsr::Ttsr::new(
                &self.resources.rules,
                &self.resources.settings.ttsr,
                pi_coding::ttsr::fired_in(
                    &self.context,
                    &self.resources.rules,
                    &self.resources.settings.ttsr,
                ),
                &mut Vec::new(),
            )
            .map(|ttsr| {
                Arc::new(pi_coding::ttsr::TtsrWatch(ttsr)) as Arc<dyn pi_agent::watch::StreamWatch>
            }),
            // Only sessions that keep a todo list are reminded of it.
            stop_hook: self
                .tools
                .iter()
                .any(|tool| tool.name() == crate::todos::TODO_TOOL)
                .then(|| todo_reminders(self.registry.clone(), self.row.id.clone())),
        };
        // Memory follows the disk: the row changes only once the store has it.
        let mut row = self.row.clone();
        row.running = true;
        row.updated_at = now_millis();
        self.store
            .update_session(&row)
            .await
            .map_err(crate::storage(&self.store))?;
        self.row = row;
        let cancel = CancellationToken::new();
        let (events_sender, events) = mpsc::channel(RUN_EVENT_BUFFER);
        let handles = RunHandles {
            cancel: cancel.clone(),
            queues: self.queues.clone(),
            events: events_sender,
        };
        self.tell_hooks(config.system_prompt.as_deref());
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
            ended: false,
        });
        Ok(EmptyResponse {})
    }

    pub(super) fn enqueue(
        &mut self,
        steering: bool,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<EmptyResponse, SessionError> {
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

    /// Handles one event of the active run: a completed message is stored first (async),
    /// everything else is live and handled without awaiting (see [`Self::on_live_event`]).
    pub(super) async fn on_agent_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::MessageEnd { message } => self.on_message_end(message).await,
            live => self.on_live_event(live),
        }
    }

    /// A live event (every event but `message_end`): updates the attach snapshot's streaming
    /// state and broadcasts. Synchronous on purpose: it is the per-token path, and an async
    /// fn's future is moved around whole on every call.
    /// One event of the run: a completed message is stored before it is announced; the
    /// rest (the per-token path) is announced without an await.
    pub(super) async fn on_run_event(&mut self, event: AgentEvent) {
        if matches!(event, AgentEvent::MessageEnd { .. }) {
            Box::pin(self.on_agent_event(event)).await;
        } else {
            self.on_live_event(event);
        }
    }

    /// A run that said `agent_end` is finished before the next command is handled: whoever
    /// heard `agent_end` finds the session idle (or retrying, or compacting, as the end of the
    /// run decided), as a pi client does.
    pub(super) async fn finish_ended_run(&mut self) {
        if !self.run.as_ref().is_some_and(|run| run.ended) {
            return;
        }
        while let Some(event) = super::next_run_event(&mut self.run).await {
            self.on_run_event(*event).await;
        }
        self.on_run_finished().await;
    }

    pub(super) fn on_live_event(&mut self, event: AgentEvent) {
        match &event {
            AgentEvent::AgentEnd { .. } => {
                if let Some(run) = &mut self.run {
                    run.ended = true;
                }
            }
            AgentEvent::MessageStart { message } => {
                if let (Some(run), AgentMessage::Assistant(partial)) = (&mut self.run, &**message) {
                    run.streaming = Some(partial.clone());
                }
            }
            AgentEvent::MessageUpdate { event } => {
                if let Some(partial) = self.run.as_mut().and_then(|run| run.streaming.as_mut()) {
                    pi_llm::apply_event(partial, event);
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
                    tool.partial_result = convert::partial_output_to_wire(partial_result).ok();
                }
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                if let Some(run) = &mut self.run {
                    run.running_tools
                        .retain(|tool| &tool.tool_call_id != tool_call_id);
                }
            }
            AgentEvent::MessageEnd { .. }
            | AgentEvent::AgentStart
            | AgentEvent::TurnStart
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::QueueUpdate { .. }
            | AgentEvent::ToolsWaitStart { .. }
            | AgentEvent::ToolsWaitEnd { .. } => {}
        }
        match convert::event_to_wire(event, None) {
            Ok(event) => self.broadcast(event),
            Err(error) => tracing::error!(%error, "cannot convert an agent event"),
        }
    }

    /// A completed message of the run: stored, then announced with its entry id and seq.
    async fn on_message_end(&mut self, message: Arc<AgentMessage>) {
        if let Some(run) = &mut self.run {
            run.streaming = None;
        }
        let mut retry_end = None;
        if let AgentMessage::Assistant(assistant) = &*message
            && !matches!(
                assistant.stop_reason,
                StopReason::Error | StopReason::Aborted
            )
        {
            retry_end = self.retry.on_assistant_success();
        }
        let (entry_id, stored_seq) = match self.store_message(&message).await {
            Ok((id, seq)) => (Some(id), Some(seq)),
            Err(error) => {
                self.broadcast(SessionEvent::SessionError {
                    message: error.to_string(),
                });
                (None, None)
            }
        };
        match convert::event_to_wire(AgentEvent::MessageEnd { message }, entry_id) {
            Ok(event) => self.broadcast_with_seq(event, stored_seq),
            Err(error) => tracing::error!(%error, "cannot convert an agent event"),
        }
        if let Some(event) = retry_end {
            self.broadcast(event);
        }
    }

    /// Stores a completed message as an entry; returns its id and seq. The event is broadcast
    /// after, with that seq.
    pub(super) async fn store_message(
        &mut self,
        message: &Arc<AgentMessage>,
    ) -> Result<(String, u64), SessionError> {
        let base = EntryBase::new(&mut self.entry_ids, self.row.leaf_id.clone(), now_millis());
        let entry = entries::message_entry(base, message).map_err(SessionError::internal)?;
        let mut row = self.row.clone();
        row.message_count += 1;
        match &**message {
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
            .ok_or_else(|| SessionError::internal("no entry was committed"))
    }

    /// Commits entries (children of the leaf, in order) with the given row changes; the new
    /// leaf is the last entry. Returns each entry's id and seq. Nothing is broadcast.
    pub(super) async fn commit_entries(
        &mut self,
        mut row: SessionRow,
        new: Vec<SessionEntry>,
    ) -> Result<Vec<(String, u64)>, SessionError> {
        let mut stored = Vec::with_capacity(new.len());
        let mut ids = Vec::with_capacity(new.len());
        for (offset, entry) in new.iter().enumerate() {
            let seq = self.seq + 1 + offset as u64;
            let new_entry = entries::new_entry(entry, seq).map_err(SessionError::internal)?;
            ids.push((new_entry.id.clone(), seq));
            stored.push(new_entry);
        }
        if let Some((last, seq)) = ids.last() {
            row.leaf_id = Some(last.clone());
            row.last_seq = *seq;
        }
        row.updated_at = now_millis();
        // A session opened from a pi file writes its entries there too, as pi would.
        // (The settings read now: a session's resources are read again only before a run.)
        let write_back = row
            .start_options
            .pi_file
            .clone()
            .filter(|_| {
                self.services
                    .settings
                    .resources
                    .load_settings(Some(std::path::Path::new(&row.cwd)))
                    .0
                    .pi_session_write_back
            })
            .map(|path| {
                let bodies: Vec<String> = stored.iter().map(|entry| entry.body.clone()).collect();
                (path, bodies)
            });
        self.store
            .append_entries(&row, stored)
            .await
            .map_err(crate::storage(&self.store))?;
        if let Some((path, bodies)) = write_back {
            // Only while the file ends where this session knows it: once pi (or another
            // session opened from the file) wrote more, this one stops writing there rather
            // than branch the file behind its back; opening the file again continues it.
            let current = match crate::pi_format::last_entry_id(std::path::Path::new(&path)) {
                Ok(Some(last)) => self.store.has_entry(&row.id, &last).await.unwrap_or(false),
                Ok(None) => true,
                Err(_) => false,
            };
            let lines: Vec<&str> = bodies.iter().map(String::as_str).collect();
            if !current {
                tracing::warn!(
                    session = row.id,
                    path,
                    "the pi session file has entries this session does not; it no longer writes to it"
                );
            } else if let Err(error) =
                crate::pi_format::append_to_file(std::path::Path::new(&path), &lines)
            {
                tracing::warn!(
                    session = row.id,
                    path,
                    %error,
                    "cannot append to the pi session file; the daemon keeps the entries"
                );
            }
        }
        self.seq += ids.len() as u64;
        self.row = row;
        Ok(ids)
    }

    /// Appends non-message entries, chained from the leaf, and announces each.
    pub(super) async fn append_entries(
        &mut self,
        row: SessionRow,
        kinds: Vec<EntryKind>,
    ) -> Result<(), SessionError> {
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

    pub(super) async fn on_run_finished(&mut self) {
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
                tracing::error!(%error, "cannot record a user shell command");
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
                if matches!(self.context.last().map(|message| &**message), Some(AgentMessage::Assistant(m)) if m.stop_reason == StopReason::Error)
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
        // An approved plan that asked for a fresh or compacted context starts now.
        if !retry_scheduled && !wants_stop && self.execute_approved_plan().await {
            return;
        }
        // pi checks for compaction after every run, unless a retry was scheduled for it.
        if !retry_scheduled {
            self.after_run(last_assistant).await;
        }
    }

    /// The reminder a run that would end normally goes on with while the todo list has
    /// open tasks (oh-my-pi's todo reminders), at most [`TODO_REMINDERS`] times per prompt.
    pub(super) fn todo_reminder(&mut self) -> Option<AgentMessage> {
        if self.todo_reminders >= TODO_REMINDERS || self.closing.is_some() {
            return None;
        }
        // Blocked tasks wait for something else: only work the model can do is reminded of.
        let open: Vec<String> = self
            .todos
            .todos
            .open()
            .filter(|task| task.status != pi_protocol::v1::TodoStatus::Blocked)
            .map(|task| format!("- {} {} ({})", task.id, task.content, task.status.as_str()))
            .collect();
        if open.is_empty() {
            return None;
        }
        self.todo_reminders += 1;
        let text = format!(
            "<system-reminder>\nYou stopped with open items on your todo list:\n{}\nContinue \
             with them. If one is finished, mark it done; if it cannot or should not be done, \
             drop or block it with the todo tool, saying why.\n</system-reminder>",
            open.join("\n")
        );
        Some(AgentMessage::Custom(pi_agent::message::CustomMessage {
            custom_type: TODO_REMINDER.to_owned(),
            content: vec![pi_llm::UserContent::text(text)],
            display: false,
            details: None,
            timestamp: now_millis(),
        }))
    }

    pub(super) async fn start_retry(&mut self) {
        if let Err(error) = self.start_run(Vec::new()).await {
            let attempt = self.retry.cancel();
            self.broadcast(SessionEvent::SessionError {
                message: format!("cannot retry: {error}"),
            });
            if let Some(SessionEvent::AutoRetryEnd { attempt, .. }) = attempt {
                self.broadcast(SessionEvent::AutoRetryEnd {
                    success: false,
                    attempt,
                    final_error: Some(error.to_string()),
                });
            }
        }
    }

    /// Cancels a pending retry, announcing it.
    pub(super) fn cancel_retry(&mut self) {
        if let Some(event) = self.retry.cancel() {
            self.broadcast(event);
        }
    }

    /// Stores a message outside a run and announces it like a run's completed message.
    pub(super) async fn record_message(
        &mut self,
        message: AgentMessage,
    ) -> Result<String, SessionError> {
        let message = Arc::new(message);
        let (entry_id, seq) = self.store_message(&message).await?;
        let event = AgentEvent::MessageEnd { message };
        match convert::event_to_wire(event, Some(entry_id.clone())) {
            Ok(event) => self.broadcast_with_seq(event, Some(seq)),
            Err(error) => tracing::error!(%error, "cannot convert a recorded message"),
        }
        let info = self.info();
        self.broadcast(SessionEvent::SessionUpdated { info });
        Ok(entry_id)
    }
}

/// Remembers a sent message in the prompt history; a failure only loses the entry.
/// Asks the session for a todo reminder when its run would end.
fn todo_reminders(sessions: crate::SessionsWeak, session_id: String) -> pi_agent::StopHook {
    Arc::new(move || {
        let (sessions, session_id) = (sessions.clone(), session_id.clone());
        Box::pin(async move {
            let Some(sessions) = sessions.upgrade() else {
                return Vec::new();
            };
            sessions
                .call_loaded(&session_id, |reply| super::Command::TodoReminder { reply })
                .await
                .and_then(Result::ok)
                .flatten()
                .into_iter()
                .collect()
        })
    })
}

/// Reminders of open todos after one prompt, at most (oh-my-pi's `todo.reminders`).
const TODO_REMINDERS: u32 = 3;
/// The custom type of the reminder messages.
pub const TODO_REMINDER: &str = "todo-reminder";

/// Remembers a sent message in the prompt history; a failure only loses the entry.
pub(super) fn record_history(
    store: Store,
    cwd: &str,
    text: &str,
) -> impl std::future::Future<Output = ()> + use<> {
    let (cwd, text) = (cwd.to_owned(), text.to_owned());
    async move {
        if text.trim().is_empty() {
            return;
        }
        if let Err(error) = store.record_prompt(&text, &cwd, now_millis()).await {
            tracing::warn!(%error, "cannot record the prompt in the history");
        }
    }
}
