//! The HTTP side of the [`ModelServer`](super::ModelServer): the routes, recording and
//! checking each request, taking the next turn, and writing it: an error response, or an SSE
//! body written by its own task that applies the reply's faults (delays, holds, cuts,
//! malformed events, split bodies) and stops when the client goes away or the server shuts
//! down. Nothing here panics: every failure becomes a recorded violation or a response.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{MethodRouter, post};
use bytes::BytesMut;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::error_turn::{ErrorBody, ErrorTurn};
use super::gate::Gate;
use super::script::{Cut, Reply, TurnKind};
use super::{
    Api, RecordedRequest, RenderContext, Shared, Violation, anthropic, gemini, invariants,
    openai_chat, openai_responses,
};

/// What every handler shares.
#[derive(Clone, Debug)]
pub(super) struct ServerState {
    pub(super) shared: Arc<Shared>,
    /// `true` once the [`ModelServer`](super::ModelServer) is dropped (or its sender gone);
    /// each stream task watches a clone and stops writing.
    shutdown: watch::Receiver<bool>,
}

/// A rendered stream with its faults applied, ready to write.
struct StreamPlan {
    events: Vec<Bytes>,
    delay_each: Option<Duration>,
    // Invariant: the index is at most `events.len()`.
    hold: Option<(usize, Gate)>,
    body_split_bytes: Option<usize>,
    /// Whether the body ends with a connection reset instead of a clean end.
    reset_at_end: bool,
}

/// One piece of the response body; an error makes hyper abort the connection.
type BodyPiece = Result<Bytes, io::Error>;

/// The router serving the four API routes; anything else is a 404 and a violation.
pub(super) fn router(shared: Arc<Shared>, shutdown: watch::Receiver<bool>) -> Router {
    Router::new()
        .route("/v1/messages", api_route(Api::AnthropicMessages))
        .route("/v1/chat/completions", api_route(Api::OpenAiCompletions))
        .route("/v1/responses", api_route(Api::OpenAiResponses))
        // The ChatGPT backend's Responses (`openai-codex-responses`), at its own path.
        .route(
            "/backend-api/codex/responses",
            api_route(Api::OpenAiResponses).get(super::codex_socket::route),
        )
        .route("/v1beta/models/{model_action}", post(gemini_route))
        // Gemini on Vertex AI: `/v1beta1/[projects/P/locations/L/]publishers/google/models/M:…`.
        .route("/v1beta1/{*resource}", post(vertex_route))
        .fallback(unknown_route)
        // Contexts in tests can be large; the real APIs accept megabytes too.
        .layer(DefaultBodyLimit::disable())
        .with_state(ServerState { shared, shutdown })
}

/// `POST` on a route whose path alone names the api.
fn api_route(api: Api) -> MethodRouter<ServerState> {
    post(
        move |State(state): State<ServerState>, uri: Uri, headers: HeaderMap, body: Bytes| async move {
            answer(&state, api, &uri, headers, &body, None)
        },
    )
}

async fn gemini_route(
    State(state): State<ServerState>,
    Path(model_action): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match model_action.split_once(':') {
        Some((model, "streamGenerateContent")) => answer(
            &state,
            Api::GoogleGenerativeAi,
            &uri,
            headers,
            &body,
            Some(model),
        ),
        _ => {
            let message = format!(
                "scripted model server: only models/{{model}}:streamGenerateContent is served, not {}",
                uri.path()
            );
            record_violation(&state, None, Some(Api::GoogleGenerativeAi), message.clone());
            json_response(
                StatusCode::NOT_FOUND,
                &json!({"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}),
            )
        }
    }
}

async fn vertex_route(
    state: State<ServerState>,
    Path(resource): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let model_action = resource
        .rsplit_once("publishers/google/models/")
        .map(|(_, model_action)| model_action.to_owned())
        .unwrap_or(resource);
    gemini_route(state, Path(model_action), uri, headers, body).await
}

async fn unknown_route(State(state): State<ServerState>, method: Method, uri: Uri) -> Response {
    let message = format!(
        "scripted model server: no route for {method} {}; base URLs are {{url}} (anthropic), \
         {{url}}/v1 (openai) and {{url}}/v1beta (google)",
        uri.path()
    );
    record_violation(&state, None, None, message.clone());
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"error": {"type": "not_found", "message": message}}),
    )
}

/// Records and checks one request, takes the next turn and answers with it.
fn answer(
    state: &ServerState,
    api: Api,
    uri: &Uri,
    headers: HeaderMap,
    body: &[u8],
    path_model: Option<&str>,
) -> Response {
    let (request_number, turn) = record_and_take(state, api, uri, headers, body, true);
    let body = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    let model = match path_model {
        Some(model) => model.to_owned(),
        None => body["model"].as_str().unwrap_or_default().to_owned(),
    };
    let context = RenderContext {
        request_number,
        model: &model,
        body: &body,
    };
    match turn.map(|turn| turn.kind) {
        None => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": {
                "type": "scripted_model_server",
                "message": format!(
                    "scripted model server: no turn queued for this request (request #{request_number}, {api})"
                ),
            }}),
        ),
        Some(TurnKind::Error(error)) => error_response(api, &error, &context),
        Some(TurnKind::Reply(reply)) => stream_response(api, &reply, &context, &state.shutdown),
    }
}

/// Records one request (checked against its API's invariants when `check`) with its
/// problems, and takes the turn that answers it: its 1-based number and the turn.
pub(super) fn record_and_take(
    state: &ServerState,
    api: Api,
    uri: &Uri,
    headers: HeaderMap,
    body: &[u8],
    check: bool,
) -> (usize, Option<super::Turn>) {
    let query = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|Query(query)| query)
        .unwrap_or_default();
    let raw_body = body;
    let (body, mut problems) = match serde_json::from_slice::<Value>(body) {
        Ok(body) => {
            let problems = if check {
                invariants::check(api, &headers, &query, &body)
            } else {
                Vec::new()
            };
            (body, problems)
        }
        Err(error) => (
            Value::String(String::from_utf8_lossy(body).into_owned()),
            vec![format!("the body is not JSON: {error}")],
        ),
    };
    {
        let recorded = RecordedRequest {
            api,
            path: uri.path().to_owned(),
            query,
            headers,
            body: body.clone(),
            body_text: String::from_utf8_lossy(raw_body).into_owned(),
        };
        let mut guard = state.shared.lock();
        let mut turn = guard.turns.pop_front();
        if turn.is_none()
            && let Some(responder) = guard.responder.clone()
        {
            // The responder may be slow to compute; it runs without the lock.
            drop(guard);
            match responder(&recorded) {
                Ok(answer) => turn = Some(answer),
                Err(message) => problems.push(format!("the responder refused: {message}")),
            }
            guard = state.shared.lock();
        } else if turn.is_none() {
            problems.push("no turn queued for this request (answered 500)".to_owned());
        }
        guard.requests.push(recorded);
        let request_number = guard.requests.len();
        guard
            .violations
            .extend(problems.into_iter().map(|message| Violation {
                request: Some(request_number),
                api: Some(api),
                message,
            }));
        (request_number, turn)
    }
}

/// An error turn's body as `api` sends it, as JSON (a text body as a JSON string).
pub(super) fn error_json(api: Api, error: &ErrorTurn, context: &RenderContext<'_>) -> Value {
    match &error.body {
        ErrorBody::Json(body) => body.clone(),
        ErrorBody::Text(text) => Value::String(text.clone()),
        ErrorBody::Api { kind, message } => {
            let message = message.as_deref();
            match api {
                Api::AnthropicMessages => anthropic::error_body(*kind, message, context),
                Api::OpenAiCompletions => openai_chat::error_body(*kind, message),
                Api::OpenAiResponses => openai_responses::error_body(*kind, message),
                Api::GoogleGenerativeAi => {
                    gemini::error_body(*kind, message, error.status.as_u16())
                }
            }
        }
    }
}

fn error_response(api: Api, error: &ErrorTurn, context: &RenderContext<'_>) -> Response {
    let (content_type, text) = match &error.body {
        ErrorBody::Json(body) => ("application/json", body.to_string()),
        ErrorBody::Text(text) => ("text/plain; charset=utf-8", text.clone()),
        ErrorBody::Api { kind, message } => {
            let message = message.as_deref();
            let body = match api {
                Api::AnthropicMessages => anthropic::error_body(*kind, message, context),
                Api::OpenAiCompletions => openai_chat::error_body(*kind, message),
                Api::OpenAiResponses => openai_responses::error_body(*kind, message),
                Api::GoogleGenerativeAi => {
                    gemini::error_body(*kind, message, error.status.as_u16())
                }
            };
            ("application/json", body.to_string())
        }
    };
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = error.status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    insert_api_headers(headers, api, context);
    for (name, value) in &error.headers {
        headers.append(name.clone(), value.clone());
    }
    response
}

fn stream_response(
    api: Api,
    reply: &Reply,
    context: &RenderContext<'_>,
    shutdown: &watch::Receiver<bool>,
) -> Response {
    let (events, malformed) = match api {
        Api::AnthropicMessages => (
            anthropic::render(reply, context),
            anthropic::MALFORMED_EVENT,
        ),
        Api::OpenAiCompletions => (
            openai_chat::render(reply, context),
            openai_chat::MALFORMED_EVENT,
        ),
        Api::OpenAiResponses => (
            openai_responses::render(reply, context),
            openai_responses::MALFORMED_EVENT,
        ),
        Api::GoogleGenerativeAi => (gemini::render(reply, context), gemini::MALFORMED_EVENT),
    };
    let faults = &reply.faults;
    let mut events: Vec<Bytes> = events.into_iter().map(Bytes::from).collect();
    if let Some(after) = faults.malformed_after {
        events.insert(
            after.min(events.len()),
            Bytes::from_static(malformed.as_bytes()),
        );
    }
    let reset_at_end = match faults.cut {
        Some(Cut::Disconnect(after)) => {
            events.truncate(after);
            true
        }
        Some(Cut::Truncate(after)) => {
            events.truncate(after);
            false
        }
        None => false,
    };
    let plan = StreamPlan {
        hold: faults
            .hold
            .as_ref()
            .map(|(after, gate)| ((*after).min(events.len()), gate.clone())),
        events,
        delay_each: faults.delay_each,
        body_split_bytes: faults.body_split_bytes,
        reset_at_end,
    };
    // Capacity 1: the writer runs at most one piece ahead of what hyper has taken.
    let (sender, mut receiver) = mpsc::channel::<BodyPiece>(1);
    tokio::spawn(write_stream(plan, sender, shutdown.clone()));
    let body = Body::from_stream(futures_util::stream::poll_fn(move |cx| {
        receiver.poll_recv(cx)
    }));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    let content_type = match api {
        Api::GoogleGenerativeAi => "text/event-stream",
        Api::AnthropicMessages | Api::OpenAiCompletions | Api::OpenAiResponses => {
            "text/event-stream; charset=utf-8"
        }
    };
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    insert_api_headers(headers, api, context);
    for (name, value) in &reply.headers {
        headers.append(name.clone(), value.clone());
    }
    response
}

/// Writes `plan` into `sender` piece by piece. Returns early, also from a hold or a delay,
/// when the client is gone (hyper dropped the body, closing the channel) or the server
/// shuts down.
async fn write_stream(
    plan: StreamPlan,
    sender: mpsc::Sender<BodyPiece>,
    mut shutdown: watch::Receiver<bool>,
) {
    // Bytes not yet sent when the body is split: pieces cross event boundaries.
    let mut pending = BytesMut::new();
    for index in 0..=plan.events.len() {
        if let Some((at, gate)) = &plan.hold
            && *at == index
        {
            if !pending.is_empty()
                && !send(&sender, &mut shutdown, Ok(pending.split().freeze())).await
            {
                return;
            }
            tokio::select! {
                () = gate.wait_at() => {}
                () = sender.closed() => return,
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
        }
        let Some(event) = plan.events.get(index) else {
            break;
        };
        if let Some(delay) = plan.delay_each {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = sender.closed() => return,
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
        }
        match plan.body_split_bytes {
            None => {
                if !send(&sender, &mut shutdown, Ok(event.clone())).await {
                    return;
                }
            }
            Some(piece_len) => {
                pending.extend_from_slice(event);
                while pending.len() >= piece_len {
                    let piece = pending.split_to(piece_len).freeze();
                    if !send(&sender, &mut shutdown, Ok(piece)).await {
                        return;
                    }
                    // Let hyper write each piece before the next is ready.
                    tokio::task::yield_now().await;
                }
            }
        }
    }
    if !pending.is_empty() && !send(&sender, &mut shutdown, Ok(pending.split().freeze())).await {
        return;
    }
    if plan.reset_at_end {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "scripted disconnect");
        send(&sender, &mut shutdown, Err(reset)).await;
    }
}

/// Sends one body piece; `false` when the client is gone or the server shuts down.
async fn send(
    sender: &mpsc::Sender<BodyPiece>,
    shutdown: &mut watch::Receiver<bool>,
    piece: BodyPiece,
) -> bool {
    tokio::select! {
        sent = sender.send(piece) => sent.is_ok(),
        _ = shutdown.wait_for(|stop| *stop) => false,
    }
}

/// Per-API response headers: the request id the real APIs send.
fn insert_api_headers(headers: &mut HeaderMap, api: Api, context: &RenderContext<'_>) {
    let request_id = format!("req_scripted_{:04}", context.request_number);
    let name = match api {
        Api::AnthropicMessages => "request-id",
        Api::OpenAiCompletions | Api::OpenAiResponses => "x-request-id",
        Api::GoogleGenerativeAi => return,
    };
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn record_violation(
    state: &ServerState,
    request: Option<usize>,
    api: Option<Api>,
    message: String,
) {
    state.shared.lock().violations.push(Violation {
        request,
        api,
        message,
    });
}
