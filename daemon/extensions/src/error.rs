//! Why something about extensions failed, in words a user (or the model) can act on.

use std::time::Duration;

/// Why the extension host could not do something.
#[derive(Debug, thiserror::Error)]
pub enum ExtensionError {
    /// The daemon's process guard could not start the host.
    #[error("cannot start the extension host: {0}")]
    Spawner(String),
    /// `node` could not run.
    #[error(
        "cannot run {program} for the extension host: {source}; install Node.js 20 or later, or \
         set PI_NODE to its path"
    )]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The pinned package could not be installed.
    #[error(
        "cannot install the extension host's pi package: {0}; install Node.js 20 and npm, or \
         set PI_EXTENSION_HOST_MODULES to a node_modules holding @mariozechner/pi-coding-agent \
         0.73.1"
    )]
    Install(String),
    /// The host exited or failed before it answered `initialize` (a missing `node`, a
    /// `node_modules` without the pinned package); the cause is in its log.
    #[error("the extension host did not start ({reason}); its log says why: {}", .log.display())]
    Start {
        /// What pid saw.
        reason: String,
        /// The host's log.
        log: std::path::PathBuf,
    },
    /// The host's pipes were not there.
    #[error("the extension host started without its pipes")]
    Pipes,
    /// The host is not running (it crashed, or does not start).
    #[error("the extension host is down: {0}")]
    HostDown(String),
    /// The host's connection ended or it stopped reading.
    #[error("the extension host stopped: {0}; it starts again on the next use")]
    Connection(String),
    /// An extension did not answer in time.
    #[error(
        "{} did not answer `{what}` within {} s{}",
        if .extensions.len() > 1 { "one of the extensions handling it" } else { "the extension" },
        .after.as_secs(),
        if .extensions.is_empty() { String::new() } else { format!(" ({})", .extensions.join(", ")) }
    )]
    Timeout {
        /// The event or request.
        what: String,
        /// The extensions that handle it.
        extensions: Vec<String>,
        /// The time allowed.
        after: Duration,
    },
    /// The host refused a request (an extension threw, a tool is unknown).
    #[error("{0}")]
    Host(String),
    /// The host answered something that is not what was asked for.
    #[error("the extension host answered something unexpected: {0}")]
    Protocol(String),
    /// The session's extensions were never opened.
    #[error("session {0} has no extensions")]
    NotOpen(String),
}

impl From<pi_jsonrpc::CallError> for ExtensionError {
    fn from(error: pi_jsonrpc::CallError) -> ExtensionError {
        match error {
            pi_jsonrpc::CallError::Remote(error) => ExtensionError::Host(error.message),
            pi_jsonrpc::CallError::Timeout(after) => ExtensionError::Timeout {
                what: "a request".to_owned(),
                extensions: Vec::new(),
                after,
            },
            other => ExtensionError::Connection(other.to_string()),
        }
    }
}
