//! `ui/*`: a question reaches every attached client, the first answer wins, everyone hears
//! it resolved, latecomers get pending questions on attach, and a question ends cancelled when
//! it times out or its asker goes away.

use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::*;

use super::harness::TestDaemon;

/// The next notification named `method` (others are skipped), as typed params.
async fn next<T: serde::de::DeserializeOwned>(
    notifications: &mut Notifications,
    method: &str,
) -> T {
    loop {
        let notification = tokio::time::timeout(Duration::from_secs(10), notifications.next())
            .await
            .unwrap_or_else(|_| panic!("no {method} notification in time"))
            .expect("the connection is open");
        if notification.method == method {
            return serde_json::from_value(notification.params.unwrap()).unwrap();
        }
    }
}

async fn attach(client: &Client, session_id: &str) {
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session_id.to_owned(),
            after_seq: None,
        })
        .await
        .unwrap();
}

fn select(session_id: &str, timeout_ms: Option<u64>) -> UiAskParams {
    UiAskParams {
        session_id: session_id.to_owned(),
        request: UiRequest::Select {
            title: "Which one?".into(),
            options: vec!["one".into(), "two".into()],
            multiple: false,
        },
        timeout_ms,
    }
}

fn respond(session_id: &str, request_id: &str, value: &str) -> UiRespondParams {
    UiRespondParams {
        session_id: session_id.to_owned(),
        request_id: request_id.to_owned(),
        answer: UiAnswer {
            value: Some(value.to_owned()),
            ..UiAnswer::default()
        },
    }
}

#[tokio::test]
async fn the_first_answer_wins_and_everyone_hears_it() {
    let daemon = TestDaemon::start().await;
    let (alice, mut alice_events) = daemon.client().await;
    let (bob, mut bob_events) = daemon.client().await;
    let (asker, _asker_events) = daemon.client().await;
    let session = daemon.create_session(&alice).await;
    attach(&alice, &session.id).await;
    attach(&bob, &session.id).await;

    let question = tokio::spawn({
        let params = select(&session.id, None);
        async move { asker.call::<UiAsk>(&params).await }
    });
    let to_alice: UiRequestParams = next(&mut alice_events, "ui/request").await;
    let to_bob: UiRequestParams = next(&mut bob_events, "ui/request").await;
    assert_eq!(to_alice, to_bob);
    assert_eq!(to_alice.request, select(&session.id, None).request);

    let first = bob
        .call::<UiRespond>(&respond(&session.id, &to_bob.request_id, "two"))
        .await
        .unwrap();
    let second = alice
        .call::<UiRespond>(&respond(&session.id, &to_alice.request_id, "one"))
        .await
        .unwrap();
    assert!(first.accepted);
    assert!(!second.accepted, "a later answer is refused");

    let answered = question.await.unwrap().unwrap();
    assert_eq!(answered.request_id, to_alice.request_id);
    assert_eq!(answered.answer.value.as_deref(), Some("two"));
    for events in [&mut alice_events, &mut bob_events] {
        let resolved: UiResolvedParams = next(events, "ui/resolved").await;
        assert_eq!(resolved.request_id, answered.request_id);
        assert_eq!(resolved.answer.value.as_deref(), Some("two"));
    }
    assert_eq!(daemon.state.sessions.pending_question_count(), 0);
}

#[tokio::test]
async fn latecomers_get_pending_questions_and_questions_end_cancelled() {
    let daemon = TestDaemon::start().await;
    let (watcher, mut watcher_events) = daemon.client().await;
    let session = daemon.create_session(&watcher).await;
    attach(&watcher, &session.id).await;

    // Asked before anyone else attaches: a client attaching later still gets it.
    let (asker, _asker_events) = daemon.client().await;
    let question = tokio::spawn({
        let params = UiAskParams {
            session_id: session.id.clone(),
            request: UiRequest::Confirm {
                title: "Delete the branch?".into(),
                message: "It has 3 unmerged commits.".into(),
            },
            timeout_ms: None,
        };
        async move { asker.call::<UiAsk>(&params).await }
    });
    let broadcast: UiRequestParams = next(&mut watcher_events, "ui/request").await;
    let (latecomer, mut latecomer_events) = daemon.client().await;
    attach(&latecomer, &session.id).await;
    let resent: UiRequestParams = next(&mut latecomer_events, "ui/request").await;
    assert_eq!(resent, broadcast);
    latecomer
        .call::<UiRespond>(&UiRespondParams {
            session_id: session.id.clone(),
            request_id: resent.request_id.clone(),
            answer: UiAnswer {
                confirmed: Some(true),
                ..UiAnswer::default()
            },
        })
        .await
        .unwrap();
    assert_eq!(
        question.await.unwrap().unwrap().answer.confirmed,
        Some(true)
    );

    // A timeout answers the asker with a cancellation and closes the dialogs.
    let (asker, _asker_events) = daemon.client().await;
    let timed_out = asker
        .call::<UiAsk>(&select(&session.id, Some(20)))
        .await
        .unwrap();
    assert!(timed_out.answer.cancelled);
    let resolved: UiResolvedParams = loop {
        let resolved: UiResolvedParams = next(&mut watcher_events, "ui/resolved").await;
        if resolved.request_id == timed_out.request_id {
            break resolved;
        }
    };
    assert!(resolved.answer.cancelled);

    // An asker that goes away withdraws its question.
    let (asker, _asker_events) = daemon.client().await;
    let abandoned = tokio::spawn({
        let params = select(&session.id, None);
        async move { asker.call::<UiAsk>(&params).await }
    });
    let request: UiRequestParams = next(&mut watcher_events, "ui/request").await;
    abandoned.abort();
    let resolved: UiResolvedParams = next(&mut watcher_events, "ui/resolved").await;
    assert_eq!(resolved.request_id, request.request_id);
    assert!(resolved.answer.cancelled);
    assert_eq!(daemon.state.sessions.pending_question_count(), 0);
    let late = watcher
        .call::<UiRespond>(&respond(&session.id, &request.request_id, "one"))
        .await
        .unwrap();
    assert!(!late.accepted);
}

#[tokio::test]
async fn asking_an_unknown_session_is_an_error() {
    let daemon = TestDaemon::start().await;
    let (client, _events) = daemon.client().await;
    let error = client
        .call::<UiAsk>(&select("no-such-session", None))
        .await
        .unwrap_err();
    assert_eq!(error.rpc_kind(), Some(pi_protocol::ErrorKind::NotFound));
    assert_eq!(daemon.state.sessions.pending_question_count(), 0);
}
