//! What a session actor can be asked to do ([`Command`]) and its address ([`SessionHandle`]).

use std::sync::Arc;

use pi_agent::message::BashExecutionMessage;
use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{
    EmptyResponse, QueueState, SessionAttachResponse, SessionCompactResponse, SessionGetResponse,
    SessionNavigateResponse, SessionSetModelResponse, SessionSetThinkingResponse,
    SessionStatsResponse,
};
use tokio::sync::{mpsc, oneshot};

use crate::SessionError;
use crate::compaction::Instructions;
use crate::events::{Notice, Subscriber};

/// A reply channel.
pub type Reply<T> = oneshot::Sender<Result<T, SessionError>>;

/// What a session can be asked to do.
#[derive(Debug)]
pub enum Command {
    /// Subscribe; snapshot + replay.
    Attach {
        /// The subscriber (a connection, a watcher).
        subscriber: Arc<dyn Subscriber>,
        /// Replay durable events after this seq.
        after_seq: Option<u64>,
        /// Answer.
        reply: Reply<SessionAttachResponse>,
    },
    /// Unsubscribe.
    Detach {
        /// The subscriber's id.
        connection_id: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Metadata, tools, queue.
    Get {
        /// Answer.
        reply: Reply<SessionGetResponse>,
    },
    /// Start a run.
    Prompt {
        /// Text.
        text: String,
        /// Images.
        images: Vec<ImageContent>,
        /// Where it came from (what extensions' `input` handlers see).
        source: crate::hooks::InputSource,
        /// Answer: whether a run started.
        reply: Reply<pi_protocol::v1::SessionPromptResponse>,
    },
    /// Queue a steering (`true`) or follow-up (`false`) message.
    Enqueue {
        /// Steering or follow-up.
        steering: bool,
        /// Text.
        text: String,
        /// Images.
        images: Vec<ImageContent>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Abort the run (and any pending retry); answered once idle.
    Abort {
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Cancel a pending automatic retry.
    AbortRetry {
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Switch model.
    SetModel {
        /// Model spec.
        spec: String,
        /// What it names, when resolved beside the actor (among the models of the session's
        /// hooks too); `None`: resolved by the session.
        resolved: Option<Box<ResolvedModel>>,
        /// Answer.
        reply: Reply<SessionSetModelResponse>,
    },
    /// Set thinking level.
    SetThinking {
        /// Level name.
        level: String,
        /// Answer.
        reply: Reply<SessionSetThinkingResponse>,
    },
    /// pi's `setActiveTools`: the tools the session's next runs offer, by name.
    SetActiveTools {
        /// The names (built-in ones, and those the runs' tool source gives); `None`: the
        /// session's own tools again (what narrowed them is gone).
        names: Option<Vec<String>>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// The session's hooks, if it has any (for work beside the actor).
    Hooks {
        /// Answer.
        reply: Reply<Option<crate::hooks::HooksHandle>>,
    },
    /// Name the session.
    SetName {
        /// The name.
        name: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Records a `custom` entry (an approval decision, ...) at the leaf.
    Record {
        /// Its `customType`.
        custom_type: String,
        /// Its data.
        data: serde_json::Value,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Answered once the session has settled: no run, no compaction or summary, no retry
    /// waiting (what a subagent's watcher waits for after a run ends).
    WhenSettled {
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// The environment the session's commands run in (its stored variables and those it
    /// holds in memory only).
    Environment {
        /// Answer.
        reply: Reply<crate::ToolEnvironment>,
    },
    /// Supply lost secret variables.
    SetEnv {
        /// Variables (only missing ones are taken, unless `any`).
        env: std::collections::BTreeMap<String, String>,
        /// Take every variable of `env` (a runtime API key).
        any: bool,
        /// Answer.
        reply: Reply<pi_protocol::v1::SessionSetEnvResponse>,
    },
    /// Label an entry.
    Label {
        /// Target entry.
        entry_id: String,
        /// Label (None clears).
        label: Option<String>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Move the leaf.
    Navigate {
        /// Target entry.
        entry_id: String,
        /// Summarize the branch left behind, with these instructions.
        summary: Option<Instructions>,
        /// The summary an extension wrote instead (text, details), when one is asked for.
        written: Option<Box<(String, serde_json::Value)>>,
        /// Answer (after the summary, when one is asked for).
        reply: Reply<SessionNavigateResponse>,
    },
    /// Take the queued messages back.
    Dequeue {
        /// Answer: the texts taken.
        reply: Reply<QueueState>,
    },
    /// Record a subscriber's editor draft and tell the others.
    SetDraft {
        /// The connection id.
        connection_id: String,
        /// The draft (empty clears).
        text: String,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Compact now (aborting an active run first).
    Compact {
        /// Focus of the summary.
        instructions: Option<String>,
        /// Answered when the compaction has ended.
        reply: Reply<SessionCompactResponse>,
    },
    /// Counts over the context.
    Stats {
        /// Answer.
        reply: Reply<SessionStatsResponse>,
    },
    /// Record a user shell command (`session/bash`); deferred to the end of an active run, as
    /// in pi.
    RecordBash {
        /// The `bashExecution` message.
        message: BashExecutionMessage,
        /// Answer: the entry id, or `None` when deferred.
        reply: Reply<Option<String>>,
    },
    /// Tell every subscriber something that is not a session event (a question, its answer).
    /// A message from an extension (pi's `sendMessage`): stored, or queued while a run
    /// streams, and (`trigger`) starting a run when idle.
    SendCustom {
        /// The message (a custom one).
        message: Box<pi_agent::AgentMessage>,
        /// Start a run with it when the session is idle.
        trigger: bool,
        /// How it joins a streaming run (`None`: steering), or the next prompt.
        deliver: Option<Deliver>,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    Notify {
        /// What to tell.
        notice: Notice,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// Changes the todo list; answers the new list, or why the change was refused.
    Todos {
        /// The change.
        change: crate::todos::TodoChange,
        /// Answer.
        reply: Reply<Result<crate::todos::Recorded, crate::todos::TodoError>>,
    },
    /// Turns plan mode on or off (recorded on the branch).
    SetPlanMode {
        /// On or off.
        enabled: bool,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// The user's answer to `exit_plan_mode`: recorded, and what it asks for done (at once,
    /// or once the run has ended).
    DecidePlan {
        /// The decision.
        decision: crate::plan::PlanDecision,
        /// Answer.
        reply: Reply<EmptyResponse>,
    },
    /// The plan approved last on the branch (what subagents get).
    ApprovedPlan {
        /// Answer.
        reply: Reply<Option<pi_protocol::v1::ApprovedPlan>>,
    },
    /// The reminder of open todos a run that would end goes on with, if any.
    TodoReminder {
        /// Answer.
        reply: Reply<Option<pi_agent::AgentMessage>>,
    },
    /// How many attached clients hear questions (`ui/request`): none means nobody could
    /// answer a dialog now (pi's `ctx.hasUI` false).
    QuestionHearers {
        /// Answer.
        reply: Reply<usize>,
    },
    /// Stop: abort any run, persist, exit.
    Close {
        /// Why (subscribers are told when the session is deleted).
        deleted: bool,
        /// Answered once the actor has stopped.
        reply: Reply<EmptyResponse>,
    },
}

/// A loaded session's address. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SessionHandle {
    /// The session id.
    pub id: Arc<str>,
    /// Distinguishes successive actors of one session (after an unload and reload).
    pub generation: u64,
    // The actor's command queue (bounded): every handle sends, the actor task receives; when
    // the last handle is dropped the actor stops after its queue.
    // Boxed: an idle actor's channel holds a block of slots, small when they are pointers.
    pub(super) commands: mpsc::Sender<Box<Command>>,
}

/// The actor stopped before answering; the caller should look the session up again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

impl SessionHandle {
    /// Sends a command and waits for its answer.
    pub async fn call<T>(
        &self,
        make: impl FnOnce(Reply<T>) -> Command,
    ) -> Result<Result<T, SessionError>, Gone> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Box::new(make(reply)))
            .await
            .map_err(|_| Gone)?;
        answer.await.map_err(|_| Gone)
    }

    /// Whether the actor has stopped.
    pub fn is_closed(&self) -> bool {
        self.commands.is_closed()
    }
}

/// How a message joins a session that is busy (pi's `deliverAs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deliver {
    /// After the current tool calls.
    Steer,
    /// When the run would end.
    FollowUp,
    /// With the next prompt.
    NextTurn,
}

/// A model spec resolved beside a session's actor.
#[derive(Clone, Debug)]
pub struct ResolvedModel {
    /// The model.
    pub model: pi_llm::Model,
    /// The thinking level the spec named (`:level`).
    pub level: Option<pi_llm::ThinkingLevel>,
    /// Whether its provider has a key.
    pub has_key: bool,
    /// pi's warning for a custom model id, when it is one.
    pub warning: Option<String>,
}
