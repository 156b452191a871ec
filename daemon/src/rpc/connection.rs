//! The per-connection loop, shared by every transport: handshake, request dispatch, ordered
//! outbound queue, backpressure and graceful close.
//!
//! Each connection has a reader (this loop), a writer task draining a bounded outbound queue,
//! and one task per in-flight request. The queue is a [`ConnectionSink`]: sessions the
//! connection attaches to deliver their events into it (as a [`ConnectionSubscriber`]),
//! responses go into it, and it is the only path to the peer, so responses and notifications
//! keep their order. The writer
//! writes whatever is queued and flushes once per batch. When the queue is full the peer is
//! too slow; the queue is dropped at once rather than buffering without bound or slowing the
//! sender, and the peer gets a `connection/closing {reason: "slow_consumer"}` notice after
//! what its socket already holds.
//!
//! Architecture invariant: nothing a peer sends can end the daemon. Malformed input gets an
//! error response; a panicking handler gets an `internal` error response; only the transport
//! failing, the peer leaving, an oversized message, a missed `initialize` deadline
//! ([`crate::rpc::admission`]) or shutdown ends the connection.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt as _, Sink, SinkExt as _, Stream, StreamExt as _};
use pi_protocol::jsonrpc::ErrorResponse;
use pi_protocol::v1::{
    self, CloseReason, ConnectionClosing, ConnectionClosingParams, InitializeResponse,
};
use pi_protocol::{
    ErrorKind, ErrorObject, IncomingMessage, Method as _, NotificationMethod, RequestId,
};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::frame::{self, Frame};
use crate::outbound::{ConnectionSink, ConnectionSubscriber, Outbound};
use crate::rpc::admission::Pending;
use crate::rpc::codec::FrameError;
use crate::rpc::dispatch::{self, RequestContext};
use crate::session::convert::WireError;
use crate::session::sink::{Closed, SinkLimits, SinkReceiver};
use crate::state::DaemonState;

/// Complete incoming messages from a transport.
pub type FrameStream = Pin<Box<dyn Stream<Item = Result<Bytes, FrameError>> + Send>>;
/// Outgoing messages to a transport, one JSON text each.
pub type FrameSink = Pin<Box<dyn Sink<Frame, Error = std::io::Error> + Send>>;

/// Which transport carries a connection (for logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// The Unix socket.
    Unix,
    /// The loopback WebSocket.
    WebSocket,
}

impl TransportKind {
    /// The name in logs and `daemon/status`.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Unix => "unix",
            TransportKind::WebSocket => "websocket",
        }
    }
}

/// How long in-flight requests may run after the connection stops reading, so their
/// responses still go out during a graceful close.
const IN_FLIGHT_GRACE: Duration = Duration::from_millis(1000);
/// How long the writer may spend flushing the queue during a graceful close.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(1000);
/// How long a peer closed as a slow consumer has to read the `connection/closing` notice
/// (after what the socket already holds) before the daemon hangs up without it.
const SLOW_CONSUMER_NOTICE_TIMEOUT: Duration = Duration::from_secs(30);
/// Frames written before one flush (one syscall for whatever is queued).
const WRITE_BATCH: usize = 256;

/// What request handlers hold to reach their peer: the connection's outbound sink (which
/// sessions subscribe) and its transport.
#[derive(Clone, Debug)]
pub struct ConnectionHandle {
    // The connection's one outbound queue: responses, and the notifications of every session
    // it attached to. Received by the writer task; closing it ends the connection.
    sink: ConnectionSink,
    transport: TransportKind,
}

impl ConnectionHandle {
    /// The connection's id, as in logs.
    pub fn id(&self) -> &str {
        self.sink.id()
    }

    /// The transport carrying it.
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    /// The connection's outbound queue (for daemon-wide notifications).
    pub fn sink(&self) -> &ConnectionSink {
        &self.sink
    }

    /// The connection as a session subscriber.
    pub fn subscriber(&self) -> Arc<ConnectionSubscriber> {
        Arc::new(ConnectionSubscriber(self.sink.clone()))
    }

    /// Whether the connection has ended (or been condemned).
    pub fn is_closed(&self) -> bool {
        self.sink.is_closed()
    }

    /// The peer's `clientInfo.name` (empty before `initialize`).
    pub fn client_name(&self) -> &str {
        self.sink.name()
    }

    /// Queues a notification unless the peer opted out of it. Fails when the connection is
    /// gone; a full queue closes the connection as a slow consumer.
    pub fn notify<N: NotificationMethod>(&self, params: &N::Params) -> Result<(), Closed> {
        if !self.sink.wants(N::NAME) {
            return Ok(());
        }
        let frame = frame::notification(N::NAME, params).map_err(|_| Closed)?;
        self.sink.send(Outbound::Frame(frame))
    }

    fn send_outcome(&self, id: Option<RequestId>, outcome: Result<Value, ErrorObject>) {
        let frame = match (id, outcome) {
            (Some(id), Ok(result)) => frame::response(&id, &result),
            (id, Err(error)) => serde_json::to_vec(&ErrorResponse::new(id, error))
                .map(Frame::from)
                .map_err(|error| WireError::new("error response", error)),
            (None, Ok(_)) => return,
        };
        match frame {
            Ok(frame) => {
                let _ = self.sink.send(Outbound::Frame(frame));
            }
            Err(error) => tracing::error!(%error, "cannot serialize a response"),
        }
    }
}

/// Serves one connection until the peer leaves, the transport fails, the peer is too slow,
/// does not initialize by `pending`'s deadline, or the daemon shuts down.
pub async fn serve(
    state: Arc<DaemonState>,
    transport: TransportKind,
    pending: Pending,
    incoming: FrameStream,
    sink_out: FrameSink,
) {
    let guard = state.open_connection();
    let span = tracing::info_span!("connection", id = %guard.id, transport = ?transport);
    async move {
        tracing::debug!("opened");
        let limits = SinkLimits {
            frames: state.config.limits.outbound_queue,
            bytes: state.config.limits.outbound_queue_bytes,
        };
        let (sink, outbound) = crate::session::sink::channel(guard.id.clone(), limits);
        guard.register(sink.clone(), transport.name());
        let handle = ConnectionHandle { sink, transport };
        let drain = CancellationToken::new();
        let writer = tokio::spawn(write_loop(outbound, sink_out, drain.clone()).in_current_span());
        let reason = read_loop(&state, &handle, pending, incoming).await;
        // Uncount before the transport closes, so a peer that saw the close also sees the
        // connection gone from `daemon/status`.
        let connection_id = guard.id.clone();
        drop(guard);
        if let Some(reason) = reason {
            let _ = handle.notify::<ConnectionClosing>(&ConnectionClosingParams {
                reason,
                message: close_message(reason).to_owned(),
            });
        }
        drain.cancel();
        let _ = writer.await;
        let reason = handle.sink.close_reason().or(reason);
        tracing::debug!(connection = connection_id, ?reason, "closed");
    }
    .instrument(span)
    .await;
}

async fn read_loop(
    state: &Arc<DaemonState>,
    handle: &ConnectionHandle,
    mut pending: Pending,
    mut incoming: FrameStream,
) -> Option<CloseReason> {
    let mut in_flight = JoinSet::new();
    let permits = Arc::new(Semaphore::new(state.config.limits.max_in_flight));
    let reason = loop {
        while in_flight.try_join_next().is_some() {}
        let initialized = pending.is_initialized();
        let next = tokio::select! {
            _ = state.shutdown.cancelled() => break Some(CloseReason::Shutdown),
            () = handle.sink.closed() => break None,
            () = tokio::time::sleep_until(pending.deadline()), if !initialized => {
                let message = pending.timed_out();
                handle.send_outcome(None, Err(ErrorObject::new(ErrorKind::NotInitialized, message)));
                break Some(CloseReason::InitializeTimeout);
            }
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
                    method = %pi_protocol::error::echo(&notification.method),
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
            if outcome.is_ok() {
                pending.initialized();
            }
            handle.send_outcome(Some(request.id), outcome);
            continue;
        }
        if !initialized {
            let error = ErrorObject::new(
                ErrorKind::NotInitialized,
                format!(
                    "`{}` was sent before `initialize`; send `initialize` first, with \
                     protocolVersion {}",
                    pi_protocol::error::echo(&request.method),
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
                    let method = pi_protocol::error::echo(&method);
                    tracing::error!(%method, "request handler panicked");
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
    handle
        .sink
        .set_opt_out(params.capabilities.opt_out_notifications);
    handle.sink.set_name(params.client_info.name.clone());
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

/// Why the daemon closes a connection, in words for the `connection/closing` notice.
fn close_message(reason: CloseReason) -> &'static str {
    match reason {
        CloseReason::Shutdown => "the daemon is shutting down",
        CloseReason::MessageTooLarge => "the client sent a message over the size limit",
        CloseReason::InitializeTimeout => {
            "the client did not complete `initialize` in time after connecting"
        }
        CloseReason::SlowConsumer => {
            "the client read too slowly and its outbound queue overflowed; events after this \
             point were dropped. Reconnect and attach with `afterSeq` to catch up"
        }
    }
}

/// Writes queued frames to the transport, flushing once per batch, until the queue ends, the
/// connection is condemned or the drain signal (graceful close) comes.
async fn write_loop(
    mut queue: SinkReceiver<Outbound>,
    mut transport: FrameSink,
    drain: CancellationToken,
) {
    // Grown by what arrives at once (an idle connection holds none).
    let mut batch: Vec<Outbound> = Vec::new();
    let sink = queue.sink();
    loop {
        let received = tokio::select! {
            biased;
            () = sink.closed() => break,
            () = drain.cancelled() => {
                // Everything queued before the drain signal is still in the queue.
                let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
                    while let Some(item) = queue.try_recv() {
                        if transport.feed(item.bytes().clone()).await.is_err() {
                            return;
                        }
                    }
                    let _ = transport.flush().await;
                })
                .await;
                break;
            }
            received = queue.recv_many(&mut batch, WRITE_BATCH) => received,
        };
        if received == 0 {
            break;
        }
        let written = tokio::select! {
            () = sink.closed() => break,
            written = write_batch(&mut transport, &mut batch) => written,
        };
        if let Err(error) = written {
            tracing::debug!(%error, "write failed");
            sink.abandon();
            break;
        }
    }
    if sink.close_reason() == Some(CloseReason::SlowConsumer) {
        // The queue's backlog is dropped, but the peer still learns why it was cut off once it
        // reads what the socket holds: the notice goes after any partly written frame.
        let notice = frame::notification(
            ConnectionClosing::NAME,
            &ConnectionClosingParams {
                reason: CloseReason::SlowConsumer,
                message: close_message(CloseReason::SlowConsumer).to_owned(),
            },
        );
        if let Ok(notice) = notice {
            let _ =
                tokio::time::timeout(SLOW_CONSUMER_NOTICE_TIMEOUT, transport.send(notice)).await;
        }
    }
    let _ = tokio::time::timeout(Duration::from_millis(200), transport.close()).await;
}

/// Feeds every item of `batch` to the transport, then flushes once.
async fn write_batch(transport: &mut FrameSink, batch: &mut Vec<Outbound>) -> std::io::Result<()> {
    for item in batch.drain(..) {
        transport.feed(item.bytes().clone()).await?;
    }
    transport.flush().await
}
