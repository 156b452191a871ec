//! `pi-jsonrpc`: one JSON-RPC 2.0 peer, for every place pi's programs talk JSON-RPC as a
//! peer (a language server over its stdio with `Content-Length` frames, an editor over
//! `pictl acp`'s stdio with one message per line, the daemon over its Unix socket or
//! WebSocket for `pi-client`): requests with ids and their answers, notifications both ways,
//! the other side's own requests answered by a [`Handler`], timeouts with an optional cancel
//! notification. What carries the messages is a [`Transport`]: a byte stream cut by a
//! [`Framing`], or a transport that carries whole messages (WebSocket).
//!
//! Invariant: when the other side's output ends (it exited, crashed, or sent a message over
//! [`PeerConfig::max_message`]), every request waiting for an answer fails at once with
//! [`CallError::Closed`], and so does every later one.
//!
//! What goes to the other side is bounded: a peer that stops reading its input (a write of
//! one message that takes longer than [`OutboundLimits::write_timeout`], or more than
//! [`OutboundLimits::queued_bytes`] waiting behind it) is *stuck*: nothing more is queued,
//! requests fail with [`CallError::Stuck`], and [`Peer::stuck`] resolves so that its owner
//! can end it.
//!
//! What comes from the other side may be held back: a [`Handler`] that hands the reading task
//! a future for a notification (a bounded queue's send) is awaited before the next message is
//! read, so that a slow consumer slows the other side instead of piling up.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

mod transport;

pub use transport::Transport;

/// How messages are cut from the byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One message per line (`\n`-terminated; ACP, pi's own protocol).
    Lines,
    /// `Content-Length: N\r\n\r\n` headers before each body (LSP).
    ContentLength,
}

/// How much may wait to be written to the other side before it counts as stuck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// How a peer talks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerConfig {
    /// The largest message read; a bigger one ends the peer (its other side is broken).
    pub max_message: usize,
    /// What may wait to be written.
    pub outbound: OutboundLimits,
    /// The notification that tells the other side a request timed out
    /// (`$/cancelRequest {id}` in LSP); `None` sends nothing.
    pub cancel_notification: Option<&'static str>,
    /// Whether a message that is not JSON is answered with a parse error (`-32700`, id
    /// `null`), as JSON-RPC asks of a server; otherwise it is skipped with a warning.
    pub answer_malformed: bool,
    /// Who the other side is, for logs (`language server`, `editor`).
    pub name: &'static str,
}

/// Why a request (or a notification) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The other side's output ended.
    #[error("the connection ended")]
    Closed,
    /// The other side stopped reading what is sent to it.
    #[error("the other side stopped reading its input")]
    Stuck,
    /// No answer in time.
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The other side answered with an error.
    #[error("{} ({})", .0.message, .0.code)]
    Remote(RemoteError),
}

/// An error object the other side sent: as an answer, or about the connection itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// JSON-RPC error code.
    pub code: i64,
    /// Its message.
    pub message: String,
    /// Its `data` member, when it had one.
    pub data: Option<Value>,
}

impl RemoteError {
    fn from_object(error: &Value) -> RemoteError {
        RemoteError {
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            data: error.get("data").cloned(),
        }
    }
}

/// What a [`Handler`] answers a request with: its result, or an error (code, message).
pub type Answer = Pin<Box<dyn Future<Output = Result<Value, (i64, String)>> + Send + 'static>>;

/// What a [`Handler`] may hand back for a notification: work the reading task finishes before
/// it reads the next message (a send into a bounded queue, which holds the other side back
/// while the queue is full).
pub type Held = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What the owner of a peer does with what the other side sends on its own.
pub trait Handler: Send + Sync + 'static {
    /// A notification, handled in arrival order on the reading task (keep it short; spawn
    /// what takes long). A future returned is awaited before the next message is read.
    fn notification(&self, method: &str, params: Value) -> Option<Held>;
    /// A request: its answer, awaited in a task of its own and sent back.
    fn request(&self, method: &str, params: Value) -> Answer;
    /// An error without an id: about the connection itself (the other side could not read
    /// a message, or refuses the connection). Logged by default.
    fn connection_error(&self, error: RemoteError) {
        tracing::warn!(
            code = error.code,
            message = error.message,
            "the other side reported an error about the connection"
        );
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, CallError>>>>>;

/// What goes to the writing task.
enum Out {
    Message(Vec<u8>),
    // Everything queued before it is written: answer.
    Flush(oneshot::Sender<()>),
}

/// The messages on their way to the other side, bounded in bytes.
struct Outbound {
    sender: mpsc::UnboundedSender<Out>,
    // Invariant: the bytes of the messages in the channel (taken ones are subtracted).
    queued: AtomicUsize,
    limit: usize,
    stuck: AtomicBool,
    stuck_signal: watch::Sender<bool>,
    // `None`: the transport carries whole messages.
    framing: Option<Framing>,
    name: &'static str,
}

impl Outbound {
    /// Queues `message`; fails once the other side is stuck (and makes it so past the limit).
    fn send(&self, message: &Value) -> Result<(), CallError> {
        if self.stuck.load(Ordering::Acquire) {
            return Err(CallError::Stuck);
        }
        let bytes = frame(self.framing, message);
        let len = bytes.len();
        let queued = self.queued.fetch_add(len, Ordering::AcqRel) + len;
        if queued > self.limit {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            self.become_stuck(format!("{queued} bytes waiting to be written"));
            return Err(CallError::Stuck);
        }
        self.sender
            .send(Out::Message(bytes))
            .map_err(|_| CallError::Closed)
    }

    fn become_stuck(&self, why: String) {
        if !self.stuck.swap(true, Ordering::AcqRel) {
            tracing::warn!(peer = self.name, why, "a peer stopped reading its input");
            self.stuck_signal.send_replace(true);
        }
    }
}

fn frame(framing: Option<Framing>, message: &Value) -> Vec<u8> {
    let body = message.to_string();
    match framing {
        None => body.into_bytes(),
        Some(Framing::Lines) => {
            let mut line = body.into_bytes();
            line.push(b'\n');
            line
        }
        Some(Framing::ContentLength) => {
            let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            framed.extend_from_slice(body.as_bytes());
            framed
        }
    }
}

/// One JSON-RPC connection to the other side. Clones share it.
#[derive(Clone)]
pub struct Peer {
    out: Arc<Outbound>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
    closed: watch::Receiver<bool>,
    stuck: watch::Receiver<bool>,
    // The other side's requests being answered now.
    answering: Arc<watch::Sender<usize>>,
    cancel_notification: Option<&'static str>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("name", &self.out.name)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Peer {
    /// Talks over `transport`; `handler` answers what the other side sends on its own.
    pub fn start(transport: Transport, handler: Arc<dyn Handler>, config: PeerConfig) -> Peer {
        let Transport {
            mut reader,
            writer,
            framing,
        } = transport;
        let (sender, queue) = mpsc::unbounded_channel::<Out>();
        let (stuck_signal, stuck) = watch::channel(false);
        let out = Arc::new(Outbound {
            sender,
            queued: AtomicUsize::new(0),
            limit: config.outbound.queued_bytes,
            stuck: AtomicBool::new(false),
            stuck_signal,
            framing,
            name: config.name,
        });
        tokio::spawn(write_all(
            writer,
            queue,
            Arc::downgrade(&out),
            config.outbound,
        ));
        let pending: Pending = Arc::default();
        let (closed_sender, closed) = watch::channel(false);
        let answering = Arc::new(watch::Sender::new(0));
        let peer = Peer {
            out,
            pending: pending.clone(),
            next_id: Arc::new(AtomicI64::new(1)),
            closed,
            stuck,
            answering: answering.clone(),
            cancel_notification: config.cancel_notification,
        };
        let replies = Arc::downgrade(&peer.out);
        tokio::spawn(async move {
            while let Some(message) = reader.next_message(&config).await {
                match message {
                    Ok(message) => {
                        match dispatch(message, &pending, &replies, &handler, &answering) {
                            Ok(Some(held)) => held.await,
                            Ok(None) => {}
                            Err(refusal) => {
                                if config.answer_malformed
                                    && let Some(replies) = replies.upgrade()
                                {
                                    let _ = replies.send(&refusal);
                                }
                            }
                        }
                    }
                    Err(error) => {
                        if let Some(replies) = replies.upgrade() {
                            let _ = replies.send(&json!({"jsonrpc": "2.0", "id": null,
                                "error": {"code": -32700, "message": format!("not JSON: {error}")}}));
                        }
                    }
                }
            }
            // Ended: everything waiting fails now, and later requests at once.
            let _ = closed_sender.send(true);
            let waiting: Vec<_> = pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain()
                .collect();
            for (_, sender) in waiting {
                let _ = sender.send(Err(CallError::Closed));
            }
        });
        peer
    }

    /// Whether the other side's output ended.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves once the other side's output ends.
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|closed| *closed).await;
    }

    /// Resolves once the other side's output ends, without holding the connection open: for
    /// waiting after the last peer was dropped (which closes the transport's writing side).
    pub fn when_closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut closed = self.closed.clone();
        async move {
            let _ = closed.wait_for(|closed| *closed).await;
        }
    }

    /// Whether the other side counts as stuck (see the crate's documentation).
    pub fn is_stuck(&self) -> bool {
        *self.stuck.borrow()
    }

    /// Resolves once the other side counts as stuck.
    pub async fn stuck(&self) {
        let mut stuck = self.stuck.clone();
        let _ = stuck.wait_for(|stuck| *stuck).await;
    }

    /// Sends a notification; it fails only when the other side is gone or stuck.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), CallError> {
        self.out
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its answer, at most `timeout` when given (then tells
    /// the other side to cancel it, when the configuration names how).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, answer) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, sender);
        let sent = self
            .out
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if let Err(error) = sent {
            self.forget(id);
            return Err(error);
        }
        let answer = async {
            tokio::select! {
                answer = answer => answer.unwrap_or(Err(CallError::Closed)),
                () = self.stuck() => Err(CallError::Stuck),
            }
        };
        let result = match timeout {
            Some(timeout) => match tokio::time::timeout(timeout, answer).await {
                Ok(result) => result,
                Err(_) => {
                    self.forget(id);
                    if let Some(cancel) = self.cancel_notification {
                        let _ = self.notify(cancel, json!({"id": id}));
                    }
                    return Err(CallError::Timeout(timeout));
                }
            },
            None => answer.await,
        };
        if result.is_err() {
            self.forget(id);
        }
        result
    }

    /// Waits until no request of the other side is being answered (their answers are
    /// queued).
    pub async fn answered(&self) {
        let _ = self
            .answering
            .subscribe()
            .wait_for(|count| *count == 0)
            .await;
    }

    /// Waits until everything sent so far is written (or the writing ended).
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        if self.out.sender.send(Out::Flush(done)).is_ok() {
            let _ = written.await;
        }
    }

    fn forget(&self, id: i64) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// Writes what is queued, each message within the write timeout; a write past it makes the
/// other side stuck and ends the writing. When every [`Peer`] is gone, the transport is closed.
async fn write_all(
    mut writer: transport::Writer,
    mut queue: mpsc::UnboundedReceiver<Out>,
    outbound: Weak<Outbound>,
    limits: OutboundLimits,
) {
    while let Some(item) = queue.recv().await {
        let bytes = match item {
            Out::Message(bytes) => bytes,
            Out::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let length = bytes.len();
        // Gone when every peer was dropped: what they queued before is still written.
        if let Some(out) = outbound.upgrade() {
            out.queued.fetch_sub(length, Ordering::AcqRel);
        }
        match tokio::time::timeout(limits.write_timeout, writer.write(bytes)).await {
            Ok(Ok(())) => {}
            // A transport that failed is not used again (a failed sink may panic when polled).
            Ok(Err(_)) => return,
            Err(_) => {
                if let Some(out) = outbound.upgrade() {
                    out.become_stuck(format!(
                        "writing {length} bytes took over {} s",
                        limits.write_timeout.as_secs_f64()
                    ));
                }
                return;
            }
        }
    }
    writer.close().await;
}

/// One request of the other side being answered, counted while it lives.
struct Answering(Arc<watch::Sender<usize>>);

impl Answering {
    fn count(answering: &Arc<watch::Sender<usize>>) -> Answering {
        answering.send_modify(|count| *count += 1);
        Answering(answering.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count -= 1);
    }
}

/// The `-32600` answer to a message that is JSON but not a request, notification or
/// response (`id` null when it has none).
fn invalid(id: Option<Value>, why: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null),
        "error": {"code": -32600, "message": format!("invalid request: {why}")}})
}

/// Routes one message; `Ok(Some)` is work the reading task finishes before it reads on, `Err`
/// the answer to a message that is not JSON-RPC (sent when the configuration answers
/// malformed messages).
fn dispatch(
    message: Value,
    pending: &Pending,
    replies: &Weak<Outbound>,
    handler: &Arc<dyn Handler>,
    answering: &Arc<watch::Sender<usize>>,
) -> Result<Option<Held>, Value> {
    let Some(object) = message.as_object() else {
        return Err(invalid(
            None,
            if message.is_array() {
                "batches are not supported; send one message per line"
            } else {
                "a message is a JSON object"
            },
        ));
    };
    let id = object.get("id").cloned().filter(|id| !id.is_null());
    let method = match object.get("method") {
        None => None,
        Some(Value::String(method)) => Some(method.clone()),
        Some(_) => return Err(invalid(id, "`method` must be a string")),
    };
    if method.is_none() && !object.contains_key("result") && !object.contains_key("error") {
        return Err(invalid(
            id,
            "a message has a `method` (a request or notification) or a `result` or `error` (a response)",
        ));
    }
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else {
                return Ok(None);
            };
            let Some(sender) = pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id)
            else {
                return Ok(None);
            };
            let result = match message.get("error") {
                Some(error) => Err(CallError::Remote(RemoteError::from_object(error))),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = sender.send(result);
        }
        (Some(method), Some(id)) => {
            let answer = handler.request(
                &method,
                message.get("params").cloned().unwrap_or(Value::Null),
            );
            let replies = replies.clone();
            let answering = Answering::count(answering);
            tokio::spawn(async move {
                // Uncounted when the task ends, also by a panic in the handler.
                let _answering = answering;
                let reply = match answer.await {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, text)) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": text}}),
                };
                if let Some(replies) = replies.upgrade() {
                    let _ = replies.send(&reply);
                }
            });
        }
        (Some(method), None) => {
            let params = match message {
                Value::Object(mut object) => object.remove("params").unwrap_or(Value::Null),
                _ => Value::Null,
            };
            return Ok(handler.notification(&method, params));
        }
        (None, None) => {
            if let Some(error) = message.get("error") {
                handler.connection_error(RemoteError::from_object(error));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
