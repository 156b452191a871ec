//! A server's prompts as slash commands (`/mcp:<server>:<prompt> args`, expanded into the
//! message the user sends) and its resources as `mcp://<server>/<uri>` for `read`.
//!
//! Arguments: `name=value` sets an argument by name; other words fill the prompt's declared
//! arguments in order, the last one taking the rest of the line; `"…"` keeps spaces in one
//! word. A missing required argument is an error naming it and the usage.

use std::sync::Arc;

use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value};

use super::{McpError, McpPool, Server};

pub use super::{COMMAND_PREFIX, RESOURCE_SCHEME};
/// How long expanding a prompt command may take (the session waits meanwhile).
const PROMPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A server's prompt as it lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server's name for it.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its arguments: (name, required).
    pub arguments: Vec<(String, bool)>,
}

/// The prompts `peer` lists (none when it offers no prompts).
pub async fn list_prompts(peer: &Peer<RoleClient>) -> Vec<PromptInfo> {
    let offers = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.prompts.is_some());
    if !offers {
        return Vec::new();
    }
    match peer.list_all_prompts().await {
        Ok(prompts) => prompts
            .into_iter()
            .map(|prompt| PromptInfo {
                name: prompt.name,
                description: prompt.description.or(prompt.title).unwrap_or_default(),
                arguments: prompt
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|argument| (argument.name, argument.required.unwrap_or(false)))
                    .collect(),
            })
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "cannot list an MCP server's prompts");
            Vec::new()
        }
    }
}

/// The words of `text`: split at whitespace, `"…"` kept together.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            c => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// The arguments of `prompt` from the text after the command.
pub fn arguments(
    server: &str,
    prompt: &PromptInfo,
    text: &str,
) -> Result<Map<String, Value>, McpError> {
    let mut values = Map::new();
    let mut positional = Vec::new();
    for word in words(text) {
        match word.split_once('=') {
            Some((name, value)) if prompt.arguments.iter().any(|(known, _)| known == name) => {
                values.insert(name.to_owned(), Value::String(value.to_owned()));
            }
            _ => positional.push(word),
        }
    }
    let free: Vec<&String> = prompt
        .arguments
        .iter()
        .map(|(name, _)| name)
        .filter(|name| !values.contains_key(name.as_str()))
        .collect();
    let usage = || {
        let mut usage = format!("{COMMAND_PREFIX}{server}:{}", prompt.name);
        for (name, required) in &prompt.arguments {
            if *required {
                usage.push_str(&format!(" {name}=…"));
            } else {
                usage.push_str(&format!(" [{name}=…]"));
            }
        }
        usage
    };
    if free.is_empty() && !positional.is_empty() {
        return Err(McpError::PromptArguments(format!(
            "the prompt {} of MCP server \"{server}\" takes no more arguments; usage: {}",
            prompt.name,
            usage()
        )));
    }
    let count = positional.len();
    for (index, name) in free.iter().enumerate() {
        if index >= count {
            break;
        }
        let value = if index + 1 == free.len() {
            positional[index..].join(" ")
        } else {
            positional[index].clone()
        };
        values.insert((*name).clone(), Value::String(value));
    }
    if let Some((missing, _)) = prompt
        .arguments
        .iter()
        .find(|(name, required)| *required && !values.contains_key(name.as_str()))
    {
        return Err(McpError::PromptArguments(format!(
            "the prompt {} of MCP server \"{server}\" needs the argument \"{missing}\"; usage: {}",
            prompt.name,
            usage()
        )));
    }
    Ok(values)
}

/// A prompt's messages as the text of one user message: each message's text, images and
/// resources as text, separated by blank lines.
fn prompt_text(result: &rmcp::model::GetPromptResult) -> String {
    let messages = serde_json::to_value(&result.messages).unwrap_or(Value::Null);
    let mut parts = Vec::new();
    for message in messages.as_array().into_iter().flatten() {
        let content = &message["content"];
        match content["type"].as_str() {
            Some("text") => parts.push(content["text"].as_str().unwrap_or_default().to_owned()),
            Some("resource") => {
                let resource = &content["resource"];
                parts.push(match resource["text"].as_str() {
                    Some(text) => text.to_owned(),
                    None => format!("[resource {}]", resource["uri"].as_str().unwrap_or("")),
                });
            }
            Some("image") => parts.push("[image]".to_owned()),
            _ => {}
        }
    }
    parts.join("\n\n")
}

impl McpPool {
    /// The prompts of the ready servers session `session_id` uses, as (the session's name
    /// for the server, prompt).
    pub fn prompts_for(&self, session_id: &str) -> Vec<(String, PromptInfo)> {
        let mut prompts = Vec::new();
        for (name, server) in self.servers_of(session_id) {
            if server.client().is_none() {
                continue;
            }
            for prompt in server.state().prompts.clone() {
                prompts.push((name.clone(), prompt));
            }
        }
        prompts.sort_by(|a, b| (&a.0, &a.1.name).cmp(&(&b.0, &b.1.name)));
        prompts
    }

    /// The servers session `session_id` uses, under each name it gives them.
    pub(super) fn servers_of(&self, session_id: &str) -> Vec<(String, Arc<Server>)> {
        let mut named = Vec::new();
        for server in self.servers().values() {
            let names = server.supervision.names_for(session_id);
            named.extend(names.into_iter().map(|name| (name, server.clone())));
        }
        named
    }

    /// The server session `session_id` calls `name`, ready (waiting while it starts).
    async fn ready_server(
        &self,
        session_id: &str,
        name: &str,
    ) -> Result<(Arc<Server>, Peer<RoleClient>), McpError> {
        let servers = self.servers_of(session_id);
        let Some((_, server)) = servers.iter().find(|(named, _)| named == name) else {
            let mut uses: Vec<String> = servers.iter().map(|(named, _)| named.clone()).collect();
            uses.sort_unstable();
            return Err(McpError::NoSuchServer {
                name: name.to_owned(),
                uses,
            });
        };
        match server.ready_client().await {
            Some(client) => Ok((server.clone(), client)),
            None => Err(McpError::NotRunning {
                name: name.to_owned(),
                reason: server
                    .last_error()
                    .unwrap_or_else(|| "it was stopped".to_owned()),
            }),
        }
    }

    /// `/mcp:<server>:<prompt> args` as the text it stands for; `None` when `text` is not
    /// such a command.
    pub async fn expand_prompt(
        &self,
        session_id: &str,
        text: &str,
    ) -> Option<Result<String, McpError>> {
        let command = text.strip_prefix(COMMAND_PREFIX)?;
        let (head, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let Some((server_name, prompt_name)) = head.split_once(':') else {
            return Some(Err(McpError::PromptCommand(head.to_owned())));
        };
        let expanding = async {
            let (server, client) = self.ready_server(session_id, server_name).await?;
            let prompt = server
                .state()
                .prompts
                .iter()
                .find(|prompt| prompt.name == prompt_name)
                .cloned();
            let Some(prompt) = prompt else {
                let has: Vec<String> = server
                    .state()
                    .prompts
                    .iter()
                    .map(|prompt| prompt.name.clone())
                    .collect();
                return Err(McpError::NoSuchPrompt {
                    server: server_name.to_owned(),
                    prompt: prompt_name.to_owned(),
                    has,
                });
            };
            let arguments = arguments(server_name, &prompt, rest)?;
            let mut params = rmcp::model::GetPromptRequestParams::new(prompt_name);
            if !arguments.is_empty() {
                params = params.with_arguments(arguments);
            }
            let result = client
                .get_prompt(params)
                .await
                .map_err(|error| McpError::GetPrompt {
                    server: server_name.to_owned(),
                    prompt: prompt_name.to_owned(),
                    error: error.to_string(),
                })?;
            Ok(prompt_text(&result))
        };
        Some(
            tokio::time::timeout(PROMPT_TIMEOUT, expanding)
                .await
                .unwrap_or_else(|_| {
                    Err(McpError::PromptTimeout {
                        server: server_name.to_owned(),
                        prompt: prompt_name.to_owned(),
                        seconds: PROMPT_TIMEOUT.as_secs(),
                    })
                }),
        )
    }

    /// Reads `mcp://<server>/<uri>` for session `session_id`.
    pub async fn read_resource(
        &self,
        session_id: &str,
        reference: &str,
    ) -> Result<Vec<pi_tools::UriContent>, McpError> {
        let rest = reference.strip_prefix(RESOURCE_SCHEME).unwrap_or(reference);
        let Some((server_name, uri)) = rest.split_once('/').filter(|(_, uri)| !uri.is_empty())
        else {
            return Err(McpError::ResourceReference(reference.to_owned()));
        };
        let (server, client) = self.ready_server(session_id, server_name).await?;
        let result = tokio::time::timeout(
            server.call_timeout(),
            client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)),
        )
        .await
        .map_err(|_| McpError::ResourceTimeout {
            server: server_name.to_owned(),
            uri: uri.to_owned(),
        })?
        .map_err(|error| McpError::ReadResource {
            server: server_name.to_owned(),
            uri: uri.to_owned(),
            error: error.to_string(),
        })?;
        let contents = serde_json::to_value(&result.contents).unwrap_or(Value::Null);
        Ok(contents
            .as_array()
            .into_iter()
            .flatten()
            .map(|content| {
                let mime_type = content["mimeType"].as_str().map(str::to_owned);
                match (content["text"].as_str(), content["blob"].as_str()) {
                    (Some(text), _) => pi_tools::UriContent::Text(text.to_owned()),
                    (None, Some(blob)) => pi_tools::UriContent::Blob {
                        base64: blob.to_owned(),
                        mime_type: mime_type
                            .unwrap_or_else(|| "application/octet-stream".to_owned()),
                    },
                    (None, None) => pi_tools::UriContent::Text(String::new()),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt() -> PromptInfo {
        PromptInfo {
            name: "weather".to_owned(),
            description: String::new(),
            arguments: vec![("city".to_owned(), true), ("state".to_owned(), false)],
        }
    }

    #[test]
    fn arguments_come_by_name_or_in_order_and_the_last_takes_the_rest() {
        let args = |text: &str| arguments("demo", &prompt(), text);
        assert_eq!(
            Value::Object(args("Paris").unwrap()),
            serde_json::json!({"city": "Paris"})
        );
        assert_eq!(
            Value::Object(args("Portland Oregon state").unwrap()),
            serde_json::json!({"city": "Portland", "state": "Oregon state"})
        );
        assert_eq!(
            Value::Object(args("state=Texas \"San Antonio\"").unwrap()),
            serde_json::json!({"state": "Texas", "city": "San Antonio"})
        );
        assert_eq!(
            args("").unwrap_err().to_string(),
            "the prompt weather of MCP server \"demo\" needs the argument \"city\"; usage: \
             /mcp:demo:weather city=… [state=…]"
        );
        assert_eq!(
            args("city=a state=b extra").unwrap_err().to_string(),
            "the prompt weather of MCP server \"demo\" takes no more arguments; usage: \
             /mcp:demo:weather city=… [state=…]"
        );
    }
}
