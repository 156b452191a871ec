//! The WebSocket listener: token and Origin checks at the upgrade, then the same protocol.

use pi_client::{Client, ClientError, Endpoint};
use pi_protocol::v1::{ClientCapabilities, DaemonStatus, DaemonStatusParams};
use pi_test_support::daemon::TempDaemon;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use super::pid_binary;

fn ws_url(daemon: &TempDaemon) -> String {
    let port = std::fs::read_to_string(daemon.paths.ws_port_path()).unwrap();
    format!("ws://127.0.0.1:{}/", port.trim())
}

fn token(daemon: &TempDaemon) -> String {
    std::fs::read_to_string(daemon.paths.ws_token_path())
        .unwrap()
        .trim()
        .to_owned()
}

/// Attempts an upgrade with the given headers; returns the HTTP status of a refusal, or 101.
async fn upgrade_status(url: &str, headers: &[(&'static str, String)]) -> u16 {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((_socket, response)) => response.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("unexpected WebSocket error: {other}"),
    }
}

#[tokio::test]
async fn upgrade_requires_the_token_and_refuses_browser_origins() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let url = ws_url(&daemon);
    let bearer = format!("Bearer {}", token(&daemon));

    assert_eq!(upgrade_status(&url, &[]).await, 401, "no token");
    assert_eq!(
        upgrade_status(&url, &[("authorization", "Bearer wrong".into())]).await,
        401,
        "wrong token"
    );
    assert_eq!(
        upgrade_status(
            &url,
            &[
                ("authorization", bearer.clone()),
                ("origin", "https://evil.example".into())
            ]
        )
        .await,
        403,
        "browser origin"
    );
    assert_eq!(
        upgrade_status(&url, &[("authorization", bearer)]).await,
        101,
        "valid token"
    );
    assert_eq!(
        upgrade_status(&format!("{url}?token={}", token(&daemon)), &[]).await,
        101,
        "token in query"
    );
}

/// Attempts an upgrade with the given headers; returns the status and body of the answer.
async fn refusal(url: &str, headers: &[(&'static str, String)]) -> (u16, String) {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((_socket, response)) => panic!("upgraded: {response:?}"),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => (
            response.status().as_u16(),
            String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned(),
        ),
        Err(other) => panic!("unexpected WebSocket error: {other}"),
    }
}

#[tokio::test]
async fn a_host_other_than_loopback_is_refused_even_with_the_token() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let url = ws_url(&daemon);
    let bearer = format!("Bearer {}", token(&daemon));
    // A web page that reached the port through DNS rebinding sends its own name as `Host`.
    let (status, body) = refusal(
        &url,
        &[
            ("authorization", bearer.clone()),
            ("host", "evil.example".into()),
        ],
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        "the Host \"evil.example\" is not loopback; the daemon answers only requests for \
         127.0.0.1, localhost or [::1], which keeps out web pages that reach it through DNS \
         rebinding\n"
    );
    let port = url
        .trim_start_matches("ws://127.0.0.1:")
        .trim_end_matches('/');
    for host in [
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "127.0.0.1".into(),
    ] {
        assert_eq!(
            upgrade_status(
                &url,
                &[("authorization", bearer.clone()), ("host", host.clone())]
            )
            .await,
            101,
            "{host}"
        );
    }
    let (status, body) = refusal(&url, &[]).await;
    assert_eq!(
        (status, body.as_str()),
        (
            401,
            "a valid token is required: send `Authorization: Bearer TOKEN` or `?token=TOKEN`; the token is in the file `ws.token` in the daemon's runtime directory\n"
        )
    );
}

#[tokio::test]
async fn allow_listed_origin_may_connect() {
    let daemon = TempDaemon::start_with_config(
        pid_binary(),
        "[websocket]\nallowed_origins = [\"vscode-webview://pi\"]\n",
    )
    .await;
    let url = ws_url(&daemon);
    let bearer = format!("Bearer {}", token(&daemon));
    assert_eq!(
        upgrade_status(
            &url,
            &[
                ("authorization", bearer.clone()),
                ("origin", "vscode-webview://pi".into())
            ]
        )
        .await,
        101
    );
    assert_eq!(
        upgrade_status(
            &url,
            &[
                ("authorization", bearer),
                ("origin", "vscode-webview://other".into())
            ]
        )
        .await,
        403
    );
}

#[tokio::test]
async fn protocol_over_websocket_matches_the_socket() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let endpoint = Endpoint::WebSocket {
        url: ws_url(&daemon),
        token: Some(token(&daemon)),
    };
    let (client, _notifications) = Client::connect(
        &endpoint,
        pi_client::client_info("ws-test", "0"),
        ClientCapabilities::default(),
    )
    .await
    .unwrap();
    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(status.pid, daemon.pid());
    assert_eq!(status.connections, 1);
    let error = client
        .call_raw("no/such", serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        error.rpc_kind(),
        Some(pi_protocol::ErrorKind::MethodNotFound)
    );

    let refused = Client::connect(
        &Endpoint::WebSocket {
            url: ws_url(&daemon),
            token: None,
        },
        pi_client::client_info("ws-test", "0"),
        ClientCapabilities::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, ClientError::WebSocket { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("401"), "{refused}");
}

/// One raw HTTP request on a new connection; the whole answer (the daemon closes after it).
async fn http(daemon: &TempDaemon, request: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let port = std::fs::read_to_string(daemon.paths.ws_port_path()).unwrap();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port.trim().parse().unwrap()))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn other_requests_get_plain_answers_and_the_connection_closes() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let answer = http(&daemon, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nok\n"), "{answer}");
    assert!(answer.contains("connection: close\r\n"), "{answer}");

    let answer = http(&daemon, "GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 404 Not Found\r\n"), "{answer}");
    assert!(
        answer.ends_with("\r\n\r\nnot found; the WebSocket endpoint is `/`\n"),
        "{answer}"
    );

    let answer = http(
        &daemon,
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n",
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
        "{answer}"
    );
    assert!(answer.contains("allow: GET\r\n"), "{answer}");
    assert!(
        answer.ends_with("\r\n\r\nthe WebSocket endpoint takes GET upgrade requests\n"),
        "{answer}"
    );

    // The Host check comes before everything, `/healthz` included.
    let answer = http(
        &daemon,
        "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    let answer = http(&daemon, "GET /healthz HTTP/1.0\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.0 403 Forbidden\r\n"), "{answer}");
    assert!(answer.ends_with("a `Host` header is required; the daemon answers only requests for 127.0.0.1, localhost or [::1]\n"), "{answer}");
}

#[tokio::test]
async fn an_upgraded_connection_that_does_not_initialize_is_closed_at_its_deadline() {
    use futures_util::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    let daemon =
        TempDaemon::start_with_config(pid_binary(), "[limits]\ninitialize_timeout_secs = 1\n")
            .await;
    let mut request = ws_url(&daemon).into_client_request().unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", token(&daemon)).parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let mut messages = Vec::new();
    let close = loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => {
                messages.push(serde_json::from_str::<serde_json::Value>(&text).unwrap());
            }
            Some(Ok(Message::Close(frame))) => break frame,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["id"], serde_json::Value::Null);
    assert_eq!(messages[0]["error"]["data"]["kind"], "not_initialized");
    assert_eq!(
        messages[0]["error"]["message"],
        "no successful `initialize` within 1 s of connecting, so the daemon closes the \
         connection; send `initialize` as the first request"
    );
    assert_eq!(messages[1]["method"], "connection/closing");
    assert_eq!(messages[1]["params"]["reason"], "initialize_timeout");
    assert_eq!(
        close.map(|frame| u16::from(frame.code)),
        Some(1000),
        "a normal close after the notice"
    );
}
