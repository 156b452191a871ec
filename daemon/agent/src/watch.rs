//! Watching a model's reply as it streams (oh-my-pi's time-traveling stream rules): a
//! [`StreamWatch`] given in the run's config sees every text, thinking and tool-argument delta
//! of each assistant message and may interrupt the reply (it is ended as aborted — so the next
//! request leaves it out — or kept without its unfinished tool calls, and the run goes on with
//! the watcher's message) or ask for a reminder after it.
//!
//! A run without a watcher pays nothing per delta.

use crate::message::AgentMessage;

/// Where a streamed delta comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaSource<'a> {
    /// The reply's text.
    Text,
    /// Its thinking.
    Thinking,
    /// A tool call's argument JSON.
    ToolCall {
        /// The tool called.
        name: &'a str,
    },
}

/// What a watcher makes of a delta.
#[derive(Debug)]
pub enum Verdict {
    /// Nothing: stream on.
    Go,
    /// Stop the reply here and go on with `inject`.
    Interrupt {
        /// The message the run goes on with (hidden from the user, for the model).
        inject: AgentMessage,
        /// Keep what was streamed (without unfinished tool calls) instead of dropping it.
        keep_partial: bool,
        /// Why, for the aborted message's error text.
        reason: String,
    },
    /// Let the reply finish, then go on with `message` before the run could end.
    Remind(AgentMessage),
}

/// Makes a watcher for each assistant message of a run.
pub trait StreamWatch: Send + Sync {
    /// A watcher for the next message.
    fn message(&self) -> Box<dyn MessageWatch>;
}

/// Watches one assistant message.
pub trait MessageWatch: Send {
    /// Sees one delta of the block at `content_index`.
    fn delta(&mut self, content_index: usize, source: DeltaSource<'_>, delta: &str) -> Verdict;
}
