//! Faults: cut streams, holds, malformed events, split bodies, an empty script.

use std::panic::AssertUnwindSafe;

use futures_util::StreamExt as _;
use pi_test_support::model_server::{Gate, ModelServer, Reply, Turn};
use serde_json::json;

use super::{body_text, post, read_pieces, request_body};

const API: &str = "anthropic-messages";

fn turn() -> Reply {
    Turn::reply()
        .thinking("Hmm, ünïcödé ✓✓✓")
        .text("Wörds with multi-byte characters: 日本語 ✓")
        .tool_call("call_1", "edit", json!({"path": "ä.rs", "text": "→"}))
}

/// The body `reply` streams, read whole.
async fn streamed(reply: Reply) -> String {
    let server = ModelServer::start().await;
    server.push(reply);
    let (pieces, error) = read_pieces(post(&server, API, &request_body(API)).await).await;
    assert!(error.is_none(), "{error:?}");
    server.finish();
    body_text(&pieces)
}

/// The first `n` SSE events of `body`.
fn first_events(body: &str, n: usize) -> String {
    body.split_inclusive("\n\n").take(n).collect()
}

#[tokio::test]
async fn disconnect_cuts_the_connection_after_n_events() {
    let full = streamed(turn()).await;
    let server = ModelServer::start().await;
    server.push(turn().disconnect_after(3));
    let (pieces, error) = read_pieces(post(&server, API, &request_body(API)).await).await;
    assert!(error.is_some(), "the client must see a transport error");
    assert_eq!(body_text(&pieces), first_events(&full, 3));
    server.finish();
}

#[tokio::test]
async fn truncate_ends_the_body_cleanly_after_n_events() {
    let full = streamed(turn()).await;
    let truncated = streamed(turn().truncate_after(4)).await;
    assert_eq!(truncated, first_events(&full, 4));
    assert!(!truncated.contains("message_stop"));
}

#[tokio::test]
async fn malformed_event_is_inserted_after_n_events() {
    let full = streamed(turn()).await;
    let body = streamed(turn().malformed_after(2)).await;
    let events: Vec<&str> = body.split_inclusive("\n\n").collect();
    assert!(
        serde_json::from_str::<serde_json::Value>(events[2].lines().nth(1).unwrap()[6..].trim())
            .is_err()
    );
    assert_eq!(events.len(), full.split_inclusive("\n\n").count() + 1);
    let without: String = events
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 2)
        .map(|(_, event)| *event)
        .collect();
    assert_eq!(without, full);
}

#[tokio::test]
async fn hold_stops_the_stream_until_released() {
    let full = streamed(turn()).await;
    let gate = Gate::new();
    let server = ModelServer::start().await;
    server.push(turn().hold_after(2, &gate));
    let response = post(&server, API, &request_body(API)).await;
    gate.reached().await;
    // The server waits at the gate, so exactly two events can arrive until it opens.
    let mut stream = response.bytes_stream();
    let mut received = Vec::new();
    while body_text(&received).matches("\n\n").count() < 2 {
        received.push(stream.next().await.unwrap().unwrap());
    }
    assert_eq!(body_text(&received), first_events(&full, 2));
    gate.release();
    while let Some(piece) = stream.next().await {
        received.push(piece.unwrap());
    }
    assert_eq!(body_text(&received), full);
    server.finish();
}

#[tokio::test]
async fn split_body_arrives_in_small_pieces_that_reassemble() {
    let full = streamed(turn()).await;
    let server = ModelServer::start().await;
    server.push(turn().body_split_bytes(5));
    let (pieces, error) = read_pieces(post(&server, API, &request_body(API)).await).await;
    assert!(error.is_none());
    assert!(pieces.iter().all(|piece| piece.len() <= 5));
    assert!(pieces.len() >= full.len() / 5);
    assert!(
        pieces
            .iter()
            .any(|piece| std::str::from_utf8(piece).is_err()),
        "some piece should end inside a multi-byte character"
    );
    assert_eq!(body_text(&pieces), full);
    server.finish();
}

#[tokio::test]
async fn empty_script_answers_500_and_finish_reports_it() {
    let server = ModelServer::start().await;
    let response = post(&server, API, &request_body(API)).await;
    assert_eq!(response.status().as_u16(), 500);
    let body: serde_json::Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("scripted model server: no turn queued for this request"));
    let panic = std::panic::catch_unwind(AssertUnwindSafe(|| server.finish())).unwrap_err();
    insta::assert_snapshot!(panic.downcast_ref::<String>().unwrap());
}

#[tokio::test]
async fn assert_done_reports_call_count_and_unused_turns() {
    let server = ModelServer::start().await;
    server.push(Turn::reply().text("never asked for"));
    let panic = std::panic::catch_unwind(AssertUnwindSafe(|| server.assert_done(1))).unwrap_err();
    insta::assert_snapshot!(panic.downcast_ref::<String>().unwrap());
}

#[tokio::test]
async fn unknown_route_is_a_404_and_a_violation() {
    let server = ModelServer::start().await;
    let response = super::http_client()
        .post(format!("{}/v1/complete", server.url()))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    let violations = server.take_violations();
    assert_eq!(violations.len(), 1);
    assert!(
        violations[0]
            .message
            .contains("no route for POST /v1/complete")
    );
    server.assert_done(0);
}

#[tokio::test(start_paused = true)]
async fn delay_each_paces_every_event() {
    let delay = std::time::Duration::from_secs(1);
    let server = ModelServer::start().await;
    server.push(Turn::reply().text("abc").delay_each(delay));
    let started = tokio::time::Instant::now();
    let (pieces, _) = read_pieces(post(&server, API, &request_body(API)).await).await;
    let n_events = body_text(&pieces).matches("\n\n").count() as u32;
    assert!(started.elapsed() >= delay * n_events);
    server.finish();
}
