//! The ChatGPT backend's WebSocket transport (pi's `transport` setting, `auto` by default):
//! a request is a `response.create` message on a WebSocket to `{baseUrl}/codex/responses`
//! (`wss://`), the answer the same Responses events as JSON messages, one per message.
//!
//! As pi 0.73.1 does it:
//! - One socket per session, kept for five minutes between requests and used by one request at
//!   a time (a second request while one runs opens its own, closed afterwards).
//! - With `websocket-cached` and `auto`, a request that repeats the previous one with only more
//!   input sends what it adds and `previous_response_id` (the socket keeps the context).
//! - A socket that cannot be opened, or closes before the first event, gives the request to
//!   HTTP with server-sent events, and the session stays on HTTP from then on; a failure after
//!   the first event is the request's. (A kept socket that fails before its first event is
//!   first replaced once by a fresh one: a server may close idle sockets.)
//!
//! Headers are pi's: `OpenAI-Beta: responses_websockets=2026-02-06`, `session_id` and
//! `x-client-request-id` with the session id, no `accept` or `content-type`.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_util::sync::CancellationToken;

use super::openai_responses::{ResponsesDecoder, convert_messages};
use crate::assemble::Assembler;
use crate::failure::{Failure, FailureKind};
use crate::http::{Decoder, Step};
use crate::model::Model;
use crate::provider::Transport;
use crate::sse::SseEvent;
use crate::types::{AssistantMessage, Message};

/// pi's beta header value for the WebSocket Responses API.
pub(crate) const BETA: &str = "responses_websockets=2026-02-06";

/// How long a session's socket is kept unused.
const IDLE: Duration = Duration::from_secs(5 * 60);

/// How long the socket may stay silent while a response is awaited (HTTP's read timeout).
const SILENCE: Duration = Duration::from_secs(300);

/// Sessions that fell back to HTTP, never tried on a socket again (bounded: cleared whole
/// when it grows past this).
const FALLBACKS_KEPT: usize = 4096;

/// What a socket runs on: TCP, or TLS over TCP.
trait Wire: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Wire for T {}

type Socket = WebSocketStream<Pin<Box<dyn Wire>>>;

/// What the previous request on a kept socket was and what it answered.
struct Continuation {
    /// The whole request body, as it would go over HTTP.
    body: Value,
    /// The response's id.
    response_id: String,
    /// The response's output as input items.
    items: Vec<Value>,
}

/// A session's kept socket.
enum Slot {
    /// Idle, with what it last answered; `generation` tells this idle spell from a later one.
    Idle {
        socket: Box<Socket>,
        continuation: Option<Continuation>,
        generation: u64,
    },
    /// A request runs on it.
    Busy,
}

#[derive(Default)]
struct Sockets {
    slots: HashMap<String, Slot>,
    fell_back: HashSet<String>,
    generation: u64,
}

/// Every session's socket. A sync mutex, never held across `.await`.
static SOCKETS: LazyLock<Mutex<Sockets>> = LazyLock::new(Mutex::default);

fn table() -> std::sync::MutexGuard<'static, Sockets> {
    SOCKETS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether requests of `session` go over HTTP (a socket failed it before).
pub(crate) fn fell_back(session: &str) -> bool {
    table().fell_back.contains(session)
}

fn record_fallback(session: &str) {
    let mut sockets = table();
    if sockets.fell_back.len() >= FALLBACKS_KEPT {
        sockets.fell_back.clear();
    }
    sockets.fell_back.insert(session.to_owned());
}

/// One request to send on a socket.
pub(crate) struct Exchange {
    /// `ws://` or `wss://` address.
    pub url: String,
    /// Handshake headers.
    pub headers: Vec<(String, String)>,
    /// The session the socket is kept for (none: a socket of its own, closed afterwards).
    pub session: Option<String>,
    /// The configured transport (continuation with `WebSocketCached` and `Auto`).
    pub transport: Transport,
    /// The model, for turning the response into input items.
    pub model: Model,
}

/// How a socket exchange ended.
pub(crate) enum Outcome {
    /// The request is answered (or failed, or was cancelled) on the socket.
    Settled,
    /// No socket could carry it: HTTP takes over with the same assembler.
    Unavailable(Box<Assembler>, String),
}

/// Sends `body` (the whole request, as for HTTP) on the session's socket and streams the
/// answer into `assembler`.
pub(crate) async fn exchange(
    exchange: Exchange,
    body: &[u8],
    cancel: &CancellationToken,
    assembler: Assembler,
) -> Outcome {
    let full: Value = match serde_json::from_slice(body) {
        Ok(full) => full,
        Err(error) => {
            return Outcome::Unavailable(Box::new(assembler), format!("body not JSON: {error}"));
        }
    };
    let cached = matches!(
        exchange.transport,
        Transport::WebSocketCached | Transport::Auto
    );
    let mut assembler = assembler;
    let mut fresh_only = false;
    loop {
        let lease = match acquire(&exchange, cancel, fresh_only).await {
            Ok(lease) => lease,
            Err(Acquired::Cancelled) => {
                assembler.abort().await;
                return Outcome::Settled;
            }
            Err(Acquired::Failed(why)) => {
                if let Some(session) = &exchange.session {
                    record_fallback(session);
                }
                return Outcome::Unavailable(Box::new(assembler), why);
            }
        };
        let reused = lease.reused;
        match converse(lease, &exchange, &full, cached, cancel, assembler).await {
            Conversed::Settled => return Outcome::Settled,
            // A kept socket the server closed meanwhile: once more on a fresh one.
            Conversed::NotStarted(back, _) if reused => {
                assembler = *back;
                fresh_only = true;
            }
            Conversed::NotStarted(back, why) => {
                if let Some(session) = &exchange.session {
                    record_fallback(session);
                }
                return Outcome::Unavailable(back, why);
            }
        }
    }
}

/// A socket for one request.
struct Lease {
    socket: Box<Socket>,
    /// The session slot it goes back to (none: closed after the request).
    slot: Option<String>,
    reused: bool,
    continuation: Option<Continuation>,
}

enum Acquired {
    Cancelled,
    Failed(String),
}

async fn acquire(
    exchange: &Exchange,
    cancel: &CancellationToken,
    fresh_only: bool,
) -> Result<Lease, Acquired> {
    let mut slot = None;
    if let Some(session) = &exchange.session {
        let mut sockets = table();
        match sockets.slots.remove(session) {
            Some(Slot::Idle {
                socket,
                continuation,
                ..
            }) if !fresh_only => {
                sockets.slots.insert(session.clone(), Slot::Busy);
                return Ok(Lease {
                    socket,
                    slot: Some(session.clone()),
                    reused: true,
                    continuation,
                });
            }
            Some(Slot::Busy) => {
                // Another request of the session has it: this one gets its own.
                sockets.slots.insert(session.clone(), Slot::Busy);
            }
            Some(Slot::Idle { .. }) | None => {
                sockets.slots.insert(session.clone(), Slot::Busy);
                slot = Some(session.clone());
            }
        }
    }
    let connected = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Acquired::Cancelled),
        connected = connect(&exchange.url, &exchange.headers) => connected.map_err(Acquired::Failed),
    };
    match connected {
        Ok(socket) => Ok(Lease {
            socket: Box::new(socket),
            slot,
            reused: false,
            continuation: None,
        }),
        Err(error) => {
            if let Some(session) = slot {
                table().slots.remove(&session);
            }
            Err(error)
        }
    }
}

/// Gives a socket back to its session, to be closed after [`IDLE`] unless used again.
fn release(slot: Option<String>, socket: Option<Box<Socket>>, continuation: Option<Continuation>) {
    let Some(session) = slot else {
        return;
    };
    let mut sockets = table();
    let Some(socket) = socket else {
        sockets.slots.remove(&session);
        return;
    };
    sockets.generation += 1;
    let generation = sockets.generation;
    sockets.slots.insert(
        session.clone(),
        Slot::Idle {
            socket,
            continuation,
            generation,
        },
    );
    drop(sockets);
    tokio::spawn(async move {
        tokio::time::sleep(IDLE).await;
        let mut sockets = table();
        if matches!(sockets.slots.get(&session), Some(Slot::Idle { generation: g, .. }) if *g == generation)
        {
            sockets.slots.remove(&session);
        }
    });
}

/// Opens a WebSocket to `url` with `headers`.
async fn connect(url: &str, headers: &[(String, String)]) -> Result<Socket, String> {
    let mut request = url
        .into_client_request()
        .map_err(|error| format!("bad WebSocket address {url}: {error}"))?;
    for (name, value) in headers {
        let name = tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name {name:?}"))?;
        let value = tokio_tungstenite::tungstenite::http::HeaderValue::from_str(value)
            .map_err(|_| format!("invalid value of header {name}"))?;
        request.headers_mut().insert(name, value);
    }
    let uri = request.uri().clone();
    let host = uri
        .host()
        .ok_or_else(|| format!("no host in {url}"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let secure = uri.scheme_str() == Some("wss");
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let tcp = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map_err(|_| format!("connecting to {host}:{port} timed out"))?
    .map_err(|error| format!("cannot connect to {host}:{port}: {error}"))?;
    let _ = tcp.set_nodelay(true);
    let wire: Pin<Box<dyn Wire>> = if secure {
        let config = tls_config()?;
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|_| format!("{host} is not a valid TLS server name"))?;
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|error| format!("TLS handshake with {host} failed: {error}"))?;
        Box::pin(tls)
    } else {
        Box::pin(tcp)
    };
    let (socket, _response) = tokio::time::timeout(
        Duration::from_secs(30),
        tokio_tungstenite::client_async(request, wire),
    )
    .await
    .map_err(|_| format!("the WebSocket handshake with {host} timed out"))?
    .map_err(|error| match error {
        tokio_tungstenite::tungstenite::Error::Http(response) => {
            format!("the server refused the WebSocket ({})", response.status())
        }
        other => format!("the WebSocket handshake failed: {other}"),
    })?;
    Ok(socket)
}

/// The TLS client settings: the platform's certificate checks, as reqwest's.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: LazyLock<Result<Arc<rustls::ClientConfig>, String>> = LazyLock::new(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        use rustls_platform_verifier::ConfigVerifierExt;
        rustls::ClientConfig::with_platform_verifier()
            .map(Arc::new)
            .map_err(|error| format!("cannot set up TLS: {error}"))
    });
    CONFIG.clone()
}

enum Conversed {
    Settled,
    NotStarted(Box<Assembler>, String),
}

/// Sends the request on `lease`'s socket and streams the answer.
async fn converse(
    lease: Lease,
    exchange: &Exchange,
    full: &Value,
    cached: bool,
    cancel: &CancellationToken,
    mut assembler: Assembler,
) -> Conversed {
    let Lease {
        mut socket,
        slot,
        continuation,
        ..
    } = lease;
    let sent_body = match continuation.as_ref().filter(|_| cached) {
        Some(continuation) => continued(full, continuation).unwrap_or_else(|| full.clone()),
        None => full.clone(),
    };
    let mut message = json!({"type": "response.create"});
    if let (Some(message), Value::Object(body)) = (message.as_object_mut(), sent_body) {
        message.extend(body);
    }
    let sent = tokio::select! {
        biased;
        () = cancel.cancelled() => {
            release(slot, None, None);
            assembler.abort().await;
            return Conversed::Settled;
        }
        sent = socket.send(Frame::text(message.to_string())) => sent,
    };
    if let Err(error) = sent {
        release(slot, None, None);
        return Conversed::NotStarted(
            Box::new(assembler),
            format!("sending on the WebSocket failed: {error}"),
        );
    }
    let mut decoder = ResponsesDecoder::default();
    let mut started = false;
    loop {
        if assembler.consumer_gone() {
            release(slot, None, None);
            return Conversed::Settled;
        }
        let frame = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                release(slot, None, None);
                assembler.abort().await;
                return Conversed::Settled;
            }
            frame = tokio::time::timeout(SILENCE, socket.next()) => frame,
        };
        let text = match frame {
            Ok(Some(Ok(Frame::Text(text)))) => text.as_str().to_owned(),
            Ok(Some(Ok(Frame::Binary(bytes)))) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(Some(Ok(Frame::Ping(_) | Frame::Pong(_) | Frame::Frame(_)))) => continue,
            ended => {
                release(slot, None, None);
                let why = match ended {
                    Ok(Some(Ok(Frame::Close(Some(close))))) => format!(
                        "WebSocket closed {} {}",
                        u16::from(close.code),
                        close.reason
                    )
                    .trim()
                    .to_owned(),
                    Ok(Some(Err(error))) => format!("WebSocket error: {error}"),
                    Err(_) => format!("the WebSocket stayed silent for {} s", SILENCE.as_secs()),
                    _ => "WebSocket closed".to_owned(),
                };
                if !started {
                    return Conversed::NotStarted(Box::new(assembler), why);
                }
                let message = format!("the stream ended before the response completed: {why}");
                assembler
                    .fail(message, Failure::new(FailureKind::StreamCut))
                    .await;
                return Conversed::Settled;
            }
        };
        if !started {
            started = true;
            assembler.start().await;
        }
        let kind = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|event| event["type"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let event = SseEvent {
            event: kind,
            data: text,
            id: None,
        };
        match decoder.on_event(&event, &mut assembler).await {
            Step::Continue => {}
            Step::Done(reason) => {
                let next = cached
                    .then(|| answered(full, assembler.message(), &exchange.model))
                    .flatten();
                release(slot, Some(socket), next);
                assembler.finish(reason).await;
                return Conversed::Settled;
            }
            Step::Fail { message, failure } => {
                release(slot, None, None);
                assembler.fail(message, failure).await;
                return Conversed::Settled;
            }
        }
    }
}

/// What the next request continues from: this one and its answer's items.
fn answered(full: &Value, message: &AssistantMessage, model: &Model) -> Option<Continuation> {
    let response_id = message.response_id.clone()?;
    let messages =
        crate::transform::transform_messages(&[Message::Assistant(message.clone())], model, None);
    let mut items = Vec::new();
    convert_messages(&messages, &mut items);
    items.retain(|item| item["type"] != "function_call_output");
    Some(Continuation {
        body: full.clone(),
        response_id,
        items,
    })
}

/// `full` as a continuation of the previous request: only the input it adds, with
/// `previous_response_id`; `None` when it does not just add input.
fn continued(full: &Value, previous: &Continuation) -> Option<Value> {
    let without_input = |body: &Value| {
        let mut body = body.as_object()?.clone();
        body.remove("input");
        body.remove("previous_response_id");
        Some(body)
    };
    if without_input(full)? != without_input(&previous.body)? {
        return None;
    }
    let input = full["input"].as_array()?;
    let mut baseline: Vec<&Value> = previous.body["input"].as_array()?.iter().collect();
    baseline.extend(previous.items.iter());
    if input.len() < baseline.len() || !input.iter().zip(&baseline).all(|(a, b)| a == *b) {
        return None;
    }
    let mut body = full.clone();
    body["previous_response_id"] = json!(previous.response_id);
    body["input"] = Value::Array(input[baseline.len()..].to_vec());
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_that_only_adds_input_sends_what_it_adds() {
        let previous = Continuation {
            body: json!({"model": "m", "input": [{"role": "user", "content": "a"}]}),
            response_id: "resp_1".into(),
            items: vec![json!({"type": "message", "role": "assistant", "content": "b"})],
        };
        let next = json!({"model": "m", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ]});
        assert_eq!(
            continued(&next, &previous),
            Some(json!({"model": "m", "previous_response_id": "resp_1",
                "input": [{"role": "user", "content": "c"}]}))
        );
        // Another model, or history that changed: the whole request.
        let other = json!({"model": "n", "input": next["input"].clone()});
        assert_eq!(continued(&other, &previous), None);
        let edited = json!({"model": "m", "input": [{"role": "user", "content": "x"}]});
        assert_eq!(continued(&edited, &previous), None);
    }
}
