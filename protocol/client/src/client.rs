//! One connection to the daemon: handshake, typed calls, the notification stream.
//!
//! The connection is a `pi-jsonrpc` [`Peer`] over the socket's lines or the WebSocket's text
//! messages. Its handler puts notifications on the bounded [`Notifications`] stream and holds
//! the reader back while the stream is full (so a slow consumer is slow for the daemon too,
//! and its slow-consumer rule applies); it keeps why the daemon ended the connection (an error
//! without an id, `connection/closing`). Requests from the daemon are answered with
//! `method_not_found` until the client library grows handlers.

mod link;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _, future};
use pi_jsonrpc::{
    CallError, Framing, Held, OutboundLimits, Peer, PeerConfig, RemoteError, Transport,
};
use pi_protocol::v1::{self, ClientCapabilities, ClientInfo, InitializeParams, InitializeResponse};
use pi_protocol::{ErrorKind, ErrorObject, Method, Notification, NotificationMethod};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite;

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

/// The daemon, as a JSON-RPC peer: messages up to [`MAX_INCOMING_BYTES`]; what the client
/// sends (prompts with images) may wait up to 64 MiB and 2 minutes a message to be read.
const DAEMON: PeerConfig = PeerConfig {
    max_message: MAX_INCOMING_BYTES,
    outbound: OutboundLimits {
        write_timeout: Duration::from_secs(120),
        queued_bytes: 64 * 1024 * 1024,
    },
    cancel_notification: None,
    answer_malformed: false,
    name: "daemon",
};

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
    /// A daemon on another machine, through `ssh` and the far side's `pictl bridge`.
    Remote(crate::remote::Remote),
}

/// An initialized connection; cheap to clone, every clone shares the connection.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
    initialize: Arc<InitializeResponse>,
}

// Dropping the last `Client` clone drops the peer: its writer then closes the transport, the
// daemon closes its side, and the reader ends.
#[derive(Debug)]
struct Inner {
    peer: Peer,
    ending: Arc<Ending>,
}

/// Why the daemon ended the connection, when it said so.
#[derive(Debug, Default)]
struct Ending {
    // An error without an id (oversized message, refused peer, too many connections): the
    // reason, and the answer to whatever still waited when the connection ended.
    error: Mutex<Option<ErrorObject>>,
    // `connection/closing`'s message.
    closing: Mutex<Option<String>>,
}

impl Ending {
    fn error(&self) -> Option<ErrorObject> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn reason(&self) -> Option<String> {
        self.error().map(|error| error.message).or_else(|| {
            self.closing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
    }
}

/// What the daemon sends on its own, as the peer hands it over.
struct Daemon {
    notifications: mpsc::Sender<Notification>,
    ending: Arc<Ending>,
}

impl pi_jsonrpc::Handler for Daemon {
    fn notification(&self, method: &str, params: Value) -> Option<Held> {
        if method == v1::ConnectionClosing::NAME {
            *self
                .ending
                .closing
                .lock()
                .unwrap_or_else(PoisonError::into_inner) =
                params["message"].as_str().map(str::to_owned);
        }
        if self.notifications.is_closed() {
            return None;
        }
        let params = (!params.is_null()).then_some(params);
        let notification = Notification::new(method, params);
        let notifications = self.notifications.clone();
        // Awaited before the next message is read: a full stream holds the daemon back.
        Some(Box::pin(async move {
            let _ = notifications.send(notification).await;
        }))
    }

    fn request(&self, method: &str, _params: Value) -> pi_jsonrpc::Answer {
        let message = format!("this client does not handle `{method}`");
        Box::pin(async move { Err((ErrorKind::MethodNotFound.code(), message)) })
    }

    fn connection_error(&self, error: RemoteError) {
        *self
            .ending
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(error_object(error));
    }
}

/// The daemon's error object, as `pi-protocol` has it (kind, field, details in `data`).
fn error_object(error: RemoteError) -> ErrorObject {
    let data = error
        .data
        .and_then(|data| serde_json::from_value(data).ok())
        .map(Box::new);
    ErrorObject {
        code: error.code,
        message: error.message,
        data,
    }
}

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
            let transport = match endpoint {
                Endpoint::Unix(path) => connect_unix(path).await?,
                Endpoint::WebSocket { url, token } => {
                    connect_websocket(url, token.as_deref()).await?
                }
                Endpoint::Remote(remote) => {
                    // The shared link when one is up (see `client/link.rs`), else the bridge.
                    let setting = std::env::var("PI_REMOTE_LINK").ok();
                    let link = match pi_paths::Paths::from_env() {
                        Ok(paths) => link::Link::for_remote(remote, &paths, setting.as_deref())?,
                        Err(_) => None,
                    };
                    let mut missed = link::Missed::NoLink;
                    if let Some(link) = &link {
                        match link
                            .connect(remote, client_info.clone(), capabilities.clone())
                            .await?
                        {
                            Ok(connected) => return Ok(connected),
                            Err(why) => missed = why,
                        }
                    }
                    let (transport, said) = connect_remote(remote)?;
                    let handshake =
                        Client::handshake(transport, client_info.clone(), capabilities.clone())
                            .await;
                    // The far side never answered: what ssh (or the far pictl) said is why.
                    return match handshake {
                        Err(ClientError::Disconnected { .. }) => {
                            let said = said.finished().await;
                            if said.contains(crate::remote::NO_FAR_DAEMON) {
                                return Err(ClientError::RemoteNoDaemon {
                                    remote: remote.label(),
                                });
                            }
                            Err(remote_unreachable(remote, said))
                        }
                        Ok((client, notifications)) => {
                            if let Some(link) = &link {
                                link.open(remote, &client, missed).await;
                            }
                            Ok((client, notifications))
                        }
                        handshake => handshake,
                    };
                }
            };
            let handshake =
                Client::handshake(transport, client_info.clone(), capabilities.clone()).await;
            match handshake {
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

    pub(crate) async fn handshake(
        transport: Transport,
        client_info: ClientInfo,
        capabilities: ClientCapabilities,
    ) -> Result<(Client, Notifications), ClientError> {
        let (notifications_tx, notifications_rx) = mpsc::channel(NOTIFICATION_BUFFER);
        let ending = Arc::new(Ending::default());
        let daemon = Daemon {
            notifications: notifications_tx,
            ending: ending.clone(),
        };
        let inner = Arc::new(Inner {
            peer: Peer::start(transport, Arc::new(daemon), DAEMON),
            ending,
        });

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
        self.inner.peer.is_closed()
    }

    /// Closes the connection and waits until the daemon has closed its side. Other clones of
    /// this client keep the connection open; close them too.
    pub async fn close(self) {
        let closed = self.inner.peer.when_closed();
        drop(self);
        closed.await;
    }

    /// Waits until the connection ends; returns the daemon's reason when it gave one.
    pub async fn closed(&self) -> Option<String> {
        self.inner.peer.closed().await;
        self.inner.ending.reason()
    }
}

impl Inner {
    async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        match self.peer.request(method, params, None).await {
            Ok(result) => Ok(result),
            Err(CallError::Remote(error)) => Err(ClientError::Rpc(error_object(error))),
            Err(CallError::Closed) => match self.ending.error() {
                Some(error) => Err(ClientError::Rpc(error)),
                None => Err(ClientError::Disconnected {
                    reason: self.ending.reason(),
                }),
            },
            Err(CallError::Stuck) => Err(ClientError::Disconnected {
                reason: Some("the daemon stopped reading what this client sends".to_owned()),
            }),
            // Requests are sent without a timeout.
            Err(CallError::Timeout(after)) => Err(ClientError::Disconnected {
                reason: Some(format!("no answer within {} s", after.as_secs())),
            }),
        }
    }
}

pub(crate) async fn connect_unix(path: &std::path::Path) -> Result<Transport, ClientError> {
    let stream = connect_socket(path).await?;
    let (read, write) = stream.into_split();
    Ok(Transport::bytes(write, read, Framing::Lines))
}

/// The daemon's Unix socket at `path`, checked: its directory is this user's, and so is the
/// process that serves it (what `pictl bridge` relays).
pub async fn connect_socket(path: &std::path::Path) -> Result<tokio::net::UnixStream, ClientError> {
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
    Ok(stream)
}

/// The error for a remote whose far side never answered, with what ssh said.
fn remote_unreachable(remote: &crate::remote::Remote, said: String) -> ClientError {
    let (program, args) = remote.command();
    ClientError::RemoteUnreachable {
        remote: remote.label(),
        command: format!("{program} {}", args.join(" ")),
        said: said.trim().to_owned(),
    }
}

/// What a process wrote on stderr (its last 4 KiB), read by a task of its own.
struct StderrTail {
    text: Arc<std::sync::Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl StderrTail {
    /// Reads `stderr` until it ends.
    fn read(stderr: tokio::process::ChildStderr) -> StderrTail {
        use tokio::io::AsyncReadExt as _;
        let text = Arc::new(std::sync::Mutex::new(String::new()));
        let kept = text.clone();
        let reader = tokio::spawn(async move {
            let mut stderr = stderr;
            let mut buffer = [0u8; 1024];
            while let Ok(read) = stderr.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                let mut text = kept.lock().unwrap_or_else(PoisonError::into_inner);
                text.push_str(&String::from_utf8_lossy(&buffer[..read]));
                if text.len() > 4096 {
                    let mut cut = text.len() - 4096;
                    while !text.is_char_boundary(cut) {
                        cut += 1;
                    }
                    text.drain(..cut);
                }
            }
        });
        StderrTail { text, reader }
    }

    /// What it said, once the process has closed stderr (waiting a second at most: a process
    /// that keeps it open has said what it will).
    async fn finished(self) -> String {
        let _ = tokio::time::timeout(Duration::from_secs(1), self.reader).await;
        self.text
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Runs ssh to the far `pictl bridge`; its stdin and stdout carry the protocol, its stderr is
/// kept for the error when the far side never answers. ssh runs in a process group of its
/// own: Ctrl+C at the terminal reaches this program (which aborts the far run through the
/// connection), not ssh.
fn connect_remote(remote: &crate::remote::Remote) -> Result<(Transport, StderrTail), ClientError> {
    let (program, args) = remote.command();
    let mut child = tokio::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            remote_unreachable(remote, format!("`{program}` could not be run: {error}"))
        })?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(remote_unreachable(
            remote,
            format!("`{program}` gave no pipes"),
        ));
    };
    let said = StderrTail::read(stderr);
    // Reaped when it ends (its pipes closed: the connection is over); killed if this
    // process drops it first.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok((Transport::bytes(stdin, stdout, Framing::Lines), said))
}

async fn connect_websocket(url: &str, token: Option<&str>) -> Result<Transport, ClientError> {
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
            Ok(tungstenite::Message::Text(text)) => Some(Ok(text.as_bytes().to_vec())),
            Ok(tungstenite::Message::Binary(bytes)) => Some(Ok(bytes.to_vec())),
            Ok(tungstenite::Message::Close(_)) => Some(Err(std::io::Error::other("closed"))),
            Ok(_) => None,
            Err(error) => Some(Err(std::io::Error::other(error))),
        })
    });
    let outgoing = sink
        .with(|body: Vec<u8>| {
            // The peer writes JSON it serialized: always UTF-8.
            future::ready(
                String::from_utf8(body)
                    .map(|text| tungstenite::Message::Text(text.into()))
                    .map_err(|error| tungstenite::Error::Utf8(error.to_string())),
            )
        })
        .sink_map_err(std::io::Error::other);
    Ok(Transport::messages(incoming, outgoing))
}
