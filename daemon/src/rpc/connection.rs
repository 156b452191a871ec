//! The per-connection loop, shared by every transport: handshake, request dispatch, ordered
//! outbound queue, backpressure and graceful close.
//!
//! Each connection has a reader (this loop), a writer task draining a bounded outbound queue,
//! and one task per in-flight request. The queue is the only path to the peer: responses and
//! notifications keep their order. When the queue is full the peer is too slow; the
//! connection is closed at once rather than buffering without bound or slowing the sender.
//!
//! Architecture invariant: nothing a peer sends can end the daemon. Malformed input gets an
//! error response; a panicking handler gets an `internal` error response; only the transport
//! failing, the peer leaving, an oversized message or shutdown ends the connection.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt as _, Sink, SinkExt as _, Stream, StreamExt as _};
use pi_protocol::jsonrpc::ErrorResponse;
use pi_protocol::v1::{
    self, CloseReason, ConnectionClosing, ConnectionClosingParams, InitializeResponse,
};
use pi_protocol::{
    ErrorKind, ErrorObject, IncomingMessage, Method as _, NotificationMethod, RequestId, Response,
};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::rpc::codec::FrameError;
use crate::rpc::dispatch::{self, RequestContext};
use crate::state::DaemonState;

/// Complete incoming messages from a transport.
pub type FrameStream = Pin<Box<dyn Stream<Item = Result<Bytes, FrameError>> + Send>>;
/// Outgoing messages to a transport, one JSON text each.
pub type FrameSink = Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;

/// Which transport carries a connection (for logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// The Unix socket.
    Unix,
    /// The loopback WebSocket.
    WebSocket,
}

/// How long in-flight requests may run after the connection stops reading, so their
/// responses still go out during a graceful close.
const IN_FLIGHT_GRACE: Duration = Duration::from_millis(1000);
/// How long the writer may spend flushing the queue during a graceful close.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(1000);

/// What request handlers (and later, session subscriptions) hold to reach their peer.
#[derive(Clone, Debug)]
pub struct ConnectionHandle {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    id: String,
    transport: TransportKind,
    // Sent to by every producer (responses, notifications); received by the writer task.
    // Dropping all senders lets the writer finish. Bounded in messages by its capacity and in
    // bytes by `queued_bytes`: exceeding either means a slow peer.
    outbound: mpsc::Sender<String>,
    // Bytes in `outbound` not yet written; added by `enqueue`, subtracted by the writer.
    queued_bytes: Arc<AtomicUsize>,
    // The byte budget of the queue.
    max_queued_bytes: usize,
    // Cancelled when the connection must end now: the peer is too slow or the transport
    // failed. The writer stops without draining; the reader stops reading.
    kill: CancellationToken,
    // Set once, by `initialize`: notification methods the peer opted out of.
    opt_out: OnceLock<Vec<String>>,
    // Set once, by `initialize`: the peer's `clientInfo.name`.
    client_name: OnceLock<String>,
    // Why the daemon closed the connection, if it did. A sync mutex, never held across await.
    close_reason: Mutex<Option<CloseReason>>,
}

impl ConnectionHandle {
    fn new(
        id: String,
        transport: TransportKind,
        outbound: mpsc::Sender<String>,
        max_queued_bytes: usize,
    ) -> Self {
        ConnectionHandle {
            shared: Arc::new(Shared {
                id,
                transport,
                outbound,
                queued_bytes: Arc::new(AtomicUsize::new(0)),
                max_queued_bytes,
                kill: CancellationToken::new(),
                opt_out: OnceLock::new(),
                client_name: OnceLock::new(),
                close_reason: Mutex::new(None),
            }),
        }
    }

    /// The connection's id, as in logs.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The transport carrying it.
    pub fn transport(&self) -> TransportKind {
        self.shared.transport
    }

    /// Whether the connection has ended (or been condemned).
    pub fn is_closed(&self) -> bool {
        self.shared.kill.is_cancelled() || self.shared.outbound.is_closed()
    }

    /// Completes when the connection has ended (or been condemned).
    pub async fn closed(&self) {
        tokio::select! {
            _ = self.shared.kill.cancelled() => {}
            _ = self.shared.outbound.closed() => {}
        }
    }

    /// The peer's `clientInfo.name` (empty before `initialize`).
    pub fn client_name(&self) -> &str {
        self.shared
            .client_name
            .get()
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// Queues a notification unless the peer opted out of it. Fails when the connection is
    /// gone; a full queue closes the connection as a slow consumer.
    pub fn notify<N: NotificationMethod>(&self, params: &N::Params) -> Result<(), Closed> {
        if self
            .shared
            .opt_out
            .get()
            .is_some_and(|names| names.iter().any(|name| name == N::NAME))
        {
            return Ok(());
        }
        let params = serde_json::to_value(params).map_err(|_| Closed)?;
        let notification = pi_protocol::Notification::new(N::NAME, Some(params));
        self.enqueue(serde_json::to_string(&notification).map_err(|_| Closed)?)
    }

    /// Queues an already serialized notification named `method`, unless the peer opted out of
    /// it. Lets a broadcaster serialize once for every subscriber.
    pub fn send_notification_text(&self, method: &str, text: String) -> Result<(), Closed> {
        if self
            .shared
            .opt_out
            .get()
            .is_some_and(|names| names.iter().any(|name| name == method))
        {
            return Ok(());
        }
        self.enqueue(text)
    }

    fn send_outcome(&self, id: Option<RequestId>, outcome: Result<Value, ErrorObject>) {
        let text = match (id, outcome) {
            (Some(id), Ok(result)) => serde_json::to_string(&Response::new(id, result)),
            (id, Err(error)) => serde_json::to_string(&ErrorResponse::new(id, error)),
            (None, Ok(_)) => return,
        };
        match text {
            Ok(text) => {
                let _ = self.enqueue(text);
            }
            Err(error) => tracing::error!(%error, "cannot serialize a response"),
        }
    }

    fn enqueue(&self, text: String) -> Result<(), Closed> {
        let length = text.len();
        let queued = self
            .shared
            .queued_bytes
            .fetch_add(length, Ordering::Relaxed)
            + length;
        if queued > self.shared.max_queued_bytes && queued > length {
            self.shared
                .queued_bytes
                .fetch_sub(length, Ordering::Relaxed);
            tracing::warn!(
                connection = %self.shared.id,
                queued_bytes = queued,
                "outbound queue over its byte budget; closing the connection as a slow consumer"
            );
            self.close_now(CloseReason::SlowConsumer);
            return Err(Closed);
        }
        match self.shared.outbound.try_send(text) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.shared
                    .queued_bytes
                    .fetch_sub(length, Ordering::Relaxed);
                tracing::warn!(
                    connection = %self.shared.id,
                    "outbound queue full; closing the connection as a slow consumer"
                );
                self.close_now(CloseReason::SlowConsumer);
                Err(Closed)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.shared
                    .queued_bytes
                    .fetch_sub(length, Ordering::Relaxed);
                Err(Closed)
            }
        }
    }

    fn close_now(&self, reason: CloseReason) {
        if let Ok(mut slot) = self.shared.close_reason.lock() {
            slot.get_or_insert(reason);
        }
        self.shared.kill.cancel();
    }
}

/// The connection is gone; nothing more can be sent on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the connection is closed")]
pub struct Closed;

/// Serves one connection until the peer leaves, the transport fails, the peer is too slow,
/// or the daemon shuts down.
pub async fn serve(
    state: Arc<DaemonState>,
    transport: TransportKind,
    incoming: FrameStream,
    sink: FrameSink,
) {
    let guard = state.open_connection();
    let span = tracing::info_span!("connection", id = %guard.id, transport = ?transport);
    async move {
        tracing::debug!("opened");
        let (outbound, outbound_rx) = mpsc::channel(state.config.limits.outbound_queue);
        let max_bytes = state.config.limits.outbound_queue_bytes;
        let handle = ConnectionHandle::new(guard.id.clone(), transport, outbound, max_bytes);
        let drain = CancellationToken::new();
        let queued_bytes = handle.shared.queued_bytes.clone();
        let kill = handle.shared.kill.clone();
        let writer = tokio::spawn(
            write_loop(outbound_rx, sink, kill, drain.clone(), queued_bytes).in_current_span(),
        );
        let reason = read_loop(&state, &handle, incoming).await;
        // Uncount before the transport closes, so a peer that saw the close also sees the
        // connection gone from `daemon/status`.
        let connection_id = guard.id.clone();
        drop(guard);
        if let Some(reason) = reason {
            let message = match reason {
                CloseReason::Shutdown => "the daemon is shutting down",
                CloseReason::MessageTooLarge => "the client sent a message over the size limit",
                CloseReason::SlowConsumer => "the client read too slowly",
            };
            let _ = handle.notify::<ConnectionClosing>(&ConnectionClosingParams {
                reason,
                message: message.to_owned(),
            });
        }
        drain.cancel();
        let _ = writer.await;
        let reason = handle
            .shared
            .close_reason
            .lock()
            .ok()
            .and_then(|slot| *slot)
            .or(reason);
        tracing::debug!(connection = connection_id, ?reason, "closed");
    }
    .instrument(span)
    .await;
}

async fn read_loop(
    state: &Arc<DaemonState>,
    handle: &ConnectionHandle,
    mut incoming: FrameStream,
) -> Option<CloseReason> {
    let mut in_flight = JoinSet::new();
    let permits = Arc::new(Semaphore::new(state.config.limits.max_in_flight));
    let mut initialized = false;
    let reason = loop {
        while in_flight.try_join_next().is_some() {}
        let next = tokio::select! {
            _ = state.shutdown.cancelled() => break Some(CloseReason::Shutdown),
            _ = handle.shared.kill.cancelled() => break None,
            next = incoming.next() => next,
        };
        let bytes = match next {
            None => break None,
            Some(Ok(bytes)) => bytes,
            Some(Err(FrameError::TooLarge { limit })) => {
                tracing::warn!(limit, "message over the size limit; closing");
                let error = ErrorObject::new(
                    ErrorKind::MessageTooLarge,
                    format!(
                        "message exceeds the {limit}-byte limit, so the connection is closed; \
                         send smaller messages or raise `limits.max_message_bytes` in config.toml"
                    ),
                );
                handle.send_outcome(None, Err(error));
                break Some(CloseReason::MessageTooLarge);
            }
            Some(Err(FrameError::Io(error))) => {
                tracing::debug!(%error, "transport failed");
                break None;
            }
        };
        let request = match IncomingMessage::parse(&bytes) {
            Ok(IncomingMessage::Request(request)) => request,
            Ok(IncomingMessage::Notification(notification)) => {
                tracing::debug!(
                    method = notification.method,
                    "ignoring a client notification"
                );
                continue;
            }
            Ok(IncomingMessage::Response { id, .. }) => {
                tracing::debug!(?id, "ignoring a response to no pending request");
                continue;
            }
            Err(error) => {
                tracing::debug!(message = error.error.message, "bad message");
                handle.send_outcome(error.id, Err(error.error));
                continue;
            }
        };
        if request.method == v1::Initialize::NAME {
            let outcome = if initialized {
                Err(ErrorObject::new(
                    ErrorKind::AlreadyInitialized,
                    "this connection is already initialized; send `initialize` once per connection",
                ))
            } else {
                initialize(handle, request.params)
            };
            initialized |= outcome.is_ok();
            handle.send_outcome(Some(request.id), outcome);
            continue;
        }
        if !initialized {
            let error = ErrorObject::new(
                ErrorKind::NotInitialized,
                format!(
                    "`{}` was sent before `initialize`; send `initialize` first, with \
                     protocolVersion {}",
                    request.method,
                    pi_protocol::PROTOCOL_VERSION
                ),
            );
            handle.send_outcome(Some(request.id), Err(error));
            continue;
        }
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break None,
            },
            _ = state.shutdown.cancelled() => break Some(CloseReason::Shutdown),
        };
        let context = RequestContext {
            state: state.clone(),
            connection: handle.clone(),
        };
        in_flight.spawn(
            async move {
                let method = request.method;
                let outcome = AssertUnwindSafe(dispatch::dispatch(
                    &context,
                    &method,
                    request.params,
                ))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    tracing::error!(method, "request handler panicked");
                    Err(ErrorObject::new(
                        ErrorKind::Internal,
                        format!(
                            "internal error while handling `{method}`; the daemon log has details"
                        ),
                    ))
                });
                context.connection.send_outcome(Some(request.id), outcome);
                drop(permit);
            }
            .in_current_span(),
        );
    };
    // Let running requests answer before the connection closes, within a bound.
    let _ = tokio::time::timeout(IN_FLIGHT_GRACE, async {
        while in_flight.join_next().await.is_some() {}
    })
    .await;
    in_flight.abort_all();
    reason
}

fn initialize(handle: &ConnectionHandle, params: Option<Value>) -> Result<Value, ErrorObject> {
    let params = dispatch::parse_params::<v1::Initialize>(params)?;
    if params.protocol_version != pi_protocol::PROTOCOL_VERSION {
        return Err(ErrorObject::new(
            ErrorKind::ProtocolMismatch,
            format!(
                "protocol version mismatch: the client speaks protocol {client} but this daemon \
                 (pid {version}) speaks protocol {daemon}; if the daemon is the older one, \
                 restart it with `pictl daemon restart`, otherwise upgrade the client",
                client = params.protocol_version,
                version = env!("CARGO_PKG_VERSION"),
                daemon = pi_protocol::PROTOCOL_VERSION,
            ),
        )
        .with_details(serde_json::json!({
            "daemonProtocolVersion": pi_protocol::PROTOCOL_VERSION,
            "daemonVersion": env!("CARGO_PKG_VERSION"),
            "clientProtocolVersion": params.protocol_version,
        })));
    }
    tracing::info!(
        client = params.client_info.name,
        client_version = params.client_info.version,
        "initialized"
    );
    let _ = handle
        .shared
        .opt_out
        .set(params.capabilities.opt_out_notifications);
    let _ = handle
        .shared
        .client_name
        .set(params.client_info.name.clone());
    let response = InitializeResponse {
        protocol_version: pi_protocol::PROTOCOL_VERSION,
        daemon_version: env!("CARGO_PKG_VERSION").to_owned(),
        connection_id: handle.id().to_owned(),
        capabilities: v1::DaemonCapabilities {
            methods: v1::METHODS
                .iter()
                .map(|method| method.name.to_owned())
                .collect(),
            notifications: v1::NOTIFICATIONS
                .iter()
                .map(|n| n.name.to_owned())
                .collect(),
        },
    };
    serde_json::to_value(response)
        .map_err(|error| ErrorObject::new(ErrorKind::Internal, error.to_string()))
}

async fn write_loop(
    mut queue: mpsc::Receiver<String>,
    mut sink: FrameSink,
    kill: CancellationToken,
    drain: CancellationToken,
    queued_bytes: Arc<AtomicUsize>,
) {
    loop {
        let frame = tokio::select! {
            biased;
            _ = kill.cancelled() => break,
            _ = drain.cancelled() => {
                // Everything queued before the drain signal is still in the channel.
                let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
                    while let Ok(frame) = queue.try_recv() {
                        if sink.send(frame).await.is_err() {
                            break;
                        }
                    }
                })
                .await;
                break;
            }
            frame = queue.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
        };
        queued_bytes.fetch_sub(frame.len(), Ordering::Relaxed);
        let sent = tokio::select! {
            _ = kill.cancelled() => break,
            sent = sink.send(frame) => sent,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "write failed");
            kill.cancel();
            break;
        }
    }
    let _ = tokio::time::timeout(Duration::from_millis(200), sink.close()).await;
}
