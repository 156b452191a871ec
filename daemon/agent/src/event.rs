//! What the agent loop reports, in pi's event vocabulary. The daemon persists the durable ones
//! (`message_end`) and broadcasts all of them to attached clients.

use std::sync::Arc;

use pi_llm::{AssistantMessage, StreamEvent, ToolResultMessage};
use serde_json::Value;

use crate::message::AgentMessage;
use crate::tool::ToolOutput;

/// One event of a run, in emission order.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// A run began.
    AgentStart,
    /// The run ended; `messages` are all messages it produced, prompts included.
    AgentEnd {
        /// Every message of the run (shared with the run's conversation, not copied).
        messages: Vec<Arc<AgentMessage>>,
    },
    /// A turn (one model call and its tool calls) began.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message (boxed: the other events, queued by the thousand
        /// under load, are much smaller).
        message: Box<AssistantMessage>,
        /// Its tool results, in call order.
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message began. For assistant messages this is the empty partial.
    MessageStart {
        /// The message (partial for the assistant).
        message: Arc<AgentMessage>,
    },
    /// The streaming assistant message changed (delta only).
    MessageUpdate {
        /// The provider event.
        event: StreamEvent,
    },
    /// A message is complete. Durable: the daemon stores it before announcing it.
    MessageEnd {
        /// The final message, shared with the conversation it joins (one copy of each
        /// message, however many hold it).
        message: Arc<AgentMessage>,
    },
    /// A tool call began (arguments as the model sent them, before validation).
    ToolExecutionStart {
        /// The call id.
        tool_call_id: String,
        /// The tool name.
        tool_name: String,
        /// Raw arguments.
        args: Value,
    },
    /// A running tool reported partial results (accumulated; replaces the previous update).
    ToolExecutionUpdate {
        /// The call id.
        tool_call_id: String,
        /// The tool name.
        tool_name: String,
        /// Raw arguments.
        args: Value,
        /// The result so far.
        partial_result: ToolOutput,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// The call id.
        tool_call_id: String,
        /// The tool name.
        tool_name: String,
        /// The result.
        result: ToolOutput,
    },
    /// A model request waits for tools on their way (the run's [`crate::ToolSource`]).
    ToolsWaitStart {
        /// What the tools come from (MCP server names).
        sources: Vec<String>,
        /// The longest the wait may last, in milliseconds.
        timeout_ms: u64,
    },
    /// The wait is over; the request goes out with the tools that are there.
    ToolsWaitEnd {
        /// The sources whose tools are still not there (they join a later turn when they
        /// come).
        not_ready: Vec<String>,
        /// The run was aborted during the wait.
        aborted: bool,
    },
    /// The steering or follow-up queue changed (texts of the queued messages).
    QueueUpdate {
        /// Queued steering messages.
        steering: Vec<String>,
        /// Queued follow-up messages.
        follow_up: Vec<String>,
    },
}
