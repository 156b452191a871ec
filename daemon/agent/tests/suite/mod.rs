mod loop_events;
mod queues_and_abort;
mod tool_source;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use pi_agent::{
    AgentEvent, AgentMessage, MessageQueues, RunConfig, RunHandles, RunOutcome, Tool, ToolExecution,
};
use pi_llm::faux::{FauxProvider, faux_model};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use tools::{EchoTool, GatedTool, PanicTool, ProgressTool};

/// A run in a background task, with its events collected.
pub struct Harness {
    pub faux: FauxProvider,
    pub queues: Arc<MessageQueues>,
    pub cancel: CancellationToken,
    events: mpsc::Receiver<Box<AgentEvent>>,
    task: Option<tokio::task::JoinHandle<RunOutcome>>,
}

pub fn config(
    faux: &FauxProvider,
    tools: Vec<Arc<dyn Tool>>,
    tool_execution: ToolExecution,
) -> RunConfig {
    RunConfig {
        provider: Arc::new(faux.clone()),
        model: faux_model(),
        thinking: pi_llm::ThinkingLevel::Off,
        system_prompt: Some("You are a test.".into()),
        tools,
        tool_source: None,
        tool_execution,
        session_id: Some("s1".into()),
        api_key: None,
        context_hook: None,
        payload_hook: None,
        response_hook: None,
        thinking_budgets: pi_llm::ThinkingBudgets::default(),
        block_images: false,
        request_timeout: None,
        provider_retries: None,
        max_retry_delay: None,
        transport: pi_llm::Transport::Sse,
        cache_retention: pi_llm::CacheRetention::Short,
        env: None,
        stop_hook: None,
        stream_watch: None,
    }
}

impl Harness {
    pub fn new() -> Harness {
        let (_tx, events) = mpsc::channel(1);
        Harness {
            faux: FauxProvider::new(),
            queues: Arc::new(MessageQueues::default()),
            cancel: CancellationToken::new(),
            events,
            task: None,
        }
    }

    /// Starts a run of `prompt` (empty = continue) over `context`.
    pub fn start(&mut self, config: RunConfig, context: Vec<AgentMessage>, prompt: Option<&str>) {
        let (tx, rx) = mpsc::channel(4096);
        self.events = rx;
        let handles = RunHandles {
            cancel: self.cancel.clone(),
            queues: self.queues.clone(),
            events: tx,
        };
        let prompts = prompt
            .map(|text| vec![AgentMessage::user(text, Vec::new(), 1)])
            .unwrap_or_default();
        self.task = Some(tokio::spawn(async move {
            let context = context.into_iter().map(std::sync::Arc::new).collect();
            pi_agent::run(&config, &handles, context, prompts).await
        }));
    }

    /// The next event (fails the test after 10 s).
    pub async fn next(&mut self) -> AgentEvent {
        tokio::time::timeout(Duration::from_secs(10), self.events.recv())
            .await
            .expect("an event in time")
            .map(|event| *event)
            .expect("the run is still going")
    }

    /// Reads events until `predicate` matches; returns every event read, the match last.
    pub async fn until(&mut self, predicate: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await;
            let done = predicate(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Waits for the run to end; returns the outcome and the remaining events.
    pub async fn finish(&mut self) -> (RunOutcome, Vec<AgentEvent>) {
        let outcome = tokio::time::timeout(Duration::from_secs(10), self.task.take().unwrap())
            .await
            .unwrap()
            .unwrap();
        let mut rest = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            rest.push(*event);
        }
        (outcome, rest)
    }
}

/// A compact name for an event, for sequence assertions: `message_end(user)`,
/// `tool_execution_end(t1,error)`.
pub fn describe(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::AgentEnd { messages } => format!("agent_end({})", messages.len()),
        AgentEvent::TurnStart => "turn_start".into(),
        AgentEvent::TurnEnd { tool_results, .. } => format!("turn_end({})", tool_results.len()),
        AgentEvent::MessageStart { message } => format!("message_start({})", message.role()),
        AgentEvent::MessageUpdate { .. } => "message_update".into(),
        AgentEvent::MessageEnd { message } => format!("message_end({})", message.role()),
        AgentEvent::ToolExecutionStart { tool_name, .. } => {
            format!("tool_execution_start({tool_name})")
        }
        AgentEvent::ToolExecutionUpdate { tool_name, .. } => {
            format!("tool_execution_update({tool_name})")
        }
        AgentEvent::ToolExecutionEnd {
            tool_name, result, ..
        } => {
            format!(
                "tool_execution_end({tool_name}{})",
                if result.is_error { ",error" } else { "" }
            )
        }
        AgentEvent::QueueUpdate {
            steering,
            follow_up,
        } => format!("queue_update({},{})", steering.len(), follow_up.len()),
        AgentEvent::ToolsWaitStart { sources, .. } => {
            format!("tools_wait_start({})", sources.join(","))
        }
        AgentEvent::ToolsWaitEnd { not_ready, aborted } => format!(
            "tools_wait_end({}{})",
            not_ready.join(","),
            if *aborted { ",aborted" } else { "" }
        ),
    }
}

/// Event names with consecutive `message_update`s collapsed to one `message_update*`.
pub fn sequence(events: &[AgentEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for event in events {
        let name = describe(event);
        if name == "message_update" {
            if out.last().map(String::as_str) != Some("message_update*") {
                out.push("message_update*".into());
            }
            continue;
        }
        out.push(name);
    }
    out
}

pub fn text_of(result: &pi_agent::ToolOutput) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            pi_llm::UserContent::Text(text) => Some(text.text.clone()),
            pi_llm::UserContent::Image(_) => None,
        })
        .collect()
}
