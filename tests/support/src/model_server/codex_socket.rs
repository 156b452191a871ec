//! The ChatGPT backend's WebSocket (`GET /backend-api/codex/responses` upgraded), served
//! once [`ModelServer::serve_codex_websocket`](super::ModelServer::serve_codex_websocket) is
//! called (before that, the upgrade is refused with 426, as a backend without it would).
//!
//! Each `response.create` message is a request: recorded (with the handshake's headers, the
//! message without its `type`) and checked like an HTTP one — except one continuing a previous
//! response (`previous_response_id`), whose input holds only what it adds — then answered by
//! the next turn: a reply's Responses events as JSON text messages, one per message (a
//! `disconnect_after`/`truncate_after` cut closes the socket after that many), or an error
//! turn as an `error` event with the API's error body.

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::script::{Cut, TurnKind};
use super::server::{ServerState, record_and_take};
use super::{Api, RenderContext, openai_responses};

/// `GET` on the Codex path: the WebSocket when served, else 426.
pub(super) async fn route(
    State(state): State<ServerState>,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let served = state.shared.lock().codex_websocket;
    match upgrade {
        Ok(upgrade) if served => {
            state.shared.lock().websocket_connections += 1;
            upgrade.on_upgrade(move |socket| serve(socket, state, uri, headers))
        }
        _ => (
            StatusCode::UPGRADE_REQUIRED,
            "scripted model server: no WebSocket here (ModelServer::serve_codex_websocket)",
        )
            .into_response(),
    }
}

async fn serve(mut socket: WebSocket, state: ServerState, uri: Uri, headers: HeaderMap) {
    while let Some(Ok(message)) = socket.recv().await {
        let text = match message {
            Message::Text(text) => text.as_str().to_owned(),
            Message::Close(_) => return,
            _ => continue,
        };
        let mut body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        let kind = body["type"].as_str().unwrap_or_default().to_owned();
        if let Some(object) = body.as_object_mut() {
            object.remove("type");
        }
        let continued = body.get("previous_response_id").is_some();
        let raw = serde_json::to_vec(&body).unwrap_or_default();
        let (request_number, turn) = record_and_take(
            &state,
            Api::OpenAiResponses,
            &uri,
            headers.clone(),
            &raw,
            !continued,
        );
        if kind != "response.create" {
            state.shared.lock().violations.push(super::Violation {
                request: Some(request_number),
                api: Some(Api::OpenAiResponses),
                message: format!("a WebSocket message of type {kind:?}, not response.create"),
            });
        }
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        let context = RenderContext {
            request_number,
            model: &model,
            body: &body,
        };
        let (events, cut) = match turn.map(|turn| turn.kind) {
            None => (
                vec![json!({"type": "error", "code": "scripted_model_server",
                    "message": format!("no turn queued for request #{request_number}")})],
                None,
            ),
            Some(TurnKind::Error(error)) => {
                let body = super::server::error_json(Api::OpenAiResponses, &error, &context);
                // The backend's error event: the API's error fields, `code` for its type.
                let error_fields = &body["error"];
                let event = json!({
                    "type": "error",
                    "status": error.status.as_u16(),
                    "code": error_fields["code"].as_str().or(error_fields["type"].as_str()),
                    "message": error_fields["message"],
                });
                (vec![event], None)
            }
            Some(TurnKind::Reply(reply)) => {
                let events = openai_responses::render(&reply, &context)
                    .iter()
                    .filter_map(|event| {
                        let data = event.lines().find_map(|line| line.strip_prefix("data: "))?;
                        serde_json::from_str::<Value>(data).ok()
                    })
                    .collect();
                let cut = match reply.faults.cut {
                    Some(Cut::Disconnect(after) | Cut::Truncate(after)) => Some(after),
                    None => None,
                };
                (events, cut)
            }
        };
        for (index, event) in events.iter().enumerate() {
            if cut == Some(index) {
                return;
            }
            if socket
                .send(Message::Text(event.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        if cut.is_some_and(|after| after >= events.len()) {
            return;
        }
    }
}
