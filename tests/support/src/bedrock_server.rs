//! A stub of Amazon Bedrock's runtime (`POST /model/{id}/converse-stream`, answered in AWS's
//! binary event stream) and of STS (`AssumeRoleWithWebIdentity`, answered in XML), on
//! loopback, for `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` and `AWS_ENDPOINT_URL_STS`. It records
//! every request; a Converse request without SigV4's headers or a Bearer token, or whose body
//! is no Converse body, is a violation.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// One request the stub received.
#[derive(Clone, Debug)]
pub struct BedrockRequest {
    /// The path (`/model/…/converse-stream`, or `/` for STS).
    pub path: String,
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The body: JSON for Converse, the form for STS (as a string).
    pub body: Value,
}

impl BedrockRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Default)]
struct Inner {
    requests: Vec<BedrockRequest>,
    violations: Vec<String>,
    replies: std::collections::VecDeque<Vec<(String, Value)>>,
}

/// A running stub; dropping it stops it.
pub struct BedrockServer {
    address: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for BedrockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Shared = State<Arc<Mutex<Inner>>>;

fn lock(inner: &Arc<Mutex<Inner>>) -> std::sync::MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BedrockServer {
    /// Listens on a free loopback port.
    pub async fn start() -> BedrockServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let inner = Arc::new(Mutex::new(Inner::default()));
        let router = Router::new()
            .route("/model/{model}/converse-stream", post(converse))
            .route("/", post(sts))
            .route("/federation/credentials", axum::routing::get(sso_portal))
            .with_state(inner.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        BedrockServer {
            address,
            inner,
            task,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Queues a reply: Converse events (`:event-type`, payload) streamed in order.
    pub fn push(&self, events: Vec<(&str, Value)>) {
        lock(&self.inner).replies.push_back(
            events
                .into_iter()
                .map(|(kind, payload)| (kind.to_owned(), payload))
                .collect(),
        );
    }

    /// A text reply, as Bedrock streams one.
    pub fn text_reply(text: &str) -> Vec<(&'static str, Value)> {
        vec![
            ("messageStart", json!({"role": "assistant"})),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"text": text}}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
            ("messageStop", json!({"stopReason": "end_turn"})),
            (
                "metadata",
                json!({"usage": {"inputTokens": 10, "outputTokens": 3, "totalTokens": 13},
                "metrics": {"latencyMs": 5}}),
            ),
        ]
    }

    /// A reply calling `name` with `input`.
    pub fn tool_reply(id: &str, name: &str, input: &Value) -> Vec<(&'static str, Value)> {
        let text = input.to_string();
        let (first, second) = text.split_at(text.len() / 2);
        vec![
            ("messageStart", json!({"role": "assistant"})),
            (
                "contentBlockStart",
                json!({"contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": id, "name": name}}}),
            ),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": first}}}),
            ),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": second}}}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
            ("messageStop", json!({"stopReason": "tool_use"})),
            (
                "metadata",
                json!({"usage": {"inputTokens": 20, "outputTokens": 8, "totalTokens": 28}}),
            ),
        ]
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<BedrockRequest> {
        lock(&self.inner).requests.clone()
    }

    /// What the stub refused.
    pub fn violations(&self) -> Vec<String> {
        lock(&self.inner).violations.clone()
    }
}

fn header_list(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// One event-stream message with string headers.
fn frame(kind: &str, payload: &[u8]) -> Vec<u8> {
    let mut headers = Vec::new();
    for (name, value) in [
        (":event-type", kind),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ] {
        headers.push(name.len() as u8);
        headers.extend_from_slice(name.as_bytes());
        headers.push(7);
        headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
        headers.extend_from_slice(value.as_bytes());
    }
    let total = (16 + headers.len() + payload.len()) as u32;
    let mut message = Vec::new();
    message.extend_from_slice(&total.to_be_bytes());
    message.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude = crc32fast::hash(&message);
    message.extend_from_slice(&prelude.to_be_bytes());
    message.extend_from_slice(&headers);
    message.extend_from_slice(payload);
    let crc = crc32fast::hash(&message);
    message.extend_from_slice(&crc.to_be_bytes());
    message
}

async fn converse(
    State(state): Shared,
    Path(model): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let list = header_list(&headers);
    let get = |name: &str| {
        list.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let mut problems = Vec::new();
    let signed = get("authorization").is_some_and(|value| {
        value.starts_with("AWS4-HMAC-SHA256 Credential=")
            && value.contains("/bedrock/aws4_request")
            && value.contains("SignedHeaders=")
    }) && get("x-amz-date").is_some();
    let bearer = get("authorization").is_some_and(|value| value.starts_with("Bearer "));
    if !signed && !bearer {
        problems.push("a Converse request neither signed with SigV4 nor carrying a Bearer token");
    }
    if !body["messages"].is_array() {
        problems.push("a Converse body without messages");
    }
    let mut inner = lock(&state);
    inner.requests.push(BedrockRequest {
        path: format!("/model/{model}/converse-stream"),
        headers: list.clone(),
        body,
    });
    if !problems.is_empty() {
        inner
            .violations
            .extend(problems.iter().map(|problem| (*problem).to_owned()));
        return (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_TYPE, "application/json")],
            json!({"message": problems.join("; ")}).to_string(),
        )
            .into_response();
    }
    let Some(events) = inner.replies.pop_front() else {
        inner
            .violations
            .push("a request with no reply queued".to_owned());
        return (StatusCode::INTERNAL_SERVER_ERROR, "no reply queued").into_response();
    };
    let stream: Vec<u8> = events
        .iter()
        .flat_map(|(kind, payload)| frame(kind, payload.to_string().as_bytes()))
        .collect();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/vnd.amazon.eventstream")],
        stream,
    )
        .into_response()
}

async fn sts(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body)
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let get = |name: &str| {
        form.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let mut inner = lock(&state);
    inner.requests.push(BedrockRequest {
        path: "/".to_owned(),
        headers: header_list(&headers),
        body: Value::String(String::from_utf8_lossy(&body).into_owned()),
    });
    if get("Action") != Some("AssumeRoleWithWebIdentity")
        || get("WebIdentityToken") != Some("the-web-identity")
        || get("RoleArn").is_none()
    {
        inner
            .violations
            .push(format!("a bad STS request: {form:?}"));
        return (
            StatusCode::BAD_REQUEST,
            "<ErrorResponse><Error><Message>bad</Message></Error></ErrorResponse>",
        )
            .into_response();
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/xml")],
        "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>\
         <AccessKeyId>ASIAIRSA</AccessKeyId><SecretAccessKey>irsa-secret</SecretAccessKey>\
         <SessionToken>irsa-session</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
         </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
    )
        .into_response()
}

/// The AWS SSO portal: the role's keys for `aws sso login`'s token `sso-access-token`.
async fn sso_portal(
    State(state): Shared,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let mut inner = lock(&state);
    inner.requests.push(BedrockRequest {
        path: "/federation/credentials".to_owned(),
        headers: header_list(&headers),
        body: Value::String(query.clone().unwrap_or_default()),
    });
    let token = headers
        .get("x-amz-sso_bearer_token")
        .and_then(|value| value.to_str().ok());
    let query = query.unwrap_or_default();
    if token != Some("sso-access-token")
        || !query.contains("account_id=111122223333")
        || !query.contains("role_name=Developer")
    {
        inner
            .violations
            .push(format!("a bad SSO portal request: {query}"));
        return (StatusCode::UNAUTHORIZED, "{}").into_response();
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"roleCredentials": {"accessKeyId": "ASIASSO", "secretAccessKey": "sso-secret",
            "sessionToken": "sso-session", "expiration": 4_070_908_800_000_i64}})
        .to_string(),
    )
        .into_response()
}
