//! The scripted model server: an HTTP server on 127.0.0.1 that impersonates four LLM APIs
//! with their real streaming (SSE) wire formats, answering each request with the next
//! [`Turn`] of a FIFO script shared by all routes.
//!
//! | api                    | `Model.base_url` | route                                                       |
//! |------------------------|------------------|-------------------------------------------------------------|
//! | `anthropic-messages`   | `{url}`          | `POST /v1/messages`                                         |
//! | `openai-completions`   | `{url}/v1`       | `POST /v1/chat/completions`                                 |
//! | `openai-responses`     | `{url}/v1`       | `POST /v1/responses`                                        |
//! | `google-generative-ai` | `{url}/v1beta`   | `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` |
//!
//! Each wire format is documented at the top of its renderer (`anthropic.rs`,
//! `openai_chat.rs`, `openai_responses.rs`, `gemini.rs`). Ids are deterministic per request
//! number `N` (`msg_scripted_000N`, `chatcmpl-scripted-000N`, `resp_scripted_000N`, response
//! header `request-id` / `x-request-id: req_scripted_000N`) and timestamps are
//! [`CREATED_AT`], so raw bodies snapshot stably.
//!
//! [`ScriptUsage`] is provider-neutral (`input` excludes cached tokens, `output` includes
//! reasoning) and each route converts it:
//! - Anthropic: `input_tokens = input`, `cache_read_input_tokens = cache_read`,
//!   `cache_creation_input_tokens = cache_write`, `output_tokens = output`; all four in
//!   `message_start` (with `output_tokens = min(output, 1)`) and, final, in `message_delta`.
//! - Chat completions (only when the request set `stream_options.include_usage`):
//!   `prompt_tokens = input + cache_read`, `prompt_tokens_details.cached_tokens = cache_read`,
//!   `completion_tokens = output`, `completion_tokens_details.reasoning_tokens = reasoning`,
//!   `total_tokens = prompt + completion`.
//! - Responses: `input_tokens = input + cache_read`, `input_tokens_details.cached_tokens =
//!   cache_read`, `output_tokens = output`, `output_tokens_details.reasoning_tokens =
//!   reasoning`, `total_tokens = input_tokens + output_tokens`.
//! - Gemini: `promptTokenCount = input + cache_read`, `cachedContentTokenCount = cache_read`,
//!   `candidatesTokenCount = output - reasoning`, `thoughtsTokenCount = reasoning`,
//!   `totalTokenCount = promptTokenCount + output`; zero counts are omitted as Google does.
//!
//! `cache_write` exists only in the Anthropic format; the others drop it.
//!
//! Every request is recorded and checked against the invariants of its API (`invariants/`):
//! tool results answer earlier tool calls, each call gets one result, ids and names are not
//! empty, the messages are shaped as the API demands, the request streams and carries a key.
//! Violations, requests with no turn queued (answered 500) and unknown routes (answered 404)
//! are recorded; [`ModelServer::finish`] and [`ModelServer::assert_done`] panic with the list.
//! The server task itself never panics.

mod anthropic;
mod codex_socket;
mod error_turn;
mod gate;
mod gemini;
mod invariants;
mod openai_chat;
mod openai_responses;
mod script;
mod server;

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::http::HeaderMap;
use axum::serve::ListenerExt as _;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use error_turn::{ErrorTurn, ScriptErrorKind};
pub use gate::Gate;
pub use script::{DEFAULT_DELTA_CHARS, Reply, ScriptStop, ScriptUsage, Turn};

/// A running scripted model server. Dropping it shuts the server down and ends every stream
/// still in flight.
#[derive(Debug)]
pub struct ModelServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    /// Sends `true` once, on drop. Watched by the accept loop (graceful shutdown) and by every
    /// stream task, which then stops writing; a dropped sender means the same.
    shutdown: watch::Sender<bool>,
}

/// The wire format of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// `anthropic-messages`: `POST /v1/messages`.
    AnthropicMessages,
    /// `openai-completions`: `POST /v1/chat/completions`.
    OpenAiCompletions,
    /// `openai-responses`: `POST /v1/responses`.
    OpenAiResponses,
    /// `google-generative-ai`: `POST /v1beta/models/{model}:streamGenerateContent`.
    GoogleGenerativeAi,
}

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The route's wire format.
    pub api: Api,
    /// The request path, e.g. `/v1/messages`.
    pub path: String,
    /// Decoded query parameters in order, e.g. `[("alt", "sse")]`.
    pub query: Vec<(String, String)>,
    /// All request headers.
    pub headers: HeaderMap,
    /// The JSON body; a body that is not JSON is kept as a string (and is a violation).
    pub body: Value,
    /// The body exactly as it arrived (lossy UTF-8), for byte-level checks.
    pub body_text: String,
}

/// Something a client did that the real API would reject, or the script did not expect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// 1-based number of the request it concerns, when it concerns a recorded request.
    pub request: Option<usize>,
    /// The route it arrived on, when it arrived on one.
    pub api: Option<Api>,
    /// What is wrong, in a sentence.
    pub message: String,
}

/// State shared by the handle and the request handlers.
#[derive(Debug, Default)]
struct Shared {
    // A sync mutex, never held across `.await`.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    turns: VecDeque<Turn>,
    // Answers requests when no turn is queued (concurrent sessions with their own scripts).
    responder: Option<Arc<Responder>>,
    requests: Vec<RecordedRequest>,
    violations: Vec<Violation>,
    // Whether the Codex path upgrades to a WebSocket, and how many it accepted.
    codex_websocket: bool,
    websocket_connections: usize,
}

impl fmt::Debug for State {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("State")
            .field("turns", &self.turns)
            .field("responder", &self.responder.is_some())
            .field("requests", &self.requests.len())
            .field("violations", &self.violations)
            .finish()
    }
}

/// Computes the answer to a request from the request itself, for scripts that cannot be one
/// FIFO (many sessions at once). `Err` is recorded as a violation and answered with a 500.
pub type Responder = dyn Fn(&RecordedRequest) -> Result<Turn, String> + Send + Sync;

/// What a renderer needs to know about the request it answers.
struct RenderContext<'a> {
    /// 1-based request number, used for deterministic ids (`msg_scripted_0001`).
    request_number: usize,
    /// The model asked for (body `model`, or the Gemini path).
    model: &'a str,
    /// The request body.
    body: &'a Value,
}

/// The `created` / `created_at` timestamp of every response: fixed, so snapshots are stable.
const CREATED_AT: u64 = 1_700_000_000;

impl ModelServer {
    /// Binds 127.0.0.1 on a free port and serves on the current tokio runtime.
    pub async fn start() -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding 127.0.0.1:0 works on any test machine");
        let address = listener
            .local_addr()
            .expect("a bound listener has an address");
        let shared = Arc::new(Shared::default());
        let (shutdown, shutdown_receiver) = watch::channel(false);
        let router = server::router(Arc::clone(&shared), shutdown_receiver.clone());
        let mut shutdown_signal = shutdown_receiver;
        tokio::spawn(async move {
            // Small scripted pieces go out at once instead of waiting for Nagle's algorithm.
            let listener = listener.tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
            let serving = axum::serve(listener, router).with_graceful_shutdown(async move {
                // An error means the handle is gone, which is also a shutdown.
                let _ = shutdown_signal.wait_for(|stop| *stop).await;
            });
            // Serving only fails if accepting fails; the handle's assertions report what matters.
            let _ = serving.await;
        });
        ModelServer {
            address,
            shared,
            shutdown,
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The `Model.base_url` a client of api `api` uses to reach this server, as in production:
    /// `{url}` for `anthropic-messages`, `{url}/v1` for `openai-completions` and
    /// `openai-responses`, `{url}/v1beta` for `google-generative-ai`. Panics on other names.
    pub fn base_url(&self, api: &str) -> String {
        let api = Api::from_name(api).unwrap_or_else(|| {
            panic!(
                "the scripted model server speaks anthropic-messages, openai-completions, \
                 openai-responses and google-generative-ai, not {api:?}"
            )
        });
        let suffix = match api {
            Api::AnthropicMessages => "",
            Api::OpenAiCompletions | Api::OpenAiResponses => "/v1",
            Api::GoogleGenerativeAi => "/v1beta",
        };
        format!("{}{suffix}", self.url())
    }

    /// A pi `models.json` declaring provider `scripted` with model `scripted-model` (reasoning,
    /// text and image input, a 200k window, Sonnet-like prices) served by this server through
    /// `api`, with key `scripted-key`. Write it to `PI_HOME/.pi/agent/models.json` (pi's
    /// place) or the daemon's config dir, and resolve the model as `scripted/scripted-model`.
    pub fn models_json(&self, api: &str) -> Value {
        serde_json::json!({"providers": {"scripted": {
            "baseUrl": self.base_url(api),
            "api": api,
            "apiKey": "scripted-key",
            "models": [{
                "id": "scripted-model",
                "name": "Scripted model",
                "reasoning": true,
                "input": ["text", "image"],
                "contextWindow": 200000,
                "maxTokens": 32000,
                "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
            }]
        }}})
    }

    /// Queues a turn; each request takes the oldest queued turn, whatever its route.
    pub fn push(&self, turn: impl Into<Turn>) {
        self.shared.lock().turns.push_back(turn.into());
    }

    /// Answers every request that finds no queued turn with `responder`, which computes the
    /// turn from the request (see [`crate::scenario`]). An `Err` is recorded as a violation
    /// and answered with HTTP 500.
    pub fn respond_with(
        &self,
        responder: impl Fn(&RecordedRequest) -> Result<Turn, String> + Send + Sync + 'static,
    ) {
        self.shared.lock().responder = Some(Arc::new(responder));
    }

    /// Every request received on an API route so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Serves the ChatGPT backend's WebSocket on the Codex path from now on (before, its
    /// upgrade is refused with 426 and clients go on over HTTP).
    pub fn serve_codex_websocket(&self) {
        self.shared.lock().codex_websocket = true;
    }

    /// How many WebSocket connections the Codex path accepted.
    pub fn websocket_connections(&self) -> usize {
        self.shared.lock().websocket_connections
    }

    /// How many requests arrived on API routes.
    pub fn calls(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// How many queued turns no request has taken yet.
    pub fn pending_turns(&self) -> usize {
        self.shared.lock().turns.len()
    }

    /// The violations recorded so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.shared.lock().violations.clone()
    }

    /// Returns and forgets the violations recorded so far, for tests that provoke them.
    pub fn take_violations(&self) -> Vec<Violation> {
        std::mem::take(&mut self.shared.lock().violations)
    }

    /// Panics, listing everything wrong, unless exactly `expected_calls` requests arrived,
    /// every queued turn was taken and nothing violated an invariant.
    pub fn assert_done(&self, expected_calls: usize) {
        let problems = {
            let state = self.shared.lock();
            let mut problems = Vec::new();
            if state.requests.len() != expected_calls {
                problems.push(format!(
                    "expected {expected_calls} model call(s), got {}",
                    state.requests.len()
                ));
            }
            problems.extend(state.problems());
            problems
        };
        assert!(
            problems.is_empty(),
            "scripted model server:\n  - {}",
            problems.join("\n  - ")
        );
    }

    /// Shuts the server down; panics, listing everything wrong, if a queued turn was never
    /// taken or anything violated an invariant (so every pushed turn was used exactly once).
    pub fn finish(self) {
        let problems = self.shared.lock().problems();
        assert!(
            problems.is_empty(),
            "scripted model server:\n  - {}",
            problems.join("\n  - ")
        );
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}

impl Api {
    /// The pi api name, e.g. `anthropic-messages`.
    pub fn name(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenAiCompletions => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::GoogleGenerativeAi => "google-generative-ai",
        }
    }

    /// The api with pi name `name`.
    pub fn from_name(name: &str) -> Option<Api> {
        [
            Api::AnthropicMessages,
            Api::OpenAiCompletions,
            Api::OpenAiResponses,
            Api::GoogleGenerativeAi,
        ]
        .into_iter()
        .find(|api| api.name() == name)
    }
}

impl fmt::Display for Api {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive), if present and valid text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The first value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.request, self.api) {
            (Some(request), Some(api)) => write!(formatter, "request #{request} ({api}): ")?,
            (Some(request), None) => write!(formatter, "request #{request}: ")?,
            (None, Some(api)) => write!(formatter, "{api}: ")?,
            (None, None) => {}
        }
        formatter.write_str(&self.message)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a test thread panicked; the state is still consistent
        // because every critical section is a few infallible pushes and pops.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    /// Unconsumed turns and violations, as sentences.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.turns.is_empty() {
            problems.push(format!(
                "{} queued turn(s) never requested (after {} model calls)",
                self.turns.len(),
                self.requests.len()
            ));
        }
        problems.extend(self.violations.iter().map(Violation::to_string));
        problems
    }
}

/// One SSE event with an `event:` line, as Anthropic and Responses send them.
fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// One SSE event with only a `data:` line, as chat completions sends them.
fn sse_data(data: &Value) -> String {
    format!("data: {data}\n\n")
}
