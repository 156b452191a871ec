//! What can go wrong with the MCP servers a session uses. The text is what the session's
//! clients and its model are told and what `mcp/list` shows as a server's last error.

use std::path::PathBuf;

use super::{COMMAND_PREFIX, RESOURCE_SCHEME};

/// Why an MCP operation failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The daemon's process starter failed (its thread is gone).
    #[error("{0}")]
    Spawner(String),
    /// The server's process could not be started.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The MCP handshake with a process failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The MCP handshake with a URL failed (the URL without its secrets).
    #[error("the MCP handshake with {url} failed: {error}")]
    HandshakeWith {
        /// The server's URL, secrets removed.
        url: String,
        /// Why.
        error: String,
    },
    /// `tools/list` failed.
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    /// The session uses no server of that name.
    #[error(
        "this session uses no MCP server named \"{name}\" (it uses: {}); `pictl mcp list` \
         shows the servers",
        names_or_none(uses)
    )]
    NoSuchServer {
        /// The name asked for.
        name: String,
        /// The names the session uses.
        uses: Vec<String>,
    },
    /// The server is not running (why it stopped).
    #[error("MCP server \"{name}\" is not running: {reason}")]
    NotRunning {
        /// The server.
        name: String,
        /// Why.
        reason: String,
    },
    /// A prompt command without `<server>:<prompt>` (what followed the prefix).
    #[error(
        "an MCP prompt command is {COMMAND_PREFIX}<server>:<prompt> [arguments], not \
         {COMMAND_PREFIX}{0}"
    )]
    PromptCommand(String),
    /// The server has no such prompt.
    #[error(
        "MCP server \"{server}\" has no prompt \"{prompt}\" (it has: {})",
        names_or_none(has)
    )]
    NoSuchPrompt {
        /// The server.
        server: String,
        /// The prompt asked for.
        prompt: String,
        /// The prompts it has.
        has: Vec<String>,
    },
    /// The prompt's arguments do not fit it (with its usage).
    #[error("{0}")]
    PromptArguments(String),
    /// The server failed to give the prompt.
    #[error("MCP server \"{server}\" failed to give prompt {prompt}: {error}")]
    GetPrompt {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// Why.
        error: String,
    },
    /// The server did not give the prompt in time.
    #[error("MCP server \"{server}\" did not give prompt {prompt} within {seconds} s")]
    PromptTimeout {
        /// The server.
        server: String,
        /// The prompt.
        prompt: String,
        /// The limit.
        seconds: u64,
    },
    /// A resource reference without `<server>/<uri>`.
    #[error("an MCP resource is {RESOURCE_SCHEME}<server>/<resource uri>, not {0}")]
    ResourceReference(String),
    /// The server did not answer a resource read in time.
    #[error("MCP server \"{server}\" did not answer for {uri}")]
    ResourceTimeout {
        /// The server.
        server: String,
        /// The resource.
        uri: String,
    },
    /// The server failed to read a resource.
    #[error("MCP server \"{server}\" cannot read {uri}: {error}")]
    ReadResource {
        /// The server.
        server: String,
        /// The resource.
        uri: String,
        /// Why.
        error: String,
    },
}

fn names_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_names_the_server_and_what_to_do() {
        let cases = [
            (
                McpError::Spawn {
                    program: "/bin/srv".into(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                },
                "cannot start /bin/srv: entity not found",
            ),
            (
                McpError::Handshake("connection closed".into()),
                "the MCP handshake failed: connection closed",
            ),
            (
                McpError::HandshakeWith {
                    url: "https://mcp.example/".into(),
                    error: "401".into(),
                },
                "the MCP handshake with https://mcp.example/ failed: 401",
            ),
            (
                McpError::ListTools("timeout".into()),
                "listing its tools failed: timeout",
            ),
            (
                McpError::NoSuchServer {
                    name: "git".into(),
                    uses: vec![],
                },
                "this session uses no MCP server named \"git\" (it uses: none); `pictl mcp list` \
                 shows the servers",
            ),
            (
                McpError::NoSuchServer {
                    name: "git".into(),
                    uses: vec!["time".into(), "fs".into()],
                },
                "this session uses no MCP server named \"git\" (it uses: time, fs); `pictl mcp \
                 list` shows the servers",
            ),
            (
                McpError::NotRunning {
                    name: "git".into(),
                    reason: "it was stopped".into(),
                },
                "MCP server \"git\" is not running: it was stopped",
            ),
            (
                McpError::PromptCommand("review".into()),
                "an MCP prompt command is /mcp:<server>:<prompt> [arguments], not /mcp:review",
            ),
            (
                McpError::NoSuchPrompt {
                    server: "git".into(),
                    prompt: "review".into(),
                    has: vec!["commit".into()],
                },
                "MCP server \"git\" has no prompt \"review\" (it has: commit)",
            ),
            (
                McpError::GetPrompt {
                    server: "git".into(),
                    prompt: "commit".into(),
                    error: "boom".into(),
                },
                "MCP server \"git\" failed to give prompt commit: boom",
            ),
            (
                McpError::PromptTimeout {
                    server: "git".into(),
                    prompt: "commit".into(),
                    seconds: 30,
                },
                "MCP server \"git\" did not give prompt commit within 30 s",
            ),
            (
                McpError::ResourceReference("mcp://git".into()),
                "an MCP resource is mcp://<server>/<resource uri>, not mcp://git",
            ),
            (
                McpError::ResourceTimeout {
                    server: "git".into(),
                    uri: "repo://log".into(),
                },
                "MCP server \"git\" did not answer for repo://log",
            ),
            (
                McpError::ReadResource {
                    server: "git".into(),
                    uri: "repo://log".into(),
                    error: "gone".into(),
                },
                "MCP server \"git\" cannot read repo://log: gone",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
