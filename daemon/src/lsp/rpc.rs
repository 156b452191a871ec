//! JSON-RPC with a language server over its stdin and stdout (`Content-Length` framing):
//! requests with ids and answers, notifications both ways, and the server's own requests,
//! answered by an [`Incoming`] handler.
//!
//! Invariant: when the server's output ends (it exited or crashed), every request waiting for
//! an answer fails at once with [`RpcError::Closed`], and so does every later one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
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

/// One server's connection.
#[derive(Debug, Clone)]
pub struct Connection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
    closed: watch::Receiver<bool>,
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
    ) -> Connection {
        let (out, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();
        let pending: Pending = Arc::default();
        let (closed_sender, closed) = watch::channel(false);
        tokio::spawn(async move {
            let mut input = input;
            while let Some(bytes) = queue.recv().await {
                if input.write_all(&bytes).await.is_err() || input.flush().await.is_err() {
                    break;
                }
            }
        });
        let connection = Connection {
            out,
            pending: pending.clone(),
            next_id: Arc::new(AtomicI64::new(1)),
            closed,
        };
        let replies = connection.out.clone();
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

    /// Sends a notification.
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
        if sent.is_err() {
            self.forget(id);
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(RpcError::Closed),
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
    replies: &mpsc::UnboundedSender<Vec<u8>>,
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
                let _ = replies.send(frame(&reply));
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
