//! Subscription logins against the stub authorization servers (`PI_OAUTH_ORIGIN`): each flow
//! end to end (browser callback, pasted code, device flow), refreshing once for many callers,
//! a 401 that refreshes and retries, a refresh that fails, pi's own file lock, and the request
//! a Claude Pro/Max token is sent with.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use pi_llm::oauth::{Endpoints, LoginEvent, LoginIo, LoginOptions, OAuthError, OAuthKind};
use pi_llm::{AuthCredential, AuthFile, MapEnvironment, StreamEvent, ToolDefinition};
use pi_test_support::auth_server::AuthServer;
use pi_test_support::model_server::{ModelServer, ScriptErrorKind, Turn};
use serde_json::json;
use tokio::sync::mpsc;

use super::providers::{ask, model, run};
use super::world::World;

fn environment(server: &AuthServer) -> MapEnvironment {
    MapEnvironment::new()
        .with("PI_OAUTH_ORIGIN", server.url())
        .with("PI_OAUTH_CALLBACK_PORT", "0")
}

/// A login's two ends: what the test sees and answers, and what the flow talks to.
fn person() -> (mpsc::Receiver<LoginEvent>, mpsc::Sender<String>, LoginIo) {
    let (events, shown) = mpsc::channel(16);
    let (answer, answers) = mpsc::channel(4);
    (shown, answer, LoginIo { events, answers })
}

fn browser(follow: bool) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(if follow {
            reqwest::redirect::Policy::limited(3)
        } else {
            reqwest::redirect::Policy::none()
        })
        .build()
        .unwrap()
}

async fn open_url(shown: &mut mpsc::Receiver<LoginEvent>) -> (String, String) {
    match shown.recv().await {
        Some(LoginEvent::OpenUrl { url, instructions }) => (url, instructions),
        other => panic!("expected a URL to open, got {other:?}"),
    }
}

async fn prompt(shown: &mut mpsc::Receiver<LoginEvent>) -> String {
    match shown.recv().await {
        Some(LoginEvent::Prompt { message, .. }) => message,
        other => panic!("expected a question, got {other:?}"),
    }
}

fn now() -> i64 {
    pi_util::time::now_millis()
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_logs_in_through_the_browser_callback() {
    let server = AuthServer::start().await;
    let endpoints = Endpoints::from_env(&environment(&server));
    let (mut shown, _answer, mut io) = person();
    let login = tokio::spawn(async move {
        pi_llm::oauth::login(
            OAuthKind::Anthropic,
            &endpoints,
            &LoginOptions::default(),
            &mut io,
        )
        .await
    });
    let (url, instructions) = open_url(&mut shown).await;
    assert!(
        instructions.contains("paste the final redirect URL"),
        "{instructions}"
    );
    assert!(url.starts_with(&format!(
        "{}/oauth/authorize?code=true&client_id=",
        server.url()
    )));
    // The paste prompt is offered at once, beside the browser.
    assert_eq!(
        prompt(&mut shown).await,
        "Paste the authorization code or full redirect URL:"
    );
    // The person agrees; the page redirects to the daemon's loopback callback.
    let page = browser(true).get(&url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("Anthropic authentication completed")
    );
    let credential = login.await.unwrap().unwrap();
    assert!(credential.access.starts_with("sk-ant-oat01-"));
    assert!(credential.refresh.starts_with("refresh-anthropic-"));
    // pi's expiry: an hour, less five minutes.
    let expected = now() + 3_600_000 - 300_000;
    assert!(
        (credential.expires - expected).abs() < 60_000,
        "{}",
        credential.expires
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(
        server.count("POST /v1/oauth/token", "grant_type", "authorization_code"),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_code_logs_in_on_a_headless_box_and_a_foreign_state_is_refused() {
    let server = AuthServer::start().await;
    for kind in [OAuthKind::Anthropic, OAuthKind::OpenAiCodex] {
        for (pasted_state, accepted) in [(None, true), (Some("someone-else"), false)] {
            let endpoints = Endpoints::from_env(&environment(&server));
            let (mut shown, answer, mut io) = person();
            let login = tokio::spawn(async move {
                pi_llm::oauth::login(kind, &endpoints, &LoginOptions::default(), &mut io).await
            });
            let (url, _) = open_url(&mut shown).await;
            prompt(&mut shown).await;
            // The browser is elsewhere: the person copies the redirect URL it ended on.
            let redirect = browser(false).get(&url).send().await.unwrap();
            assert_eq!(redirect.status(), 302);
            let mut location = redirect.headers()["location"].to_str().unwrap().to_owned();
            if let Some(state) = pasted_state {
                let parsed = url::Url::parse(&location).unwrap();
                let code = parsed
                    .query_pairs()
                    .find(|(key, _)| key == "code")
                    .unwrap()
                    .1
                    .into_owned();
                location = format!("{code}#{state}");
            }
            answer.send(location).await.unwrap();
            let outcome = login.await.unwrap();
            if accepted {
                let credential = outcome.unwrap();
                if kind == OAuthKind::OpenAiCodex {
                    assert_eq!(credential.extra["accountId"], json!("acct-123"));
                    let expected = now() + 3_600_000;
                    assert!((credential.expires - expected).abs() < 60_000);
                }
            } else {
                let error = outcome.unwrap_err();
                assert!(matches!(error, OAuthError::StateMismatch), "{error}");
                assert_eq!(
                    error.to_string(),
                    "the state in the pasted URL does not match this login; paste the URL the browser shows at the end of this login"
                );
            }
        }
    }
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(
        server.count("POST /oauth/token", "grant_type", "authorization_code"),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn copilot_logs_in_with_the_device_flow_and_enables_its_models() {
    let server = AuthServer::start().await;
    server.pending_polls(1);
    let endpoints = Endpoints::from_env(&environment(&server));
    let (mut shown, answer, mut io) = person();
    let options = LoginOptions {
        enterprise_domain: None,
        copilot_models: vec!["gpt-5.4".into(), "claude-sonnet-4.5".into()],
    };
    let login = tokio::spawn(async move {
        pi_llm::oauth::login(OAuthKind::GithubCopilot, &endpoints, &options, &mut io).await
    });
    assert_eq!(
        prompt(&mut shown).await,
        "GitHub Enterprise URL/domain (blank for github.com)"
    );
    answer.send(String::new()).await.unwrap();
    let (url, instructions) = open_url(&mut shown).await;
    assert_eq!(url, "https://github.com/login/device");
    assert_eq!(instructions, "Enter code: ABCD-1234");
    assert_eq!(
        shown.recv().await,
        Some(LoginEvent::Progress("Enabling models...".into()))
    );
    let credential = login.await.unwrap().unwrap();
    assert!(credential.access.starts_with("tid=copilot-"));
    assert!(credential.refresh.starts_with("ghu_github_"));
    assert!(!credential.extra.contains_key("enterpriseUrl"));
    assert_eq!(server.violations(), Vec::<String>::new());
    // Polled until the person entered the code, then traded the GitHub token once.
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|request| request.route == "POST /login/oauth/access_token")
            .count(),
        2
    );
    let enabled: Vec<String> = server
        .requests()
        .iter()
        .filter(|request| request.route == "POST /models/policy")
        .map(|request| request.fields["model"].clone())
        .collect();
    assert_eq!(enabled.len(), 2, "{enabled:?}");

    // An Enterprise domain that is none is refused before anything is sent.
    let endpoints = Endpoints::from_env(&environment(&server));
    let (_shown, _answer, mut io) = person();
    let options = LoginOptions {
        enterprise_domain: Some("http://".into()),
        ..LoginOptions::default()
    };
    let error = pi_llm::oauth::login(OAuthKind::GithubCopilot, &endpoints, &options, &mut io)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "\"http://\" is not a GitHub Enterprise URL or domain; give one like company.ghe.com, or nothing for github.com"
    );
}

/// A world whose pi `auth.json` holds an Anthropic login expiring at `expires`, accepted by
/// `server`'s refresh.
fn logged_in(server: &AuthServer, expires: i64) -> World {
    server.accept_refresh("anthropic", "refresh-0");
    World::new()
        .real_clock()
        .env("PI_OAUTH_ORIGIN", &server.url())
        .file(
            "pi/auth.json",
            &json!({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-old",
                "refresh": "refresh-0", "expires": expires}})
            .to_string(),
        )
}

fn stored(world: &World) -> pi_llm::OAuthCredential {
    match AuthFile::load(&world.path("pi/auth.json"))
        .unwrap()
        .get("anthropic")
    {
        Some(AuthCredential::Oauth(credential)) => credential.clone(),
        other => panic!("no login stored: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_login_is_refreshed_once_for_twenty_sessions() {
    let server = AuthServer::start().await;
    server.delay_refreshes(Duration::from_millis(300));
    let world = logged_in(&server, now() - 1);
    let registry = Arc::new(world.registry());
    let mut waiting = Vec::new();
    for _ in 0..20 {
        let registry = registry.clone();
        waiting.push(tokio::spawn(async move {
            let key = registry.resolve_key("anthropic").unwrap().key;
            key.login().unwrap().fresh().await.unwrap().access
        }));
    }
    let mut tokens = Vec::new();
    for task in waiting {
        tokens.push(task.await.unwrap());
    }
    tokens.dedup();
    assert_eq!(
        tokens.len(),
        1,
        "every session got the same token: {tokens:?}"
    );
    assert_ne!(tokens[0], "sk-ant-oat01-old");
    assert_eq!(
        server.count("POST /v1/oauth/token", "grant_type", "refresh_token"),
        1
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    // Written back in pi's format, private, with no lock left behind.
    assert_eq!(stored(&world).access, tokens[0]);
    let mode = std::fs::metadata(world.path("pi/auth.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(!world.path("pi/auth.json.lock").exists());
}

fn claude_model(models: &ModelServer) -> pi_llm::Model {
    model(models, "anthropic-messages")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_is_refreshed_and_the_request_sent_again_as_claude_code_sends_it() {
    let server = AuthServer::start().await;
    let models = ModelServer::start().await;
    // The token looks valid for an hour, but Anthropic revoked it.
    let world = logged_in(&server, now() + 3_600_000);
    let registry = world.registry();
    models.push(Turn::api_error(
        401,
        ScriptErrorKind::Authentication,
        "invalid token",
    ));
    models.push(Turn::reply().tool_call("c1", "Read", json!({"path": "a.txt"})));
    let mut context = ask("Read a.txt");
    context.tools = vec![ToolDefinition {
        name: "read".into(),
        description: "Reads a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    let mut options = super::providers::options();
    options.api_key = Some(registry.resolve_key("anthropic").unwrap().key);
    let run = run(&claude_model(&models), &context, options).await;
    assert!(
        run.events
            .iter()
            .all(|event| !matches!(event, StreamEvent::Error { .. })),
        "{:?}",
        run.message.error_message
    );
    // The model called Claude Code's `Read`; the session sees its own `read`.
    let calls: Vec<&str> = run
        .message
        .tool_calls()
        .map(|call| call.name.as_str())
        .collect();
    assert_eq!(calls, ["read"]);
    models.assert_done(2);
    let requests = models.requests();
    let bearer = |index: usize| requests[index].header("authorization").unwrap().to_owned();
    assert_eq!(bearer(0), "Bearer sk-ant-oat01-old");
    let fresh = stored(&world).access;
    assert_eq!(bearer(1), format!("Bearer {fresh}"));
    let sent = &requests[1];
    assert_eq!(sent.header("x-api-key"), None);
    assert!(
        sent.header("anthropic-beta")
            .unwrap()
            .starts_with("claude-code-20250219,oauth-2025-04-20"),
        "{:?}",
        sent.header("anthropic-beta")
    );
    assert_eq!(sent.header("user-agent"), Some("claude-cli/2.1.75"));
    assert_eq!(sent.header("x-app"), Some("cli"));
    assert_eq!(
        sent.body["system"][0]["text"],
        json!("You are Claude Code, Anthropic's official CLI for Claude.")
    );
    assert_eq!(sent.body["system"][1]["text"], json!("You are a test."));
    assert_eq!(sent.body["tools"][0]["name"], json!("Read"));
    assert_eq!(
        server.count("POST /v1/oauth/token", "grant_type", "refresh_token"),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_that_fails_says_which_login_to_redo() {
    let server = AuthServer::start().await;
    let models = ModelServer::start().await;
    server.fail_refreshes();
    let world = logged_in(&server, now() - 1);
    let registry = world.registry();
    let mut options = super::providers::options();
    options.api_key = Some(registry.resolve_key("anthropic").unwrap().key);
    let run = run(&claude_model(&models), &ask("Hi"), options).await;
    let message = world.redact(run.message.error_message.as_deref().unwrap());
    assert_eq!(
        message,
        "the Anthropic (Claude Pro/Max) login in [DIR]/pi/auth.json could not be refreshed \
         (http://127.0.0.1:PORT/v1/oauth/token refused the request (HTTP 400): invalid_grant: \
         Refresh token revoked); log in again with `pictl login anthropic` (or /login in the TUI)"
            .replace("127.0.0.1:PORT", server.url().trim_start_matches("http://"))
    );
    assert!(!message.contains("refresh-0") && !message.contains("sk-ant-oat01-old"));
    // Nothing was sent to the model, and the login is left for the person to redo.
    models.assert_done(0);
    assert_eq!(stored(&world).access, "sk-ant-oat01-old");
}

/// Runs `script` with node, `proper-lockfile` (pi's lock) on its path.
fn node_with_pi_lock(script: &str) -> tokio::process::Child {
    let modules = pi_test_support::peers::dir().join("node_modules");
    assert!(
        modules.join("proper-lockfile").is_dir(),
        "proper-lockfile (a dependency of pi) is not installed at {}; run tests/install-peers",
        modules.display()
    );
    tokio::process::Command::new("node")
        .arg("-e")
        .arg(script)
        .env("NODE_PATH", modules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs (tests/install-peers installs it)")
}

async fn line(child: &mut tokio::process::Child) -> String {
    use tokio::io::AsyncBufReadExt;
    let stdout = child.stdout.as_mut().unwrap();
    let mut reader = tokio::io::BufReader::new(stdout);
    let mut text = String::new();
    reader.read_line(&mut text).await.unwrap();
    text.trim().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_and_the_daemon_take_turns_on_one_auth_json() {
    let server = AuthServer::start().await;
    let world = logged_in(&server, now() - 1);
    let path = world.path("pi/auth.json");
    // pi holds its lock while it refreshes (as `AuthStorage.refreshOAuthTokenWithLock`).
    let fresh_by_pi = now() + 3_600_000;
    let mut pi = node_with_pi_lock(&format!(
        r#"const lockfile = require("proper-lockfile"); const fs = require("fs");
        (async () => {{
          const release = await lockfile.lock({path:?}, {{ realpath: false, stale: 30000 }});
          console.log("locked");
          process.stdin.once("data", async () => {{
            fs.writeFileSync({path:?}, JSON.stringify({{anthropic: {{type: "oauth",
              access: "sk-ant-oat01-from-pi", refresh: "refresh-pi", expires: {fresh_by_pi}}}}}, null, 2));
            await release();
            console.log("released");
          }});
        }})();"#
    ));
    assert_eq!(line(&mut pi).await, "locked");
    let registry = world.registry();
    let key = registry.resolve_key("anthropic").unwrap().key;
    let login = key.login().unwrap().clone();
    let waiting = tokio::spawn(async move { login.fresh().await });
    // The daemon waits for pi's lock instead of refreshing the same login.
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    use tokio::io::AsyncWriteExt;
    pi.stdin.as_mut().unwrap().write_all(b"go\n").await.unwrap();
    assert_eq!(line(&mut pi).await, "released");
    let credential = waiting.await.unwrap().unwrap();
    assert_eq!(credential.access, "sk-ant-oat01-from-pi");
    assert_eq!(
        server.count("POST /v1/oauth/token", "grant_type", "refresh_token"),
        0,
        "pi's fresh token was used as it is"
    );

    // And pi's writer waits for the daemon's lock: held during a slow refresh, pi's
    // `lockSync` finds it taken.
    std::fs::write(
        &path,
        json!({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-old",
            "refresh": "refresh-0", "expires": now() - 1}})
        .to_string(),
    )
    .unwrap();
    server.accept_refresh("anthropic", "refresh-0");
    let gate = server.hold_refreshes();
    let registry = world.registry();
    let key = registry.resolve_key("anthropic").unwrap().key;
    let login = key.login().unwrap().clone();
    let refreshing = tokio::spawn(async move { login.fresh().await });
    while !world.path("pi/auth.json.lock").exists() {
        tokio::task::yield_now().await;
    }
    let mut pi = node_with_pi_lock(&format!(
        r#"const lockfile = require("proper-lockfile");
        try {{ lockfile.lockSync({path:?}, {{ realpath: false }}); console.log("got it"); }}
        catch (error) {{ console.log(error.code); }}"#
    ));
    assert_eq!(line(&mut pi).await, "ELOCKED");
    gate.release();
    let credential = refreshing.await.unwrap().unwrap();
    assert_eq!(stored(&world).access, credential.access);
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[test]
fn logins_are_found_by_provider() {
    assert_eq!(
        OAuthKind::for_provider("github-copilot"),
        Some(OAuthKind::GithubCopilot)
    );
    assert_eq!(OAuthKind::for_provider("openai"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chatgpt_login_pays_for_codex_models_through_the_chatgpt_backend() {
    let models = ModelServer::start().await;
    let token = pi_test_support::auth_server::codex_access_token(7);
    let (model, options) = codex(&models, "session-0001");
    assert_eq!(model.api, "openai-codex-responses");
    models.push(Turn::reply().tool_call("c1", "read", json!({"path": "a.txt"})));
    let mut context = ask("Read a.txt");
    context.tools = vec![read_tool()];
    let run = run(&model, &context, options).await;
    assert_eq!(run.message.tool_calls().count(), 1, "{:?}", run.message);
    models.assert_done(1);
    let sent = &models.requests()[0];
    assert_eq!(sent.path, "/backend-api/codex/responses");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {token}").as_str())
    );
    assert_eq!(sent.header("chatgpt-account-id"), Some("acct-123"));
    assert_eq!(sent.header("originator"), Some("pi"));
    assert_eq!(sent.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(sent.header("session_id"), Some("session-0001"));
    assert!(sent.header("user-agent").unwrap().starts_with("pi ("));
    let body = &sent.body;
    assert_eq!(body["instructions"], json!("You are a test."));
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["tools"][0]["strict"], json!(null));
    assert_eq!(body["prompt_cache_key"], json!("session-0001"));
    assert!(body.get("max_output_tokens").is_none());
    assert!(
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .all(|item| item["role"] != "system" && item["role"] != "developer"),
        "the system prompt goes as instructions: {body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copilot_login_sends_copilots_headers_and_refreshes_its_short_token() {
    let server = AuthServer::start().await;
    let models = ModelServer::start().await;
    server.accept_refresh("github-copilot", "ghu_github");
    let world = World::new()
        .real_clock()
        .env("PI_OAUTH_ORIGIN", &server.url())
        .file(
            "pi/auth.json",
            &json!({"github-copilot": {"type": "oauth", "access": "tid=old;proxy-ep=proxy.individual.githubcopilot.com",
                "refresh": "ghu_github", "expires": now() - 1}})
            .to_string(),
        )
        .models_json(
            &json!({"providers": {"github-copilot": {
                "baseUrl": models.base_url("openai-completions")}}})
            .to_string(),
        );
    let registry = world.registry();
    let model = registry
        .models()
        .into_iter()
        .find(|model| model.provider == "github-copilot" && model.api == "openai-completions")
        .unwrap();
    models.push(Turn::reply().text("hello"));
    let mut options = super::providers::options();
    options.api_key = Some(registry.resolve_key("github-copilot").unwrap().key);
    let run = run(&model, &ask("Hi"), options).await;
    assert_eq!(run.message.text(), "hello");
    models.assert_done(1);
    let sent = &models.requests()[0];
    let bearer = sent.header("authorization").unwrap();
    assert!(bearer.starts_with("Bearer tid=copilot-"), "{bearer}");
    assert_eq!(sent.header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(sent.header("copilot-integration-id"), Some("vscode-chat"));
    assert_eq!(sent.header("x-initiator"), Some("user"));
    assert_eq!(sent.header("openai-intent"), Some("conversation-edits"));
    assert_eq!(sent.header("copilot-vision-request"), None);
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|request| request.route == "GET /copilot_internal/v2/token")
            .count(),
        1
    );
}

/// A ChatGPT login's world, with the ChatGPT backend at `models`: the Codex model and
/// options carrying its key and `session`.
fn codex(models: &ModelServer, session: &str) -> (pi_llm::Model, pi_llm::StreamOptions) {
    let token = pi_test_support::auth_server::codex_access_token(7);
    let world = World::new()
        .real_clock()
        .file(
            "pi/auth.json",
            &json!({"openai-codex": {"type": "oauth", "access": token, "refresh": "r",
                "expires": now() + 3_600_000, "accountId": "acct-123"}})
            .to_string(),
        )
        .models_json(
            &json!({"providers": {"openai-codex": {
                "baseUrl": format!("{}/backend-api", models.url())}}})
            .to_string(),
        );
    let registry = world.registry();
    let model = registry.find("openai-codex", "gpt-5.4").unwrap();
    let mut options = super::providers::options();
    options.api_key = Some(registry.resolve_key("openai-codex").unwrap().key);
    options.session_id = Some(session.to_owned());
    (model, options)
}

fn read_tool() -> ToolDefinition {
    ToolDefinition {
        name: "read".into(),
        description: "Reads a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// pi's default transport for Codex: a WebSocket kept for the session, each request a
/// `response.create` message, and a request that only adds to the previous one sending what
/// it adds with `previous_response_id`.
#[tokio::test(flavor = "multi_thread")]
async fn codex_requests_go_over_the_sessions_websocket_and_continue_the_previous_response() {
    let models = ModelServer::start().await;
    models.serve_codex_websocket();
    let (model, options) = codex(&models, "ws-session-1");
    models.push(Turn::reply().tool_call("c1", "read", json!({"path": "a.txt"})));
    let mut context = ask("Read a.txt");
    context.tools = vec![read_tool()];
    let first = run(&model, &context, options.clone()).await;
    let call = first.message.tool_calls().next().unwrap().clone();
    assert_eq!(
        first.message.response_id.as_deref(),
        Some("resp_scripted_0001")
    );

    context
        .messages
        .push(pi_llm::Message::Assistant(first.message.clone()));
    context
        .messages
        .push(super::providers::tool_result(&call, "the file's text"));
    models.push(Turn::reply().text("It says hello."));
    let second = run(&model, &context, options.clone()).await;
    assert_eq!(second.message.stop_reason, pi_llm::StopReason::Stop);
    models.assert_done(2);
    assert_eq!(models.websocket_connections(), 1, "one socket for both");

    let requests = models.requests();
    let sent = &requests[0];
    assert_eq!(
        sent.header("openai-beta"),
        Some("responses_websockets=2026-02-06")
    );
    assert_eq!(sent.header("session_id"), Some("ws-session-1"));
    assert_eq!(sent.header("x-client-request-id"), Some("ws-session-1"));
    assert_eq!(sent.header("chatgpt-account-id"), Some("acct-123"));
    assert!(sent.header("accept").is_none());
    assert!(sent.body.get("previous_response_id").is_none());
    assert_eq!(sent.body["input"].as_array().unwrap().len(), 1);
    // The second sends only the tool's result, after the first response.
    let body = &requests[1].body;
    assert_eq!(body["previous_response_id"], json!("resp_scripted_0001"));
    let input = body["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "{body}");
    assert_eq!(input[0]["type"], json!("function_call_output"));
    assert_eq!(
        input[0]["call_id"],
        json!(call.id.split('|').next().unwrap())
    );
    assert_eq!(body["instructions"], requests[0].body["instructions"]);

    // `websocket` sends the whole conversation every time.
    let (model, mut options) = codex(&models, "ws-session-2");
    options.transport = pi_llm::Transport::WebSocket;
    models.push(Turn::reply().text("Whole."));
    let whole = run(&model, &context, options).await;
    assert_eq!(whole.message.stop_reason, pi_llm::StopReason::Stop);
    let body = &models.requests()[2].body;
    assert!(body.get("previous_response_id").is_none());
    assert_eq!(body["input"].as_array().unwrap().len(), 3, "{body}");
    assert_eq!(models.websocket_connections(), 2);
}

/// Where the backend offers no WebSocket, the request goes over HTTP, and so does every later
/// request of that session; `transport: sse` never tries one.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_websocket_codex_goes_over_http_and_the_session_stays_there() {
    let models = ModelServer::start().await;
    let (model, options) = codex(&models, "ws-session-3");
    models.push(Turn::reply().text("Over HTTP."));
    let first = run(&model, &ask("Hi"), options.clone()).await;
    assert_eq!(first.message.stop_reason, pi_llm::StopReason::Stop);
    assert_eq!(
        models.requests()[0].header("openai-beta"),
        Some("responses=experimental")
    );
    // Now it could: the session does not try again.
    models.serve_codex_websocket();
    models.push(Turn::reply().text("Still HTTP."));
    run(&model, &ask("Hi"), options).await;
    assert_eq!(models.websocket_connections(), 0);
    assert_eq!(
        models.requests()[1].header("openai-beta"),
        Some("responses=experimental")
    );
    // `sse`: HTTP, whatever the backend offers.
    let (model, mut options) = codex(&models, "ws-session-4");
    options.transport = pi_llm::Transport::Sse;
    models.push(Turn::reply().text("HTTP by choice."));
    run(&model, &ask("Hi"), options).await;
    assert_eq!(models.websocket_connections(), 0);
    models.assert_done(3);
}

/// An error event on the socket is the request's failure (not a reason to switch to HTTP),
/// and a socket cut after the first event fails the request as a cut stream.
#[tokio::test(flavor = "multi_thread")]
async fn codex_socket_errors_fail_the_request() {
    let models = ModelServer::start().await;
    models.serve_codex_websocket();
    let (model, options) = codex(&models, "ws-session-5");
    models.push(Turn::api_error(
        429,
        ScriptErrorKind::RateLimit,
        "Rate limit reached.",
    ));
    let failed = run(&model, &ask("Hi"), options.clone()).await;
    assert_eq!(failed.message.stop_reason, pi_llm::StopReason::Error);
    assert!(
        failed
            .message
            .error_message
            .as_deref()
            .unwrap()
            .contains("Rate limit reached."),
        "{:?}",
        failed.message.error_message
    );
    models.push(Turn::reply().text("Cut here, mid-way").disconnect_after(3));
    let cut = run(&model, &ask("Hi"), options).await;
    assert_eq!(
        cut.message.failure.map(|failure| failure.kind),
        Some(pi_llm::FailureKind::StreamCut)
    );
    models.assert_done(2);
    assert_eq!(
        models.websocket_connections(),
        2,
        "a failed socket is not kept"
    );
}
