//! API keys from the client's environment: a daemon started without a key serves a session
//! whose creator had the provider's variable set, and a client without one gets an error that
//! says which variable or file to set.

use std::collections::BTreeMap;

use pi_protocol::v1::{SessionCreate, SessionCreateParams, SessionPrompt};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::events::run_events;
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::workspace_binary;

use super::harness::prompt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_in_the_clients_environment_is_used() {
    let server = ModelServer::start().await;
    // Reroute the built-in Anthropic provider to the scripted server (an override-only entry).
    let models = serde_json::json!({"providers": {"anthropic": {
        "baseUrl": server.base_url("anthropic-messages")
    }}});
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[(".pi/agent/models.json", models.to_string())],
    )
    .await;
    let (client, mut events) = daemon.client().await;
    let cwd = daemon.home.path().display().to_string();

    let without_key = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.clone(),
            env: Some(BTreeMap::from([("PATH".to_owned(), "/usr/bin".to_owned())])),
            model: Some("anthropic/claude-sonnet-4-5".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let error = client
        .call::<SessionPrompt>(&prompt(&without_key.id, "hi"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    assert!(message.contains("auth.json"), "{message}");

    let with_key = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd,
            env: Some(BTreeMap::from([(
                "ANTHROPIC_API_KEY".to_owned(),
                "sk-ant-from-the-client".to_owned(),
            )])),
            model: Some("anthropic/claude-sonnet-4-5".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<pi_protocol::v1::SessionAttach>(&pi_protocol::v1::SessionAttachParams {
            session_id: with_key.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    server.push(Turn::reply().text("Hello."));
    client
        .call::<SessionPrompt>(&prompt(&with_key.id, "hi"))
        .await
        .unwrap();
    run_events(&mut events, &with_key.id).await;
    let request = server.requests().pop().unwrap();
    assert_eq!(request.header("x-api-key"), Some("sk-ant-from-the-client"));
    server.assert_done(1);
}
