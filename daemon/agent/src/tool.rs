//! The [`Tool`] trait: what the agent needs from a tool, and what a tool gets for one call.
//!
//! A tool is an object shared by every call of a session (`Arc<dyn Tool>`); each call gets its
//! own [`ToolInvocation`] with the call id, the validated arguments, a cancellation token and a
//! [`ProgressSink`]. Failures are results (`is_error: true`) the model can read, never panics.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use pi_llm::UserContent;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The future a tool call returns; `'static` so the agent can run calls in parallel tasks.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'static>>;

/// A tool the model can call.
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by (`read`, `bash`).
    fn name(&self) -> &str;
    /// A human label for clients (`Read`, `Bash`).
    fn label(&self) -> &str;
    /// What it does, as the model reads it.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> &Value;
    /// Its line in the system prompt's `Available tools:` (pi's `promptSnippet`); a tool
    /// without one is not listed there.
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }
    /// What it adds to the system prompt's `Guidelines:` (pi's `promptGuidelines`).
    fn prompt_guidelines(&self) -> &[String] {
        &[]
    }
    /// The arguments as the tool takes them, before they are checked against its schema
    /// (pi's `prepareArguments`: older or looser shapes models still send).
    fn prepare_arguments(&self, arguments: Value) -> Value {
        arguments
    }
    /// Runs one call. Must return promptly after `invocation.cancel` fires (with an error
    /// output such as `Operation aborted`).
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture;
}

/// Behaviour around another tool's calls (an approval gate, notes added to results, a
/// background mode): the layered tool has the inner tool's name and label, and its
/// description and parameters unless the layer gives its own. Layers stack; the outermost
/// runs first.
pub trait ToolLayer: Send + Sync + 'static {
    /// What the model reads; the inner tool's unless the layer changes it.
    fn description<'a>(&'a self, inner: &'a dyn Tool) -> &'a str {
        inner.description()
    }
    /// JSON Schema of the arguments; the inner tool's unless the layer changes it.
    fn parameters<'a>(&'a self, inner: &'a dyn Tool) -> &'a Value {
        inner.parameters()
    }
    /// Runs one call, running `inner` (or not) as the layer sees fit.
    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture;
}

/// `inner` with `layer` around its calls.
pub fn layered(inner: Arc<dyn Tool>, layer: impl ToolLayer) -> Arc<dyn Tool> {
    Arc::new(Layered {
        inner,
        layer: Arc::new(layer),
    })
}

/// A tool and the layer around it.
struct Layered<L> {
    inner: Arc<dyn Tool>,
    layer: Arc<L>,
}

impl<L: ToolLayer> Tool for Layered<L> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn label(&self) -> &str {
        self.inner.label()
    }

    fn description(&self) -> &str {
        self.layer.description(self.inner.as_ref())
    }

    fn parameters(&self) -> &Value {
        self.layer.parameters(self.inner.as_ref())
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.inner.prompt_snippet()
    }

    fn prompt_guidelines(&self) -> &[String] {
        self.inner.prompt_guidelines()
    }

    fn prepare_arguments(&self, arguments: Value) -> Value {
        self.inner.prepare_arguments(arguments)
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        self.layer.clone().call(self.inner.clone(), invocation)
    }
}

/// The first non-empty line of `text` (a tool's description as its prompt snippet).
pub fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}

/// Tools that join a run while it runs (the daemon's MCP servers, which start in the
/// background): the loop asks before each model request, so tools that became ready join the
/// next turn. What a source gives comes after the run's own tools; a name the run's own tools
/// use keeps the own tool.
pub trait ToolSource: Send + Sync {
    /// The tools to offer now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Tools on their way that the next request should wait for; `None` when nothing is
    /// worth waiting for.
    fn awaited(&self) -> Option<ToolWait>;
    /// Whether it has a tool `name` that replaces the run's own tool of that name (pi: a
    /// tool an extension registers under a built-in's name overrides it); by default the
    /// run's own tool stays. Asked per name: must not build the tools.
    fn overrides(&self, _name: &str) -> bool {
        false
    }
    /// The only tools the run may offer now, by name (pi's `setActiveTools`); `None`: all.
    fn active(&self) -> Option<Vec<String>> {
        None
    }
}

/// A wait for tools on their way (see [`ToolSource::awaited`]).
pub struct ToolWait {
    /// What the tools come from, for people (MCP server names).
    pub sources: Vec<String>,
    /// The longest the wait may last.
    pub timeout: std::time::Duration,
    /// Completes when the wait is over (its sources ready or failed, or the timeout passed)
    /// with the sources whose tools are still not there.
    pub done: Pin<Box<dyn Future<Output = Vec<String>> + Send>>,
}

impl std::fmt::Debug for ToolWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolWait")
            .field("sources", &self.sources)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// One call of a tool.
#[derive(Debug)]
pub struct ToolInvocation {
    /// The model's call id.
    pub call_id: String,
    /// Arguments, already validated against [`Tool::parameters`].
    pub arguments: Value,
    /// Fires on abort (or when the call is skipped after it started).
    pub cancel: CancellationToken,
    /// Where to report partial results while running.
    pub progress: ProgressSink,
}

/// What a call produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// What the model sees: text and images.
    pub content: Vec<UserContent>,
    /// Structured detail for clients (diffs, truncation info); never sent to the model.
    /// `Null`: none.
    pub details: Value,
    /// The call failed; `content` explains why.
    pub is_error: bool,
    /// pi's `terminate`: when every result of an assistant message's calls says so, the run
    /// ends after them, without asking the model again (a final, structured answer).
    pub terminate: bool,
}

impl ToolOutput {
    /// A successful text result with no details.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![UserContent::text(text)],
            details: Value::Null,
            is_error: false,
            terminate: false,
        }
    }

    /// The details as pi reports a final result (events and the stored tool result): a
    /// failed call always has them (`{}` when it set none); a successful one only when it set
    /// some (not `Null`, not an empty object).
    pub fn reported_details(&self) -> Option<Value> {
        let empty = match &self.details {
            Value::Null => true,
            Value::Object(map) => map.is_empty(),
            _ => false,
        };
        match (self.is_error, empty) {
            (true, true) => Some(Value::Object(Default::default())),
            (false, true) => None,
            (_, false) => Some(self.details.clone()),
        }
    }

    /// The details of a partial result, as set (`Null`: none).
    pub fn partial_details(&self) -> Option<Value> {
        (!self.details.is_null()).then(|| self.details.clone())
    }

    /// A failed result whose text is `message`.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![UserContent::text(message)],
            details: Value::Object(Default::default()),
            is_error: true,
            terminate: false,
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// Partial results of a running call. Each update is the accumulated result so far, not an
/// increment (clients replace, not append); the agent forwards them in order as
/// `tool_execution_update` events. A tool that reports often throttles itself (as pi's bash
/// does: at most one update per 100 ms).
///
/// Bounded: at most [`PROGRESS_KEPT`] updates wait for the reader; past that the oldest
/// waiting one is dropped, which loses nothing because the newer ones include it. A reader that
/// keeps up sees every update; a flood (an MCP server's progress notifications while the
/// session is busy) costs a fixed amount of memory.
#[derive(Debug)]
pub struct ProgressSink {
    shared: Arc<ProgressQueue>,
}

/// How many updates wait for a slow reader at most.
pub const PROGRESS_KEPT: usize = 16;

#[derive(Debug, Default)]
struct ProgressQueue {
    // A sync mutex, never held across an await.
    waiting: std::sync::Mutex<std::collections::VecDeque<ToolOutput>>,
    // Wakes the reader (one stored permit: no wake-up is lost).
    wake: tokio::sync::Notify,
    // Live sinks; the reader ends once there are none and nothing waits.
    senders: std::sync::atomic::AtomicUsize,
}

/// The reading end of a [`ProgressSink`].
#[derive(Debug)]
pub struct ProgressReceiver {
    shared: Arc<ProgressQueue>,
}

impl ProgressQueue {
    fn waiting(&self) -> std::sync::MutexGuard<'_, std::collections::VecDeque<ToolOutput>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clone for ProgressSink {
    fn clone(&self) -> Self {
        self.shared
            .senders
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ProgressSink {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for ProgressSink {
    fn drop(&mut self) {
        if self
            .shared
            .senders
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst)
            == 1
        {
            self.shared.wake.notify_one();
        }
    }
}

impl ProgressReceiver {
    /// The next update; `None` once every sink is gone and nothing waits.
    pub async fn recv(&mut self) -> Option<ToolOutput> {
        let shared = self.shared.clone();
        loop {
            let wake = shared.wake.notified();
            if let Some(update) = shared.waiting().pop_front() {
                return Some(update);
            }
            if shared.senders.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return shared.waiting().pop_front();
            }
            wake.await;
        }
    }

    /// The next update if one waits.
    pub fn try_recv(&mut self) -> Option<ToolOutput> {
        self.shared.waiting().pop_front()
    }
}

impl ProgressSink {
    /// A sink and the receiver the agent reads from.
    pub fn new() -> (ProgressSink, ProgressReceiver) {
        let shared = Arc::new(ProgressQueue::default());
        shared.senders.store(1, std::sync::atomic::Ordering::SeqCst);
        (
            ProgressSink {
                shared: shared.clone(),
            },
            ProgressReceiver { shared },
        )
    }

    /// A sink nobody reads (tests, user shell commands).
    pub fn discard() -> ProgressSink {
        ProgressSink::new().0
    }

    /// Publishes the result so far (dropping the oldest waiting update past
    /// [`PROGRESS_KEPT`]). Nobody reading (a discarded sink, a finished call) is not the
    /// tool's concern.
    pub fn update(&self, partial: ToolOutput) {
        {
            let mut waiting = self.shared.waiting();
            if waiting.len() >= PROGRESS_KEPT {
                waiting.pop_front();
            }
            waiting.push_back(partial);
        }
        self.shared.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> ToolOutput {
        ToolOutput::text(n.to_string())
    }

    fn number(output: &ToolOutput) -> usize {
        match &output.content[0] {
            UserContent::Text(text) => text.text.parse().unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// A tool that answers with its name.
    struct Named;

    impl Tool for Named {
        fn name(&self) -> &str {
            "named"
        }
        fn label(&self) -> &str {
            "Named"
        }
        fn description(&self) -> &str {
            "says its name"
        }
        fn parameters(&self) -> &Value {
            static NONE: Value = Value::Null;
            &NONE
        }
        fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
            Box::pin(async { ToolOutput::text("named") })
        }
    }

    /// A layer that puts its mark around the inner tool's text, and may change the
    /// description.
    struct Mark(&'static str, Option<&'static str>);

    impl ToolLayer for Mark {
        fn description<'a>(&'a self, inner: &'a dyn Tool) -> &'a str {
            self.1.unwrap_or_else(|| inner.description())
        }
        fn call(self: Arc<Self>, inner: Arc<dyn Tool>, invocation: ToolInvocation) -> ToolFuture {
            Box::pin(async move {
                let name = inner.name().to_owned();
                let output = inner.execute(invocation).await;
                let UserContent::Text(text) = &output.content[0] else {
                    panic!("text expected");
                };
                ToolOutput::text(format!("{}({name}: {})", self.0, text.text))
            })
        }
    }

    fn invocation() -> ToolInvocation {
        ToolInvocation {
            call_id: "c".to_owned(),
            arguments: Value::Null,
            cancel: CancellationToken::new(),
            progress: ProgressSink::new().0,
        }
    }

    #[tokio::test]
    async fn layers_keep_the_inner_tools_metadata_and_stack_outermost_first() {
        let inner: Arc<dyn Tool> = Arc::new(Named);
        let once = layered(inner, Mark("a", None));
        assert_eq!(
            (once.name(), once.label(), once.description()),
            ("named", "Named", "says its name")
        );
        let twice = layered(once, Mark("b", Some("changed")));
        assert_eq!((twice.name(), twice.description()), ("named", "changed"));
        let output = twice.execute(invocation()).await;
        let UserContent::Text(text) = &output.content[0] else {
            panic!("text expected");
        };
        // The outer layer saw the inner layered tool by its name, and ran it.
        assert_eq!(text.text, "b(named: a(named: named))");
    }

    #[tokio::test]
    async fn a_reader_that_keeps_up_sees_every_update_in_order() {
        let (sink, mut receiver) = ProgressSink::new();
        let writer = tokio::spawn(async move {
            for n in 0..1000 {
                sink.update(numbered(n));
                tokio::task::yield_now().await;
            }
        });
        let mut seen = Vec::new();
        while let Some(update) = receiver.recv().await {
            seen.push(number(&update));
        }
        writer.await.unwrap();
        // Strictly increasing: nothing reordered or repeated; the last one always arrives.
        assert!(seen.windows(2).all(|pair| pair[0] < pair[1]), "{seen:?}");
        assert_eq!(seen.last(), Some(&999));
    }

    #[tokio::test]
    async fn a_flood_nobody_reads_keeps_only_the_newest_updates() {
        let (sink, mut receiver) = ProgressSink::new();
        let copy = sink.clone();
        for n in 0..100_000 {
            copy.update(numbered(n));
        }
        drop(copy);
        drop(sink);
        let mut kept = Vec::new();
        while let Some(update) = receiver.recv().await {
            kept.push(number(&update));
        }
        assert_eq!(kept, (100_000 - PROGRESS_KEPT..100_000).collect::<Vec<_>>());
    }
}
