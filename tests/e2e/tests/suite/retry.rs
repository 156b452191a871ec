//! Automatic retries against the real daemon and scripted provider failures: 429 with
//! `Retry-After`, 529 and a cut stream are retried until a reply succeeds; the failed replies
//! stay in the tree but are never sent again; a pending retry can be cancelled; errors that
//! are not transient are not retried.

use pi_protocol::v1::message::{AgentMessage, StopReason};
use pi_protocol::v1::{
    ReadScope, SessionAbortRetry, SessionEntry, SessionEvent, SessionIdParams, SessionPrompt,
    SessionRead, SessionReadParams,
};
use pi_test_support::events::{events_until, kind, run_events};
use pi_test_support::model_server::{ScriptErrorKind, Turn};

use super::harness::{World, prompt};

/// Why each assistant message of the session's branch stopped, in order.
async fn assistant_stops(client: &pi_client::Client, session_id: &str) -> Vec<StopReason> {
    let read = client
        .call::<SessionRead>(&SessionReadParams {
            session_id: session_id.to_owned(),
            scope: ReadScope::Branch,
            limit: None,
            cursor: None,
        })
        .await
        .unwrap();
    read.entries
        .iter()
        .filter_map(|record| match &record.entry {
            SessionEntry::Message {
                message: AgentMessage::Assistant(assistant),
                ..
            } => Some(assistant.stop_reason),
            _ => None,
        })
        .collect()
}

fn retry_settings(base_delay_ms: u64) -> (&'static str, String) {
    (
        ".pi/agent/settings.json",
        serde_json::json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": base_delay_ms}})
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_are_retried_until_a_reply_succeeds() {
    let world = World::start_with("anthropic-messages", &[retry_settings(1)]).await;
    let (client, mut events) = world.client().await;
    let session = world.attached_session(&client).await;
    world.server.push(
        Turn::api_error(
            429,
            ScriptErrorKind::RateLimit,
            "Number of requests exceeded",
        )
        .header("retry-after", "0"),
    );
    world.server.push(Turn::api_error(
        529,
        ScriptErrorKind::Overloaded,
        "Overloaded",
    ));
    world.server.push(
        Turn::reply()
            .text("this stream gets cut")
            .disconnect_after(4),
    );
    world.server.push(Turn::reply().text("Finally."));

    client
        .call::<SessionPrompt>(&prompt(&session.id, "hello"))
        .await
        .unwrap();
    let seen = events_until(&mut events, &session.id, |event| {
        kind(event) == "auto_retry_end"
    })
    .await;
    let retries: Vec<(u32, u64)> = seen
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::AutoRetryStart {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    // Retry-After: 0 is honoured; then pi's doubling from the 1 ms base.
    assert_eq!(retries, vec![(1, 0), (2, 2), (3, 4)]);
    let errors: Vec<String> = seen
        .iter()
        .filter_map(|event| match &event.event {
            SessionEvent::AutoRetryStart { error_message, .. } => Some(error_message.clone()),
            _ => None,
        })
        .collect();
    assert!(errors[0].starts_with("429"), "{errors:?}");
    assert!(errors[1].starts_with("529"), "{errors:?}");
    assert!(errors[2].contains("stream ended"), "{errors:?}");
    assert_eq!(
        seen.last().unwrap().event,
        SessionEvent::AutoRetryEnd {
            success: true,
            attempt: 3,
            final_error: None
        }
    );
    run_events(&mut events, &session.id).await;

    // Every request carried only the user's message: failed replies are never sent again.
    let requests = world.server.requests();
    for request in &requests {
        let roles: Vec<&str> = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user"]);
    }
    // ...but they are kept in the tree.
    let stops = assistant_stops(&client, &session.id).await;
    assert_eq!(
        stops,
        [
            StopReason::Error,
            StopReason::Error,
            StopReason::Error,
            StopReason::Stop
        ]
    );
    world.server.assert_done(4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_retry_can_be_cancelled_and_auth_errors_are_not_retried() {
    let world = World::start_with("openai-completions", &[retry_settings(60_000)]).await;
    let (client, mut events) = world.client().await;
    let session = world.attached_session(&client).await;
    world.server.push(Turn::api_error(
        500,
        ScriptErrorKind::Server,
        "The server had an error",
    ));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "hello"))
        .await
        .unwrap();
    let seen = events_until(&mut events, &session.id, |event| {
        kind(event) == "auto_retry_start"
    })
    .await;
    let SessionEvent::AutoRetryStart { delay_ms, .. } = seen.last().unwrap().event else {
        unreachable!()
    };
    assert_eq!(delay_ms, 60_000);
    // While waiting, the session is busy.
    let busy = client
        .call::<SessionPrompt>(&prompt(&session.id, "again"))
        .await
        .unwrap_err();
    assert!(busy.to_string().contains("session/abortRetry"), "{busy}");
    client
        .call::<SessionAbortRetry>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    let ended = events_until(&mut events, &session.id, |event| {
        kind(event) == "auto_retry_end"
    })
    .await;
    assert_eq!(
        ended.last().unwrap().event,
        SessionEvent::AutoRetryEnd {
            success: false,
            attempt: 1,
            final_error: Some("Retry cancelled".to_owned())
        }
    );

    // An authentication failure is final: no retry, the error is the reply.
    world.server.push(Turn::api_error(
        401,
        ScriptErrorKind::Authentication,
        "Incorrect API key provided",
    ));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "with a bad key"))
        .await
        .unwrap();
    let run = run_events(&mut events, &session.id).await;
    assert!(
        !run.iter()
            .any(|event| kind(event).starts_with("auto_retry")),
        "{:?}",
        run.iter().map(kind).collect::<Vec<_>>()
    );
    world.server.assert_done(2);
}

/// pi's `retry.provider.maxRetries`: the provider's client sends a failed request again
/// before the agent sees the failure, so two rate limits end in the reply with no automatic
/// retry of the agent's and no failed reply in the tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_provider_max_retries_retries_below_the_agent() {
    let settings = (
        ".pi/agent/settings.json",
        serde_json::json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 1,
            "provider": {"maxRetries": 2}}})
        .to_string(),
    );
    let world = World::start_with("anthropic-messages", &[settings]).await;
    let (client, mut events) = world.client().await;
    let session = world.attached_session(&client).await;
    for _ in 0..2 {
        world.server.push(
            Turn::api_error(429, ScriptErrorKind::RateLimit, "Slow down")
                .header("retry-after-ms", "5"),
        );
    }
    world.server.push(Turn::reply().text("Through."));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "hello"))
        .await
        .unwrap();
    let seen = run_events(&mut events, &session.id).await;
    assert!(
        !seen
            .iter()
            .any(|event| kind(event).starts_with("auto_retry")),
        "{seen:?}"
    );
    let stops = assistant_stops(&client, &session.id).await;
    assert_eq!(stops, [StopReason::Stop]);
    world.server.assert_done(3);
}
