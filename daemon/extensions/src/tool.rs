//! Extensions in a session's tool calls: the tools they register ([`ExtensionTool`], run in
//! the host), and their `tool_call` / `tool_result` handlers around every tool
//! ([`ExtensionGate`], a [`pi_agent::ToolLayer`]).

use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolLayer, ToolOutput};
use serde_json::{Value, json};

use crate::{ExtensionHost, RegisteredTool};

/// A tool an extension registered: the model calls it like a built-in; it runs in the host,
/// reports partial results, and is aborted with the call.
pub struct ExtensionTool {
    host: Arc<ExtensionHost>,
    session_id: String,
    tool: RegisteredTool,
}

impl ExtensionTool {
    /// `tool` of session `session_id`'s extensions.
    pub fn new(host: Arc<ExtensionHost>, session_id: String, tool: RegisteredTool) -> Self {
        ExtensionTool {
            host,
            session_id,
            tool,
        }
    }
}

impl Tool for ExtensionTool {
    fn name(&self) -> &str {
        &self.tool.name
    }

    fn label(&self) -> &str {
        &self.tool.label
    }

    fn description(&self) -> &str {
        &self.tool.description
    }

    fn parameters(&self) -> &Value {
        &self.tool.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.tool.prompt_snippet.as_deref()
    }

    fn prompt_guidelines(&self) -> &[String] {
        &self.tool.prompt_guidelines
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let call_id = invocation.call_id.clone();
            self.host
                .progress_for(&self.session_id, &call_id, invocation.progress);
            let has_ui = self.host.has_ui(&self.session_id).await;
            let params = json!({"sessionId": self.session_id, "toolCallId": call_id,
                "name": self.tool.name, "params": invocation.arguments, "hasUI": has_ui});
            let call = self.host.call(
                &self.session_id,
                "tool/execute",
                params,
                std::time::Duration::from_secs(24 * 3600),
            );
            let output = tokio::select! {
                result = call => match result {
                    Ok(result) => output_of(&result, result["isError"].as_bool() == Some(true)),
                    Err(error) => ToolOutput::error(format!(
                        "the extension tool {} failed: {error}",
                        self.tool.name
                    )),
                },
                () = invocation.cancel.cancelled() => {
                    self.host.tell(
                        "tool/cancel",
                        json!({"sessionId": self.session_id, "toolCallId": call_id}),
                    );
                    ToolOutput::error(pi_agent::ABORTED)
                }
            };
            self.host.progress_done(&self.session_id, &call_id);
            output
        })
    }
}

/// A tool result as the host sends it (`content`, `details`).
pub(crate) fn output_of(result: &Value, is_error: bool) -> ToolOutput {
    let content = serde_json::from_value(result["content"].clone()).unwrap_or_default();
    ToolOutput {
        content,
        details: match &result["details"] {
            Value::Null => Value::Null,
            details => details.clone(),
        },
        is_error,
        terminate: result["terminate"].as_bool() == Some(true),
    }
}

/// The `tool_call` and `tool_result` handlers of a session's extensions around one tool:
/// a handler may block the call (its reason is the result), change its arguments, or change
/// its result. Without such handlers the layer costs one lookup.
pub struct ExtensionGate {
    /// The host.
    pub host: Arc<ExtensionHost>,
    /// The session.
    pub session_id: String,
}

impl ToolLayer for ExtensionGate {
    fn call(self: Arc<Self>, inner: Arc<dyn Tool>, mut invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let set = match self.host.current(&self.session_id) {
                Some(set) => set,
                None => match self.host.opened(&self.session_id).await {
                    Some(set) => set,
                    None => return inner.execute(invocation).await,
                },
            };
            let name = inner.name().to_owned();
            let has_ui = if set.handles("tool_call") || set.handles("tool_result") {
                self.host.has_ui(&self.session_id).await
            } else {
                false
            };
            if set.handles("tool_call") {
                let params = json!({"sessionId": self.session_id,
                    "toolCallId": invocation.call_id, "toolName": name,
                    "input": invocation.arguments, "hasUI": has_ui});
                match self
                    .host
                    .call(
                        &self.session_id,
                        "tool_call",
                        params,
                        self.host.config.hook_timeout,
                    )
                    .await
                {
                    Ok(answer) => {
                        if answer["block"].as_bool() == Some(true) {
                            let reason = answer["reason"]
                                .as_str()
                                .unwrap_or("Tool execution was blocked")
                                .to_owned();
                            return ToolOutput::error(reason);
                        }
                        if let Some(input) = answer.get("input").filter(|input| input.is_object()) {
                            invocation.arguments = input.clone();
                        }
                    }
                    // pi: a failing `tool_call` handler fails the call.
                    Err(error) => return ToolOutput::error(error.to_string()),
                }
            }
            let arguments = invocation.arguments.clone();
            let call_id = invocation.call_id.clone();
            let output = inner.execute(invocation).await;
            if !set.handles("tool_result") {
                return output;
            }
            let params = json!({"sessionId": self.session_id, "toolCallId": call_id,
                "toolName": name, "input": arguments, "content": output.content,
                "details": output.details, "isError": output.is_error, "hasUI": has_ui});
            match self
                .host
                .call(
                    &self.session_id,
                    "tool_result",
                    params,
                    self.host.config.hook_timeout,
                )
                .await
            {
                Ok(Value::Null) => output,
                Ok(changed) => {
                    let mut output = output;
                    if let Ok(content) = serde_json::from_value(changed["content"].clone()) {
                        output.content = content;
                    }
                    if !changed["details"].is_null() {
                        output.details = changed["details"].clone();
                    }
                    if let Some(is_error) = changed["isError"].as_bool() {
                        output.is_error = is_error;
                    }
                    output
                }
                Err(error) => {
                    tracing::warn!(session = self.session_id, %error, "a tool_result handler failed");
                    output
                }
            }
        })
    }
}
