//! JSON-RPC with a language server over its stdin and stdout (`Content-Length` framing):
//! requests with ids and answers, notifications both ways, and the server's own requests,
//! answered by an [`Incoming`] handler.
//!
//! Invariant: when the server's output ends (it exited or crashed), every request waiting for
//! an answer fails at once with [`RpcError::Closed`], and so does every later one.
//!
//! What goes to the server is bounded: a server that stops reading its input (a write of one
//! message that takes longer than [`OutboundLimits::write_timeout`], or more than
//! [`OutboundLimits::queued_bytes`] waiting behind it) is *stuck*: nothing more is queued,
//! requests fail with [`RpcError::Stuck`], and [`Connection::stuck`] resolves so that the
//! pool ends the process and starts it again on the next use.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

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

/// What the daemon does with what the server sends on its own.
pub trait Incoming: Send + Sync + 'static {
    /// A notification (`textDocument/publishDiagnostics`, `$/progress`, ...).
    fn notification(&self, method: &str, params: Value);
    /// A request (`workspace/configuration`, `workspace/applyEdit`, ...): its result, or an
    /// error (code, message).
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>>;
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// How much may wait to be written to a server before it counts as stuck.
#[derive(Debug, Clone, Copy)]
pub struct OutboundLimits {
    /// Longest write of one message.
    pub write_timeout: Duration,
    /// Bytes queued behind the message being written.
    pub queued_bytes: usize,
}

impl Default for OutboundLimits {
    fn default() -> OutboundLimits {
        OutboundLimits {
            write_timeout: Duration::from_secs(30),
            queued_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The messages on their way to the server, bounded in bytes.
#[derive(Debug)]
struct Outbound {
    sender: mpsc::UnboundedSender<Vec<u8>>,
    // Invariant: the bytes of the messages in the channel (taken ones are subtracted).
    queued: AtomicUsize,
    limit: usize,
    stuck: AtomicBool,
    stuck_signal: watch::Sender<bool>,
}

impl Outbound {
    /// Queues `bytes`; fails once the server is stuck (and makes it so past the limit).
    fn send(&self, bytes: Vec<u8>) -> Result<(), RpcError> {
        if self.stuck.load(Ordering::Acquire) {
            return Err(RpcError::Stuck);
        }
        let len = bytes.len();
        let queued = self.queued.fetch_add(len, Ordering::AcqRel) + len;
        if queued > self.limit {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            self.become_stuck(format!("{queued} bytes waiting to be written"));
            return Err(RpcError::Stuck);
        }
        self.sender.send(bytes).map_err(|_| RpcError::Closed)
    }

    fn become_stuck(&self, why: String) {
        if !self.stuck.swap(true, Ordering::AcqRel) {
            tracing::warn!(why, "a language server stopped reading its input");
            self.stuck_signal.send_replace(true);
        }
    }
}

/// One server's connection.
#[derive(Debug, Clone)]
pub struct Connection {
    out: Arc<Outbound>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
    closed: watch::Receiver<bool>,
    stuck: watch::Receiver<bool>,
}

fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body.as_bytes());
    framed
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
        let (sender, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();
        let (stuck_signal, stuck) = watch::channel(false);
        let out = Arc::new(Outbound {
            sender,
            queued: AtomicUsize::new(0),
            limit: limits.queued_bytes,
            stuck: AtomicBool::new(false),
            stuck_signal,
        });
        let pending: Pending = Arc::default();
        let (closed_sender, closed) = watch::channel(false);
        let writer = Arc::downgrade(&out);
        tokio::spawn(async move {
            let mut input = input;
            while let Some(bytes) = queue.recv().await {
                let Some(out) = writer.upgrade() else { return };
                out.queued.fetch_sub(bytes.len(), Ordering::AcqRel);
                let write = async {
                    input.write_all(&bytes).await?;
                    input.flush().await
                };
                match tokio::time::timeout(limits.write_timeout, write).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => return,
                    Err(_) => {
                        out.become_stuck(format!(
                            "writing {} bytes took over {} s",
                            bytes.len(),
                            limits.write_timeout.as_secs_f64()
                        ));
                        return;
                    }
                }
            }
        });
        let connection = Connection {
            out,
            pending: pending.clone(),
            next_id: Arc::new(AtomicI64::new(1)),
            closed,
            stuck,
        };
        let replies = Arc::downgrade(&connection.out);
        tokio::spawn(async move {
            let mut reader = BufReader::new(output);
            while let Some(message) = read_message(&mut reader).await {
                dispatch(message, &pending, &replies, &incoming);
            }
            // Ended: everything waiting fails now, and later requests at once.
            let _ = closed_sender.send(true);
            let waiting: Vec<_> = pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain()
                .collect();
            for (_, sender) in waiting {
                let _ = sender.send(Err(RpcError::Closed));
            }
        });
        connection
    }

    /// Whether the server's output ended.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves once the server's output ends.
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|closed| *closed).await;
    }

    /// Resolves once the server counts as stuck (see the module's documentation).
    pub async fn stuck(&self) {
        let mut stuck = self.stuck.clone();
        let _ = stuck.wait_for(|stuck| *stuck).await;
    }

    /// Sends a notification (dropped when the server is gone or stuck: it restarts).
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(frame(
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// Sends a request and waits for its answer at most `timeout` (then tells the server to
    /// cancel it).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, answer) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, sender);
        let sent = self.out.send(frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ));
        if let Err(error) = sent {
            self.forget(id);
            return Err(error);
        }
        let answer = async {
            tokio::select! {
                answer = answer => answer.unwrap_or(Err(RpcError::Closed)),
                () = self.stuck() => Err(RpcError::Stuck),
            }
        };
        match tokio::time::timeout(timeout, answer).await {
            Ok(result) => {
                if result.is_err() {
                    self.forget(id);
                }
                result
            }
            Err(_) => {
                self.forget(id);
                self.notify("$/cancelRequest", json!({"id": id}));
                Err(RpcError::Timeout(timeout))
            }
        }
    }

    fn forget(&self, id: i64) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// The next message, or `None` at the end of the stream (or on a malformed frame).
async fn read_message(reader: &mut BufReader<tokio::process::ChildStdout>) -> Option<Value> {
    loop {
        let mut length: Option<usize> = None;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok();
            }
        }
        let length = length?;
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).await.ok()?;
        match serde_json::from_slice(&body) {
            Ok(message) => return Some(message),
            // A body that is not JSON is skipped; the framing is still intact.
            Err(error) => tracing::warn!(%error, "a language server sent a malformed message"),
        }
    }
}

fn dispatch(
    message: Value,
    pending: &Pending,
    replies: &std::sync::Weak<Outbound>,
    incoming: &Arc<dyn Incoming>,
) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = message.get("id").cloned().filter(|id| !id.is_null());
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else {
                return;
            };
            let Some(sender) = pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id)
            else {
                return;
            };
            let result = match message.get("error") {
                Some(error) => Err(RpcError::Server {
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or_default().to_owned(),
                }),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = sender.send(result);
        }
        (Some(method), Some(id)) => {
            let answer = incoming.request(
                &method,
                message.get("params").cloned().unwrap_or(Value::Null),
            );
            let replies = replies.clone();
            tokio::spawn(async move {
                let reply = match answer.await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, text)) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": text}}),
                };
                if let Some(replies) = replies.upgrade() {
                    let _ = replies.send(frame(&reply));
                }
            });
        }
        (Some(method), None) => {
            incoming.notification(
                &method,
                message.get("params").cloned().unwrap_or(Value::Null),
            );
        }
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ignore;

    impl Incoming for Ignore {
        fn notification(&self, _method: &str, _params: Value) {}

        fn request(
            &self,
            _method: &str,
            _params: Value,
        ) -> BoxFuture<'static, Result<Value, (i64, String)>> {
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
        while !*connection.stuck.borrow() {
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
