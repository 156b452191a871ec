//! The transport every provider shares: one pooled HTTPS client (reqwest + rustls), sending a
//! prepared request, turning an HTTP error into a classified failure, and feeding the response
//! body through the SSE parser into a provider's [`Decoder`].
//!
//! Guarantees: exactly one terminal event per request (via the [`Assembler`]); cancellation
//! ends the HTTP exchange promptly at any point (connecting, waiting for headers, streaming)
//! with an `aborted` error; secrets travel only in headers marked sensitive and never appear
//! in logs or error text (errors are stripped of URLs, bodies of error responses are reduced
//! to the provider's error message).

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use pi_json::ToolArguments;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembler;
use crate::event::{AssistantStream, DoneReason};
use crate::failure::{Failure, FailureKind, retry_after_from_headers, retry_delay_from_body};
use crate::model::Model;
use crate::sse::{SseEvent, SseParser};

/// The most of an error response body we read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// A request ready to send.
pub struct HttpRequest {
    /// Full URL (never carries a secret: keys go in headers).
    pub url: String,
    /// Headers; those named in `secret_headers` are marked sensitive.
    pub headers: Vec<(String, String)>,
    /// The JSON body; may hold placeholders of `raw` (see [`HttpRequest::encode_body`]).
    pub body: Value,
    /// Exact JSON texts (a model's tool-call arguments) the body holds placeholders for.
    pub raw: RawTexts,
    /// Signs the request once its body is final (after the payload hook): adds headers
    /// computed from the URL and the body's bytes (AWS SigV4).
    pub sign: Option<Signer>,
}

/// What [`HttpRequest::sign`] runs: URL, body, the headers to add to.
pub type Signer =
    Box<dyn FnOnce(&str, &[u8], &mut Vec<(String, String)>) -> Result<(), String> + Send>;

impl HttpRequest {
    /// The body as sent: serialized, with every placeholder replaced by its exact text.
    pub fn encode_body(&self) -> Result<Vec<u8>, serde_json::Error> {
        let text = serde_json::to_string(&self.body)?;
        Ok(self.raw.substitute(text).into_bytes())
    }

    /// The request with its body encoded: the body as a value (the conversation and the
    /// tool schemas again) goes at once, not when the request task first runs.
    fn encode(self) -> Result<EncodedRequest, String> {
        let body = self
            .encode_body()
            .map_err(|error| format!("could not encode the request: {error}"))?;
        Ok(EncodedRequest {
            url: self.url,
            headers: self.headers,
            body,
            sign: self.sign,
        })
    }
}

/// A request with its body as the bytes sent.
struct EncodedRequest {
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    sign: Option<Signer>,
}

impl EncodedRequest {
    /// Adds the signature's headers, once the body is final.
    fn signed(mut self) -> Result<EncodedRequest, String> {
        if let Some(sign) = self.sign.take() {
            sign(&self.url, &self.body, &mut self.headers)?;
        }
        Ok(self)
    }
}

/// Exact JSON texts for a request body built as a [`Value`], which cannot hold them: the body
/// holds a placeholder string for each, replaced in the serialized body by
/// [`HttpRequest::encode_body`]. A placeholder is a string no message can contain by chance
/// (control characters around a per-request random nonce).
#[derive(Debug)]
pub struct RawTexts {
    nonce: u64,
    texts: Vec<String>,
}

impl Default for RawTexts {
    fn default() -> Self {
        use std::hash::BuildHasher as _;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        RawTexts {
            nonce: std::collections::hash_map::RandomState::new().hash_one(count),
            texts: Vec::new(),
        }
    }
}

impl RawTexts {
    /// What to put in the body for `arguments` when it must be a JSON object: a placeholder
    /// for the model's exact text when known, else the value (`{}` when not an object).
    pub fn object(&mut self, arguments: &ToolArguments) -> Value {
        if !arguments.is_object() {
            return Value::Object(serde_json::Map::new());
        }
        match arguments.raw() {
            Some(text) => {
                self.texts.push(text.to_owned());
                Value::String(format!(
                    "\u{1}pi-raw {} {}\u{1}",
                    self.nonce,
                    self.texts.len() - 1
                ))
            }
            None => arguments.value().clone(),
        }
    }

    /// `body` (serialized) with each placeholder, quotes included, replaced by its text.
    fn substitute(&self, body: String) -> String {
        if self.texts.is_empty() {
            return body;
        }
        let prefix = format!("\"\\u0001pi-raw {} ", self.nonce);
        let suffix = "\\u0001\"";
        let mut out = String::with_capacity(body.len());
        let mut rest = body.as_str();
        while let Some(start) = rest.find(&prefix) {
            let after = &rest[start + prefix.len()..];
            let Some(end) = after.find(suffix) else {
                break;
            };
            match after[..end]
                .parse::<usize>()
                .ok()
                .and_then(|n| self.texts.get(n))
            {
                Some(text) => {
                    out.push_str(&rest[..start]);
                    out.push_str(text);
                }
                None => out.push_str(&rest[..start + prefix.len() + end + suffix.len()]),
            }
            rest = &after[end + suffix.len()..];
        }
        out.push_str(rest);
        out
    }
}

/// Header names whose values are secrets.
const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

/// What a decoder wants after one SSE event.
#[derive(Debug)]
pub enum Step {
    /// Keep reading.
    Continue,
    /// The response is complete.
    Done(DoneReason),
    /// The response failed (an in-stream error event, a malformed chunk).
    Fail {
        /// The message for `errorMessage`.
        message: String,
        /// Its class.
        failure: Failure,
    },
}

/// One wire format's stream decoding.
pub trait Decoder: Send + 'static {
    /// Handles one SSE event, driving the assembler.
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Assembler,
    ) -> impl Future<Output = Step> + Send;

    /// How the response body is cut into events: SSE (the default), or AWS's binary event
    /// stream (Bedrock), whose messages arrive as [`SseEvent`]s too (see
    /// [`crate::aws::eventstream`]).
    fn framing(&self) -> Framing {
        Framing::Sse
    }

    /// The body ended without [`Step::Done`]. Formats whose end marker is optional finish
    /// here; the default treats the response as cut short.
    fn on_end(&mut self, out: &Assembler) -> Step {
        let _ = out;
        stream_cut()
    }
}

/// How a response body is cut into events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events.
    Sse,
    /// AWS's `application/vnd.amazon.eventstream`.
    AwsEventStream,
}

/// One of the parsers of [`Framing`].
enum BodyParser {
    Sse(SseParser),
    Aws(crate::aws::eventstream::EventStreamParser),
}

impl BodyParser {
    fn new(framing: Framing) -> BodyParser {
        match framing {
            Framing::Sse => BodyParser::Sse(SseParser::new()),
            Framing::AwsEventStream => {
                BodyParser::Aws(crate::aws::eventstream::EventStreamParser::default())
            }
        }
    }

    fn feed(&mut self, chunk: &[u8], events: &mut Vec<SseEvent>) -> Result<(), String> {
        match self {
            BodyParser::Sse(parser) => {
                parser.feed(chunk, events);
                Ok(())
            }
            BodyParser::Aws(parser) => parser.feed(chunk, events),
        }
    }

    fn recycle(&mut self, events: &mut Vec<SseEvent>) {
        match self {
            BodyParser::Sse(parser) => parser.recycle(events),
            BodyParser::Aws(_) => events.clear(),
        }
    }

    fn finish(&mut self) {
        if let BodyParser::Sse(parser) = self {
            parser.finish();
        }
    }
}

/// The step for a body that ended before the response completed.
pub fn stream_cut() -> Step {
    let (message, failure) = cut_failure();
    Step::Fail { message, failure }
}

fn cut_failure() -> (String, Failure) {
    let message = "the stream ended before the response completed".to_owned();
    (message, Failure::new(FailureKind::StreamCut))
}

/// Starts a streaming request and returns its stream at once.
pub fn spawn_stream<D: Decoder>(
    model: &Model,
    request: Result<HttpRequest, String>,
    cancel: CancellationToken,
    hooks: crate::provider::RequestHooks,
    decoder: D,
) -> AssistantStream {
    let (sender, stream) = AssistantStream::channel(model);
    let assembler = Assembler::new(sender, model, stream.partial().timestamp);
    tokio::spawn(async move {
        let mut hooks = hooks;
        let request = match request {
            Ok(request) => finalize(request, hooks.payload.take()).await,
            Err(message) => Err(message),
        };
        match request {
            Ok(request) => drive(request, cancel, hooks, assembler, decoder).await,
            Err(message) => {
                assembler
                    .fail(message, Failure::new(FailureKind::InvalidRequest))
                    .await
            }
        }
    });
    stream
}

/// A request whose body is final: encoded, seen by the payload hook, and signed.
pub(crate) struct FinalRequest(EncodedRequest);

impl FinalRequest {
    /// The body's bytes, as sent.
    pub(crate) fn body(&self) -> &[u8] {
        &self.0.body
    }
}

/// Encodes `request`, lets `hook` see (and replace) its body, and signs it.
pub(crate) async fn finalize(
    request: HttpRequest,
    hook: Option<crate::PayloadHook>,
) -> Result<FinalRequest, String> {
    let request = request.encode()?;
    let request = match hook {
        Some(hook) => hooked(request, hook).await,
        None => request,
    };
    request.signed().map(FinalRequest)
}

/// Sends a final request and streams its response into `assembler` (the hooks' payload hook
/// is not used: the body is final).
pub(crate) async fn drive<D: Decoder>(
    request: FinalRequest,
    cancel: CancellationToken,
    hooks: crate::provider::RequestHooks,
    assembler: Assembler,
    decoder: D,
) {
    let sending = Sending {
        cancel,
        heard: hooks.response,
        timeout: hooks.timeout,
        retries: hooks.retries,
        max_retry_delay: hooks.max_retry_delay,
    };
    run(request.0, sending, assembler, decoder).await
}

/// The request after the payload hook saw its body: as encoded (exact texts kept) when the
/// hook gave the same body back, else the hook's body.
async fn hooked(mut request: EncodedRequest, hook: crate::PayloadHook) -> EncodedRequest {
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return request;
    };
    let changed = (hook.0)(body.clone()).await;
    if changed != body
        && let Ok(bytes) = serde_json::to_vec(&changed)
    {
        request.body = bytes;
    }
    request
}

/// The process-wide client (connection pooling across sessions).
fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Another part of the process may have installed a provider already; either way
            // one is installed afterwards.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(30))
                .read_timeout(Duration::from_secs(300))
                // A burst of sessions opens as many connections to a provider at once; kept
                // idle, each holds its buffers and TLS state. A few stay for the next turns.
                .pool_max_idle_per_host(IDLE_CONNECTIONS_PER_HOST)
                .pool_idle_timeout(Duration::from_secs(30))
                .build()
                .map_err(|error| format!("could not set up the HTTPS client: {error}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Idle connections kept per provider host for reuse.
const IDLE_CONNECTIONS_PER_HOST: usize = 16;

/// How a request is sent: what cancels it, who hears its response, how long it may wait for
/// one.
struct Sending {
    cancel: CancellationToken,
    heard: Option<crate::provider::ResponseHook>,
    timeout: Option<Duration>,
    retries: u32,
    max_retry_delay: Option<Duration>,
}

async fn run<D: Decoder>(
    request: EncodedRequest,
    sending: Sending,
    mut assembler: Assembler,
    decoder: D,
) {
    let Sending {
        cancel,
        heard,
        timeout,
        retries,
        max_retry_delay,
    } = sending;
    assembler.redact(
        request
            .headers
            .iter()
            .filter(|(name, _)| SECRET_HEADERS.contains(&name.as_str()))
            .map(|(_, value)| value.strip_prefix("Bearer ").unwrap_or(value).to_owned()),
    );
    if cancel.is_cancelled() {
        return assembler.abort().await;
    }
    let provider = assembler.message().provider.clone();
    let wire = Wire {
        url: request.url,
        headers: request.headers,
        body: request.body,
    };
    let mut attempt = 0;
    let response = loop {
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => return assembler.abort().await,
            answer = send(&wire, &provider, timeout) => answer,
        };
        let asked = match &answer {
            _ if attempt >= retries => break answer,
            Err(_) => None,
            Ok(response) if sdk_retries(response) => retry_after_from_headers(response.headers()),
            Ok(_) => break answer,
        };
        // As the SDKs: the wait the provider asks for when under a minute, else a backoff.
        let wait = asked
            .filter(|wait| *wait < Duration::from_secs(60))
            .unwrap_or_else(|| sdk_backoff(attempt));
        tracing::info!(
            provider,
            attempt = attempt + 1,
            retries,
            wait_ms = wait.as_millis() as u64,
            failure = %match &answer {
                Ok(response) => response.status().to_string(),
                Err((message, _)) => message.clone(),
            },
            "sending the request again (retry.provider.maxRetries)"
        );
        drop(answer);
        attempt += 1;
        tokio::select! {
            biased;
            () = cancel.cancelled() => return assembler.abort().await,
            () = tokio::time::sleep(wait) => {}
        }
    };
    let response = match response {
        Ok(response) => response,
        Err((message, failure)) => return assembler.fail(message, failure).await,
    };
    let status = response.status();
    tracing::debug!(status = status.as_u16(), "provider responded");
    if let Some(hook) = heard {
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect();
        tokio::select! {
            biased;
            () = cancel.cancelled() => return assembler.abort().await,
            () = (hook.0)(status.as_u16(), headers) => {}
        }
    }
    if !status.is_success() {
        let retry_after = retry_after_from_headers(response.headers());
        let body = tokio::select! {
            biased;
            () = cancel.cancelled() => return assembler.abort().await,
            body = read_limited(response) => body,
        };
        let retry_after = retry_after.or_else(|| retry_delay_from_body(&body));
        let mut message = error_text(status.as_u16(), status.canonical_reason(), &body);
        if let (Some(asked), Some(cap)) = (retry_after, max_retry_delay)
            && asked > cap
        {
            // pi's informative error, instead of a silent give-up.
            message.push_str(&format!(
                " (the provider asked to wait {} s before retrying, longer than the {} s \
                 retry.provider.maxRetryDelayMs allows; not retried — raise it, or 0 for no \
                 cap)",
                asked.as_secs_f64().ceil(),
                cap.as_secs_f64()
            ));
        }
        let failure = Failure::from_http(status.as_u16(), &message, retry_after);
        return assembler.fail(message, failure).await;
    }
    stream_body(response, cancel, assembler, decoder).await;
}

/// Whether Anthropic's and OpenAI's SDKs send a request that got `response` again: as the
/// server's `x-should-retry` says, else for 408, 409, 429 and 5xx.
fn sdk_retries(response: &reqwest::Response) -> bool {
    match response
        .headers()
        .get("x-should-retry")
        .and_then(|value| value.to_str().ok())
    {
        Some("true") => true,
        Some("false") => false,
        _ => {
            let status = response.status().as_u16();
            matches!(status, 408 | 409 | 429) || status >= 500
        }
    }
}

/// The SDKs' wait before retry `attempt + 1`: half a second doubled per retry done, at most
/// 8 s, less up to a quarter at random.
fn sdk_backoff(attempt: u32) -> Duration {
    let seconds = (0.5 * 2f64.powi(attempt.min(16) as i32)).min(8.0);
    let mut bytes = [0u8; 2];
    let fraction = match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u16::from_le_bytes(bytes)) / f64::from(u16::MAX),
        Err(_) => 0.5,
    };
    Duration::from_secs_f64(seconds * (1.0 - fraction * 0.25))
}

/// What goes on the wire for a signed request, sent as often as it is retried.
struct Wire {
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn send(
    request: &Wire,
    provider: &str,
    timeout: Option<Duration>,
) -> Result<reqwest::Response, (String, Failure)> {
    let client = client().map_err(|message| (message, Failure::new(FailureKind::Other)))?;
    let mut headers = HeaderMap::new();
    for (name, value) in &request.headers {
        let invalid = |what: &str| {
            let message = format!("invalid HTTP header {what} for {name:?}");
            (message, Failure::new(FailureKind::InvalidRequest))
        };
        let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid("name"))?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| invalid("value"))?;
        if SECRET_HEADERS.contains(&header_name.as_str()) {
            header_value.set_sensitive(true);
        }
        headers.insert(header_name, header_value);
    }
    let url = &request.url;
    let sent = client
        .post(url)
        .headers(headers)
        .body(request.body.clone())
        .send();
    let answered = match timeout {
        Some(limit) => match tokio::time::timeout(limit, sent).await {
            Ok(answered) => answered,
            Err(_) => {
                let message = format!(
                    "connection error: provider \"{provider}\" at {} did not answer within {} \
                     ms (retry.provider.timeoutMs in settings.json); raise it for slow servers",
                    without_query(url),
                    limit.as_millis()
                );
                return Err((message, Failure::new(FailureKind::Connection)));
            }
        },
        None => sent.await,
    };
    answered.map_err(|error| {
        let message = connection_error(provider, url, &error);
        // The whole chain is for the log; the person reads the one line.
        tracing::warn!(
            provider,
            error = describe(error),
            "cannot reach the provider"
        );
        (message, Failure::new(FailureKind::Connection))
    })
}

/// The URL without its query (nothing secret is in it, but it is noise).
fn without_query(url: &str) -> String {
    reqwest::Url::parse(url)
        .map(|mut url| {
            url.set_query(None);
            url.to_string()
        })
        .unwrap_or_else(|_| url.to_owned())
}

/// One line for a request that never got a response: which provider, where, what went wrong
/// and what to check. Starts with `connection error:` as pi's do (its retry rule, and ours
/// for stored messages, read that).
fn connection_error(provider: &str, url: &str, error: &reqwest::Error) -> String {
    let place = without_query(url);
    let mut io_kind = None;
    let mut chain = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        chain.push_str(&cause.to_string().to_lowercase());
        chain.push(' ');
        source = cause.source();
    }
    if error.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        format!(
            "connection error: provider \"{provider}\" at {place} did not answer in time; check \
             your network and proxy settings, and that the server is up"
        )
    } else if chain.contains("dns error") || chain.contains("failed to lookup address") {
        format!(
            "connection error: cannot find the host of provider \"{provider}\" ({place}); check \
             the host name in its baseUrl and your network"
        )
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        format!(
            "connection error: cannot reach provider \"{provider}\" at {place}: connection \
             refused; check that the server is running and that baseUrl for \"{provider}\" \
             (models.json) points to it"
        )
    } else if [
        "certificate",
        "handshake",
        "corrupt message",
        "tls",
        "peer is incompatible",
    ]
    .iter()
    .any(|marker| chain.contains(marker))
    {
        // rustls's errors, as they read through reqwest's chain.
        format!(
            "connection error: the TLS handshake with provider \"{provider}\" at {place} \
             failed; check the server's certificate, or use http:// for a local server without \
             TLS"
        )
    } else {
        format!(
            "connection error: cannot reach provider \"{provider}\" at {place}; check your \
             network and the provider's baseUrl (the daemon log has the details)"
        )
    }
}

/// Where response bytes come from: the network, or recorded chunks (replay).
trait ChunkSource: Send {
    /// The next chunk; `Ok(None)` at the end; `Err` with a description when the connection
    /// failed.
    fn next_chunk(&mut self) -> impl Future<Output = Result<Option<Bytes>, String>> + Send;
}

impl ChunkSource for reqwest::Response {
    async fn next_chunk(&mut self) -> Result<Option<Bytes>, String> {
        self.chunk().await.map_err(describe)
    }
}

impl ChunkSource for std::vec::IntoIter<Bytes> {
    async fn next_chunk(&mut self) -> Result<Option<Bytes>, String> {
        Ok(self.next())
    }
}

/// Decodes recorded response bytes, split into `chunks` as they would arrive, exactly as a
/// live response would be decoded: for tests (any split yields the same events) and for
/// measuring decoding throughput.
pub fn replay<D: Decoder>(
    model: &Model,
    chunks: Vec<Bytes>,
    timestamp: i64,
    decoder: D,
) -> AssistantStream {
    let (sender, stream) = AssistantStream::channel(model);
    let assembler = Assembler::new(sender, model, timestamp);
    let cancel = CancellationToken::new();
    tokio::spawn(stream_body(chunks.into_iter(), cancel, assembler, decoder));
    stream
}

async fn stream_body<D: Decoder>(
    mut source: impl ChunkSource,
    cancel: CancellationToken,
    mut assembler: Assembler,
    mut decoder: D,
) {
    assembler.start().await;
    let mut parser = BodyParser::new(decoder.framing());
    let mut events = Vec::new();
    loop {
        if assembler.consumer_gone() {
            return;
        }
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return assembler.abort().await,
            chunk = source.next_chunk() => chunk,
        };
        let chunk = match chunk {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(error) => {
                let message = format!("the stream ended before the response completed: {error}");
                return assembler
                    .fail(message, Failure::new(FailureKind::StreamCut))
                    .await;
            }
        };
        if let Err(message) = parser.feed(&chunk, &mut events) {
            return assembler
                .fail(message, Failure::new(FailureKind::StreamCut))
                .await;
        }
        for event in &events {
            match decoder.on_event(event, &mut assembler).await {
                Step::Continue => {}
                Step::Done(reason) => return assembler.finish(reason).await,
                Step::Fail { message, failure } => return assembler.fail(message, failure).await,
            }
        }
        // The events' buffers go back to the parser for the next ones.
        parser.recycle(&mut events);
    }
    parser.finish();
    match decoder.on_end(&assembler) {
        Step::Done(reason) => assembler.finish(reason).await,
        Step::Fail { message, failure } => assembler.fail(message, failure).await,
        Step::Continue => {
            let (message, failure) = cut_failure();
            assembler.fail(message, failure).await
        }
    }
}

/// Reads at most [`ERROR_BODY_LIMIT`] bytes of a body, lossily as text.
async fn read_limited(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= ERROR_BODY_LIMIT {
            body.truncate(ERROR_BODY_LIMIT);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// `429 Too Many Requests: <the provider's message>`: the status first (pi's retry patterns
/// match on it), then the most specific message the body holds.
pub fn error_text(status: u16, reason: Option<&str>, body: &str) -> String {
    let detail = error_message_of_body(body);
    let head = match reason {
        Some(reason) => format!("{status} {reason}"),
        None => status.to_string(),
    };
    match detail {
        Some(detail) if !detail.is_empty() => format!("{head}: {detail}"),
        _ if body.trim().is_empty() => format!("{head} (no body)"),
        _ => format!("{head}: {}", truncate(body.trim(), 500)),
    }
}

/// The message inside a provider error body: `error.message` (Anthropic, OpenAI, Google),
/// `message`, or `error` as a string.
pub fn error_message_of_body(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    // Google sometimes wraps the error in a one-element array.
    let value = match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        other => other,
    };
    let text = value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .or_else(|| value.get("error").filter(|error| error.is_string()))
        .or_else(|| value.get("detail"))?;
    Some(match text {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// A reqwest error without its URL, with its causes.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_lead_with_the_status_and_the_provider_message() {
        let anthropic = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"}}"#;
        assert_eq!(
            error_text(429, Some("Too Many Requests"), anthropic),
            "429 Too Many Requests: Number of requests exceeded"
        );
        assert_eq!(error_text(413, None, ""), "413 (no body)");
        assert_eq!(
            error_text(500, Some("Internal Server Error"), "oops"),
            "500 Internal Server Error: oops"
        );
        let google = r#"[{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}]"#;
        assert_eq!(
            error_message_of_body(google).as_deref(),
            Some("Resource exhausted")
        );
    }
}
