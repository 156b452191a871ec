//! Subscription logins (pi's `/login`): Anthropic (Claude Pro/Max), OpenAI Codex (ChatGPT
//! Plus/Pro) and GitHub Copilot — the flows pi 0.73 offers — and refreshing their tokens.
//!
//! - [`login`] runs one provider's flow, talking to the person through a [`LoginIo`]: the URL
//!   to open (and, for Copilot, the code to enter), questions, progress. Authorization-code
//!   flows listen on pi's loopback callback port and accept a pasted code or redirect URL at
//!   the same time, so a headless box works by pasting.
//! - [`refresh`] trades a refresh token for a new access token.
//! - [`Logins`] (in `store`) is what the registry uses: the credential of an `auth.json`,
//!   refreshed once for the whole daemon under the file lock pi's own writer takes.
//! - `providers::login` streams a request whose key is a login: fresh token first, and one
//!   refresh and retry when the provider answers 401.
//!
//! Guarantees: no token, code or verifier appears in an error, an event or a log; errors from
//! the authorization servers carry only their `error`/`error_description` fields.

pub mod adc;
mod anthropic;
mod callback;
mod codex;
pub mod copilot;
mod lock;
mod pkce;
mod store;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

pub use codex::account_id as codex_account_id;
pub use copilot::{copilot_base_url, normalize_domain};
pub use lock::AuthLock;
pub use pkce::challenge_of;
pub use store::{Clock, LoginError, LoginRef, Logins};

use crate::auth::OAuthCredential;
use crate::config_value::Environment;

/// A provider with a subscription login.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OAuthKind {
    /// Claude Pro/Max.
    Anthropic,
    /// ChatGPT Plus/Pro (Codex).
    OpenAiCodex,
    /// GitHub Copilot.
    GithubCopilot,
}

impl OAuthKind {
    /// Every login, in pi's order.
    pub const ALL: [OAuthKind; 3] = [
        OAuthKind::Anthropic,
        OAuthKind::GithubCopilot,
        OAuthKind::OpenAiCodex,
    ];

    /// The login of provider `id`.
    pub fn for_provider(id: &str) -> Option<OAuthKind> {
        OAuthKind::ALL
            .into_iter()
            .find(|kind| kind.provider_id() == id)
    }

    /// The provider id its credential is stored under in `auth.json`.
    pub fn provider_id(self) -> &'static str {
        match self {
            OAuthKind::Anthropic => "anthropic",
            OAuthKind::OpenAiCodex => "openai-codex",
            OAuthKind::GithubCopilot => "github-copilot",
        }
    }

    /// pi's name for it.
    pub fn name(self) -> &'static str {
        match self {
            OAuthKind::Anthropic => "Anthropic (Claude Pro/Max)",
            OAuthKind::OpenAiCodex => "ChatGPT Plus/Pro (Codex Subscription)",
            OAuthKind::GithubCopilot => "GitHub Copilot",
        }
    }
}

/// Where the logins send their requests: the real services, or (for tests and proxies) one
/// origin that serves every path, and the loopback callback address.
#[derive(Clone, Debug)]
pub struct Endpoints {
    origin: Option<String>,
    callback_host: String,
    callback_port: Option<u16>,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            origin: None,
            callback_host: "127.0.0.1".to_owned(),
            callback_port: None,
        }
    }
}

impl Endpoints {
    /// From the environment: `PI_OAUTH_CALLBACK_HOST` (pi's; where the callback server
    /// listens, default `127.0.0.1`), `PI_OAUTH_CALLBACK_PORT` (a port instead of the
    /// provider's registered one; `0` picks a free one) and `PI_OAUTH_ORIGIN` (send every
    /// authorization, token and device-code request to this origin, paths unchanged).
    pub fn from_env(environment: &dyn Environment) -> Endpoints {
        Endpoints::from_lookup(|name| environment.var(name))
    }

    /// Like [`Endpoints::from_env`], reading each variable through `var`.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Endpoints {
        Endpoints {
            origin: var("PI_OAUTH_ORIGIN").map(|origin| origin.trim_end_matches('/').to_owned()),
            callback_host: var("PI_OAUTH_CALLBACK_HOST").unwrap_or_else(|| "127.0.0.1".to_owned()),
            callback_port: var("PI_OAUTH_CALLBACK_PORT").and_then(|port| port.parse().ok()),
        }
    }

    /// `real` (an `https://host/path?query` URL), or its path and query on the origin.
    fn url(&self, real: &str) -> String {
        match &self.origin {
            None => real.to_owned(),
            Some(origin) => {
                let path = real
                    .split_once("://")
                    .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
                    .unwrap_or("/");
                format!("{origin}{path}")
            }
        }
    }

    /// Whether requests go to an origin given in the environment.
    fn overridden(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    fn callback_port(&self, registered: u16) -> u16 {
        self.callback_port.unwrap_or(registered)
    }
}

/// Why a login or a refresh failed. Never carries a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// Something on this machine (no randomness, bad input).
    #[error("{0}")]
    Local(String),
    /// The service could not be reached.
    #[error("could not reach {url}: {detail}")]
    Unreachable {
        /// Where (without query).
        url: String,
        /// What failed.
        detail: String,
    },
    /// The service refused, with its status and its own words.
    #[error("{url} refused the request (HTTP {status}){}", detail_suffix(.detail))]
    Refused {
        /// Where (without query).
        url: String,
        /// The HTTP status.
        status: u16,
        /// Its `error` and `error_description`, when it sent them.
        detail: String,
    },
    /// The answer lacked what the flow needs.
    #[error("{url} answered without {missing}")]
    Invalid {
        /// Where.
        url: String,
        /// What was missing.
        missing: &'static str,
    },
    /// The pasted redirect URL belongs to another login.
    #[error(
        "the state in the pasted URL does not match this login; paste the URL the browser shows at the end of this login"
    )]
    StateMismatch,
    /// No code came: nothing pasted and the browser never came back.
    #[error("no authorization code was given")]
    MissingCode,
    /// The device flow ended without a token.
    #[error("{0}")]
    DeviceFlow(String),
    /// The person (or the client) cancelled.
    #[error("the login was cancelled")]
    Cancelled,
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

/// What a login shows or asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginEvent {
    /// Open this URL in a browser (Copilot: and enter the code in `instructions`).
    OpenUrl {
        /// The URL.
        url: String,
        /// What to do there.
        instructions: String,
    },
    /// Answer this (through [`LoginIo::answers`]).
    Prompt {
        /// The question.
        message: String,
        /// An example answer.
        placeholder: Option<String>,
        /// Whether an empty answer is fine.
        allow_empty: bool,
    },
    /// A step, for people.
    Progress(String),
}

/// The person on the other side of a login.
pub struct LoginIo {
    /// What the login shows and asks.
    pub events: mpsc::Sender<LoginEvent>,
    /// Answers to its prompts, in order.
    pub answers: mpsc::Receiver<String>,
}

impl LoginIo {
    async fn show(&self, event: LoginEvent) -> Result<(), OAuthError> {
        self.events
            .send(event)
            .await
            .map_err(|_| OAuthError::Cancelled)
    }

    async fn ask(
        &mut self,
        message: &str,
        placeholder: Option<&str>,
        allow_empty: bool,
    ) -> Result<String, OAuthError> {
        self.show(LoginEvent::Prompt {
            message: message.to_owned(),
            placeholder: placeholder.map(str::to_owned),
            allow_empty,
        })
        .await?;
        self.answers.recv().await.ok_or(OAuthError::Cancelled)
    }
}

/// Options of a login.
#[derive(Clone, Debug, Default)]
pub struct LoginOptions {
    /// GitHub Enterprise domain for Copilot (`None`: ask; `Some("")`: github.com).
    pub enterprise_domain: Option<String>,
    /// Copilot models to enable for the account after logging in (pi does).
    pub copilot_models: Vec<String>,
}

/// Runs `kind`'s login flow to its credential.
pub async fn login(
    kind: OAuthKind,
    endpoints: &Endpoints,
    options: &LoginOptions,
    io: &mut LoginIo,
) -> Result<OAuthCredential, OAuthError> {
    match kind {
        OAuthKind::Anthropic => anthropic::login(endpoints, io).await,
        OAuthKind::OpenAiCodex => codex::login(endpoints, io).await,
        OAuthKind::GithubCopilot => copilot::login(endpoints, options, io).await,
    }
}

/// Trades `credential`'s refresh token for a new credential.
pub async fn refresh(
    kind: OAuthKind,
    endpoints: &Endpoints,
    credential: &OAuthCredential,
) -> Result<OAuthCredential, OAuthError> {
    if credential.refresh.is_empty() {
        return Err(OAuthError::Local(
            "the login has no refresh token".to_owned(),
        ));
    }
    match kind {
        OAuthKind::Anthropic => anthropic::refresh(endpoints, &credential.refresh).await,
        OAuthKind::OpenAiCodex => codex::refresh(endpoints, &credential.refresh).await,
        OAuthKind::GithubCopilot => {
            let enterprise = credential
                .extra
                .get("enterpriseUrl")
                .and_then(Value::as_str)
                .and_then(normalize_domain);
            copilot::copilot_token(endpoints, &credential.refresh, enterprise.as_deref()).await
        }
    }
}

/// An authorization code as pasted: a redirect URL, `code#state`, a query string, or the bare
/// code (pi's forms). Returns the code and the state when one came with it.
pub fn parse_pasted_code(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let non_empty = |text: &str| (!text.is_empty()).then(|| text.to_owned());
    if let Ok(url) = url::Url::parse(value)
        && url.has_host()
    {
        let query = |name: &str| {
            url.query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        };
        return (query("code"), query("state"));
    }
    if let Some((code, state)) = value.split_once('#') {
        return (non_empty(code), non_empty(state));
    }
    if value.contains("code=") {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(value.as_bytes())
            .map(|(key, value)| (key.into_owned(), value.into_owned()))
            .collect();
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        };
        return (get("code"), get("state"));
    }
    (Some(value.to_owned()), None)
}

/// Where an authorization-code login's browser comes back to.
struct Callback {
    /// The port the provider registered (`PI_OAUTH_CALLBACK_PORT` replaces it).
    port: u16,
    /// The path.
    path: &'static str,
    /// Who the pages name.
    service: &'static str,
    /// The question for a pasted code.
    paste_prompt: &'static str,
}

/// The code of an authorization-code login: the loopback callback listening (or, when its
/// port is taken, pasting only), the URL `authorize` makes for the redirect URI shown, then
/// the browser's callback or a pasted code, whichever comes first. Returns the code and the
/// redirect URI it was issued for.
async fn authorization_code(
    endpoints: &Endpoints,
    io: &mut LoginIo,
    callback: Callback,
    state: &str,
    authorize: impl FnOnce(&str) -> Result<String, OAuthError>,
) -> Result<(String, String), OAuthError> {
    let port = endpoints.callback_port(callback.port);
    let mut server = match callback::CallbackServer::start(
        &endpoints.callback_host,
        port,
        callback.path,
        state.to_owned(),
        callback.service,
    )
    .await
    {
        Ok(server) => Some(server),
        Err(error) => {
            io.show(LoginEvent::Progress(format!(
                "cannot listen on {}:{port} for the browser ({error}); paste the code instead",
                endpoints.callback_host
            )))
            .await?;
            None
        }
    };
    let port = server.as_ref().map_or(port, |server| server.address.port());
    let redirect_uri = format!("http://localhost:{port}{}", callback.path);
    io.show(LoginEvent::OpenUrl {
        url: authorize(&redirect_uri)?,
        instructions: "Complete login in your browser. If the browser is on another machine, \
                       paste the final redirect URL here."
            .to_owned(),
    })
    .await?;
    let code = code_from_browser_or_paste(
        server.as_mut(),
        io,
        state,
        callback.paste_prompt,
        &redirect_uri,
    )
    .await?;
    drop(server);
    io.show(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".to_owned(),
    ))
    .await?;
    Ok((code, redirect_uri))
}

/// An authorization URL: `base` (through the endpoints) with `pairs` as its query.
fn authorize_url(
    endpoints: &Endpoints,
    base: &str,
    pairs: &[(&str, &str)],
) -> Result<String, OAuthError> {
    let mut url = url::Url::parse(&endpoints.url(base))
        .map_err(|error| OAuthError::Local(format!("bad authorization URL: {error}")))?;
    url.query_pairs_mut().extend_pairs(pairs);
    Ok(url.to_string())
}

/// POSTs `form` url-encoded to `url`, with `headers`; the JSON answer.
async fn post_form(
    url: &str,
    form: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Result<serde_json::Map<String, Value>, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let mut request = http()?
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send_json(url, request.body(body)).await
}

/// Waits for the browser's callback or a pasted code, whichever comes first, checking the
/// pasted state against `state`. With no callback server, only pasting works.
async fn code_from_browser_or_paste(
    server: Option<&mut callback::CallbackServer>,
    io: &mut LoginIo,
    state: &str,
    paste_prompt: &str,
    placeholder: &str,
) -> Result<String, OAuthError> {
    io.show(LoginEvent::Prompt {
        message: paste_prompt.to_owned(),
        placeholder: Some(placeholder.to_owned()),
        allow_empty: false,
    })
    .await?;
    let pasted = async {
        loop {
            let answer = io.answers.recv().await.ok_or(OAuthError::Cancelled)?;
            let (code, pasted_state) = parse_pasted_code(&answer);
            if pasted_state.is_some_and(|pasted| pasted != state) {
                return Err(OAuthError::StateMismatch);
            }
            if let Some(code) = code {
                return Ok(code);
            }
        }
    };
    match server {
        Some(server) => tokio::select! {
            code = server.code() => code.ok_or(OAuthError::MissingCode),
            code = pasted => code,
        },
        None => pasted.await,
    }
}

/// The shared HTTP client, with a timeout per request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends `request` and reads a JSON object answer; a non-2xx status is [`OAuthError::Refused`]
/// with the service's `error` fields.
async fn send_json(
    url: &str,
    request: reqwest::RequestBuilder,
) -> Result<serde_json::Map<String, Value>, OAuthError> {
    let shown = url.split('?').next().unwrap_or(url).to_owned();
    let unreachable = |detail: String| OAuthError::Unreachable {
        url: shown.clone(),
        detail,
    };
    let response = request
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| unreachable(without_url(error)))?;
    let status = response.status().as_u16();
    let body = response
        .bytes()
        .await
        .map_err(|error| unreachable(without_url(error)))?;
    let parsed: Option<serde_json::Map<String, Value>> = serde_json::from_slice(&body).ok();
    if !(200..300).contains(&status) {
        return Err(OAuthError::Refused {
            url: shown,
            status,
            detail: parsed.as_ref().map(error_detail).unwrap_or_default(),
        });
    }
    parsed.ok_or(OAuthError::Invalid {
        url: shown,
        missing: "a JSON object",
    })
}

/// The `error`, `error_description` (or `message`) of an error answer; never other fields.
fn error_detail(body: &serde_json::Map<String, Value>) -> String {
    let text = |value: Option<&Value>| match value {
        Some(Value::String(text)) => Some(text.chars().take(300).collect::<String>()),
        Some(Value::Object(inner)) => inner
            .get("message")
            .and_then(Value::as_str)
            .map(|text| text.chars().take(300).collect()),
        _ => None,
    };
    [
        text(body.get("error")),
        text(body.get("error_description")).or_else(|| text(body.get("message"))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(": ")
}

fn without_url(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// The client token exchanges use (Google's, AWS STS's too).
pub(crate) fn shared_http() -> Result<&'static reqwest::Client, OAuthError> {
    http()
}

/// The logins' own HTTP client (they are rare: no need to share the providers' pool).
fn http() -> Result<&'static reqwest::Client, OAuthError> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Another part of the process may have installed a provider already.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(30))
                .build()
                .map_err(|error| format!("cannot set up HTTPS for the login: {error}"))
        })
        .as_ref()
        .map_err(|error| OAuthError::Local(error.clone()))
}

/// A string field of an answer.
fn string_field(body: &serde_json::Map<String, Value>, name: &str) -> Option<String> {
    body.get(name)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

fn credential(
    access: String,
    refresh: String,
    expires: i64,
    extra: BTreeMap<String, Value>,
) -> OAuthCredential {
    OAuthCredential {
        access,
        refresh,
        expires,
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_codes_take_pis_forms() {
        assert_eq!(
            parse_pasted_code("http://localhost:53692/callback?code=abc&state=xyz"),
            (Some("abc".into()), Some("xyz".into()))
        );
        assert_eq!(
            parse_pasted_code(" abc#xyz "),
            (Some("abc".into()), Some("xyz".into()))
        );
        assert_eq!(
            parse_pasted_code("code=abc&state=xyz"),
            (Some("abc".into()), Some("xyz".into()))
        );
        assert_eq!(parse_pasted_code("abc"), (Some("abc".into()), None));
        assert_eq!(parse_pasted_code("  "), (None, None));
    }

    #[test]
    fn an_origin_replaces_scheme_and_host_only() {
        let endpoints = Endpoints {
            origin: Some("http://127.0.0.1:9".into()),
            ..Endpoints::default()
        };
        assert_eq!(
            endpoints.url("https://platform.claude.com/v1/oauth/token"),
            "http://127.0.0.1:9/v1/oauth/token"
        );
        assert_eq!(
            Endpoints::default().url("https://github.com/login/device/code"),
            "https://github.com/login/device/code"
        );
    }
}
