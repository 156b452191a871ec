//! pi-agent: the agent loop (pi-agent-core's role) — turns, tool execution, steering and
//! follow-up queues, abort, and events in pi's vocabulary.
//!
//! Architecture invariant: no storage and no transport. The loop takes a provider, tools and
//! messages, and reports everything it does as events; the daemon persists and broadcasts.

mod config;
pub mod event;
mod execute;
pub mod message;
pub mod queue;
pub mod run;
pub mod tool;
pub mod validate;
pub mod watch;

pub use config::{ContextHook, RunConfig, RunHandles, StopHook, ToolExecution};
pub use event::AgentEvent;
pub use execute::{ABORTED, SKIPPED_FOR_STEERING};
pub use message::{AgentMessage, convert_to_llm};
pub use queue::{MessageQueues, QueueMode};
pub use run::{RunOutcome, run};
pub use tool::{
    PROGRESS_KEPT, ProgressReceiver, ProgressSink, Tool, ToolFuture, ToolInvocation, ToolLayer,
    ToolOutput, ToolSource, ToolWait, layered,
};
