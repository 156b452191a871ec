//! Extensions at a session's hook points: pi's extension events on the prompt path
//! (`input`, `before_agent_start`), their slash commands, and the events they observe. The
//! session core decides where each hook fires and what its answer changes, in pi's order
//! (an extension command first, then `input`, then skill and template expansion, then
//! `before_agent_start`); the daemon gives the registry a
//! [`SessionHooks`](crate::services::SessionHooks) that makes each session's [`Hooks`]
//! (pid's are pi's extensions, run in the extension host).
//!
//! A session without extensions gets no [`Hooks`] at all and pays nothing: no task, no
//! lookup per event.
//!
//! Architecture invariant: no hook is awaited on the actor's task — a hook may ask the
//! session's clients a question, which goes through the actor. The prompt path runs its
//! hooks in a task of its own and hands the outcome back to the actor.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use pi_agent::{AgentMessage, Tool};
use pi_llm::{AssistantMessage, Model, ThinkingLevel};
use pi_protocol::v1::SessionEvent;
use pi_protocol::v1::message::ImageContent;

/// A hook at work.
pub type HookFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Why a hook could not run (the extension host's typed error).
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// Where a prompt came from (pi's `input` event's `source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputSource {
    /// A person at a client.
    #[default]
    Interactive,
    /// A script over the protocol.
    Rpc,
    /// An extension (`pi.sendUserMessage`).
    Extension,
}

impl InputSource {
    /// pi's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Extension => "extension",
        }
    }
}

/// What the `input` handlers made of a prompt.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Go on with it as it is.
    Continue,
    /// Go on with this instead.
    Transform {
        /// The new text.
        text: String,
        /// New images (`None`: the prompt's).
        images: Option<Vec<ImageContent>>,
    },
    /// An extension answered it: no run.
    Handled,
}

/// What the `before_agent_start` handlers want for the run a prompt starts.
#[derive(Clone, Debug, Default)]
pub struct BeforeAgentStart {
    /// The system prompt of the run (`None`: the session's own).
    pub system_prompt: Option<String>,
    /// Messages that go into the context after the prompt (pi's custom messages).
    pub messages: Vec<AgentMessage>,
}

/// What the `session_before_compact` handlers decided about a compaction.
#[derive(Clone, Debug, PartialEq)]
pub enum BeforeCompact {
    /// Compact as usual.
    Continue,
    /// Do not compact (the compaction ends as aborted, as in pi).
    Cancel,
    /// Store this instead of summarizing (pi's `compaction` result).
    Write(WrittenCompaction),
}

/// A compaction an extension wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct WrittenCompaction {
    /// The summary.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// The context size before.
    pub tokens_before: u64,
    /// Its own details (`Null`: none).
    pub details: serde_json::Value,
}

/// What the `session_before_tree` handlers decided about a move in the session tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeTree {
    /// Do not move.
    pub cancel: bool,
    /// The branch summary an extension wrote (its text and details), used when the user
    /// asked for a summary.
    pub summary: Option<(String, serde_json::Value)>,
    /// Other instructions for the summary.
    pub instructions: Option<String>,
    /// Whether the instructions replace pi's.
    pub replace_instructions: Option<bool>,
    /// A label for the summary entry (or the target, without a summary).
    pub label: Option<String>,
}

/// What extensions may read of a session without asking it (pi's synchronous getters).
#[derive(Clone, Copy)]
pub struct HookState<'a> {
    /// The session's model.
    pub model: Option<&'a Model>,
    /// Its thinking level.
    pub thinking: ThinkingLevel,
    /// Its name.
    pub name: Option<&'a str>,
    /// The system prompt of the latest run, once one started.
    pub system_prompt: Option<&'a str>,
    /// Its tools.
    pub tools: &'a [Arc<dyn Tool>],
}

/// One session's hooks. Every future is awaited outside the session's actor.
pub trait Hooks: Send + Sync {
    /// The slash commands the hooks add now: (name after the slash, description).
    fn commands(&self) -> Vec<(String, String)>;
    /// Runs `/name args` when `name` is one of the hooks' commands, once they are ready;
    /// `None` when it is not one of theirs. The error says what failed.
    fn command(
        self: Arc<Self>,
        name: String,
        args: String,
    ) -> HookFuture<Option<Result<(), HookError>>>;
    /// pi's `input`: a prompt before skill and template expansion.
    fn input(
        self: Arc<Self>,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
    ) -> HookFuture<Result<Input, HookError>>;
    /// pi's `before_agent_start`: the expanded prompt and the session's system prompt.
    fn before_agent_start(
        self: Arc<Self>,
        prompt: String,
        images: Vec<ImageContent>,
        system_prompt: String,
    ) -> HookFuture<Result<BeforeAgentStart, HookError>>;
    /// pi's `context` for the runs about to start: sees and may replace the messages of each
    /// model request (`None`: no extension handles it).
    fn context_hook(&self) -> Option<pi_agent::ContextHook>;
    /// pi's `before_provider_request` for the runs about to start: sees and may replace each
    /// request's body (`None`: no extension handles it).
    fn payload_hook(&self) -> Option<pi_llm::PayloadHook>;
    /// pi's `after_provider_response` for the runs about to start: hears each response's
    /// status and headers (`None`: no extension handles it).
    fn response_hook(&self) -> Option<pi_llm::ResponseHook> {
        None
    }
    /// An event of the session, as it is broadcast (`streaming`: the message being
    /// streamed, for `message_update`). Called on the actor's task: must not block.
    fn observe(&self, event: &SessionEvent, streaming: Option<&AssistantMessage>);
    /// The session's state changed.
    fn state(&self, state: HookState<'_>);
    /// pi's `session_before_compact`: the compaction's preparation and the branch's entries
    /// in pi's shapes, and the custom instructions.
    fn before_compact(
        self: Arc<Self>,
        _preparation: serde_json::Value,
        _branch: Vec<serde_json::Value>,
        _instructions: Option<String>,
    ) -> HookFuture<Result<BeforeCompact, HookError>> {
        Box::pin(async { Ok(BeforeCompact::Continue) })
    }
    /// The models of the providers the hooks registered (pi's `registerProvider`), each with
    /// whether its provider has a key, once the hooks are ready.
    fn models(self: Arc<Self>) -> HookFuture<Vec<(Model, bool)>> {
        Box::pin(async { Vec::new() })
    }
    /// What streams `model` when it is one of the hooks' models as registered now (its key
    /// is theirs to find); `None`: the daemon's own providers stream it.
    fn provider_for(&self, _model: &Model) -> Option<Arc<dyn pi_llm::Provider>> {
        None
    }
    /// pi's `session_before_switch`, before a client leaves the session for another
    /// (`reason` `new` or `resume`; the other session's id): `true` asks it to stay.
    fn before_switch(
        self: Arc<Self>,
        _reason: String,
        _target: Option<String>,
    ) -> HookFuture<Result<bool, HookError>> {
        Box::pin(async { Ok(false) })
    }
    /// Whether some hook handles pi's event `event` now (what to prepare for it is
    /// prepared only then).
    fn handles(&self, _event: &str) -> bool {
        false
    }
    /// pi's `session_before_tree`, before the session's leaf moves: pi's `TreePreparation`
    /// (`targetId`, `oldLeafId`, `commonAncestorId`, `entriesToSummarize`, …).
    fn before_tree(
        self: Arc<Self>,
        _preparation: serde_json::Value,
    ) -> HookFuture<Result<BeforeTree, HookError>> {
        Box::pin(async { Ok(BeforeTree::default()) })
    }
    /// The keyboard shortcuts the hooks add now: (pi's key id, description).
    fn shortcuts(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The files of the extensions loaded so far.
    fn extensions(&self) -> Vec<String> {
        Vec::new()
    }
    /// pi's `session_before_fork`, before the session is forked from its user message
    /// `entry_id`: `true` cancels the fork.
    fn before_fork(self: Arc<Self>, _entry_id: String) -> HookFuture<Result<bool, HookError>> {
        Box::pin(async { Ok(false) })
    }
    /// pi's `user_bash`, before a user's shell command (`!cmd`) runs: pi's `BashResult`
    /// (`{output, exitCode?, cancelled, truncated}`) to record instead of running it, or
    /// `None` to run it.
    fn user_bash(
        self: Arc<Self>,
        _command: String,
        _exclude_from_context: bool,
        _cwd: String,
    ) -> HookFuture<Result<Option<serde_json::Value>, HookError>> {
        Box::pin(async { Ok(None) })
    }
}

/// A session's hooks, handed out of its actor (`Command::Hooks`) to work that runs beside
/// it (a fork, a user's shell command).
#[derive(Clone)]
pub struct HooksHandle(pub Arc<dyn Hooks>);

impl std::fmt::Debug for HooksHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HooksHandle")
    }
}
