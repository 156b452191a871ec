//! A sentinel API key never appears in logs (every `tracing` event at TRACE, captured while
//! requests succeed, fail with a 401 whose body echoes the key, fail in-stream with the key in
//! the message, and fail to connect), in any error message, or in the `Debug` of the options,
//! the prepared request, the events and the messages, in any wire format.

use std::io::Write;
use std::sync::{Arc, Mutex};

use pi_llm::providers::{anthropic, google, openai_completions, openai_responses};
use pi_llm::{ApiKey, StreamOptions};
use pi_test_support::model_server::{ModelServer, ScriptErrorKind, Turn};
use serde_json::json;
use tracing_subscriber::fmt::MakeWriter;

use super::{APIS, ask, model, run};

const SENTINEL: &str = "sk-SENTINEL-9f3a";

/// Log output shared between the subscriber and the test.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

fn sentinel_options() -> StreamOptions {
    StreamOptions {
        api_key: Some(ApiKey::new(SENTINEL)),
        ..StreamOptions::default()
    }
}

/// Runs every request on this thread's runtime and returns everything printable they produced.
async fn exercise() -> String {
    let mut printed = Vec::new();
    let server = ModelServer::start().await;
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for api in APIS {
        let model = model(&server, api);
        server.push(
            Turn::reply()
                .text("fine")
                .tool_call("call_1", "read", json!({"p": 1})),
        );
        server.push(Turn::http_error(
            401,
            json!({"error": {"type": "invalid_request_error", "code": "invalid_api_key",
                   "message": format!("Incorrect API key provided: {SENTINEL}.")}}),
        ));
        server.push(Turn::http_error(401, format!("bad key {SENTINEL}").into()));
        server.push(Turn::reply().text("so far").stream_error(
            ScriptErrorKind::Authentication,
            format!("key {SENTINEL} revoked"),
        ));
        let mut errors = 0;
        for _ in 0..4 {
            let run = run(&model, &ask("Hi"), sentinel_options()).await;
            if let Some(error) = &run.message.error_message {
                assert!(error.contains("***"), "{api}: the key is masked: {error}");
                errors += 1;
            }
            printed.push(format!("{run:?}"));
            printed.extend(run.message.error_message);
        }
        assert_eq!(errors, 3, "{api}");

        let mut unreachable = model.clone();
        unreachable.base_url = unreachable
            .base_url
            .replace(&server.url(), &format!("http://127.0.0.1:{closed_port}"));
        let run = run(&unreachable, &ask("Hi"), sentinel_options()).await;
        printed.push(format!("{run:?}"));

        let options = sentinel_options();
        let context = ask("Hi");
        let request = match api {
            "anthropic-messages" => anthropic::build_request(&model, &context, &options),
            "openai-completions" => openai_completions::build_request(&model, &context, &options),
            "openai-responses" => openai_responses::build_request(&model, &context, &options),
            _ => google::build_request(&model, &context, &options),
        };
        printed.push(format!("{options:?} {request:?} {model:?}"));
    }
    server.assert_done(16);
    // The server did receive the key: the requests above were authenticated.
    let sent = server
        .requests()
        .iter()
        .filter(|request| format!("{:?}", request.headers).contains(SENTINEL))
        .count();
    assert_eq!(sent, 16);
    printed.join("\n")
}

#[test]
fn a_sentinel_key_never_leaks() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(logs.clone())
        .finish();
    // tracing caches whether a callsite is enabled when it is first hit. With one registered
    // dispatcher, a callsite first hit by another test's thread would be cached as disabled
    // (that thread has no subscriber) and this test would miss its events; a second registered
    // dispatcher, alive for the test, makes the cache ask every dispatcher instead.
    let _second_dispatcher = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    // A current-thread runtime inside the scoped subscriber: every task, the providers' and
    // the server's, logs to it.
    let printed = tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(exercise())
    });
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("provider responded"),
        "the capture works: {logs}"
    );
    assert!(!logs.contains("SENTINEL-9f3a"), "{logs}");
    assert!(!printed.contains("SENTINEL-9f3a"), "{printed}");
}
