//! Subscription logins on the real daemon, as a pi user does them: `pictl login anthropic` on
//! a machine without a browser (the redirect URL pasted), the tokens in pi's `auth.json`,
//! several sessions at once using them (one refresh for all when they expire), pi 0.73.1
//! itself using the login the daemon stored, `auth/list`, and `pictl logout`; an ACP editor's
//! `authenticate`.

use std::process::Stdio;

use pi_protocol::v1::{
    AuthList, AuthListParams, AuthSource, SessionAttach, SessionAttachParams, SessionCreate,
    SessionCreateParams, SessionEventParams, SessionPrompt,
};
use pi_test_support::auth_server::AuthServer;
use pi_test_support::daemon::TempDaemon;
use pi_test_support::events::{EVENT_TIMEOUT, kind};
use pi_test_support::model_server::{ModelServer, Turn};
use pi_test_support::workspace_binary;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::harness::prompt;

/// Reads notifications until every one of `sessions` ended its run, in whatever order.
async fn all_runs_end(events: &mut pi_client::Notifications, sessions: &[String]) {
    let mut running: std::collections::BTreeSet<&String> = sessions.iter().collect();
    while !running.is_empty() {
        let notification = tokio::time::timeout(EVENT_TIMEOUT, events.next())
            .await
            .unwrap_or_else(|_| panic!("runs still going: {running:?}"))
            .expect("the connection is open");
        if notification.method == "session/event" {
            let event: SessionEventParams =
                serde_json::from_value(notification.params.unwrap()).unwrap();
            if kind(&event) == "agent_end" {
                running.remove(&event.session_id);
            }
        }
    }
}

fn pictl(daemon: &TempDaemon, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(workspace_binary("pictl"));
    command
        .args(args)
        .envs(daemon.env())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_login_serves_every_session_and_is_refreshed_once_for_all() {
    let auth = AuthServer::start().await;
    let models = ModelServer::start().await;
    let rerouted = serde_json::json!({"providers": {"anthropic": {
        "baseUrl": models.base_url("anthropic-messages")
    }}});
    let daemon = TempDaemon::start_with_env(
        &workspace_binary("pid"),
        "",
        &[(".pi/agent/models.json", rerouted.to_string())],
        &[
            ("PI_OAUTH_ORIGIN", &auth.url()),
            ("PI_OAUTH_CALLBACK_PORT", "0"),
        ],
    )
    .await;

    // The first token expires at once (Anthropic's lifetime less pi's five minutes).
    auth.expires_in(0);
    let mut login = pictl(&daemon, &["login", "anthropic", "--no-browser"])
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(login.stderr.take().unwrap()).lines();
    let url = loop {
        let line = stderr
            .next_line()
            .await
            .unwrap()
            .expect("pictl printed the URL");
        if let Some(url) = line.trim().strip_prefix("http") {
            break format!("http{url}");
        }
    };
    // The browser is on another machine: it ends on the redirect URL, which is pasted.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let redirect = browser.get(&url).send().await.unwrap();
    let location = redirect.headers()["location"].to_str().unwrap().to_owned();
    let mut stdin = login.stdin.take().unwrap();
    stdin
        .write_all(format!("{location}\n").as_bytes())
        .await
        .unwrap();
    let output = login.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let auth_json = daemon.home.path().join(".pi/agent/auth.json");
    assert_eq!(
        stdout.trim(),
        format!(
            "Logged in to Anthropic (Claude Pro/Max). The tokens are in {} (pi uses them too); sessions refresh them as needed.",
            auth_json.display()
        )
    );
    let (client, mut events) = daemon.client().await;
    let listed = client.call::<AuthList>(&AuthListParams {}).await.unwrap();
    let anthropic = listed
        .providers
        .iter()
        .find(|status| status.provider == "anthropic")
        .unwrap();
    assert!(anthropic.subscription);
    assert!(
        matches!(&anthropic.source, Some(AuthSource::Login { path, .. }) if *path == auth_json.display().to_string()),
        "{anthropic:?}"
    );

    // Five sessions prompt at once with the expired token: one refresh serves them all.
    auth.expires_in(3600);
    let cwd = daemon.home.path().display().to_string();
    let mut sessions = Vec::new();
    for _ in 0..5 {
        let session = client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd: cwd.clone(),
                model: Some("anthropic/claude-sonnet-4-5".to_owned()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap();
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        models.push(Turn::reply().text("Hello."));
        sessions.push(session.id);
    }
    for id in &sessions {
        client
            .call::<SessionPrompt>(&prompt(id, "hi"))
            .await
            .unwrap();
    }
    all_runs_end(&mut events, &sessions).await;
    models.assert_done(5);
    assert_eq!(
        auth.count("POST /v1/oauth/token", "grant_type", "refresh_token"),
        1
    );
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth_json).unwrap()).unwrap();
    let bearer = format!("Bearer {}", stored["anthropic"]["access"].as_str().unwrap());
    for request in models.requests() {
        assert_eq!(request.header("authorization"), Some(bearer.as_str()));
        assert_eq!(request.header("x-api-key"), None);
    }
    assert_eq!(auth.violations(), Vec::<String>::new());

    // pi 0.73.1 itself uses the login the daemon stored (and refreshed): the same token, sent
    // the way the daemon sends it.
    models.push(Turn::reply().text("Hello from pi."));
    let home = daemon.home.path();
    let pi = tokio::process::Command::new(pi_test_support::peers::npm_bin("pi"))
        .args(["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"])
        .env("HOME", home)
        .env("PI_CODING_AGENT_DIR", home.join(".pi/agent"))
        .env("PI_OFFLINE", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_OAUTH_TOKEN")
        .current_dir(home)
        .output()
        .await
        .unwrap();
    assert!(
        pi.status.success(),
        "{}",
        String::from_utf8_lossy(&pi.stderr)
    );
    let from_pi = models.requests().pop().unwrap();
    assert_eq!(from_pi.header("authorization"), Some(bearer.as_str()));
    assert_eq!(
        from_pi.header("anthropic-beta"),
        models.requests()[0].header("anthropic-beta")
    );
    assert_eq!(
        from_pi.header("user-agent"),
        models.requests()[0].header("user-agent")
    );

    // pi's /logout.
    let output = pictl(&daemon, &["logout"]).output().await.unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!(
            "Logged out of anthropic: removed from {}",
            auth_json.display()
        )
    );
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth_json).unwrap()).unwrap();
    assert!(stored.get("anthropic").is_none(), "{stored}");
    let output = pictl(&daemon, &["logout", "anthropic"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "there is no login or key for anthropic in auth.json; `pictl models` shows where each provider's key comes from"
        ),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_say_what_went_wrong() {
    let auth = AuthServer::start().await;
    let daemon = TempDaemon::start_with_env(
        &workspace_binary("pid"),
        "",
        &[],
        &[("PI_OAUTH_ORIGIN", &auth.url())],
    )
    .await;
    let output = pictl(&daemon, &["login", "openai"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "\"openai\" has no subscription login; log in to one of anthropic, github-copilot, openai-codex, or store an API key with `pictl login --key openai`"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("hint:"), "{stderr}");
    // Copilot asks for an Enterprise domain: stdin at its end answers "none" (github.com),
    // whose device flow the stub answers; a code nobody enters ends as the stub says.
    let mut copilot = pictl(&daemon, &["login", "github-copilot"])
        .spawn()
        .unwrap();
    drop(copilot.stdin.take());
    let mut stderr = BufReader::new(copilot.stderr.take().unwrap()).lines();
    let mut shown = Vec::new();
    while let Some(line) = stderr.next_line().await.unwrap() {
        let done = line.contains("Enter code: ABCD-1234");
        shown.push(line);
        if done {
            break;
        }
    }
    assert!(
        shown
            .iter()
            .any(|line| line.contains("https://github.com/login/device")),
        "{shown:?}"
    );
    copilot.kill().await.unwrap();
    // A key for a provider nobody knows is refused (a typo would go unnoticed).
    let mut typo = pictl(&daemon, &["login", "--key", "grok"]).spawn().unwrap();
    typo.stdin
        .take()
        .unwrap()
        .write_all(b"sk-x\n")
        .await
        .unwrap();
    let output = typo.wait_with_output().await.unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "no provider is called \"grok\"; `pictl models` lists the providers (a provider of your own goes in models.json first)"
        ),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // No provider and no terminal to ask on.
    let output = pictl(&daemon, &["login"]).output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("name the provider: one of anthropic, github-copilot, openai-codex"),
        "{stderr}"
    );
    // An API key, piped in.
    let mut store = pictl(&daemon, &["login", "--key", "groq"]).spawn().unwrap();
    store
        .stdin
        .take()
        .unwrap()
        .write_all(b"gsk-from-stdin\n")
        .await
        .unwrap();
    let output = store.wait_with_output().await.unwrap();
    assert!(output.status.success());
    let auth_json = daemon.home.path().join(".pi/agent/auth.json");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth_json).unwrap()).unwrap();
    assert_eq!(
        stored["groq"],
        serde_json::json!({"type": "api_key", "key": "gsk-from-stdin"})
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("gsk-from-stdin"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_editor_authenticates_with_a_chatgpt_login() {
    let auth = AuthServer::start().await;
    let daemon = TempDaemon::start_with_env(
        &workspace_binary("pid"),
        "",
        &[],
        &[
            ("PI_OAUTH_ORIGIN", &auth.url()),
            ("PI_OAUTH_CALLBACK_PORT", "0"),
        ],
    )
    .await;
    let mut acp = pictl(&daemon, &["acp"]).spawn().unwrap();
    let mut stdin = acp.stdin.take().unwrap();
    let mut stdout = BufReader::new(acp.stdout.take().unwrap()).lines();
    let mut stderr = BufReader::new(acp.stderr.take().unwrap()).lines();
    stdin
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{"methodId":"openai-codex"}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":3,"method":"authenticate","params":{"methodId":"vertex"}}"#,
                "\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let initialized: serde_json::Value =
        serde_json::from_str(&stdout.next_line().await.unwrap().unwrap()).unwrap();
    let methods: Vec<&str> = initialized["result"]["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|method| method["id"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["anthropic", "openai-codex", "github-copilot"]);
    let url = loop {
        let line = stderr
            .next_line()
            .await
            .unwrap()
            .expect("the URL is logged");
        if let Some(rest) = line.strip_prefix("pi: open ") {
            break rest.split(' ').next().unwrap().to_owned();
        }
    };
    // The browser on this machine: the page redirects to the daemon's loopback callback.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200);
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let line = stdout.next_line().await.unwrap().unwrap();
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        answers.push(answer);
    }
    let answer = |id: i64| answers.iter().find(|answer| answer["id"] == id).unwrap();
    assert_eq!(answer(2)["result"], serde_json::json!({}), "{answers:?}");
    assert_eq!(answer(3)["error"]["code"], -32602);
    assert_eq!(
        answer(3)["error"]["message"],
        "unknown authentication method \"vertex\"; use one of anthropic, openai-codex, github-copilot"
    );
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(daemon.home.path().join(".pi/agent/auth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stored["openai-codex"]["accountId"], "acct-123");
    assert_eq!(auth.violations(), Vec::<String>::new());
}

/// pi warns that a Claude subscription is billed as extra usage when it is a login, and
/// when its token is given as a key: `auth/list` says which keys are such tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_list_names_a_subscription_token_given_as_a_key() {
    let daemon = TempDaemon::start_with_env(
        &workspace_binary("pid"),
        "",
        &[],
        &[("ANTHROPIC_API_KEY", "sk-ant-oat01-not-a-real-token")],
    )
    .await;
    let (client, _events) = daemon.client().await;
    let anthropic = |listed: pi_protocol::v1::AuthListResponse| {
        listed
            .providers
            .into_iter()
            .find(|status| status.provider == "anthropic")
            .unwrap()
    };
    let listed = anthropic(client.call::<AuthList>(&AuthListParams {}).await.unwrap());
    assert!(
        matches!(&listed.source, Some(AuthSource::Environment { variable }) if variable == "ANTHROPIC_API_KEY"),
        "{listed:?}"
    );
    assert!(listed.subscription_token, "{listed:?}");
    // An API key in auth.json wins over the variable, and is not a subscription's.
    let mut store = pictl(&daemon, &["login", "--key", "anthropic"])
        .spawn()
        .unwrap();
    store
        .stdin
        .take()
        .unwrap()
        .write_all(b"sk-ant-api03-plain\n")
        .await
        .unwrap();
    assert!(store.wait_with_output().await.unwrap().status.success());
    let listed = anthropic(client.call::<AuthList>(&AuthListParams {}).await.unwrap());
    assert!(
        matches!(&listed.source, Some(AuthSource::ApiKey { .. })),
        "{listed:?}"
    );
    assert!(!listed.subscription_token, "{listed:?}");
}

/// pi's default `transport` on the real daemon: sessions of a ChatGPT login talk to the
/// ChatGPT backend on a WebSocket each, a second prompt continuing the first response on the
/// same socket; pi 0.73.1 itself (with Node's WebSocket) sends the same message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chatgpt_sessions_keep_a_websocket_each_as_pi_does() {
    let models = ModelServer::start().await;
    models.serve_codex_websocket();
    let token = pi_test_support::auth_server::codex_access_token(7);
    let far = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 3_600_000;
    let auth_json = serde_json::json!({"openai-codex": {"type": "oauth", "access": token,
        "refresh": "r", "expires": far as u64, "accountId": "acct-123"}});
    let rerouted = serde_json::json!({"providers": {"openai-codex": {
        "baseUrl": format!("{}/backend-api", models.url())}}});
    let daemon = TempDaemon::start_with_files(
        &workspace_binary("pid"),
        "",
        &[
            (".pi/agent/auth.json", auth_json.to_string()),
            (".pi/agent/models.json", rerouted.to_string()),
        ],
    )
    .await;
    let (client, mut events) = daemon.client().await;
    let cwd = daemon.home.path().display().to_string();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let session = client
            .call::<SessionCreate>(&SessionCreateParams {
                cwd: cwd.clone(),
                model: Some("openai-codex/gpt-5.4".to_owned()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap();
        client
            .call::<SessionAttach>(&SessionAttachParams {
                session_id: session.id.clone(),
                after_seq: None,
            })
            .await
            .unwrap();
        sessions.push(session.id);
    }
    for round in ["first", "second"] {
        for id in &sessions {
            models.push(Turn::reply().text(format!("The {round} answer.")));
            client
                .call::<SessionPrompt>(&prompt(id, round))
                .await
                .unwrap();
        }
        all_runs_end(&mut events, &sessions).await;
    }
    models.assert_done(4);
    assert_eq!(models.websocket_connections(), 2, "one socket per session");
    let requests = models.requests();
    for id in &sessions {
        let numbered: Vec<(usize, &pi_test_support::model_server::RecordedRequest)> = requests
            .iter()
            .enumerate()
            .filter(|(_, request)| request.body["prompt_cache_key"] == id.as_str())
            .map(|(index, request)| (index + 1, request))
            .collect();
        assert_eq!(numbered.len(), 2, "{id}");
        let (first_number, first) = numbered[0];
        let (_, second) = numbered[1];
        assert_eq!(first.header("session_id"), Some(id.as_str()));
        assert_eq!(
            first.header("openai-beta"),
            Some("responses_websockets=2026-02-06")
        );
        assert!(first.body.get("previous_response_id").is_none());
        assert_eq!(
            second.body["previous_response_id"],
            format!("resp_scripted_{first_number:04}")
        );
        // Only the new prompt: the socket holds the rest.
        let input = second.body["input"].as_array().unwrap();
        assert_eq!(input.len(), 1, "{}", second.body);
        assert_eq!(input[0]["role"], "user");
    }

    // pi itself, with Node's WebSocket: the same headers and the same body's keys.
    models.push(Turn::reply().text("Hello from pi."));
    let home = daemon.home.path();
    let pi = tokio::process::Command::new(pi_test_support::peers::npm_bin("pi"))
        .args(["-p", "--model", "openai-codex/gpt-5.4", "first"])
        .env("HOME", home)
        .env("PI_CODING_AGENT_DIR", home.join(".pi/agent"))
        .env("PI_OFFLINE", "1")
        .env("NODE_OPTIONS", "--experimental-websocket")
        .current_dir(home)
        .output()
        .await
        .unwrap();
    assert!(
        pi.status.success(),
        "{}",
        String::from_utf8_lossy(&pi.stderr)
    );
    assert_eq!(
        models.websocket_connections(),
        3,
        "pi used the WebSocket too"
    );
    let requests = models.requests();
    let from_pi = requests.last().unwrap();
    let ours = &requests[0];
    for header in [
        "openai-beta",
        "originator",
        "chatgpt-account-id",
        "authorization",
    ] {
        assert_eq!(from_pi.header(header), ours.header(header), "{header}");
    }
    let keys = |body: &serde_json::Value| -> Vec<String> {
        body.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(keys(&from_pi.body), keys(&ours.body));
}
