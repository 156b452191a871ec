//! Cancelling `StreamOptions.cancel` ends a stream promptly with an `aborted` error that keeps
//! what arrived, while the server still holds the response open (its gate is never
//! released): mid-body, before the first event, and before the request is even sent.

use std::time::Duration;

use pi_llm::{
    AssistantContent, ErrorReason, FailureKind, Provider, ProviderRouter, StopReason, StreamEvent,
    StreamOptions,
};
use pi_test_support::model_server::{Gate, ModelServer, Turn};
use tokio_util::sync::CancellationToken;

use super::{APIS, ask, check_sequence, model, options};

/// How long an abort may take before the test fails: far more than it ever needs.
const PROMPTLY: Duration = Duration::from_secs(5);

/// When a test cancels.
#[derive(Clone, Copy, PartialEq)]
enum CancelWhen {
    /// Once the server holds the stream.
    GateReached,
    /// Once the server holds the stream and the first text delta arrived.
    TextArrived,
}

/// Streams a reply held after `hold_after` events, cancels `when` asked, and returns the
/// terminal message.
async fn check(api: &str, hold_after: usize, when: CancelWhen) -> pi_llm::AssistantMessage {
    let server = ModelServer::start().await;
    let gate = Gate::new();
    server.push(
        Turn::reply()
            .text("Eins zwei drei vier fünf sechs sieben acht neun zehn.")
            .hold_after(hold_after, &gate),
    );
    let cancel = CancellationToken::new();
    let options = StreamOptions {
        cancel: cancel.clone(),
        ..options()
    };
    let mut stream = ProviderRouter::new().stream(&model(&server, api), &ask("Hi"), options);
    let mut events = Vec::new();
    gate.reached().await;
    if when == CancelWhen::TextArrived {
        loop {
            let event = stream.next().await.expect("the stream is held, not ended");
            assert!(
                !event.is_terminal(),
                "{api}: ended before the abort: {event:?}"
            );
            let text = matches!(event, StreamEvent::TextDelta { .. });
            events.push(event);
            if text {
                break;
            }
        }
    }
    cancel.cancel();
    let rest = tokio::time::timeout(PROMPTLY, async {
        while let Some(event) = stream.next().await {
            events.push(event);
        }
    });
    rest.await
        .unwrap_or_else(|_| panic!("{api}: no terminal event {PROMPTLY:?} after the abort"));
    let message = check_sequence(&events);
    let Some(StreamEvent::Error { reason, .. }) = events.last() else {
        panic!("{api}: expected an error, got {:?}", events.last());
    };
    assert_eq!(*reason, ErrorReason::Aborted, "{api}");
    assert_eq!(message.stop_reason, StopReason::Aborted, "{api}");
    assert_eq!(message.failure.map(|f| f.kind), Some(FailureKind::Aborted));
    assert_eq!(
        message.error_message.as_deref(),
        Some("Request was aborted")
    );
    server.assert_done(1);
    message
}

#[tokio::test]
async fn aborting_mid_stream_keeps_what_arrived() {
    for api in APIS {
        // Enough events for the text to have started in every format.
        let message = check(api, 6, CancelWhen::TextArrived).await;
        let Some(AssistantContent::Text(text)) = message.content.first() else {
            panic!("{api}: the partial text is kept: {message:?}");
        };
        assert!(text.text.starts_with("Eins"), "{api}: {:?}", text.text);
        assert!(
            text.text.len() < 50,
            "{api}: not the whole text: {:?}",
            text.text
        );
    }
}

#[tokio::test]
async fn aborting_before_the_first_event() {
    for api in APIS {
        let message = check(api, 0, CancelWhen::GateReached).await;
        assert!(message.content.is_empty(), "{api}: {message:?}");
    }
}

#[tokio::test]
async fn a_cancelled_request_is_never_sent() {
    let server = ModelServer::start().await;
    for api in APIS {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let options = StreamOptions {
            cancel,
            ..options()
        };
        let message = ProviderRouter::new()
            .stream(&model(&server, api), &ask("Hi"), options)
            .result()
            .await;
        assert_eq!(message.stop_reason, StopReason::Aborted, "{api}");
    }
    server.assert_done(0);
}
