//! The wire formats pi speaks beyond the first four, over HTTP to the scripted model server
//! (or, for Bedrock, a stub of its runtime and of STS) with keys resolved by the registry:
//! Azure OpenAI's Responses (key, api version, deployment), Vertex AI, Amazon Bedrock.
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

/// An RSA key made by openssl: (PKCS#8 PEM, PKCS#1 public DER).
fn rsa_key(dir: &std::path::Path) -> (String, Vec<u8>) {
    let private = dir.join("key.pem");
    let public = dir.join("public.der");
    let run = |args: &[&str]| {
        let status = std::process::Command::new("openssl")
            .args(args)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("openssl is installed (tests/install-peers)");
        assert!(status.success(), "openssl {args:?}");
    };
    run(&[
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        private.to_str().unwrap(),
    ]);
    run(&[
        "rsa",
        "-in",
        private.to_str().unwrap(),
        "-RSAPublicKey_out",
        "-outform",
        "DER",
        "-out",
        public.to_str().unwrap(),
    ]);
    (
        std::fs::read_to_string(private).unwrap(),
        std::fs::read(public).unwrap(),
    )
}

/// Gemini on Vertex AI with Application Default Credentials: a service account's signed JWT
/// (verified by the stub with the account's public key) and gcloud's `authorized_user` refresh
/// token each give a Bearer token, fetched once for several requests, sent to the project's
/// location.
#[tokio::test(flavor = "multi_thread")]
async fn vertex_ai_runs_on_application_default_credentials() {
    let auth = pi_test_support::auth_server::AuthServer::start().await;
    let models = ModelServer::start().await;
    let world = World::new().models_json(
        &json!({"providers": {"google-vertex": {"baseUrl": models.url()}}}).to_string(),
    );
    let (pem, public) = rsa_key(world.dir.path());
    auth.google_accounts(public, "gcloud-refresh");
    let service_account = world.path("service-account.json");
    std::fs::write(
        &service_account,
        json!({"type": "service_account", "client_email": "pi@proj.iam.gserviceaccount.com",
            "private_key": pem, "token_uri": format!("{}/token", auth.url())})
        .to_string(),
    )
    .unwrap();
    let gcloud = world.path("gcloud.json");
    std::fs::write(
        &gcloud,
        json!({"type": "authorized_user", "client_id": "id.apps.googleusercontent.com",
            "client_secret": "s", "refresh_token": "gcloud-refresh"})
        .to_string(),
    )
    .unwrap();
    let registry = world.registry();
    let model = registry.find("google-vertex", "gemini-2.5-pro").unwrap();
    for (file, requests) in [(&service_account, 2), (&gcloud, 1)] {
        let env: std::collections::BTreeMap<String, String> = [
            ("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string()),
            ("GOOGLE_CLOUD_PROJECT", "proj".to_owned()),
            ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
            ("PI_OAUTH_ORIGIN", auth.url()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let before = models.requests().len();
        for _ in 0..requests {
            models.push(Turn::reply().text("hello from vertex"));
            let mut options = super::providers::options();
            options.api_key = None;
            options.env = Some(Arc::new(env.clone()));
            let run = run(&model, &ask("Hi"), options).await;
            assert_eq!(run.message.text(), "hello from vertex", "{:?}", run.message);
        }
        for sent in &models.requests()[before..] {
            assert_eq!(
                sent.path,
                "/v1beta1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent"
            );
            assert!(
                sent.header("authorization")
                    .unwrap()
                    .starts_with("Bearer ya29.google-"),
                "{:?}",
                sent.header("authorization")
            );
            assert_eq!(sent.header("x-goog-api-key"), None);
        }
    }
    models.assert_done(3);
    assert_eq!(auth.violations(), Vec::<String>::new());
    // One token per credentials file, kept for the next request.
    assert_eq!(
        auth.requests()
            .iter()
            .filter(|request| request.route == "POST /token")
            .count(),
        2
    );
}

/// A tool call and its result go round: the model of each new format calls a tool, and the
/// next request carries the call and its result in that format's shapes.
#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_go_round_in_azure_and_vertex() {
    for (provider, id) in [
        ("azure-openai-responses", "gpt-4.1"),
        ("google-vertex", "gemini-2.5-pro"),
    ] {
        let models = ModelServer::start().await;
        let base = match provider {
            "azure-openai-responses" => format!("{}/v1", models.url()),
            _ => models.url(),
        };
        let world = World::new()
            .models_json(&json!({"providers": {provider: {"baseUrl": base}}}).to_string());
        let registry = world.registry();
        let model = registry.find(provider, id).unwrap();
        let (first, second) = super::providers::continue_with(
            &models,
            &model,
            Turn::reply().tool_call("c1", "read", json!({"path": "a.txt"})),
            &model,
        )
        .await;
        let call = first.message.tool_calls().next().unwrap();
        assert_eq!(call.name, "read", "{provider}");
        let body = second.to_string();
        let (call_shape, result_shape) = match provider {
            "azure-openai-responses" => (
                "\"type\":\"function_call\"",
                "\"type\":\"function_call_output\"",
            ),
            _ => ("\"functionCall\"", "\"functionResponse\""),
        };
        assert!(body.contains(call_shape), "{provider}: {body}");
        assert!(body.contains(result_shape), "{provider}: {body}");
        assert!(body.contains("Inhalt von a"), "{provider}: {body}");
    }
}

/// Amazon Bedrock: SigV4 with keys from the environment, from IRSA's web identity traded at
/// STS, from an AWS SSO profile's cached login traded at the portal, and a Bedrock API key as
/// a Bearer token; replies in the binary event stream, a tool call going round.
#[tokio::test(flavor = "multi_thread")]
async fn bedrock_signs_with_each_credential_and_streams_a_tool_call_round() {
    use pi_test_support::bedrock_server::BedrockServer;
    let bedrock = BedrockServer::start().await;
    let world = World::new();
    let token = world.path("web-identity");
    std::fs::write(&token, "the-web-identity\n").unwrap();
    let registry = world.registry();
    let model = registry
        .find(
            "amazon-bedrock",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
        )
        .or_else(|| {
            registry
                .models()
                .into_iter()
                .find(|model| model.provider == "amazon-bedrock" && model.id.contains("claude"))
        })
        .unwrap();
    let base = [
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.url()),
        ("AWS_REGION", "eu-central-1".to_owned()),
        ("HOME", world.dir.path().display().to_string()),
    ];
    // An AWS SSO profile, logged in with `aws sso login` (its token cached by the session's
    // name).
    std::fs::create_dir_all(world.path(".aws/sso/cache")).unwrap();
    std::fs::write(
        world.path(".aws/config"),
        "[profile corp]\nsso_session = corp-sso\nsso_account_id = 111122223333\n\
         sso_role_name = Developer\n\n[sso-session corp-sso]\n\
         sso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n",
    )
    .unwrap();
    let cache_name: String = {
        use sha1::Digest;
        sha1::Sha1::digest(b"corp-sso")
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    };
    std::fs::write(
        world.path(&format!(".aws/sso/cache/{cache_name}.json")),
        json!({"startUrl": "https://corp.awsapps.com/start", "region": "us-east-1",
            "accessToken": "sso-access-token", "expiresAt": "2099-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
    let credentials: [&[(&str, String)]; 4] = [
        &[
            ("AWS_ACCESS_KEY_ID", "AKIDENV".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "env-secret".to_owned()),
        ],
        &[
            ("AWS_WEB_IDENTITY_TOKEN_FILE", token.display().to_string()),
            ("AWS_ROLE_ARN", "arn:aws:iam::123:role/pi".to_owned()),
            ("AWS_ENDPOINT_URL_STS", bedrock.url()),
        ],
        &[("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key".to_owned())],
        &[
            ("AWS_PROFILE", "corp".to_owned()),
            ("AWS_ENDPOINT_URL_SSO", bedrock.url()),
        ],
    ];
    for extra in credentials {
        let env: std::collections::BTreeMap<String, String> = base
            .iter()
            .chain(extra.iter())
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect();
        let mut options = super::providers::options();
        options.api_key = None;
        options.env = Some(Arc::new(env));
        bedrock.push(BedrockServer::tool_reply(
            "tooluse_1",
            "read",
            &json!({"path": "a.txt"}),
        ));
        let mut context = ask("Read a.txt");
        context.tools = vec![pi_llm::ToolDefinition {
            name: "read".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }];
        let first = run(&model, &context, options.clone()).await;
        let call = first
            .message
            .tool_calls()
            .next()
            .cloned()
            .unwrap_or_else(|| panic!("no tool call: {:?}", first.message.error_message));
        assert_eq!(
            (call.name.as_str(), call.arguments["path"].as_str()),
            ("read", Some("a.txt"))
        );
        assert_eq!(first.message.usage.input, 20);
        context
            .messages
            .push(pi_llm::Message::Assistant(first.message.clone()));
        context
            .messages
            .push(super::providers::tool_result(&call, "Inhalt von a"));
        bedrock.push(BedrockServer::text_reply("Done."));
        let second = run(&model, &context, options).await;
        assert_eq!(
            second.message.text(),
            "Done.",
            "{:?}",
            second.message.error_message
        );
    }
    // No credentials at all: the request is not sent, and the error says what to set.
    let mut options = super::providers::options();
    options.api_key = None;
    options.env = Some(Arc::new(
        base.iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect(),
    ));
    let refused = run(&model, &ask("Hi"), options).await;
    assert_eq!(
        refused.message.error_message.as_deref(),
        Some(
            "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or \
             AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile with keys, \
             a credential_process or AWS SSO (`aws configure sso`, then `aws sso login`) in \
             ~/.aws/credentials or ~/.aws/config, or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN"
        )
    );
    assert_eq!(bedrock.violations(), Vec::<String>::new());
    let converse: Vec<_> = bedrock
        .requests()
        .into_iter()
        .filter(|request| request.path.starts_with("/model/"))
        .collect();
    assert_eq!(converse.len(), 8);
    assert_eq!(
        converse[0].path,
        format!("/model/{}/converse-stream", model.id)
    );
    let authorization = |index: usize| converse[index].header("authorization").unwrap().to_owned();
    assert!(authorization(0).starts_with("AWS4-HMAC-SHA256 Credential=AKIDENV/"));
    assert!(authorization(0).contains("/eu-central-1/bedrock/aws4_request"));
    assert!(authorization(2).starts_with("AWS4-HMAC-SHA256 Credential=ASIAIRSA/"));
    assert_eq!(
        converse[2].header("x-amz-security-token"),
        Some("irsa-session")
    );
    assert_eq!(authorization(4), "Bearer bedrock-api-key");
    assert!(authorization(6).starts_with("AWS4-HMAC-SHA256 Credential=ASIASSO/"));
    assert_eq!(
        converse[6].header("x-amz-security-token"),
        Some("sso-session")
    );
    // The second request carries the call and its result in Converse's shapes.
    let messages = &converse[1].body["messages"];
    assert_eq!(
        messages[1]["content"][0]["toolUse"]["toolUseId"],
        "tooluse_1"
    );
    assert_eq!(messages[2]["content"][0]["toolResult"]["status"], "success");
    assert_eq!(converse[1].body["system"][0]["text"], "You are a test.");
    assert!(
        converse[1].body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"].is_object()
    );
}
