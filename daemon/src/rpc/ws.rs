//! The WebSocket transport for editor plugins: 127.0.0.1 only, one JSON message per text
//! frame, the same connection loop as the Unix socket.
//!
//! Security, checked at the HTTP upgrade before anything else happens: a request carrying an
//! `Origin` header (every browser page sends one) is refused with 403 unless that exact origin
//! is allow-listed in `config.toml`; a request without the token (`Authorization: Bearer
//! TOKEN` or `?token=TOKEN`) is refused with 401. The token is created at first start in a
//! 0600 file in the runtime directory. `GET /healthz` answers without authentication and
//! reveals nothing.

use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _, future};
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use crate::rpc::codec::FrameError;
use crate::rpc::connection::{self, TransportKind};
use crate::state::DaemonState;

/// A bound listener with the token it requires.
#[derive(Debug)]
pub struct WsListener {
    listener: TcpListener,
    token: Arc<str>,
}

#[derive(Clone)]
struct App {
    state: Arc<DaemonState>,
    token: Arc<str>,
    tracker: TaskTracker,
}

/// Binds 127.0.0.1 on the configured port, writes the port file, loads or creates the token.
pub async fn bind(state: &Arc<DaemonState>) -> anyhow::Result<WsListener> {
    let port = state.config.websocket.port;
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port} (config `websocket.port`)"))?;
    let port = listener
        .local_addr()
        .context("cannot read the WebSocket address")?
        .port();
    let token = load_or_create_token(&state.paths.ws_token_path())?;
    let port_path = state.paths.ws_port_path();
    std::fs::write(&port_path, format!("{port}\n"))
        .with_context(|| format!("cannot write {}", port_path.display()))?;
    state.set_websocket_url(format!("ws://127.0.0.1:{port}/"));
    Ok(WsListener {
        listener,
        token: token.into(),
    })
}

/// Serves HTTP upgrades until shutdown; each WebSocket connection runs on `tracker`.
pub async fn serve(state: Arc<DaemonState>, listener: WsListener, tracker: TaskTracker) {
    let shutdown = state.shutdown.clone();
    let app = App {
        state,
        token: listener.token,
        tracker,
    };
    let router = Router::new()
        .route("/", get(upgrade))
        .route("/rpc", get(upgrade))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(app);
    let served = axum::serve(listener.listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await;
    if let Err(error) = served {
        tracing::error!(%error, "the WebSocket listener failed");
    }
}

async fn upgrade(
    State(app): State<App>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !app
            .state
            .config
            .websocket
            .allowed_origins
            .iter()
            .any(|allowed| allowed == origin)
        {
            tracing::warn!(
                origin,
                "refusing a WebSocket upgrade from a non-allow-listed origin"
            );
            return (
                StatusCode::FORBIDDEN,
                format!(
                    "origin {origin:?} is not allowed; add it to `websocket.allowed_origins` in \
                     config.toml to let it connect\n"
                ),
            )
                .into_response();
        }
    }
    let presented = bearer_token(&headers).or_else(|| query_token(&uri));
    if !presented.is_some_and(|token| constant_time_eq(token.as_bytes(), app.token.as_bytes())) {
        tracing::warn!("refusing a WebSocket upgrade without a valid token");
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a valid token is required: send `Authorization: Bearer TOKEN` or `?token=TOKEN`; \
             the token is in the file `ws.token` in the daemon's runtime directory\n",
        )
            .into_response();
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let limit = app.state.config.limits.max_message_bytes;
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| {
            app.tracker
                .track_future(serve_socket(app.state.clone(), socket))
        })
}

async fn serve_socket(state: Arc<DaemonState>, socket: WebSocket) {
    let limit = state.config.limits.max_message_bytes;
    let (sink, stream) = socket.split();
    let incoming = stream
        .map(move |message| match message {
            Ok(Message::Text(text)) => Some(Some(Ok(Bytes::from(text)))),
            Ok(Message::Binary(bytes)) => Some(Some(Ok(bytes))),
            Ok(Message::Ping(_) | Message::Pong(_)) => Some(None),
            Ok(Message::Close(_)) => None,
            Err(error) => Some(Some(Err(frame_error(error, limit)))),
        })
        .take_while(|item| future::ready(item.is_some()))
        .filter_map(|item| future::ready(item.flatten()));
    let outgoing = sink
        .with(|frame: Bytes| {
            // Frames are serialized JSON, so always UTF-8; a bad one fails the connection.
            future::ready(
                axum::extract::ws::Utf8Bytes::try_from(frame)
                    .map(Message::Text)
                    .map_err(axum::Error::new),
            )
        })
        .sink_map_err(std::io::Error::other);
    connection::serve(
        state,
        TransportKind::WebSocket,
        Box::pin(incoming),
        Box::pin(outgoing),
    )
    .await;
}

fn frame_error(error: axum::Error, limit: usize) -> FrameError {
    let inner = error.into_inner();
    match inner.downcast_ref::<tokio_tungstenite::tungstenite::Error>() {
        Some(tokio_tungstenite::tungstenite::Error::Capacity(_)) => FrameError::TooLarge { limit },
        _ => FrameError::Io(std::io::Error::other(inner)),
    }
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(str::trim)
}

fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads the token file, or creates it (0600) with 32 random bytes as hex.
pub fn load_or_create_token(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => std::fs::remove_file(path)
            .with_context(|| format!("cannot replace the empty {}", path.display()))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| anyhow::anyhow!("cannot generate a token: {error}"))?;
    let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_created_private_and_reused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ws.token");
        let first = load_or_create_token(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(load_or_create_token(&path).unwrap(), first);
    }

    #[test]
    fn tokens_are_read_from_header_or_query() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer_token(&headers), Some("abc"));
        let uri: Uri = "/?x=1&token=def".parse().unwrap();
        assert_eq!(query_token(&uri), Some("def"));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
