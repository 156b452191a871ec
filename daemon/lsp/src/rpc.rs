//! JSON-RPC with a language server over its stdin and stdout (`Content-Length` framing,
//! through `pi-jsonrpc`'s peer): requests with ids and answers, notifications both ways, and
//! the server's own requests, answered by an [`Incoming`] handler; the errors in the words
//! the `lsp` tool tells the model.
//!
//! Invariant: when the server's output ends (it exited or crashed), every request waiting for
//! an answer fails at once with [`RpcError::Closed`], and so does every later one.
//!
//! What goes to the server is bounded: a server that stops reading its input (a write of one
//! message that takes longer than [`OutboundLimits::write_timeout`], or more than
//! [`OutboundLimits::queued_bytes`] waiting behind it) is *stuck*: nothing more is queued,
//! requests fail with [`RpcError::Stuck`], and [`Connection::stuck`] resolves so that the
//! pool ends the process and starts it again on the next use.

use std::sync::Arc;
use std::time::Duration;

pub use pi_jsonrpc::Handler as Incoming;
pub use pi_jsonrpc::Held;
pub use pi_jsonrpc::OutboundLimits;
use pi_jsonrpc::{CallError, Framing, Peer, PeerConfig, Transport};
use serde_json::Value;

/// The largest message a language server may send (a huge workspace's symbols); a bigger
/// one ends the connection.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RpcError {
    /// The server's connection ended.
    #[error("the language server stopped")]
    Closed,
    /// The server stopped reading what the daemon sends; it is being restarted.
    #[error("the language server stopped reading its input; it is restarted on the next use")]
    Stuck,
    /// No answer in time.
    #[error("the language server did not answer within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The server answered with an error.
    #[error("the language server refused: {message} ({code})")]
    Server {
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
}

impl From<CallError> for RpcError {
    fn from(error: CallError) -> RpcError {
        match error {
            CallError::Closed => RpcError::Closed,
            CallError::Stuck => RpcError::Stuck,
            CallError::Timeout(after) => RpcError::Timeout(after),
            CallError::Remote(error) => RpcError::Server {
                code: error.code,
                message: error.message,
            },
        }
    }
}

/// One server's connection: a `pi-jsonrpc` peer with `Content-Length` frames over the
/// server's stdio, whose requests time out with `$/cancelRequest`.
#[derive(Debug, Clone)]
pub struct Connection {
    peer: Peer,
}

impl Connection {
    /// Talks over `input` (the server's stdin) and `output` (its stdout); `incoming` answers
    /// what the server sends on its own.
    pub fn start(
        input: tokio::process::ChildStdin,
        output: tokio::process::ChildStdout,
        incoming: Arc<dyn Incoming>,
        limits: OutboundLimits,
    ) -> Connection {
        let config = PeerConfig {
            max_message: MAX_MESSAGE,
            outbound: limits,
            cancel_notification: Some("$/cancelRequest"),
            answer_malformed: false,
            name: "language server",
        };
        Connection {
            peer: Peer::start(
                Transport::bytes(input, output, Framing::ContentLength),
                incoming,
                config,
            ),
        }
    }

    /// Whether the server's output ended.
    pub fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// Resolves once the server's output ends.
    pub async fn closed(&self) {
        self.peer.closed().await;
    }

    /// Whether the server counts as stuck (see the module's documentation).
    pub fn is_stuck(&self) -> bool {
        self.peer.is_stuck()
    }

    /// Resolves once the server counts as stuck (see the module's documentation).
    pub async fn stuck(&self) {
        self.peer.stuck().await;
    }

    /// Sends a notification (dropped when the server is gone or stuck: it restarts).
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.peer.notify(method, params);
    }

    /// Sends a request and waits for its answer at most `timeout` (then tells the server to
    /// cancel it).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RpcError> {
        Ok(self.peer.request(method, params, Some(timeout)).await?)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Ignore;

    impl Incoming for Ignore {
        fn notification(&self, _method: &str, _params: Value) -> Option<Held> {
            None
        }

        fn request(&self, _method: &str, _params: Value) -> pi_jsonrpc::Answer {
            Box::pin(async { Err((-32601, "no".to_owned())) })
        }
    }

    /// A "server" running `script` in `sh`, connected with `limits`.
    fn server(script: &str, limits: OutboundLimits) -> (tokio::process::Child, Connection) {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (input, output) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        (
            child,
            Connection::start(input, output, Arc::new(Ignore), limits),
        )
    }

    fn text(kib: usize) -> Value {
        json!({"text": "x".repeat(kib * 1024)})
    }

    #[tokio::test]
    async fn a_server_that_stops_reading_is_stuck_once_the_queue_is_full() {
        let limits = OutboundLimits {
            write_timeout: Duration::from_secs(600),
            queued_bytes: 256 * 1024,
        };
        // It never reads its input: the pipe fills, then the queue.
        let (_child, connection) = server("exec sleep 600", limits);
        let mut sent = 0;
        while !connection.is_stuck() {
            connection.notify("textDocument/didOpen", text(64));
            sent += 1;
            assert!(sent < 100, "never stuck");
        }
        connection.stuck().await;
        let refused = connection
            .request("textDocument/hover", json!({}), Duration::from_secs(600))
            .await;
        assert_eq!(refused, Err(RpcError::Stuck));
        assert_eq!(
            RpcError::Stuck.to_string(),
            "the language server stopped reading its input; it is restarted on the next use"
        );
    }

    #[tokio::test]
    async fn a_write_that_takes_too_long_makes_the_server_stuck_and_fails_its_waiters() {
        let limits = OutboundLimits {
            write_timeout: Duration::from_millis(200),
            queued_bytes: 64 * 1024 * 1024,
        };
        let (_child, connection) = server("exec sleep 600", limits);
        // A request waiting for its answer when the server gets stuck fails then.
        let waiting =
            connection.request("textDocument/hover", text(1024), Duration::from_secs(600));
        assert_eq!(waiting.await, Err(RpcError::Stuck));
        connection.stuck().await;
    }
}
