//! A server's tool as a session's tool: named `mcp__<server>__<tool>` after the name the
//! session's definition gives the server (two definitions of one command are one server under
//! two names, and both names work; only letters, digits, `_` and `-`; at most 64 characters,
//! cut with a hash suffix when longer; a name two tools would share gets a hash suffix too,
//! the same on every run), the server's input schema
//! passed through, calls cancelled with the run (rmcp sends `notifications/cancelled`), and
//! results as text and images; text over 2000 lines or 50 KB keeps its head, the whole text
//! going to an `artifact://` the `read` tool opens.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_llm::UserContent;
use pi_llm::types::ImageContent;
use pi_tools::Artifacts;
use pi_tools::truncate::{Limits, TruncatedBy, truncate_head};
use serde_json::Value;

use super::{Binding, Server, ToolInfo};

/// What a call that lost its connection failed with.
const CLOSED: &str = "transport closed";

/// Longest tool name providers accept.
const MAX_NAME: usize = 64;

/// An MCP tool bound to its shared server.
pub struct McpTool {
    name: String,
    label: String,
    description: String,
    parameters: Value,
    // The session's name for the server (its binding's).
    server_name: String,
    server: Arc<Server>,
    timeout: std::time::Duration,
    tool: String,
    artifacts: Artifacts,
    session_id: String,
}

/// The tools of the ready (or starting, with a cached list) servers of `bindings`, named
/// after the bindings and uniquely.
pub fn session_tools(
    bindings: &[Binding],
    artifacts: &Artifacts,
    session_id: &str,
) -> Vec<Arc<dyn Tool>> {
    let mut listed: Vec<(&Binding, ToolInfo)> = Vec::new();
    for binding in bindings {
        let server = &binding.server;
        // A ready server's tools; a starting one's cached tools (their calls wait for it).
        if server.client().is_none() && !server.starting() {
            continue;
        }
        for info in server.state().tools.clone() {
            listed.push((binding, info));
        }
    }
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for (binding, info) in &listed {
        *names
            .entry(tool_name(&binding.name, &info.name))
            .or_default() += 1;
    }
    let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len());
    for (binding, info) in listed {
        let plain = tool_name(&binding.name, &info.name);
        let name = if names.get(&plain).copied().unwrap_or(0) > 1 || taken.contains(&plain) {
            with_hash(
                &plain,
                &format!(
                    "{}\u{0}{}\u{0}{}",
                    binding.name, binding.server.key, info.name
                ),
            )
        } else {
            plain
        };
        taken.insert(name.clone());
        tools.push(Arc::new(McpTool {
            label: format!("{} ({})", info.name, binding.name),
            name,
            description: info.description.clone(),
            parameters: info.input_schema.clone(),
            server_name: binding.name.clone(),
            server: binding.server.clone(),
            timeout: binding.timeout,
            tool: info.name,
            artifacts: artifacts.clone(),
            session_id: session_id.to_owned(),
        }));
    }
    tools
}

/// `mcp__<server>__<tool>`, sanitized and at most 64 characters.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_NAME {
        name
    } else {
        with_hash(&name, &name)
    }
}

/// `name` cut to fit 64 characters with `_` and 8 hex digits of a hash of `seed`.
fn with_hash(name: &str, seed: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    seed.hash(&mut hasher);
    let suffix = format!("_{:08x}", hasher.finish() as u32);
    let keep = MAX_NAME - suffix.len();
    let cut: String = name.chars().take(keep).collect();
    format!("{cut}{suffix}")
}

/// `command` as a path: as given when it has a slash, else found on `env`'s `PATH`.
pub fn find_program(command: &str, env: &BTreeMap<String, String>) -> PathBuf {
    if command.contains('/') {
        return PathBuf::from(command);
    }
    env.get("PATH")
        .and_then(|path| {
            path.split(':')
                .map(|dir| Path::new(dir).join(command))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| PathBuf::from(command))
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let server_name = self.server_name.clone();
            let ready = tokio::select! {
                () = invocation.cancel.cancelled() => return ToolOutput::error("Operation aborted"),
                client = self.server.ready_client() => client,
            };
            let Some(client) = ready else {
                return ToolOutput::error(format!(
                    "MCP server \"{server_name}\" is not running: {}",
                    self.server.last_error().unwrap_or_else(|| {
                        "it was stopped; it starts again on the next run".to_owned()
                    })
                ));
            };
            let arguments = match invocation.arguments {
                Value::Object(map) => map,
                Value::Null => serde_json::Map::new(),
                other => {
                    return ToolOutput::error(format!(
                        "the arguments of {} must be an object, not {other}",
                        self.name
                    ));
                }
            };
            let params = rmcp::model::CallToolRequestParams::new(self.tool.clone())
                .with_arguments(arguments);
            let request = rmcp::model::ClientRequest::CallToolRequest(
                rmcp::model::CallToolRequest::new(params),
            );
            let handle = match client
                .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
                .await
            {
                Ok(handle) => handle,
                Err(error) => {
                    return ToolOutput::error(format!(
                        "MCP server \"{server_name}\" could not be sent {}: {error}",
                        self.tool
                    ));
                }
            };
            // The server's progress for this call (rmcp chose its token) becomes its updates.
            let token = super::token_key(&handle.progress_token);
            let _route = self
                .server
                .route_progress(token, invocation.progress.clone());
            let request_id = handle.id.clone();
            let timeout = self.timeout;
            let cancel = |reason: &str| {
                let notification = rmcp::model::CancelledNotification::new(
                    rmcp::model::CancelledNotificationParam::new(
                        Some(request_id.clone()),
                        Some(reason.to_owned()),
                    ),
                );
                let client = client.clone();
                async move {
                    let _ = client.send_notification(notification.into()).await;
                }
            };
            let result = tokio::select! {
                () = invocation.cancel.cancelled() => {
                    cancel("the user aborted the run").await;
                    return ToolOutput::error("Operation aborted");
                }
                result = tokio::time::timeout(timeout, handle.await_response()) => result,
            };
            let result = match result {
                Ok(Ok(rmcp::model::ServerResult::CallToolResult(result))) => Ok(Ok(result)),
                Ok(Ok(other)) => Ok(Err(format!("an unexpected answer: {other:?}"))),
                Ok(Err(rmcp::ServiceError::TransportClosed)) => Ok(Err(CLOSED.to_owned())),
                Ok(Err(error)) => Ok(Err(error.to_string())),
                Err(elapsed) => {
                    cancel("timed out").await;
                    Err(elapsed)
                }
            };
            match result {
                Err(_) => ToolOutput::error(format!(
                    "MCP server \"{server_name}\" did not answer {} within {} s (its \
                     \"timeout\" in mcp.json sets how long to wait)",
                    self.tool,
                    timeout.as_secs()
                )),
                Ok(Err(error)) if error.starts_with(CLOSED) => ToolOutput::error(format!(
                    "MCP server \"{server_name}\" stopped while running {} (it exited or \
                     its connection broke); the call was lost. A server in use starts again \
                     by itself; `pictl mcp logs {server_name}` shows its stderr",
                    self.tool
                )),
                Ok(Err(error)) => ToolOutput::error(format!(
                    "MCP server \"{server_name}\" failed to run {}: {error}",
                    self.tool
                )),
                Ok(Ok(result)) => self.output(result),
            }
        })
    }
}

impl McpTool {
    /// A call's result as the model sees it.
    fn output(&self, result: rmcp::model::CallToolResult) -> ToolOutput {
        let is_error = result.is_error.unwrap_or(false);
        let mut texts: Vec<String> = Vec::new();
        let mut images: Vec<UserContent> = Vec::new();
        // Through JSON: the content block shapes are the MCP spec's.
        let blocks = serde_json::to_value(&result.content).unwrap_or(Value::Null);
        for block in blocks.as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("text") => texts.push(block["text"].as_str().unwrap_or_default().to_owned()),
                Some("image") => images.push(UserContent::Image(ImageContent {
                    data: block["data"].as_str().unwrap_or_default().to_owned(),
                    mime_type: block["mimeType"].as_str().unwrap_or("image/png").to_owned(),
                })),
                Some("resource") => {
                    let resource = &block["resource"];
                    let uri = resource["uri"].as_str().unwrap_or_default();
                    match resource["text"].as_str() {
                        Some(text) => texts.push(format!("[resource {uri}]\n{text}")),
                        None => texts.push(format!(
                            "[resource {uri}: {} bytes of {}]",
                            resource["blob"]
                                .as_str()
                                .map_or(0, |blob| blob.len() * 3 / 4),
                            resource["mimeType"].as_str().unwrap_or("binary data")
                        )),
                    }
                }
                // A link the model can follow with `read`.
                Some("resource_link") => texts.push(format!(
                    "[resource {}{}/{}{}]",
                    super::prompts::RESOURCE_SCHEME,
                    self.server_name,
                    block["uri"].as_str().unwrap_or_default(),
                    block["name"]
                        .as_str()
                        .map(|name| format!(": {name}"))
                        .unwrap_or_default()
                )),
                Some("audio") => texts.push("[audio content]".to_owned()),
                _ => {}
            }
        }
        if texts.is_empty()
            && images.is_empty()
            && let Some(structured) = &result.structured_content
        {
            texts.push(structured.to_string());
        }
        let text = texts.join("\n");
        let (text, details) = self.truncated(text);
        let mut content = Vec::new();
        if !text.is_empty() || images.is_empty() {
            content.push(UserContent::text(if text.is_empty() {
                "(no output)".to_owned()
            } else {
                text
            }));
        }
        content.extend(images);
        ToolOutput {
            content,
            details,
            is_error,
            terminate: false,
        }
    }

    /// `text` within pi's limits: the head, and the whole in an artifact when cut.
    fn truncated(&self, text: String) -> (String, Value) {
        let truncation = truncate_head(&text, Limits::DEFAULT);
        if !truncation.truncated {
            return (text, Value::Null);
        }
        let reference = self.store(&text);
        let shown = truncation.output_lines;
        let notice = match truncation.truncated_by {
            Some(TruncatedBy::Bytes) => format!(
                "[Showing lines 1-{shown} of {} (50.0KB limit). Full output: {}]",
                truncation.total_lines,
                reference.as_deref().unwrap_or("(not stored)")
            ),
            _ => format!(
                "[Showing lines 1-{shown} of {}. Full output: {}]",
                truncation.total_lines,
                reference.as_deref().unwrap_or("(not stored)")
            ),
        };
        let details = serde_json::json!({
            "truncation": truncation.to_json(),
            "fullOutputPath": reference,
        });
        (format!("{}\n\n{notice}", truncation.content), details)
    }

    /// Writes `text` as an artifact of the session; its `artifact://` reference.
    fn store(&self, text: &str) -> Option<String> {
        let session = self.artifacts.session(&self.session_id).ok()?;
        let (id, mut file) = session.create("mcp").ok()?;
        file.write_all(text.as_bytes()).ok()?;
        Some(format!("{}{id}", pi_tools::ARTIFACT_SCHEME))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_and_fit_64_characters() {
        assert_eq!(tool_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(
            tool_name("my.server", "get/thing"),
            "mcp__my_server__get_thing"
        );
        let long = tool_name("a-very-long-server-name", &"t".repeat(80));
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("mcp__a-very-long-server-name__ttt"));
        assert_eq!(long, tool_name("a-very-long-server-name", &"t".repeat(80)));
        assert_ne!(
            with_hash("mcp__x__y", "one"),
            with_hash("mcp__x__y", "two"),
            "different seeds, different names"
        );
    }

    fn tool(artifacts: &Artifacts) -> McpTool {
        let definition = crate::ServerDefinition {
            name: "big".to_owned(),
            file: PathBuf::from("/mcp.json"),
            trusted: true,
            transport: crate::Transport::Stdio {
                command: "big-server".to_owned(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
            },
            timeout_ms: None,
            definition_hash: "h".to_owned(),
            written: "big-server".to_owned(),
        };
        let server = Server::for_tests("k", definition, Vec::new());
        McpTool {
            name: "mcp__big__dump".to_owned(),
            label: "dump (big)".to_owned(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
            server_name: "big".to_owned(),
            server,
            timeout: std::time::Duration::from_secs(1),
            tool: "dump".to_owned(),
            artifacts: artifacts.clone(),
            session_id: "session-1".to_owned(),
        }
    }

    /// A starting server `name` (key `key`) whose cached list has `tools`.
    fn starting(name: &str, key: &str, tools: &[&str]) -> Arc<Server> {
        let mut definition = tool(&Artifacts::new(PathBuf::from("/nonexistent")))
            .server
            .definition
            .clone();
        definition.name = name.to_owned();
        let tools = tools
            .iter()
            .map(|tool| ToolInfo {
                name: (*tool).to_owned(),
                description: String::new(),
                input_schema: serde_json::json!({"type": "object"}),
            })
            .collect();
        let server = Server::for_tests(key, definition, tools);
        server
            .supervision
            .show_phase_for_tests(crate::Phase::Starting);
        server
    }

    fn names(bindings: &[Binding]) -> Vec<String> {
        let artifacts = Artifacts::new(PathBuf::from("/nonexistent"));
        session_tools(bindings, &artifacts, "s")
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }

    fn binding(name: &str, server: &Arc<Server>) -> Binding {
        Binding {
            name: name.to_owned(),
            timeout: std::time::Duration::from_secs(1),
            server: server.clone(),
        }
    }

    #[test]
    fn two_names_for_one_server_give_each_its_own_plain_tool_names() {
        let time = starting("time", "k1", &["get_current_time"]);
        assert_eq!(
            names(&[binding("time", &time), binding("clock", &time)]),
            [
                "mcp__time__get_current_time",
                "mcp__clock__get_current_time"
            ]
        );
        // Two servers whose tools would share a name: both suffixed, differently, and the
        // same on every run.
        let a = starting("a", "k2", &["x__y"]);
        let b = starting("a__x", "k3", &["y"]);
        let bindings = [binding("a", &a), binding("a__x", &b)];
        let first = names(&bindings);
        assert_eq!(first.len(), 2);
        assert_ne!(first[0], first[1]);
        assert!(first.iter().all(|name| name.starts_with("mcp__a__x__y_")));
        assert_eq!(first, names(&bindings));
    }

    #[test]
    fn a_megabyte_of_text_keeps_its_head_and_goes_whole_to_an_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().to_path_buf());
        let tool = tool(&artifacts);
        let big: String = (0..100_000).map(|n| format!("line {n:06}\n")).collect();
        assert!(big.len() > 1_000_000);
        let result: rmcp::model::CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": big}]
        }))
        .unwrap();
        let output = tool.output(result);
        assert!(!output.is_error);
        let UserContent::Text(text) = &output.content[0] else {
            panic!("{output:?}");
        };
        assert!(text.text.starts_with("line 000000\nline 000001\n"));
        let notice = text.text.rsplit("\n\n").next().unwrap();
        assert!(
            notice.starts_with("[Showing lines 1-2000 of 100001. Full output: artifact://mcp-"),
            "{notice}"
        );
        let reference = output.details["fullOutputPath"].as_str().unwrap();
        let id = reference.strip_prefix("artifact://").unwrap();
        let stored =
            std::fs::read_to_string(artifacts.session("session-1").unwrap().path(id).unwrap())
                .unwrap();
        assert_eq!(stored, big);
    }

    #[test]
    fn images_and_resources_reach_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool(&Artifacts::new(dir.path().to_path_buf()));
        let result: rmcp::model::CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [
                {"type": "text", "text": "a picture:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///notes.md", "text": "# Notes"}}
            ],
            "isError": true
        }))
        .unwrap();
        let output = tool.output(result);
        assert!(output.is_error);
        assert_eq!(
            output.content,
            [
                UserContent::text("a picture:\n[resource file:///notes.md]\n# Notes"),
                UserContent::Image(ImageContent {
                    data: "iVBORw0KGgo=".to_owned(),
                    mime_type: "image/png".to_owned(),
                }),
            ]
        );
        assert!(output.details.is_null());
    }
}
