//! The wire formats pi speaks beyond the first four, over HTTP to the scripted model server
//! with keys resolved by the registry: Azure OpenAI's Responses (key, api version, deployment).
//! (The ChatGPT backend's Codex Responses is in `logins.rs`: a login pays for it.)

use std::sync::Arc;

use pi_test_support::model_server::{ModelServer, Turn};
use serde_json::json;

use super::providers::{ask, run};
use super::world::World;

#[tokio::test(flavor = "multi_thread")]
async fn an_azure_deployment_is_reached_with_its_key_and_api_version() {
    let models = ModelServer::start().await;
    let world = World::new()
        .env("AZURE_OPENAI_API_KEY", "azure-secret")
        .models_json(
            &json!({"providers": {"azure-openai-responses": {
            "baseUrl": format!("{}/v1", models.url())}}})
            .to_string(),
        );
    let registry = world.registry();
    let model = registry.find("azure-openai-responses", "gpt-4.1").unwrap();
    models.push(Turn::reply().text("hello from azure"));
    let mut options = super::providers::options();
    options.api_key = Some(registry.resolve_key("azure-openai-responses").unwrap().key);
    options.env = Some(Arc::new(
        [(
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP".to_owned(),
            "gpt-4.1=team-gpt41".to_owned(),
        )]
        .into_iter()
        .collect(),
    ));
    let run = run(&model, &ask("Hi"), options).await;
    assert_eq!(run.message.text(), "hello from azure");
    models.assert_done(1);
    let sent = &models.requests()[0];
    assert_eq!(sent.header("api-key"), Some("azure-secret"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.query_param("api-version"), Some("v1"));
    assert_eq!(sent.body["model"], json!("team-gpt41"));
}
