//! One connection to the daemon: handshake, typed calls, the notification stream.
//!
//! A reader task routes responses to their waiting callers and notifications to the
//! [`Notifications`] stream; a writer task owns the transport's write half. Requests from the
//! daemon are answered with `method_not_found` until the client library grows handlers.

use std::collections::HashMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Sink, SinkExt as _, Stream, StreamExt as _, future};
use pi_protocol::jsonrpc::ErrorResponse;
use pi_protocol::v1::{self, ClientCapabilities, ClientInfo, InitializeParams, InitializeResponse};
use pi_protocol::{
    ErrorKind, ErrorObject, IncomingMessage, Method, Notification, NotificationMethod, Request,
    RequestId,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite;
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec};

use crate::error::ClientError;

/// Largest message the client accepts from the daemon (history pages can be big).
const MAX_INCOMING_BYTES: usize = 256 * 1024 * 1024;
/// Notifications buffered for a consumer before the reader waits for it.
const NOTIFICATION_BUFFER: usize = 1024;
/// How long `connect` keeps trying a daemon that refuses new connections as `overloaded`.
const OVERLOADED_RETRY_FOR: Duration = Duration::from_secs(20);
/// The first wait before trying again; it doubles up to [`OVERLOADED_MAX_DELAY`].
const OVERLOADED_FIRST_DELAY: Duration = Duration::from_millis(20);
const OVERLOADED_MAX_DELAY: Duration = Duration::from_millis(640);

/// Where the daemon listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The Unix socket at this path.
    Unix(PathBuf),
    /// The WebSocket at this URL, with the token from `ws.token`.
    WebSocket {
        /// `ws://127.0.0.1:PORT/`.
        url: String,
        /// The token; `None` sends no credentials (the daemon will refuse).
        token: Option<String>,
    },
}

/// An initialized connection; cheap to clone, every clone shares the connection.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
    initialize: Arc<InitializeResponse>,
}

// Dropping the last `Client` clone drops `Inner`, hence `outgoing`: the writer then closes the
// transport, the daemon closes its side, and the reader ends. The reader holds only a `Weak`.
#[derive(Debug)]
struct Inner {
    // Received by the writer task, which owns the transport's write half.
    outgoing: mpsc::Sender<String>,
    pending: Arc<PendingMap>,
    next_id: AtomicI64,
    // `Some(reason)` once the connection has ended.
    closed: watch::Receiver<Option<Option<String>>>,
}

// Callers waiting for a response, by request id. A sync mutex, never held across await; the
// reader removes entries as responses arrive and clears them all when the stream ends.
type PendingMap = Mutex<HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>>;

/// Notifications from the daemon, in arrival order. Drain it or drop it: while it is held
/// and full, the reader waits, and responses wait behind it.
#[derive(Debug)]
pub struct Notifications {
    receiver: mpsc::Receiver<Notification>,
}

impl Notifications {
    /// The next notification, or `None` once the connection has ended.
    pub async fn next(&mut self) -> Option<Notification> {
        self.receiver.recv().await
    }

    /// The next notification of type `N`, decoded, skipping others; `None` at end.
    pub async fn next_of<N: NotificationMethod>(
        &mut self,
    ) -> Option<Result<N::Params, ClientError>> {
        loop {
            let notification = self.next().await?;
            if notification.method == N::NAME {
                let params = notification.params.unwrap_or(Value::Null);
                return Some(
                    serde_json::from_value(params).map_err(|error| ClientError::Decode {
                        method: N::NAME,
                        message: error.to_string(),
                    }),
                );
            }
        }
    }
}

type LineStream = Pin<Box<dyn Stream<Item = Result<String, std::io::Error>> + Send>>;
type LineSink = Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;

impl Client {
    /// Connects to `endpoint` and performs the `initialize` handshake.
    pub async fn connect(
        endpoint: &Endpoint,
        client_info: ClientInfo,
        capabilities: ClientCapabilities,
    ) -> Result<(Client, Notifications), ClientError> {
        // A daemon with too many connections still initializing refuses new ones at once
        // (`overloaded`); they are tried again, a little later each time, for a while.
        let deadline = tokio::time::Instant::now() + OVERLOADED_RETRY_FOR;
        let mut delay = OVERLOADED_FIRST_DELAY;
        loop {
            let (incoming, outgoing) = match endpoint {
                Endpoint::Unix(path) => connect_unix(path).await?,
                Endpoint::WebSocket { url, token } => {
                    connect_websocket(url, token.as_deref()).await?
                }
            };
            match Client::handshake(
                incoming,
                outgoing,
                client_info.clone(),
                capabilities.clone(),
            )
            .await
            {
                Err(ClientError::Rpc(error))
                    if error.kind() == Some(ErrorKind::Overloaded)
                        && tokio::time::Instant::now() + delay < deadline =>
                {
                    // Spread the retries of clients refused together.
                    let spread = u64::from(std::process::id() % 16) * delay.as_millis() as u64 / 16;
                    tokio::time::sleep(delay + Duration::from_millis(spread)).await;
                    delay = (delay * 2).min(OVERLOADED_MAX_DELAY);
                }
                outcome => return outcome,
            }
        }
    }

    async fn handshake(
        incoming: LineStream,
        outgoing: LineSink,
        client_info: ClientInfo,
        capabilities: ClientCapabilities,
    ) -> Result<(Client, Notifications), ClientError> {
        let (outgoing_tx, outgoing_rx) = mpsc::channel(256);
        let (notifications_tx, notifications_rx) = mpsc::channel(NOTIFICATION_BUFFER);
        let (closed_tx, closed_rx) = watch::channel(None);
        let pending = Arc::new(Mutex::new(HashMap::new()));
        let inner = Arc::new(Inner {
            outgoing: outgoing_tx,
            pending: pending.clone(),
            next_id: AtomicI64::new(1),
            closed: closed_rx,
        });
        tokio::spawn(write_loop(outgoing_rx, outgoing));
        tokio::spawn(read_loop(
            incoming,
            Arc::downgrade(&inner),
            pending,
            notifications_tx,
            closed_tx,
        ));

        let params = InitializeParams {
            protocol_version: pi_protocol::PROTOCOL_VERSION,
            client_info,
            capabilities,
        };
        let params = serde_json::to_value(params).map_err(|error| ClientError::Decode {
            method: v1::Initialize::NAME,
            message: error.to_string(),
        })?;
        let result = match inner.request(v1::Initialize::NAME, params).await {
            Ok(result) => result,
            Err(ClientError::Rpc(error)) if error.kind() == Some(ErrorKind::ProtocolMismatch) => {
                let details = error
                    .data
                    .as_ref()
                    .and_then(|data| data.details.clone())
                    .unwrap_or(Value::Null);
                return Err(ClientError::ProtocolMismatch {
                    client: pi_protocol::PROTOCOL_VERSION,
                    daemon: details["daemonProtocolVersion"].as_u64().unwrap_or(0) as u32,
                    daemon_version: details["daemonVersion"]
                        .as_str()
                        .unwrap_or("unknown")
                        .to_owned(),
                });
            }
            Err(error) => return Err(error),
        };
        let initialize: InitializeResponse =
            serde_json::from_value(result).map_err(|error| ClientError::Decode {
                method: v1::Initialize::NAME,
                message: error.to_string(),
            })?;
        let client = Client {
            inner,
            initialize: Arc::new(initialize),
        };
        Ok((
            client,
            Notifications {
                receiver: notifications_rx,
            },
        ))
    }

    /// What the daemon said at `initialize`.
    pub fn initialize_response(&self) -> &InitializeResponse {
        &self.initialize
    }

    /// Calls a method with typed params and response.
    pub async fn call<M: Method>(&self, params: &M::Params) -> Result<M::Response, ClientError> {
        let params = serde_json::to_value(params).map_err(|error| ClientError::Decode {
            method: M::NAME,
            message: error.to_string(),
        })?;
        let result = self.inner.request(M::NAME, params).await?;
        serde_json::from_value(result).map_err(|error| ClientError::Decode {
            method: M::NAME,
            message: error.to_string(),
        })
    }

    /// Supplies, from this process's environment, the secret variables `session` lacks since
    /// the daemon loaded it again (`missingEnv`; the daemon never stores them). Returns the
    /// names supplied; an error only when the call fails.
    pub async fn supply_missing_env(
        &self,
        session: &pi_protocol::v1::SessionInfo,
    ) -> Result<Vec<String>, ClientError> {
        let env: std::collections::BTreeMap<String, String> = session
            .missing_env
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
            .collect();
        if env.is_empty() {
            return Ok(Vec::new());
        }
        let response = self
            .call::<pi_protocol::v1::SessionSetEnv>(&pi_protocol::v1::SessionSetEnvParams {
                session_id: session.id.clone(),
                env,
            })
            .await?;
        Ok(response.accepted)
    }

    /// Calls a method by name with raw JSON params (for bridges and tests).
    pub async fn call_raw(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.inner.request(method, params).await
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.borrow().is_some()
    }

    /// Closes the connection and waits until the daemon has closed its side. Other clones of
    /// this client keep the connection open; close them too.
    pub async fn close(self) {
        let mut closed = self.inner.closed.clone();
        drop(self);
        let _ = closed.wait_for(Option::is_some).await;
    }

    /// Waits until the connection ends; returns the daemon's reason when it gave one.
    pub async fn closed(&self) -> Option<String> {
        let mut closed = self.inner.closed.clone();
        match closed.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().flatten(),
            Err(_) => None,
        }
    }
}

impl Inner {
    async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            pending.insert(id, tx);
        }
        let request = Request::new(RequestId::Integer(id), method, Some(params));
        let text = serde_json::to_string(&request).map_err(|error| ClientError::Decode {
            method: "request",
            message: error.to_string(),
        })?;
        if self.outgoing.send(text).await.is_err() {
            {
                let mut pending = self
                    .pending
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                pending.remove(&id);
            }
            return Err(self.disconnected());
        }
        match rx.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(ClientError::Rpc(error)),
            Err(_) => Err(self.disconnected()),
        }
    }

    fn disconnected(&self) -> ClientError {
        ClientError::Disconnected {
            reason: self.closed.borrow().clone().flatten(),
        }
    }
}

async fn read_loop(
    mut incoming: LineStream,
    inner: std::sync::Weak<Inner>,
    pending: Arc<PendingMap>,
    notifications: mpsc::Sender<Notification>,
    closed: watch::Sender<Option<Option<String>>>,
) {
    let mut reason = None;
    while let Some(line) = incoming.next().await {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                tracing::debug!(%error, "connection to the daemon failed");
                break;
            }
        };
        match IncomingMessage::parse(line.as_bytes()) {
            Ok(IncomingMessage::Response { id, outcome }) => {
                let waiter = match id {
                    Some(RequestId::Integer(id)) => pending
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&id),
                    _ => None,
                };
                match waiter {
                    Some(waiter) => {
                        let _ = waiter.send(outcome);
                    }
                    // An error without an id is about the connection itself (oversized
                    // message, refused peer, too many connections): it is the reason, and
                    // the answer to whatever still waits.
                    None => {
                        if let Err(error) = outcome {
                            reason = Some(error.message.clone());
                            let waiting: Vec<_> = pending
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .drain()
                                .collect();
                            for (_, waiter) in waiting {
                                let _ = waiter.send(Err(error.clone()));
                            }
                        }
                    }
                }
            }
            Ok(IncomingMessage::Notification(notification)) => {
                if notification.method == v1::ConnectionClosing::NAME {
                    reason = notification
                        .params
                        .as_ref()
                        .and_then(|p| p["message"].as_str())
                        .map(str::to_owned);
                }
                if !notifications.is_closed() {
                    let _ = notifications.send(notification).await;
                }
            }
            Ok(IncomingMessage::Request(request)) => {
                let error = ErrorObject::new(
                    ErrorKind::MethodNotFound,
                    format!("this client does not handle `{}`", request.method),
                );
                let outgoing = inner.upgrade().map(|inner| inner.outgoing.clone());
                if let (Some(outgoing), Ok(text)) = (
                    outgoing,
                    serde_json::to_string(&ErrorResponse::new(Some(request.id), error)),
                ) {
                    let _ = outgoing.send(text).await;
                }
            }
            Err(error) => tracing::warn!(
                message = error.error.message,
                "unreadable message from the daemon"
            ),
        }
    }
    let _ = closed.send(Some(reason));
    {
        let mut pending = pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.clear();
    }
}

async fn write_loop(mut outgoing: mpsc::Receiver<String>, mut sink: LineSink) {
    while let Some(text) = outgoing.recv().await {
        if sink.send(text).await.is_err() {
            // A sink that failed must not be polled again (it may panic): the connection is
            // gone, nothing is left to flush.
            return;
        }
    }
    let _ = sink.close().await;
}

async fn connect_unix(path: &std::path::Path) -> Result<(LineStream, LineSink), ClientError> {
    if let Some(dir) = path.parent() {
        pi_paths::trust::check_owned_dir(dir)?;
    }
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .map_err(|source| ClientError::Unreachable {
            socket: path.to_path_buf(),
            source,
        })?;
    // Only this user's daemon hears anything: the environment and keys go in the first
    // requests.
    let own_uid = rustix::process::geteuid().as_raw();
    let uid = stream
        .peer_cred()
        .map_err(|error| {
            ClientError::io(format!("cannot tell who serves {}", path.display()), error)
        })?
        .uid();
    if uid != own_uid {
        return Err(ClientError::NotYourDaemon {
            socket: path.to_path_buf(),
            uid,
            own_uid,
        });
    }
    let (read, write) = stream.into_split();
    let incoming = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_INCOMING_BYTES))
        .map(|line| line.map_err(std::io::Error::other));
    let outgoing = futures_util::SinkExt::<String>::sink_map_err(
        FramedWrite::new(write, LinesCodec::new()),
        std::io::Error::other,
    );
    Ok((Box::pin(incoming), Box::pin(outgoing)))
}

async fn connect_websocket(
    url: &str,
    token: Option<&str>,
) -> Result<(LineStream, LineSink), ClientError> {
    use tungstenite::client::IntoClientRequest as _;
    let websocket_error = |message: String| ClientError::WebSocket {
        url: url.to_owned(),
        message,
    };
    let mut request = url
        .into_client_request()
        .map_err(|error| websocket_error(error.to_string()))?;
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| websocket_error("the token is not a valid header value".to_owned()))?;
        request.headers_mut().insert("authorization", value);
    }
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_INCOMING_BYTES))
        .max_frame_size(Some(MAX_INCOMING_BYTES));
    let (socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(config), false)
        .await
        .map_err(|error| match error {
            tungstenite::Error::Http(response) => {
                let body = response
                    .body()
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                websocket_error(format!(
                    "the daemon refused the upgrade with {}: {}",
                    response.status(),
                    body.trim()
                ))
            }
            other => websocket_error(other.to_string()),
        })?;
    let (sink, stream) = socket.split();
    let incoming = stream.filter_map(|message| {
        future::ready(match message {
            Ok(tungstenite::Message::Text(text)) => Some(Ok(text.as_str().to_owned())),
            Ok(tungstenite::Message::Binary(bytes)) => {
                Some(Ok(String::from_utf8_lossy(&bytes).into_owned()))
            }
            Ok(tungstenite::Message::Close(_)) => Some(Err(std::io::Error::other("closed"))),
            Ok(_) => None,
            Err(error) => Some(Err(std::io::Error::other(error))),
        })
    });
    let outgoing = sink
        .with(|text: String| {
            future::ready(Ok::<_, tungstenite::Error>(tungstenite::Message::Text(
                text.into(),
            )))
        })
        .sink_map_err(std::io::Error::other);
    Ok((Box::pin(incoming), Box::pin(outgoing)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_the_daemon_closed_ends_the_writer_without_a_panic() {
        // The daemon refused the connection (overloaded) and closed it before the client's
        // first message: the write fails, and the failed sink must not be polled again.
        let (ours, theirs) = tokio::net::UnixStream::pair().unwrap();
        drop(theirs);
        let (_read, write) = ours.into_split();
        let sink: LineSink = Box::pin(futures_util::SinkExt::<String>::sink_map_err(
            FramedWrite::new(write, LinesCodec::new()),
            std::io::Error::other,
        ));
        let (outgoing, queue) = mpsc::channel(4);
        outgoing
            .send("{\"method\":\"initialize\"}".to_owned())
            .await
            .unwrap();
        outgoing
            .send("{\"method\":\"daemon/status\"}".to_owned())
            .await
            .unwrap();
        drop(outgoing);
        tokio::spawn(write_loop(queue, sink))
            .await
            .expect("the writer ends without a panic");
    }
}
