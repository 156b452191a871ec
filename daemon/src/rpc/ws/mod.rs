//! The WebSocket transport for editor plugins: 127.0.0.1 only, one JSON message per text
//! frame, the same connection loop as the Unix socket.
//!
//! The listener is hyper's HTTP/1 server on our own accept loop, so every connection is
//! admitted first ([`crate::rpc::admission`]: a cap on the connections that have not
//! initialized yet, and one deadline for the HTTP upgrade and `initialize` together); a
//! connection over the cap gets a 503 written without waiting and is closed at once. Every
//! request passes [`checks`] before anything else happens — a loopback `Host` (DNS rebinding),
//! an allow-listed `Origin` if any, the token — and refusals are logged once per interval with a
//! count. A connection carries one request: every answer but the upgrade closes it. After the
//! upgrade, [`frames`] carries the messages. `GET /healthz` answers without a token and reveals
//! nothing.

pub mod checks;
mod frames;
pub mod web;

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::task::TaskTracker;

use crate::logging::throttle::{LOG_INTERVAL, LogThrottle};
use crate::rpc::admission::{AcceptErrors, Admission, Pending};
use crate::rpc::connection::{self, TransportKind};
use crate::rpc::ws::checks::{Checks, Refusal};
use crate::state::DaemonState;

pub use checks::load_or_create_token;

/// The most a request's head (request line and headers) may take; a WebSocket upgrade needs
/// about a kilobyte.
const MAX_REQUEST_HEAD_BYTES: usize = 64 * 1024;

/// A bound listener with the token it requires.
#[derive(Debug)]
pub struct WsListener {
    listener: TcpListener,
    token: Arc<str>,
}

/// What every HTTP connection of the listener shares.
#[derive(Debug)]
struct Http {
    state: Arc<DaemonState>,
    checks: Checks,
    tracker: TaskTracker,
    refused_log: Arc<LogThrottle>,
    handshake_log: Arc<LogThrottle>,
}

/// Binds 127.0.0.1 on the configured port, writes the port file, loads or creates the token.
pub async fn bind(state: &Arc<DaemonState>) -> anyhow::Result<WsListener> {
    let port = state.config.websocket.port;
    // With no port configured, the port of the daemon before, when it is free: open browser
    // tabs, their cookies and `pictl web --remote` forwards name it.
    let previous = (port == 0)
        .then(|| std::fs::read_to_string(state.paths.ws_port_path()).ok())
        .flatten()
        .and_then(|text| text.trim().parse::<u16>().ok())
        .filter(|port| *port != 0);
    let reused = match previous {
        Some(previous) => TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, previous)))
            .await
            .ok(),
        None => None,
    };
    let listener = match reused {
        Some(listener) => listener,
        None => TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .await
            .with_context(|| {
                format!("cannot listen on 127.0.0.1:{port} (config `websocket.port`)")
            })?,
    };
    let port = listener
        .local_addr()
        .context("cannot read the WebSocket address")?
        .port();
    let token = load_or_create_token(&state.paths.ws_token_path())?;
    let web_key = load_or_create_token(&state.paths.web_key_path())?;
    state.web_auth.set_listener(
        &web_key,
        &state.paths.web_key_path(),
        &state.paths.web_revoked_path(),
        port,
        pi_util::time::now_millis(),
    );
    let port_path = state.paths.ws_port_path();
    std::fs::write(&port_path, format!("{port}\n"))
        .with_context(|| format!("cannot write {}", port_path.display()))?;
    state.set_websocket_url(format!("ws://127.0.0.1:{port}/"));
    Ok(WsListener {
        listener,
        token: token.into(),
    })
}

/// Accepts connections until shutdown; each runs on `tracker`.
pub async fn serve(state: Arc<DaemonState>, listener: WsListener, tracker: TaskTracker) {
    let admission = Admission::new(TransportKind::WebSocket, &state.config.limits);
    let mut accept_errors = AcceptErrors::new(TransportKind::WebSocket);
    let http = Arc::new(Http {
        checks: Checks::new(
            listener.token,
            state.config.websocket.allowed_origins.clone(),
        ),
        state: state.clone(),
        tracker: tracker.clone(),
        refused_log: LogThrottle::new(LOG_INTERVAL, |suppressed| {
            tracing::warn!(suppressed, "refused more WebSocket upgrades");
        }),
        handshake_log: LogThrottle::new(LOG_INTERVAL, |suppressed| {
            tracing::warn!(
                suppressed,
                "closed more HTTP connections that did not finish their upgrade in time"
            );
        }),
    });
    loop {
        let accepted = tokio::select! {
            () = state.shutdown.cancelled() => break,
            accepted = listener.listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                accept_errors.succeeded();
                // Each answer and frame goes out whole at once: without this, Nagle's
                // algorithm holds a small write behind the peer's delayed ACK (40 ms on
                // Linux) — an upgrade, a page, a streamed delta.
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!(%error, "cannot set TCP_NODELAY");
                }
                stream
            }
            Err(error) => {
                accept_errors.failed(&error, &state.shutdown).await;
                continue;
            }
        };
        let Some(pending) = admission.admit() else {
            // One answer, written without waiting (a new socket's buffer has room for it);
            // dropping the stream closes it, so the refusal holds nothing.
            let body = admission.refusal_message();
            let response = format!(
                "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\n\
                 content-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\r\n{body}\n",
                body.len() + 1
            );
            let _ = stream.try_write(response.as_bytes());
            continue;
        };
        tracker.spawn(serve_http(http.clone(), stream, pending));
    }
}

/// Serves one HTTP connection until its request is answered (or upgraded), its deadline
/// passes, or the daemon shuts down.
async fn serve_http(http: Arc<Http>, stream: TcpStream, pending: Pending) {
    let deadline = pending.deadline();
    // Taken by the upgrade, which carries it on to the WebSocket connection.
    let pending = Arc::new(Mutex::new(Some(pending)));
    let service = {
        let http = http.clone();
        hyper::service::service_fn(move |request| {
            let response = http.respond(request, &pending);
            std::future::ready(Ok::<_, Infallible>(response))
        })
    };
    let connection = http1::Builder::new()
        .max_buf_size(MAX_REQUEST_HEAD_BYTES)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::select! {
        served = connection => {
            if let Err(error) = served {
                tracing::debug!(%error, "HTTP connection failed");
            }
        }
        () = tokio::time::sleep_until(deadline) => {
            if http.handshake_log.hit() {
                tracing::warn!(
                    timeout_secs = http.state.config.limits.initialize_timeout_secs,
                    "closing an HTTP connection that did not finish its upgrade in time"
                );
            }
        }
        () = http.state.shutdown.cancelled() => {}
    }
}

impl Http {
    /// Answers one request: refusals, `/healthz`, or the upgrade (which starts the WebSocket
    /// connection once hyper hands the socket over).
    fn respond(
        &self,
        mut request: Request<Incoming>,
        pending: &Mutex<Option<Pending>>,
    ) -> Response<Full<Bytes>> {
        if let Err(refusal) = checks::host(request.headers(), request.uri()) {
            return self.refuse(&refusal);
        }
        let path = request.uri().path();
        let web_page = web::is_web_path(path)
            && !(path == "/" && request.headers().contains_key(header::UPGRADE));
        // The UI's WebSocket: the cookie of its login is accepted there.
        let login = web::login_of(path)
            .filter(|(_, rest)| *rest == "rpc")
            .map(|(login, _)| login);
        if web_page && (request.method() == Method::GET || path != "/") {
            if request.method() != Method::GET {
                let mut response = text(
                    StatusCode::METHOD_NOT_ALLOWED,
                    format!("`{path}` takes GET requests\n"),
                );
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET"));
                return response;
            }
            let host = checks::host_of(request.headers());
            return web::respond(
                path,
                request.uri().query(),
                request.headers(),
                &host,
                &self.state.web_auth,
                pi_util::time::now_millis(),
            );
        }
        match path {
            "/healthz" => return text(StatusCode::OK, "ok\n".to_owned()),
            "/" | "/rpc" => {}
            _ if login.is_some() => {}
            _ => {
                return text(
                    StatusCode::NOT_FOUND,
                    "not found; the WebSocket endpoint is `/`\n".to_owned(),
                );
            }
        }
        if request.method() != Method::GET {
            let mut response = text(
                StatusCode::METHOD_NOT_ALLOWED,
                "the WebSocket endpoint takes GET upgrade requests\n".to_owned(),
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET"));
            return response;
        }
        let web_auth = &self.state.web_auth;
        let now = pi_util::time::now_millis();
        // The login's cookie, when that is what let the connection in (not the token).
        let mut by_cookie = None;
        let accept = match self
            .checks
            .authorize(request.headers(), request.uri(), |cookie| {
                let valid = login.is_some_and(|login| web_auth.cookie_valid(cookie, login, now));
                if valid {
                    by_cookie = login.map(|login| (cookie.to_owned(), login.to_owned()));
                }
                valid
            })
            .and_then(|()| checks::accept_key(request.headers()))
        {
            Ok(accept) => accept,
            Err(refusal) => return self.refuse(&refusal),
        };
        let pending = pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .expect("a connection carries one request (every answer but the upgrade closes it), so the upgrade finds its admission");
        let on_upgrade = hyper::upgrade::on(&mut request);
        self.tracker.spawn(serve_upgraded(
            self.state.clone(),
            on_upgrade,
            pending,
            by_cookie,
        ));
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        response
    }

    /// Answers a refusal; refusals that keep someone out are logged once per interval.
    fn refuse(&self, refusal: &Refusal) -> Response<Full<Bytes>> {
        if refusal.is_denial() {
            if self.refused_log.hit() {
                tracing::warn!(
                    reason = refusal.name(),
                    value = refusal.value().as_deref(),
                    "refusing a WebSocket upgrade"
                );
            }
        } else {
            tracing::debug!(reason = refusal.name(), "refusing a request");
        }
        let mut response = text(refusal.status(), refusal.message());
        for (name, value) in refusal.headers() {
            response
                .headers_mut()
                .insert(name.clone(), HeaderValue::from_static(value));
        }
        response
    }
}

/// A plain-text answer that closes the connection.
fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Serves the WebSocket connection of an upgrade, once hyper has handed over the socket.
/// A connection the web UI's cookie let in (`by_cookie`: the cookie and its login) ends as
/// its login does: logged out, revoked, or expired.
async fn serve_upgraded(
    state: Arc<DaemonState>,
    on_upgrade: OnUpgrade,
    pending: Pending,
    by_cookie: Option<(String, String)>,
) {
    let upgraded = match on_upgrade.await {
        Ok(upgraded) => upgraded,
        Err(error) => {
            tracing::debug!(%error, "the WebSocket upgrade did not complete");
            return;
        }
    };
    // The listener serves hyper `TokioIo<TcpStream>`s, so that is what comes back.
    let Ok(parts) = upgraded.downcast::<TokioIo<TcpStream>>() else {
        tracing::error!("an upgraded WebSocket connection is not a TCP stream");
        return;
    };
    let (read, write) = parts.io.into_inner().into_split();
    let (incoming, outgoing) = frames::split(
        read,
        write,
        parts.read_buf,
        state.config.limits.max_message_bytes,
    );
    let incoming = match by_cookie {
        Some((cookie, login)) => {
            let watched = state.clone();
            // The peer's messages end there, as if it had left: the usual close follows.
            let ended = async move { watched.web_auth.until_invalid(&cookie, &login).await };
            Box::pin(incoming.take_until(ended)) as connection::FrameStream
        }
        None => incoming,
    };
    connection::serve(state, TransportKind::WebSocket, pending, incoming, outgoing).await;
}
