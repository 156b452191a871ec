//! The agent loop: one run from a prompt to the point where the model stops asking for tools
//! and no queued message remains, with pi's semantics and event order.
//!
//! A run: `agent_start`, `turn_start`, the prompt messages, then turns of [stream the assistant
//! message → run its tool calls → `turn_end`], injecting steering messages after the tools and
//! follow-ups when the agent would stop, then `agent_end`. An error or aborted assistant
//! message ends the run. Abort (the run's cancellation token) ends the stream and the tools.
//!
//! The tools of a model request (and of its tool calls) are the run's own plus what its
//! [`ToolSource`](crate::tool::ToolSource) gives at that moment, after waiting (`tools_wait_start` / `tools_wait_end`)
//! for tools the source says are on their way.

use std::sync::Arc;

use pi_llm::{
    AssistantMessage, Context, Model, StopReason, StreamEvent, StreamOptions, ToolCall,
    ToolDefinition,
};

pub use crate::config::{RunConfig, RunHandles, ToolExecution};
use crate::event::AgentEvent;
use crate::execute::execute_tool_calls;
use crate::message::{AgentMessage, convert_to_llm};
use crate::tool::Tool;

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// Every message the run produced, prompts included.
    pub new_messages: Vec<Arc<AgentMessage>>,
    /// The last assistant message, if any.
    pub last_assistant: Option<AssistantMessage>,
}

impl RunOutcome {
    /// Whether the run ended because it was aborted.
    pub fn aborted(&self) -> bool {
        self.last_assistant
            .as_ref()
            .is_some_and(|m| m.stop_reason == StopReason::Aborted)
    }

    /// Whether the run ended with a provider error.
    pub fn failed(&self) -> bool {
        self.last_assistant
            .as_ref()
            .is_some_and(|m| m.stop_reason == StopReason::Error)
    }
}

/// Runs the loop. `context` is the conversation so far (its messages shared with whoever
/// holds them, not copied); `prompts` are the new messages (empty to continue from the
/// context, as retries do). Never fails: failures end as an error or aborted assistant
/// message.
pub async fn run(
    config: &RunConfig,
    handles: &RunHandles,
    context: Vec<Arc<AgentMessage>>,
    prompts: Vec<AgentMessage>,
) -> RunOutcome {
    let mut run = Run {
        config,
        handles,
        tools: config.tools.clone(),
        first_new: context.len(),
        context,
        last_assistant: None,
    };
    run.execute(prompts).await;
    let last_assistant =
        run.last_assistant
            .and_then(|at| match run.context.get(at).map(|message| &**message) {
                Some(AgentMessage::Assistant(assistant)) => Some(assistant.clone()),
                _ => None,
            });
    RunOutcome {
        new_messages: run.context.split_off(run.first_new),
        last_assistant,
    }
}

struct Run<'a> {
    config: &'a RunConfig,
    handles: &'a RunHandles,
    // The tools of the latest model request: the config's and its source's.
    tools: Vec<Arc<dyn Tool>>,
    // The conversation: what the run started from, then what it added (from `first_new` on;
    // one copy, not a second list of the run's messages). Each message is shared with the
    // events that announced it and with the session's own conversation.
    context: Vec<Arc<AgentMessage>>,
    first_new: usize,
    // Where in `context` the last assistant message is.
    last_assistant: Option<usize>,
}

impl Run<'_> {
    async fn execute(&mut self, prompts: Vec<AgentMessage>) {
        self.emit(AgentEvent::AgentStart).await;
        self.emit(AgentEvent::TurnStart).await;
        for message in prompts {
            self.add_message(message).await;
        }
        let mut pending = self.take_queued(QueueKind::Steering).await;
        let mut first_turn = true;
        loop {
            if !first_turn {
                self.emit(AgentEvent::TurnStart).await;
            }
            first_turn = false;
            for message in std::mem::take(&mut pending) {
                self.add_message(message).await;
            }
            let (stop_reason, calls, watched) = self.stream_assistant().await;
            self.last_assistant = Some(self.context.len() - 1);
            // A stream rule stopped the reply: the run goes on with what it injects.
            if let Watched::Interrupted(inject) = watched {
                self.emit_turn_end(0).await;
                pending = vec![*inject];
                continue;
            }
            if matches!(stop_reason, StopReason::Error | StopReason::Aborted) {
                self.emit_turn_end(0).await;
                break;
            }
            let (reminders, on_results) = match watched {
                Watched::Reminders { after, on_results } => (after, on_results),
                Watched::Interrupted(_) => (Vec::new(), Vec::new()),
            };
            let (tool_results, terminate) = if calls.is_empty() {
                (Vec::new(), false)
            } else {
                execute_tool_calls(
                    self.config,
                    &self.tools,
                    self.handles,
                    calls.clone(),
                    &on_results,
                )
                .await
            };
            let results = tool_results.len();
            self.context.extend(tool_results);
            self.emit_turn_end(results).await;
            pending = self.take_queued(QueueKind::Steering).await;
            // Reminders of stream rules go with the next request.
            pending.extend(reminders);
            // Tool results go back to the model, unless every one of them ended the run.
            if (!calls.is_empty() && !terminate) || !pending.is_empty() {
                continue;
            }
            pending = self.take_queued(QueueKind::FollowUp).await;
            if pending.is_empty()
                && calls.is_empty()
                && stop_reason == StopReason::Stop
                && let Some(hook) = &self.config.stop_hook
            {
                pending = hook().await;
            }
            if pending.is_empty() {
                break;
            }
        }
        let messages = self.context[self.first_new..].to_vec();
        self.emit(AgentEvent::AgentEnd { messages }).await;
    }

    /// Emits `turn_end` for the assistant message followed by `results` tool results at the
    /// end of the conversation. The event carries copies: the conversation keeps its own
    /// shared messages, and the copies live only until the event is handled.
    async fn emit_turn_end(&mut self, results: usize) {
        let end = self.context.len();
        let tool_results = self.context[end - results..]
            .iter()
            .filter_map(|message| match &**message {
                AgentMessage::ToolResult(result) => Some(result.clone()),
                _ => None,
            })
            .collect();
        let message = match self
            .context
            .get(end - results - 1)
            .map(|message| &**message)
        {
            Some(AgentMessage::Assistant(assistant)) => Box::new(assistant.clone()),
            _ => return,
        };
        self.emit(AgentEvent::TurnEnd {
            message,
            tool_results,
        })
        .await;
    }

    /// Emits `message_start` and `message_end` for a non-streamed message and adds it.
    async fn add_message(&mut self, message: AgentMessage) {
        let message = Arc::new(message);
        self.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })
        .await;
        self.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        self.context.push(message);
    }

    /// Streams the next assistant message and adds it to the conversation; returns why it
    /// stopped, the tool calls it made and what the stream's watcher asked.
    async fn stream_assistant(&mut self) -> (StopReason, Vec<ToolCall>, Watched) {
        let mut watched: Vec<AgentMessage> = Vec::new();
        // Reminders from a tool call's arguments, by the call's content index.
        let mut on_calls: Vec<(usize, AgentMessage)> = Vec::new();
        let mut interrupted: Option<Box<AgentMessage>> = None;
        if !self.handles.cancel.is_cancelled() {
            self.refresh_tools().await;
        }
        let model = &self.config.model;
        let message = if self.handles.cancel.is_cancelled() || self.handles.events.is_closed() {
            let message = aborted_message(model);
            self.emit(AgentEvent::MessageStart {
                message: Arc::new(AgentMessage::Assistant(message.clone())),
            })
            .await;
            message
        } else {
            let mut messages = match &self.config.context_hook {
                Some(hook) => convert_to_llm(&hook(self.context.clone()).await),
                None => convert_to_llm(&self.context),
            };
            if self.config.block_images {
                messages = crate::message::without_images(messages);
            }
            let context = Context {
                system_prompt: self.config.system_prompt.clone(),
                messages,
                tools: self
                    .tools
                    .iter()
                    .map(|tool| ToolDefinition {
                        name: tool.name().to_owned(),
                        description: tool.description().to_owned(),
                        parameters: tool.parameters().clone(),
                    })
                    .collect(),
            };
            let options = StreamOptions {
                api_key: self.config.api_key.clone(),
                thinking: self.config.thinking,
                session_id: self.config.session_id.clone(),
                cancel: self.handles.cancel.clone(),
                payload: self.config.payload_hook.clone(),
                response: self.config.response_hook.clone(),
                thinking_budgets: self.config.thinking_budgets,
                request_timeout: self.config.request_timeout,
                provider_retries: self.config.provider_retries,
                max_retry_delay: self.config.max_retry_delay,
                transport: self.config.transport,
                cache_retention: self.config.cache_retention,
                env: self.config.env.clone(),
                ..StreamOptions::default()
            };
            // The request is built from the context at once; the context (a copy of the
            // conversation and the tool schemas) goes before the reply streams.
            let mut stream = self.config.provider.stream(model, &context, options);
            drop(context);
            let mut started = false;
            let mut watch = self
                .config
                .stream_watch
                .as_ref()
                .map(|watch| (watch.message(), Vec::<(usize, String)>::new()));
            let mut interrupt = None;
            while let Some(event) = stream.next().await {
                if !started {
                    started = true;
                    let partial = Arc::new(AgentMessage::Assistant(stream.partial().clone()));
                    self.emit(AgentEvent::MessageStart { message: partial })
                        .await;
                    if matches!(event, StreamEvent::Start) {
                        continue;
                    }
                }
                if event.is_terminal() {
                    break;
                }
                let verdict = match &mut watch {
                    Some((watch, tools)) => watch_event(watch.as_mut(), tools, &event),
                    None => crate::watch::Verdict::Go,
                };
                let tool_delta = match &event {
                    StreamEvent::ToolcallDelta { content_index, .. } => Some(*content_index),
                    _ => None,
                };
                self.emit(AgentEvent::MessageUpdate { event }).await;
                match verdict {
                    crate::watch::Verdict::Go => {}
                    crate::watch::Verdict::Remind(message) => match tool_delta {
                        Some(index) => on_calls.push((index, message)),
                        None => watched.push(message),
                    },
                    interrupted @ crate::watch::Verdict::Interrupt { .. } => {
                        interrupt = Some(interrupted);
                        break;
                    }
                }
            }
            // Dropping the stream ends the request.
            let mut message = stream.into_partial();
            if let Some(crate::watch::Verdict::Interrupt {
                inject,
                keep_partial,
                reason,
            }) = interrupt
            {
                message
                    .content
                    .retain(|block| !matches!(block, pi_llm::AssistantContent::ToolCall(_)));
                if keep_partial {
                    message.stop_reason = StopReason::Stop;
                } else {
                    // Aborted: shown, stored, and left out of the next request.
                    message.stop_reason = StopReason::Aborted;
                    message.error_message = Some(reason);
                }
                interrupted = Some(Box::new(inject));
            }
            message
        };
        // A tool call's reminders go on its result; those of a call that did not survive,
        // after the reply.
        let mut on_results = Vec::new();
        for (index, reminder) in on_calls {
            match message.content.get(index) {
                Some(pi_llm::AssistantContent::ToolCall(call)) => {
                    on_results.push((call.id.clone(), reminder));
                }
                _ => watched.push(reminder),
            }
        }
        let stop_reason = message.stop_reason;
        let calls = message.tool_calls().cloned().collect();
        let message = Arc::new(AgentMessage::Assistant(message));
        self.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        self.context.push(message);
        let watched = match interrupted {
            Some(inject) => Watched::Interrupted(inject),
            None => Watched::Reminders {
                after: watched,
                on_results,
            },
        };
        (stop_reason, calls, watched)
    }

    /// The tools for the next request: the run's own and its source's, after waiting for
    /// those on their way (an abort ends the wait).
    async fn refresh_tools(&mut self) {
        let Some(source) = &self.config.tool_source else {
            return;
        };
        if let Some(wait) = source.awaited() {
            let sources = wait.sources.clone();
            self.emit(AgentEvent::ToolsWaitStart {
                sources: wait.sources,
                timeout_ms: wait.timeout.as_millis() as u64,
            })
            .await;
            let end = tokio::select! {
                not_ready = wait.done => AgentEvent::ToolsWaitEnd { not_ready, aborted: false },
                () = self.handles.cancel.cancelled() => AgentEvent::ToolsWaitEnd {
                    not_ready: sources,
                    aborted: true,
                },
            };
            self.emit(end).await;
        }
        let mut tools = self.config.tools.clone();
        for tool in source.tools() {
            match tools.iter().position(|own| own.name() == tool.name()) {
                Some(at) if source.overrides(tool.name()) => tools[at] = tool,
                Some(_) => {}
                None => tools.push(tool),
            }
        }
        if let Some(active) = source.active() {
            tools.retain(|tool| active.iter().any(|name| name == tool.name()));
        }
        self.tools = tools;
    }

    async fn take_queued(&mut self, kind: QueueKind) -> Vec<AgentMessage> {
        let queues = &self.handles.queues;
        let taken = match kind {
            QueueKind::Steering => queues.take_steering(),
            QueueKind::FollowUp => queues.take_follow_up(),
        };
        if !taken.is_empty() {
            let texts = queues.texts();
            self.emit(AgentEvent::QueueUpdate {
                steering: texts.steering,
                follow_up: texts.follow_up,
            })
            .await;
        }
        taken
    }

    async fn emit(&self, event: AgentEvent) {
        // A gone receiver means the session is gone: abort so the run ends promptly.
        if self.handles.events.send(Box::new(event)).await.is_err() {
            self.handles.cancel.cancel();
        }
    }
}

#[derive(Clone, Copy)]
enum QueueKind {
    Steering,
    FollowUp,
}

fn aborted_message(model: &Model) -> AssistantMessage {
    AssistantMessage {
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        stop_reason: StopReason::Aborted,
        error_message: Some("Request was aborted".to_owned()),
        timestamp: pi_util::time::now_millis(),
        ..AssistantMessage::default()
    }
}

/// What the stream's watcher asked of a reply.
enum Watched {
    /// Reminders: on the result of a tool call (by its id), and after the reply.
    Reminders {
        after: Vec<AgentMessage>,
        on_results: Vec<(String, AgentMessage)>,
    },
    /// It was stopped; the run goes on with this.
    Interrupted(Box<AgentMessage>),
}

/// Gives a delta event to the message's watcher (`tools`: the tool of each call block so far).
fn watch_event(
    watch: &mut dyn crate::watch::MessageWatch,
    tools: &mut Vec<(usize, String)>,
    event: &StreamEvent,
) -> crate::watch::Verdict {
    use crate::watch::DeltaSource;
    match event {
        StreamEvent::TextDelta {
            content_index,
            delta,
            ..
        } => watch.delta(*content_index, DeltaSource::Text, delta),
        StreamEvent::ThinkingDelta {
            content_index,
            delta,
            ..
        } => watch.delta(*content_index, DeltaSource::Thinking, delta),
        StreamEvent::ToolcallStart {
            content_index,
            tool_name,
            ..
        } => {
            tools.push((*content_index, tool_name.clone()));
            crate::watch::Verdict::Go
        }
        StreamEvent::ToolcallDelta {
            content_index,
            delta,
            ..
        } => {
            let name = tools
                .iter()
                .rev()
                .find(|(index, _)| index == content_index)
                .map_or("", |(_, name)| name.as_str());
            watch.delta(*content_index, DeltaSource::ToolCall { name }, delta)
        }
        _ => crate::watch::Verdict::Go,
    }
}
