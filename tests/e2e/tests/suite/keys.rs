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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pi_agent_directory_works_with_no_other_setup() {
    // What a pi user already has: models.json rerouting a provider, auth.json with its key,
    // settings.json naming the default model, AGENTS.md with instructions.
    let server = ModelServer::start().await;
    let agent = ".pi/agent";
    let files = [
        (
            format!("{agent}/models.json"),
            serde_json::json!({"providers": {"anthropic": {
                "baseUrl": server.base_url("anthropic-messages")
            }}})
            .to_string(),
        ),
        (
            format!("{agent}/auth.json"),
            serde_json::json!({"anthropic": {"type": "api_key", "key": "sk-ant-from-auth-json"}})
                .to_string(),
        ),
        (
            format!("{agent}/settings.json"),
            serde_json::json!({"defaultProvider": "anthropic", "defaultModel": "claude-haiku-4-5"})
                .to_string(),
        ),
        (
            format!("{agent}/AGENTS.md"),
            "Always answer in haiku.".to_owned(),
        ),
    ];
    let files: Vec<(&str, String)> = files
        .iter()
        .map(|(path, contents)| (path.as_str(), contents.clone()))
        .collect();
    let daemon = TempDaemon::start_with_files(&workspace_binary("pid"), "", &files).await;
    let auth_path = daemon.home.path().join(agent).join("auth.json");
    std::fs::set_permissions(
        &auth_path,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let (client, mut events) = daemon.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: daemon.home.path().display().to_string(),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let model = session.model.clone().expect("the settings' default model");
    assert_eq!(
        (model.provider.as_str(), model.id.as_str()),
        ("anthropic", "claude-haiku-4-5")
    );
    client
        .call::<pi_protocol::v1::SessionAttach>(&pi_protocol::v1::SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    server.push(Turn::reply().text("Keys in a file / the daemon reads them / no setup at all"));
    client
        .call::<SessionPrompt>(&prompt(&session.id, "hi"))
        .await
        .unwrap();
    run_events(&mut events, &session.id).await;
    let request = server.requests().pop().unwrap();
    assert_eq!(request.header("x-api-key"), Some("sk-ant-from-auth-json"));
    assert_eq!(request.body["model"], "claude-haiku-4-5");
    let system = request.body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("Always answer in haiku."), "{system}");
    server.assert_done(1);
}
