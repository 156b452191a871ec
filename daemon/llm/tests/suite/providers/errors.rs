//! Every way a request fails, in every wire format, ends the stream with one `error` event whose
//! [`Failure`](pi_llm::Failure) has the class the layers above act on: HTTP errors in each
//! API's own shape (429 with its delay, overload, 5xx, 401, 400, context overflow), streams
//! cut, truncated or malformed mid-way, in-stream error events, and a refused connection.
//! The retry policy then decides from those failures.

use std::time::Duration;

use pi_llm::{FailureKind, Model, RetryDecision, RetryPolicy, StopReason, is_context_overflow};
use pi_test_support::model_server::{ModelServer, ScriptErrorKind, Turn};

use super::{APIS, Run, ask, model, options, run, sections};

/// The failures scripted for every format, by name.
fn cases(api: &str) -> Vec<(&'static str, Turn)> {
    let overloaded_status = if api == "anthropic-messages" {
        529
    } else {
        503
    };
    let partial = || Turn::reply().text("Ein Teil der Antwort, dann nichts mehr.");
    let in_stream =
        |kind, message: &str| Turn::reply().text("So weit.").stream_error(kind, message);
    vec![
        (
            "429 retry-after",
            Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
                .header("retry-after", "3")
                .into(),
        ),
        (
            "429 retry-after-ms",
            Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
                .header("retry-after-ms", "1500")
                .into(),
        ),
        (
            "overloaded",
            Turn::api_error(overloaded_status, ScriptErrorKind::Overloaded, "Overloaded").into(),
        ),
        (
            "500",
            Turn::api_error(500, ScriptErrorKind::Server, "Internal server error").into(),
        ),
        (
            "401",
            Turn::api_error(401, ScriptErrorKind::Authentication, "Invalid API key.").into(),
        ),
        (
            "400 invalid",
            Turn::api_error(400, ScriptErrorKind::InvalidRequest, "tools.0: bad schema").into(),
        ),
        ("400 context overflow", Turn::context_overflow().into()),
        (
            "500 plain text",
            Turn::http_error(500, "upstream broke".into()).into(),
        ),
        ("disconnect", partial().disconnect_after(4).into()),
        ("truncate", partial().truncate_after(4).into()),
        ("malformed chunk", partial().malformed_after(4).into()),
        (
            "in-stream rate limit",
            in_stream(ScriptErrorKind::RateLimit, "Too many requests, slow down.").into(),
        ),
        (
            "in-stream overloaded",
            in_stream(ScriptErrorKind::Overloaded, "The service is busy.").into(),
        ),
        (
            "in-stream server error",
            in_stream(
                ScriptErrorKind::Server,
                "The server had an error while processing your request.",
            )
            .into(),
        ),
        (
            "in-stream auth",
            in_stream(
                ScriptErrorKind::Authentication,
                "Incorrect API key provided.",
            )
            .into(),
        ),
        (
            "in-stream context overflow",
            in_stream(
                ScriptErrorKind::ContextOverflow,
                "prompt is too long: 213462 tokens > 200000 maximum",
            )
            .into(),
        ),
    ]
}

/// One line per failure: the stop reason, class, status, delay, overflow detection, the
/// content kept, and the error message.
fn describe(name: &str, run: &Run, model: &Model) -> String {
    let message = &run.message;
    let failure = message
        .failure
        .expect("a failed stream carries its failure");
    let kept: Vec<&str> = message
        .content
        .iter()
        .map(|block| match block {
            pi_llm::AssistantContent::Text(_) => "text",
            pi_llm::AssistantContent::Thinking(_) => "thinking",
            pi_llm::AssistantContent::ToolCall(_) => "toolCall",
        })
        .collect();
    format!(
        "{name}: {:?} {:?} status={:?} retry_after={:?} overflow={} kept={kept:?}\n  {}",
        message.stop_reason,
        failure.kind,
        failure.status,
        failure.retry_after,
        is_context_overflow(message, Some(model.context_window)),
        message.error_message.as_deref().unwrap_or_default(),
    )
}

#[tokio::test]
async fn every_failure_is_classified() {
    let mut parts = Vec::new();
    for api in APIS {
        let server = ModelServer::start().await;
        let model = model(&server, api);
        let cases = cases(api);
        let n_cases = cases.len();
        let mut lines = Vec::new();
        for (name, turn) in cases {
            server.push(turn);
            let run = run(&model, &ask("Hi"), super::options()).await;
            assert_eq!(run.message.stop_reason, StopReason::Error, "{api} {name}");
            lines.push(describe(name, &run, &model));
        }
        server.assert_done(n_cases);
        parts.push((api, lines.join("\n")));
    }
    insta::assert_snapshot!(sections(parts));
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_failure() {
    // A port that was free a moment ago and has no listener now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = ModelServer::start().await;
    for api in APIS {
        let mut model = model(&server, api);
        model.base_url = model
            .base_url
            .replace(&server.url(), &format!("http://127.0.0.1:{port}"));
        let run = run(&model, &ask("Hi"), options()).await;
        let failure = run.message.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Connection, "{api}");
        assert!(failure.kind.is_retryable());
        let error = run.message.error_message.unwrap();
        // One line: the provider, where, what happened and what to check; no error chain.
        let url = format!("http://127.0.0.1:{port}/");
        assert!(
            error.starts_with(&format!(
                "connection error: cannot reach provider \"{}\" at {url}",
                model.provider
            )),
            "{api}: {error}"
        );
        assert!(
            error.contains(
                ": connection refused; check that the server is running and that \
                            baseUrl for"
            ),
            "{api}: {error}"
        );
        assert!(!error.contains("os error"), "{api}: {error}");
        assert!(!error.contains('\n'), "{api}: {error}");
    }
    server.assert_done(0);
}

/// pi's `retry.provider.timeoutMs`: a server that accepts the request and never answers
/// fails it as a retryable connection error naming the setting.
#[tokio::test]
async fn a_server_slower_than_the_request_timeout_is_a_connection_failure() {
    // Accepts connections and reads nothing, answers nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            sockets.push(socket);
        }
    });
    let server = ModelServer::start().await;
    for api in APIS {
        let mut model = model(&server, api);
        model.base_url = model
            .base_url
            .replace(&server.url(), &format!("http://127.0.0.1:{port}"));
        let options = pi_llm::StreamOptions {
            request_timeout: Some(Duration::from_millis(200)),
            ..options()
        };
        let run = run(&model, &ask("Hi"), options).await;
        let failure = run.message.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Connection, "{api}");
        assert!(failure.kind.is_retryable());
        let error = run.message.error_message.unwrap();
        assert!(
            error.starts_with(&format!(
                "connection error: provider \"{}\" at http://127.0.0.1:{port}/",
                model.provider
            )),
            "{api}: {error}"
        );
        assert!(
            error.ends_with(
                "did not answer within 200 ms (retry.provider.timeoutMs in settings.json); \
                 raise it for slow servers"
            ),
            "{api}: {error}"
        );
    }
    held.abort();
    server.assert_done(0);
}

/// `https://` to a server that speaks plain HTTP: the TLS handshake fails, and the message
/// says so and what to check.
#[tokio::test]
async fn a_failed_tls_handshake_says_what_to_check() {
    let server = ModelServer::start().await;
    let mut model = model(&server, "openai-completions");
    model.base_url = model.base_url.replace("http://", "https://");
    let run = run(&model, &ask("Hi"), options()).await;
    assert_eq!(run.message.failure.unwrap().kind, FailureKind::Connection);
    let error = run.message.error_message.unwrap();
    assert!(
        error.starts_with(&format!(
            "connection error: the TLS handshake with provider \"{}\" at https://",
            model.provider
        )),
        "{error}"
    );
    assert!(
        error.ends_with("use http:// for a local server without TLS"),
        "{error}"
    );
    server.assert_done(0);
}

/// A host that does not resolve (`.invalid` is reserved and never resolves, RFC 6761; with
/// no resolver at all the lookup fails the same way): the message names the host's provider
/// and says to check the host name.
#[tokio::test]
async fn an_unknown_host_says_to_check_the_host_name() {
    let server = ModelServer::start().await;
    let mut model = model(&server, "anthropic-messages");
    model.base_url = "http://pi-daemon-test.invalid:9".to_owned();
    let run = run(&model, &ask("Hi"), options()).await;
    assert_eq!(run.message.failure.unwrap().kind, FailureKind::Connection);
    let error = run.message.error_message.unwrap();
    assert_eq!(
        error,
        format!(
            "connection error: cannot find the host of provider \"{}\" \
             (http://pi-daemon-test.invalid:9/v1/messages); check the host name in its baseUrl \
             and your network",
            model.provider
        )
    );
    server.assert_done(0);
}

#[tokio::test]
async fn context_overflow_is_detected_from_the_message() {
    for api in APIS {
        let server = ModelServer::start().await;
        server.push(Turn::context_overflow());
        let model = model(&server, api);
        let run = run(&model, &ask("Hi"), options()).await;
        assert_eq!(
            run.message.failure.unwrap().kind,
            FailureKind::ContextOverflow
        );
        assert!(
            is_context_overflow(&run.message, Some(model.context_window)),
            "{api}"
        );
        // Stored messages lose the failure; the text alone still tells.
        let mut stored = run.message.clone();
        stored.failure = None;
        assert!(is_context_overflow(&stored, None), "{api}: {stored:?}");
        server.assert_done(1);
    }
}

#[tokio::test]
async fn the_retry_policy_honours_the_servers_delay() {
    let check = |header: &'static str, value: &'static str, delay: Duration| async move {
        for api in APIS {
            let server = ModelServer::start().await;
            server.push(
                Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
                    .header(header, value),
            );
            let run = run(&model(&server, api), &ask("Hi"), options()).await;
            server.assert_done(1);
            let failure = RetryPolicy::failure_of(&run.message).unwrap();
            assert_eq!(failure.kind, FailureKind::RateLimited, "{api}");
            assert_eq!(failure.retry_after, Some(delay), "{api}");
            let policy = RetryPolicy::default();
            assert_eq!(
                policy.decide(&failure, 0),
                RetryDecision::RetryAfter { attempt: 1, delay },
                "{api}"
            );
            // A longer wait than the policy accepts fails at once.
            let impatient = RetryPolicy {
                max_delay: delay / 2,
                ..policy
            };
            assert_eq!(
                impatient.decide(&failure, 0),
                RetryDecision::DelayTooLong(delay),
                "{api}"
            );
        }
    };
    check("retry-after", "3", Duration::from_secs(3)).await;
    check("retry-after-ms", "250", Duration::from_millis(250)).await;
}

#[tokio::test]
async fn failures_the_policy_does_not_retry() {
    let server = ModelServer::start().await;
    let model = model(&server, "anthropic-messages");
    let policy = RetryPolicy::default();
    let mut decisions = Vec::new();
    for (name, turn) in cases("anthropic-messages") {
        server.push(turn);
        let run = run(&model, &ask("Hi"), options()).await;
        let failure = RetryPolicy::failure_of(&run.message).unwrap();
        decisions.push(format!("{name}: {:?}", policy.decide(&failure, 0)));
    }
    server.assert_done(decisions.len());
    insta::assert_snapshot!(decisions.join("\n"));
}

/// pi's `retry.provider.maxRetries`: the formats pi sends through Anthropic's and OpenAI's
/// SDKs send a request again after a 429 or a 5xx (waiting what the server asks for) until
/// one succeeds or the retries are spent; what the server marks not retryable, and other
/// formats, are not sent again; unset, nothing is.
#[tokio::test]
async fn retry_provider_max_retries_sends_the_request_again_as_the_sdks_do() {
    let with_retries = |retries| pi_llm::StreamOptions {
        provider_retries: retries,
        ..options()
    };
    let busy = || {
        Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
            .header("retry-after-ms", "10")
    };
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
    ] {
        // Two failures, two retries: the third request answers.
        let server = ModelServer::start().await;
        server.push(busy());
        server.push(Turn::api_error(
            500,
            ScriptErrorKind::Server,
            "Internal server error",
        ));
        server.push(Turn::reply().text("Endlich."));
        let ran = run(&model(&server, api), &ask("Hi"), with_retries(Some(2))).await;
        assert_eq!(ran.message.stop_reason, StopReason::Stop, "{api}");
        assert!(
            matches!(&ran.message.content[..], [pi_llm::AssistantContent::Text(text)] if text.text == "Endlich."),
            "{api}: {:?}",
            ran.message.content
        );
        server.assert_done(3);

        // Spent: the last failure is the stream's.
        let server = ModelServer::start().await;
        server.push(busy());
        server.push(busy());
        let ran = run(&model(&server, api), &ask("Hi"), with_retries(Some(1))).await;
        assert_eq!(
            ran.message.failure.map(|failure| failure.kind),
            Some(FailureKind::RateLimited),
            "{api}"
        );
        server.assert_done(2);

        // The server says not to.
        let server = ModelServer::start().await;
        server.push(busy().header("x-should-retry", "false"));
        let ran = run(&model(&server, api), &ask("Hi"), with_retries(Some(3))).await;
        assert_eq!(ran.message.stop_reason, StopReason::Error, "{api}");
        server.assert_done(1);

        // Unset: not retried.
        let server = ModelServer::start().await;
        server.push(busy());
        let ran = run(&model(&server, api), &ask("Hi"), with_retries(None)).await;
        assert_eq!(ran.message.stop_reason, StopReason::Error, "{api}");
        server.assert_done(1);
    }
    // A 400 is the caller's mistake: never sent again.
    let server = ModelServer::start().await;
    server.push(Turn::api_error(
        400,
        ScriptErrorKind::InvalidRequest,
        "tools.0: bad schema",
    ));
    let ran = run(
        &model(&server, "anthropic-messages"),
        &ask("Hi"),
        with_retries(Some(3)),
    )
    .await;
    assert_eq!(ran.message.stop_reason, StopReason::Error);
    server.assert_done(1);
    // Google's SDK is not pi's retrying kind.
    let server = ModelServer::start().await;
    server.push(busy());
    let ran = run(
        &model(&server, "google-generative-ai"),
        &ask("Hi"),
        with_retries(Some(3)),
    )
    .await;
    assert_eq!(ran.message.stop_reason, StopReason::Error);
    server.assert_done(1);
}

/// A connection that fails before any response is retried too, and cancelling ends the
/// retries at once.
#[tokio::test]
async fn a_dropped_connection_is_retried_and_a_cancel_ends_the_retries() {
    // Accepts each connection and closes it unanswered, counting them.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (accepted, mut accepts) = tokio::sync::mpsc::unbounded_channel();
    let closer = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
            let _ = accepted.send(());
        }
    });
    let server = ModelServer::start().await;
    let mut model = model(&server, "anthropic-messages");
    model.base_url = model
        .base_url
        .replace(&server.url(), &format!("http://127.0.0.1:{port}"));
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = pi_llm::StreamOptions {
        provider_retries: Some(1000),
        cancel: cancel.clone(),
        ..options()
    };
    let stream =
        pi_llm::Provider::stream(&pi_llm::ProviderRouter::new(), &model, &ask("Hi"), options);
    // The request, then its first retry.
    accepts.recv().await.unwrap();
    accepts.recv().await.unwrap();
    // The waits grow to 8 s each, a thousand times: only the cancel ends this.
    cancel.cancel();
    let message = stream.result().await;
    assert_eq!(message.stop_reason, StopReason::Aborted);
    closer.abort();
    server.assert_done(0);
}

/// pi's `retry.provider.maxRetryDelayMs`: a provider that asks for a longer wait fails the
/// request with a message that says why it is not retried (pi's "informative error").
#[tokio::test]
async fn a_wait_longer_than_the_cap_is_said_in_the_error() {
    for api in APIS {
        let server = ModelServer::start().await;
        server.push(
            Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
                .header("retry-after", "5"),
        );
        server.push(
            Turn::api_error(429, ScriptErrorKind::RateLimit, "Rate limit reached.")
                .header("retry-after", "5"),
        );
        let capped = pi_llm::StreamOptions {
            max_retry_delay: Some(Duration::from_secs(1)),
            ..options()
        };
        let ran = run(&model(&server, api), &ask("Hi"), capped).await;
        let error = ran.message.error_message.unwrap();
        assert!(
            error.ends_with(
                "(the provider asked to wait 5 s before retrying, longer than the 1 s \
                 retry.provider.maxRetryDelayMs allows; not retried — raise it, or 0 for no cap)"
            ),
            "{api}: {error}"
        );
        // No cap: the provider's words alone.
        let ran = run(&model(&server, api), &ask("Hi"), options()).await;
        let error = ran.message.error_message.unwrap();
        assert!(!error.contains("maxRetryDelayMs"), "{api}: {error}");
        server.assert_done(2);
    }
}
