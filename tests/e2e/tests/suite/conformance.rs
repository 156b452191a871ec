//! A stock JSON-RPC client, not ours: jsonrpsee's WebSocket client (the design card's crate)
//! initializes, creates a session, attaches, prompts and receives the `session/event`
//! notifications of the run, and gets the daemon's errors as ordinary JSON-RPC errors. Proof
//! that the protocol is plain JSON-RPC 2.0 that any conforming client can speak.

use jsonrpsee::core::client::{ClientT as _, Subscription, SubscriptionClientT as _};
use jsonrpsee::core::params::ObjectParams;
use jsonrpsee::ws_client::{HeaderMap, WsClientBuilder};
use pi_protocol::v1::SessionEventParams;
use pi_test_support::model_server::Turn;
use serde_json::Value;

use crate::suite::harness::{MODEL, World};

fn params(pairs: &[(&str, Value)]) -> ObjectParams {
    let mut params = ObjectParams::new();
    for (name, value) in pairs {
        params.insert(name, value).unwrap();
    }
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpsee_drives_a_session_over_the_websocket() {
    let world = World::start("anthropic-messages").await;
    let paths = &world.daemon.paths;
    let port = std::fs::read_to_string(paths.ws_port_path()).unwrap();
    let token = std::fs::read_to_string(paths.ws_token_path()).unwrap();
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        format!("Bearer {}", token.trim()).parse().unwrap(),
    );
    let client = WsClientBuilder::default()
        .set_headers(headers)
        .build(format!("ws://127.0.0.1:{}/", port.trim()))
        .await
        .unwrap();

    // Nothing is served before `initialize`; the refusal is a plain JSON-RPC error.
    let refused = client
        .request::<Value, _>("daemon/status", ObjectParams::new())
        .await
        .unwrap_err();
    let jsonrpsee::core::client::Error::Call(refused) = refused else {
        panic!("expected a call error, got {refused:?}");
    };
    assert_eq!(refused.code(), -32002);
    assert_eq!(
        refused.data().map(|data| data.get()),
        Some(r#"{"kind":"not_initialized"}"#)
    );

    let initialized: Value = client
        .request(
            "initialize",
            params(&[
                ("protocolVersion", pi_protocol::PROTOCOL_VERSION.into()),
                (
                    "clientInfo",
                    serde_json::json!({"name": "jsonrpsee", "version": "0.26"}),
                ),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(
        initialized["protocolVersion"],
        pi_protocol::PROTOCOL_VERSION
    );
    let session: Value = client
        .request(
            "session/create",
            params(&[
                ("cwd", world.daemon.home.path().display().to_string().into()),
                ("model", MODEL.into()),
            ]),
        )
        .await
        .unwrap();
    let session_id = session["id"].as_str().unwrap().to_owned();

    // Notifications arrive as a method subscription: register before attaching.
    let mut events: Subscription<SessionEventParams> =
        client.subscribe_to_method("session/event").await.unwrap();
    let attached: Value = client
        .request(
            "session/attach",
            params(&[("sessionId", session_id.clone().into())]),
        )
        .await
        .unwrap();
    let last_seq = attached["snapshot"]["info"]["lastSeq"].as_u64().unwrap();

    world
        .server
        .push(Turn::reply().text("Hello from the daemon."));
    let _: Value = client
        .request(
            "session/prompt",
            params(&[
                ("sessionId", session_id.clone().into()),
                ("text", "say hello".into()),
            ]),
        )
        .await
        .unwrap();
    let mut received = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), events.next())
            .await
            .expect("events arrive")
            .expect("the subscription is open")
            .unwrap();
        let kind = serde_json::to_value(&event.event).unwrap()["type"].clone();
        received.push(event);
        if kind == "agent_end" {
            break;
        }
    }
    let seqs: Vec<u64> = received.iter().map(|event| event.seq).collect();
    assert_eq!(
        seqs,
        (last_seq + 1..=last_seq + received.len() as u64).collect::<Vec<_>>()
    );
    let text: String = received
        .iter()
        .filter_map(|event| {
            let value = serde_json::to_value(&event.event).unwrap();
            (value["type"] == "message_update"
                && value["assistantMessageEvent"]["type"] == "text_delta")
                .then(|| {
                    value["assistantMessageEvent"]["delta"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
        })
        .collect();
    assert_eq!(text, "Hello from the daemon.");

    // Errors carry the daemon's kind in `data`.
    let missing = client
        .request::<Value, _>("session/get", params(&[("sessionId", "nope".into())]))
        .await
        .unwrap_err();
    let jsonrpsee::core::client::Error::Call(missing) = missing else {
        panic!("expected a call error, got {missing:?}");
    };
    assert_eq!(missing.code(), -32010);
    assert!(missing.message().contains("session nope does not exist"));
    world.server.assert_done(1);
}
