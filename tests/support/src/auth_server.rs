//! A stub of the three subscription logins' authorization servers (Anthropic, OpenAI Codex,
//! GitHub with Copilot), on loopback, for `PI_OAUTH_ORIGIN`: it checks every request as the
//! real servers would (client ids, grant types, PKCE verifier against the challenge of the
//! authorization request, redirect URIs, the latest refresh token, the device code) and
//! records what arrived. Anything wrong is a violation the test asserts on, and gets the
//! error answer the real server gives.
//!
//! The "browser" side: `GET /oauth/authorize?...` answers a redirect to the login's
//! `redirect_uri` with a code and the state, as the real page does after the person agrees.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::Digest;
use tokio::net::TcpListener;

/// Anthropic's public OAuth client id (pi's).
pub const ANTHROPIC_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
/// OpenAI Codex's public OAuth client id (pi's).
pub const CODEX_CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
/// GitHub Copilot's public OAuth client id (pi's).
pub const COPILOT_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";

/// One request the server received.
#[derive(Clone, Debug)]
pub struct AuthRequest {
    /// `POST /v1/oauth/token`, …
    pub route: String,
    /// The form or JSON fields (JSON values as text).
    pub fields: HashMap<String, String>,
    /// Request headers (lower-case names).
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct Authorization {
    challenge: String,
    redirect_uri: String,
    client_id: String,
}

#[derive(Default)]
struct Inner {
    requests: Vec<AuthRequest>,
    violations: Vec<String>,
    codes: HashMap<String, Authorization>,
    // The refresh token each provider will accept next.
    refresh: HashMap<&'static str, String>,
    issued: u64,
    pending_polls: usize,
    refresh_fails: bool,
    refresh_delay: Duration,
    expires_in: u64,
    copilot_github_token: Option<String>,
    held: Option<tokio::sync::watch::Receiver<bool>>,
    // A service account's public key (PKCS#1 DER) its JWTs must verify with.
    service_account_key: Option<Vec<u8>>,
}

/// Holds refreshes until released (see [`AuthServer::hold_refreshes`]).
pub struct RefreshGate(tokio::sync::watch::Sender<bool>);

impl RefreshGate {
    /// Lets held and later refreshes through.
    pub fn release(&self) {
        let _ = self.0.send(true);
    }
}

/// A running stub; dropping it stops it.
pub struct AuthServer {
    address: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthServer {
    /// Listens on a free loopback port.
    pub async fn start() -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let inner = Arc::new(Mutex::new(Inner {
            expires_in: 3600,
            ..Inner::default()
        }));
        let router = Router::new()
            .route("/oauth/authorize", get(authorize))
            .route("/v1/oauth/token", post(anthropic_token))
            .route("/oauth/token", post(codex_token))
            .route("/login/device/code", post(device_code))
            .route("/login/oauth/access_token", post(device_token))
            .route("/copilot_internal/v2/token", get(copilot_token))
            .route("/models/{model}/policy", post(policy))
            .route("/token", post(google_token))
            .fallback(unknown)
            .with_state(inner.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        AuthServer {
            address,
            inner,
            task,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The refresh token `provider` (`anthropic`, `openai-codex`, `github-copilot`) accepts.
    pub fn accept_refresh(&self, provider: &'static str, token: &str) {
        self.with(|inner| inner.refresh.insert(provider, token.to_owned()));
    }

    /// Refreshes fail with `invalid_grant` from now on.
    pub fn fail_refreshes(&self) {
        self.with(|inner| inner.refresh_fails = true);
    }

    /// Each refresh answers after `delay` (so concurrent callers overlap).
    pub fn delay_refreshes(&self, delay: Duration) {
        self.with(|inner| inner.refresh_delay = delay);
    }

    /// Refreshes wait (having arrived and been recorded) until the gate is released.
    pub fn hold_refreshes(&self) -> RefreshGate {
        let (gate, held) = tokio::sync::watch::channel(false);
        self.with(|inner| inner.held = Some(held));
        RefreshGate(gate)
    }

    /// Google's token endpoint (`/token`) accepts JWTs of the service account whose RSA public
    /// key (PKCS#1 DER) this is, and `authorized_user` refreshes of `refresh_token`.
    pub fn google_accounts(&self, public_key: Vec<u8>, refresh_token: &str) {
        self.with(|inner| {
            inner.service_account_key = Some(public_key);
            inner.refresh.insert("google", refresh_token.to_owned());
        });
    }

    /// Tokens issued from now on expire in `seconds`.
    pub fn expires_in(&self, seconds: u64) {
        self.with(|inner| inner.expires_in = seconds);
    }

    /// The device flow answers `authorization_pending` this many times first.
    pub fn pending_polls(&self, polls: usize) {
        self.with(|inner| inner.pending_polls = polls);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<AuthRequest> {
        self.with(|inner| inner.requests.clone())
    }

    /// Requests to `route` (`POST /v1/oauth/token`) with `field` = `value`.
    pub fn count(&self, route: &str, field: &str, value: &str) -> usize {
        self.requests()
            .iter()
            .filter(|request| {
                request.route == route
                    && request.fields.get(field).map(String::as_str) == Some(value)
            })
            .count()
    }

    /// What the server refused; empty when every request was right.
    pub fn violations(&self) -> Vec<String> {
        self.with(|inner| inner.violations.clone())
    }
}

type Shared = State<Arc<Mutex<Inner>>>;

fn lock(state: &Arc<Mutex<Inner>>) -> std::sync::MutexGuard<'_, Inner> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn record(
    state: &Arc<Mutex<Inner>>,
    route: &str,
    headers: &HeaderMap,
    fields: HashMap<String, String>,
) {
    let headers = headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    lock(state).requests.push(AuthRequest {
        route: route.to_owned(),
        fields,
        headers,
    });
}

fn refuse(state: &Arc<Mutex<Inner>>, status: StatusCode, error: &str, why: String) -> Response {
    lock(state).violations.push(why.clone());
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"error": error, "error_description": why}).to_string(),
    )
        .into_response()
}

fn ok(body: Value) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body)
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn json_fields(body: &[u8]) -> Option<HashMap<String, String>> {
    let value: serde_json::Map<String, Value> = serde_json::from_slice(body).ok()?;
    Some(
        value
            .into_iter()
            .map(|(key, value)| {
                let text = match value {
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                (key, text)
            })
            .collect(),
    )
}

fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// The authorization page after the person agreed: a redirect with a fresh code.
async fn authorize(State(state): Shared, RawQuery(query): RawQuery) -> Response {
    let fields = form(query.unwrap_or_default().as_bytes());
    record(
        &state,
        "GET /oauth/authorize",
        &HeaderMap::new(),
        fields.clone(),
    );
    let get = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let client_id = get("client_id");
    if ![ANTHROPIC_CLIENT_ID, CODEX_CLIENT_ID].contains(&client_id.as_str())
        || get("response_type") != "code"
        || get("code_challenge_method") != "S256"
        || get("code_challenge").len() != 43
        || get("state").is_empty()
        || !get("redirect_uri").starts_with("http://localhost:")
    {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("a malformed authorization request: {fields:?}"),
        );
    }
    let mut inner = lock(&state);
    inner.issued += 1;
    let code = format!("code-{}", inner.issued);
    inner.codes.insert(
        code.clone(),
        Authorization {
            challenge: get("code_challenge"),
            redirect_uri: get("redirect_uri"),
            client_id,
        },
    );
    let mut target = url::Url::parse(&get("redirect_uri")).unwrap();
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &get("state"));
    (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response()
}

/// Checks an authorization-code exchange; `None` when it is right.
fn check_exchange(
    inner: &mut Inner,
    fields: &HashMap<String, String>,
    client_id: &str,
) -> Option<String> {
    let get = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let Some(authorization) = inner.codes.remove(&get("code")) else {
        return Some(format!("unknown or reused code {:?}", get("code")));
    };
    if get("client_id") != client_id || authorization.client_id != client_id {
        return Some("the client id differs from the authorization request's".to_owned());
    }
    if get("redirect_uri") != authorization.redirect_uri {
        return Some("the redirect_uri differs from the authorization request's".to_owned());
    }
    if challenge_of(&get("code_verifier")) != authorization.challenge {
        return Some("the PKCE verifier does not match the challenge".to_owned());
    }
    None
}

/// Issues a token pair for `provider`, remembering the refresh token it will accept.
fn issue(inner: &mut Inner, provider: &'static str, access: impl FnOnce(u64) -> String) -> Value {
    inner.issued += 1;
    let n = inner.issued;
    let refresh = format!("refresh-{provider}-{n}");
    inner.refresh.insert(provider, refresh.clone());
    json!({"access_token": access(n), "refresh_token": refresh, "expires_in": inner.expires_in,
        "token_type": "Bearer"})
}

async fn refresh_or_exchange(
    state: Arc<Mutex<Inner>>,
    provider: &'static str,
    client_id: &'static str,
    fields: HashMap<String, String>,
    access: fn(u64) -> String,
) -> Response {
    let grant = fields.get("grant_type").cloned().unwrap_or_default();
    if grant == "refresh_token" {
        let (delay, held) = {
            let inner = lock(&state);
            (inner.refresh_delay, inner.held.clone())
        };
        tokio::time::sleep(delay).await;
        if let Some(mut held) = held {
            let _ = held.wait_for(|open| *open).await;
        }
        let mut inner = lock(&state);
        if inner.refresh_fails {
            drop(inner);
            return refuse(
                &state,
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "Refresh token revoked".to_owned(),
            );
        }
        let expected = inner.refresh.get(provider).cloned();
        if fields.get("client_id").map(String::as_str) != Some(client_id)
            || expected.is_none()
            || fields.get("refresh_token") != expected.as_ref()
        {
            drop(inner);
            return refuse(
                &state,
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                format!("a refresh with the wrong client or a stale refresh token: {fields:?}"),
            );
        }
        return ok(issue(&mut inner, provider, access));
    }
    if grant != "authorization_code" {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            format!("grant_type {grant:?}"),
        );
    }
    let mut inner = lock(&state);
    if let Some(problem) = check_exchange(&mut inner, &fields, client_id) {
        drop(inner);
        return refuse(&state, StatusCode::BAD_REQUEST, "invalid_grant", problem);
    }
    ok(issue(&mut inner, provider, access))
}

async fn anthropic_token(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let route = "POST /v1/oauth/token";
    let Some(fields) = json_fields(&body) else {
        record(&state, route, &headers, HashMap::new());
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Anthropic's token endpoint takes JSON".to_owned(),
        );
    };
    record(&state, route, &headers, fields.clone());
    if fields.get("grant_type").map(String::as_str) == Some("authorization_code")
        && fields.get("state").is_none_or(String::is_empty)
    {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the exchange lacks the state".to_owned(),
        );
    }
    refresh_or_exchange(state, "anthropic", ANTHROPIC_CLIENT_ID, fields, |n| {
        format!("sk-ant-oat01-access-{n}")
    })
    .await
}

/// A JWT-shaped token (unsigned) with the ChatGPT account claim, as OpenAI's carry it.
pub fn codex_access_token(n: u64) -> String {
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}, "n": n});
    format!(
        "eyJhbGciOiJub25lIn0.{}.sig",
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

async fn codex_token(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let route = "POST /oauth/token";
    let fields = form(&body);
    record(&state, route, &headers, fields.clone());
    if headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        != Some("application/x-www-form-urlencoded")
    {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "OpenAI's token endpoint takes a form".to_owned(),
        );
    }
    refresh_or_exchange(
        state,
        "openai-codex",
        CODEX_CLIENT_ID,
        fields,
        codex_access_token,
    )
    .await
}

async fn device_code(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let fields = form(&body);
    record(&state, "POST /login/device/code", &headers, fields.clone());
    if fields.get("client_id").map(String::as_str) != Some(COPILOT_CLIENT_ID)
        || fields.get("scope").map(String::as_str) != Some("read:user")
    {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("a malformed device code request: {fields:?}"),
        );
    }
    ok(json!({"device_code": "device-1", "user_code": "ABCD-1234",
        "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 60}))
}

async fn device_token(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let fields = form(&body);
    record(
        &state,
        "POST /login/oauth/access_token",
        &headers,
        fields.clone(),
    );
    if fields.get("client_id").map(String::as_str) != Some(COPILOT_CLIENT_ID)
        || fields.get("device_code").map(String::as_str) != Some("device-1")
        || fields.get("grant_type").map(String::as_str)
            != Some("urn:ietf:params:oauth:grant-type:device_code")
    {
        return refuse(
            &state,
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("a malformed device token request: {fields:?}"),
        );
    }
    let mut inner = lock(&state);
    if inner.pending_polls > 0 {
        inner.pending_polls -= 1;
        return ok(json!({"error": "authorization_pending"}));
    }
    inner.issued += 1;
    let token = format!("ghu_github_{}", inner.issued);
    inner.copilot_github_token = Some(token.clone());
    inner.refresh.insert("github-copilot", token.clone());
    ok(json!({"access_token": token, "token_type": "bearer", "scope": "read:user"}))
}

async fn copilot_token(State(state): Shared, headers: HeaderMap) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    record(
        &state,
        "GET /copilot_internal/v2/token",
        &headers,
        HashMap::from([("github_token".to_owned(), bearer.clone())]),
    );
    let delay = lock(&state).refresh_delay;
    tokio::time::sleep(delay).await;
    let mut inner = lock(&state);
    let expected = inner.refresh.get("github-copilot").cloned();
    let identified =
        headers.get("editor-version").is_some() && headers.get("copilot-integration-id").is_some();
    if inner.refresh_fails || expected.as_deref() != Some(bearer.as_str()) || !identified {
        drop(inner);
        return refuse(
            &state,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a Copilot token request without the GitHub token or the editor headers".to_owned(),
        );
    }
    inner.issued += 1;
    let expires_at = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs())
        + inner.expires_in;
    ok(
        json!({"token": format!("tid=copilot-{};exp={expires_at};proxy-ep=proxy.individual.githubcopilot.com", inner.issued),
        "expires_at": expires_at}),
    )
}

async fn policy(
    State(state): Shared,
    Path(model): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut fields = json_fields(&body).unwrap_or_default();
    fields.insert("model".to_owned(), model);
    record(&state, "POST /models/policy", &headers, fields);
    ok(json!({}))
}

async fn unknown(State(state): Shared, uri: axum::http::Uri) -> Response {
    refuse(
        &state,
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no such route: {}", uri.path()),
    )
}

/// Google's OAuth token endpoint: a service account's signed JWT, or gcloud's refresh token.
async fn google_token(State(state): Shared, headers: HeaderMap, body: Bytes) -> Response {
    let fields = form(&body);
    record(&state, "POST /token", &headers, fields.clone());
    let get = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let problem = match get("grant_type").as_str() {
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
            let key = lock(&state).service_account_key.clone();
            check_jwt(&get("assertion"), key.as_deref())
        }
        "refresh_token" => {
            let expected = lock(&state).refresh.get("google").cloned();
            (get("client_id").is_empty()
                || get("client_secret").is_empty()
                || expected.as_deref() != Some(get("refresh_token").as_str()))
            .then(|| format!("a bad authorized_user refresh: {fields:?}"))
        }
        other => Some(format!("grant_type {other:?}")),
    };
    if let Some(problem) = problem {
        return refuse(&state, StatusCode::BAD_REQUEST, "invalid_grant", problem);
    }
    let mut inner = lock(&state);
    inner.issued += 1;
    ok(
        json!({"access_token": format!("ya29.google-{}", inner.issued),
        "expires_in": inner.expires_in, "token_type": "Bearer"}),
    )
}

/// Checks a service account's JWT: RS256 over its header and claims with `key`, for Cloud
/// Platform, fresh.
fn check_jwt(assertion: &str, key: Option<&[u8]>) -> Option<String> {
    let parts: Vec<&str> = assertion.split('.').collect();
    let [header, claims, signature] = parts.as_slice() else {
        return Some("the assertion is not a JWT".to_owned());
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).unwrap_or_default();
    let json = |part: &str| serde_json::from_slice::<Value>(&decode(part)).unwrap_or_default();
    let (header, claims) = (json(header), json(claims));
    if header["alg"] != "RS256" {
        return Some(format!("the JWT is signed {}, not RS256", header["alg"]));
    }
    if claims["scope"] != "https://www.googleapis.com/auth/cloud-platform"
        || !claims["iss"].is_string()
        || !claims["aud"]
            .as_str()
            .is_some_and(|aud| aud.ends_with("/token"))
        || claims["exp"].as_i64().unwrap_or(0) <= claims["iat"].as_i64().unwrap_or(0)
    {
        return Some(format!("unexpected claims {claims}"));
    }
    let Some(key) = key else {
        return Some("no service account key was registered".to_owned());
    };
    let signed = &assertion[..assertion.len() - signature.len() - 1];
    let verified =
        ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, key)
            .verify(signed.as_bytes(), &decode(signature));
    verified
        .is_err()
        .then(|| "the JWT's signature does not verify".to_owned())
}
