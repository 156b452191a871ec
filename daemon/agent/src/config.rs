//! What a run is given: [`RunConfig`] (model, tools, prompt) and [`RunHandles`] (abort,
//! queues, where events go).

use std::sync::Arc;

use pi_llm::{Model, Provider, ThinkingLevel};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::queue::MessageQueues;
use crate::tool::{Tool, ToolSource};

/// How tool calls of one assistant message run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolExecution {
    /// Concurrently, at most this many at once, started in call order.
    Parallel {
        /// Concurrency cap (at least 1).
        max_concurrency: usize,
    },
    /// One after another; a steering message skips the rest.
    Sequential,
}

impl Default for ToolExecution {
    fn default() -> Self {
        ToolExecution::Parallel { max_concurrency: 8 }
    }
}

/// What a run uses: model, tools, prompt. Built by the session for each run.
#[derive(Clone)]
pub struct RunConfig {
    /// Streams model responses (the daemon's provider router).
    pub provider: Arc<dyn Provider>,
    /// The model.
    pub model: Model,
    /// Thinking level (the provider clamps it to the model).
    pub thinking: ThinkingLevel,
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// Active tools.
    pub tools: Vec<Arc<dyn Tool>>,
    /// Tools that join the run while it runs, asked before each model request.
    pub tool_source: Option<Arc<dyn ToolSource>>,
    /// Parallel or sequential tool calls.
    pub tool_execution: ToolExecution,
    /// Session id, for prompt-cache keys.
    pub session_id: Option<String>,
    /// The provider key, resolved by the caller.
    pub api_key: Option<pi_llm::ApiKey>,
    /// Sees (and may replace) the messages of each model request (pi's `context`); they go
    /// to that request only.
    pub context_hook: Option<ContextHook>,
    /// Sees (and may replace) each request's body (pi's `before_provider_request`).
    pub payload_hook: Option<pi_llm::PayloadHook>,
    /// Hears each response's status and headers (pi's `after_provider_response`).
    pub response_hook: Option<pi_llm::ResponseHook>,
    /// Thinking budgets over the providers' defaults (pi's `thinkingBudgets`).
    pub thinking_budgets: pi_llm::ThinkingBudgets,
    /// How long a provider may take to answer a request (pi's `retry.provider.timeoutMs`).
    pub request_timeout: Option<std::time::Duration>,
    /// How often a request is sent again before a failure is the agent's (pi's
    /// `retry.provider.maxRetries`).
    pub provider_retries: Option<u32>,
    /// The longest wait a provider may ask for (pi's `retry.provider.maxRetryDelayMs`).
    pub max_retry_delay: Option<std::time::Duration>,
    /// How `openai-codex-responses` requests travel (pi's `transport`).
    pub transport: pi_llm::Transport,
    /// How long providers keep the prompt cache (pi's `PI_CACHE_RETENTION`).
    pub cache_retention: pi_llm::CacheRetention,
    /// The session's environment, for providers that read more than a key (Azure).
    pub env: Option<std::sync::Arc<std::collections::BTreeMap<String, String>>>,
    /// Images never reach the model: each is replaced by a sentence saying image reading
    /// is disabled (pi's `images.blockImages`).
    pub block_images: bool,
    /// Asked when the run would end normally (the model answered without tool calls and
    /// nothing is queued): messages to go on with, or none to end (oh-my-pi's todo
    /// reminders).
    pub stop_hook: Option<StopHook>,
    /// Watches each reply as it streams (oh-my-pi's stream rules); `None`: nothing per delta.
    pub stream_watch: Option<Arc<dyn crate::watch::StreamWatch>>,
}

/// Gives the messages a run goes on with instead of ending; none: it ends.
pub type StopHook = Arc<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<AgentMessage>> + Send>>
        + Send
        + Sync,
>;

/// Given the messages of a model request, gives the messages to send.
pub type ContextHook = Arc<
    dyn Fn(
            Vec<Arc<AgentMessage>>,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<Arc<AgentMessage>>> + Send>>
        + Send
        + Sync,
>;

impl std::fmt::Debug for RunConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfig")
            .field("model", &self.model.id)
            .field("thinking", &self.thinking)
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|tool| tool.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .field("tool_execution", &self.tool_execution)
            .finish_non_exhaustive()
    }
}

/// What connects a run to its session.
#[derive(Clone, Debug)]
pub struct RunHandles {
    /// Cancelling aborts the run: the stream and running tools end, the run ends as aborted.
    pub cancel: CancellationToken,
    /// Steering and follow-up queues.
    pub queues: Arc<MessageQueues>,
    /// Where events go, in order. If the receiver is gone the run aborts. Boxed: a queued
    /// event costs a pointer in the channel's blocks, not the size of the largest variant.
    pub events: mpsc::Sender<Box<AgentEvent>>,
}
