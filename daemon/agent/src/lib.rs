//! pi-agent: the agent loop (pi-agent-core's role) — turns, tool execution, steering and
//! follow-up queues, abort, and events in pi's vocabulary.
//!
//! Architecture invariant: no storage and no transport. The loop takes a provider, tools and
//! messages, and reports everything it does as events; the daemon persists and broadcasts.

pub mod tool;

pub use tool::{ProgressSink, Tool, ToolFuture, ToolInvocation, ToolOutput};
