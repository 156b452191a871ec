//! The scripted model server, driven by a plain HTTP client as a provider client would.

mod faults;
mod invariants;
mod wire;

use bytes::Bytes;
use futures_util::StreamExt as _;
use pi_test_support::model_server::ModelServer;
use serde_json::{Value, json};

/// The four api names the server speaks.
const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

/// The model every request asks for.
const MODEL: &str = "scripted-model";

/// A plain HTTP client. The workspace builds reqwest with rustls but no built-in crypto
/// provider (pi-llm installs ring when it builds its client), so install ring here too.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Posts `body` to `api`'s route with the headers a production client sends, resolving the
/// route from `base_url` exactly as a client does from `Model.base_url`.
async fn post(server: &ModelServer, api: &str, body: &Value) -> reqwest::Response {
    let client = http_client();
    let base_url = server.base_url(api);
    let request = match api {
        "anthropic-messages" => client
            .post(format!("{base_url}/v1/messages"))
            .header("x-api-key", "sk-ant-test")
            .header("anthropic-version", "2023-06-01"),
        "openai-completions" => client
            .post(format!("{base_url}/chat/completions"))
            .bearer_auth("sk-test"),
        "openai-responses" => client
            .post(format!("{base_url}/responses"))
            .bearer_auth("sk-test"),
        "google-generative-ai" => client
            .post(format!(
                "{base_url}/models/{MODEL}:streamGenerateContent?alt=sse"
            ))
            .header("x-goog-api-key", "gemini-test"),
        other => panic!("unknown api {other}"),
    };
    request.json(body).send().await.unwrap()
}

/// A well-formed request for `api` with one user message, asking for usage and encrypted
/// reasoning where the API needs asking.
fn request_body(api: &str) -> Value {
    match api {
        "anthropic-messages" => json!({
            "model": MODEL, "max_tokens": 1024, "stream": true,
            "messages": [{"role": "user", "content": "Read src/main.rs"}],
        }),
        "openai-completions" => json!({
            "model": MODEL, "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "Read src/main.rs"}],
        }),
        "openai-responses" => json!({
            "model": MODEL, "stream": true, "include": ["reasoning.encrypted_content"],
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "Read src/main.rs"}]}],
        }),
        "google-generative-ai" => json!({
            "contents": [{"role": "user", "parts": [{"text": "Read src/main.rs"}]}],
        }),
        other => panic!("unknown api {other}"),
    }
}

/// Reads the whole body as the network delivered it: its pieces, and the error that ended
/// it early, if any.
async fn read_pieces(response: reqwest::Response) -> (Vec<Bytes>, Option<reqwest::Error>) {
    let mut stream = response.bytes_stream();
    let mut pieces = Vec::new();
    while let Some(piece) = stream.next().await {
        match piece {
            Ok(piece) => pieces.push(piece),
            Err(error) => return (pieces, Some(error)),
        }
    }
    (pieces, None)
}

/// The body as text, with CR shown as `\r` so snapshots keep Gemini's CRLF visible.
fn body_text(pieces: &[Bytes]) -> String {
    let bytes: Vec<u8> = pieces
        .iter()
        .flat_map(|piece| piece.iter().copied())
        .collect();
    String::from_utf8(bytes).unwrap().replace('\r', "\\r")
}

/// The `data:` payloads of an SSE body, parsed (`[DONE]` kept as a string).
fn data_events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| data.trim_end_matches("\\r"))
        .map(|data| serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.to_owned())))
        .collect()
}
