//! Test tools: echo, gated (waits for a release or abort), panicking, progress-reporting.

use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// Returns `echo: <text>`.
pub struct EchoTool {
    name: String,
    schema: Value,
    prefix: &'static str,
    terminate: bool,
}

impl EchoTool {
    pub fn new() -> Arc<EchoTool> {
        EchoTool::named("echo")
    }

    /// An echo tool called `name`.
    pub fn named(name: &str) -> Arc<EchoTool> {
        EchoTool::answering(name, "echo")
    }

    /// An echo tool called `name` that returns `<prefix>: <text>`.
    pub fn answering(name: &str, prefix: &'static str) -> Arc<EchoTool> {
        Arc::new(EchoTool {
            name: name.to_owned(),
            schema: object_schema(json!({"text": {"type": "string"}}), &["text"]),
            prefix,
            terminate: false,
        })
    }

    /// An echo tool called `name` whose results end the run (pi's `terminate`).
    pub fn terminating(name: &str) -> Arc<EchoTool> {
        Arc::new(EchoTool {
            name: name.to_owned(),
            schema: object_schema(json!({"text": {"type": "string"}}), &["text"]),
            prefix: "final",
            terminate: true,
        })
    }
}

impl Tool for EchoTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> &str {
        "Echo the text back"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let text = invocation.arguments["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            ToolOutput {
                terminate: self.terminate,
                ..ToolOutput::text(format!("{}: {text}", self.prefix))
            }
        })
    }
}

/// Blocks each call named in its `key` argument until released (or aborted).
pub struct GatedTool {
    schema: Value,
    pub gates: std::collections::HashMap<String, Arc<Semaphore>>,
    pub started: Arc<Semaphore>,
}

impl GatedTool {
    pub fn new(keys: &[&str]) -> Arc<GatedTool> {
        Arc::new(GatedTool {
            schema: object_schema(json!({"key": {"type": "string"}}), &["key"]),
            gates: keys
                .iter()
                .map(|key| ((*key).to_owned(), Arc::new(Semaphore::new(0))))
                .collect(),
            started: Arc::new(Semaphore::new(0)),
        })
    }

    pub fn release(&self, key: &str) {
        self.gates[key].add_permits(1);
    }

    /// Waits until `n` calls have started.
    pub async fn wait_started(&self, n: u32) {
        let permits = self.started.acquire_many(n).await.unwrap();
        permits.forget();
    }
}

impl Tool for GatedTool {
    fn name(&self) -> &str {
        "gated"
    }
    fn label(&self) -> &str {
        "Gated"
    }
    fn description(&self) -> &str {
        "Wait for the test"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let key = invocation.arguments["key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            self.started.add_permits(1);
            let gate = self.gates[&key].clone();
            tokio::select! {
                _ = gate.acquire() => ToolOutput::text(format!("done {key}")),
                _ = invocation.cancel.cancelled() => ToolOutput::error("Operation aborted"),
            }
        })
    }
}

/// Panics.
pub struct PanicTool {
    schema: Value,
}

impl PanicTool {
    pub fn new() -> Arc<PanicTool> {
        Arc::new(PanicTool {
            schema: object_schema(json!({}), &[]),
        })
    }
}

impl Tool for PanicTool {
    fn name(&self) -> &str {
        "boom"
    }
    fn label(&self) -> &str {
        "Boom"
    }
    fn description(&self) -> &str {
        "Panics"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move { panic!("the boom tool always panics") })
    }
}

/// Reports a partial result, waits for release, then finishes.
pub struct ProgressTool {
    schema: Value,
    pub gate: Arc<Semaphore>,
}

impl ProgressTool {
    pub fn new() -> Arc<ProgressTool> {
        Arc::new(ProgressTool {
            schema: object_schema(json!({}), &[]),
            gate: Arc::new(Semaphore::new(0)),
        })
    }
}

impl Tool for ProgressTool {
    fn name(&self) -> &str {
        "progress"
    }
    fn label(&self) -> &str {
        "Progress"
    }
    fn description(&self) -> &str {
        "Reports progress"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            invocation.progress.update(ToolOutput::text("halfway"));
            let _ = self.gate.acquire().await;
            ToolOutput::text("finished")
        })
    }
}
