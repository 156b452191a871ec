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
/// An upgrade request to `url` with `headers`.
fn upgrade_request(
    url: &str,
    headers: &[(&'static str, String)],
) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    request
}

async fn upgrade_status(url: &str, headers: &[(&'static str, String)]) -> u16 {
    match tokio_tungstenite::connect_async(upgrade_request(url, headers)).await {
        Ok((_socket, response)) => response.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("unexpected WebSocket error: {other}"),
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A WebSocket connection with `headers`, initialized (its first answer read).
async fn initialized_socket(url: &str, headers: &[(&'static str, String)]) -> Socket {
    use futures_util::SinkExt as _;
    let (mut socket, _) = tokio_tungstenite::connect_async(upgrade_request(url, headers))
        .await
        .unwrap();
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": pi_protocol::PROTOCOL_VERSION,
                   "clientInfo": {"name": "web", "version": "0"}}});
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            initialize.to_string().into(),
        ))
        .await
        .unwrap();
    answer_to(&mut socket, 1).await;
    socket
}

/// The answer to request `id` on `socket` (notifications before it are skipped); panics when
/// it is an error or the connection ends first.
async fn answer_to(socket: &mut Socket, id: u64) -> serde_json::Value {
    use futures_util::StreamExt as _;
    loop {
        match socket.next().await {
            Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) => {
                let message: serde_json::Value = serde_json::from_str(&text).unwrap();
                if message["id"] == id {
                    assert!(message.get("result").is_some(), "{message}");
                    return message;
                }
            }
            Some(Ok(_)) => {}
            other => panic!("no answer to request {id}: {other:?}"),
        }
    }
}

/// Whether the daemon ends `socket` (within 10 s): its stream ends, closes or fails.
async fn ends(socket: &mut Socket) -> bool {
    use futures_util::StreamExt as _;
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match socket.next().await {
                None
                | Some(Err(_))
                | Some(Ok(tokio_tungstenite::tungstenite::Message::Close(_))) => {
                    return;
                }
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .is_ok()
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
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    // A gzipped body is not text; the head always is.
    String::from_utf8_lossy(&answer).into_owned()
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

/// The value of `name` in a raw answer's headers (case-insensitive), if present.
fn header_of<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// A one-time link from `web/login`: the port and the code's path.
async fn web_login(daemon: &TempDaemon) -> pi_protocol::v1::WebLoginResponse {
    let (client, _notifications) = daemon.client().await;
    client
        .call::<pi_protocol::v1::WebLogin>(&pi_protocol::v1::WebLoginParams {})
        .await
        .unwrap()
}

/// Visits a login link; the cookie (`pi_web=…`) and the UI's path (`/s/LOGIN/`).
async fn redeem(daemon: &TempDaemon, host: &str, path: &str) -> (String, String) {
    let answer = http(
        daemon,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    let set_cookie = header_of(&answer, "set-cookie").unwrap().to_owned();
    let home = header_of(&answer, "refresh")
        .unwrap()
        .strip_prefix("0; url=")
        .unwrap()
        .to_owned();
    (set_cookie, home)
}

#[tokio::test]
async fn the_web_ui_logs_in_once_with_a_code_and_then_takes_only_its_cookie_from_its_own_origin() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let port = std::fs::read_to_string(daemon.paths.ws_port_path())
        .unwrap()
        .trim()
        .to_owned();
    let host = format!("127.0.0.1:{port}");

    // Not logged in: a page that says how, with the policy every page carries.
    let answer = http(&daemon, &format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n")).await;
    assert!(
        answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
        "{answer}"
    );
    assert!(answer.contains("Run <code>pictl web</code>"), "{answer}");
    let csp = header_of(&answer, "content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        &format!("connect-src 'self' ws://{host}"),
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    assert_eq!(
        header_of(&answer, "x-content-type-options"),
        Some("nosniff")
    );
    assert_eq!(header_of(&answer, "referrer-policy"), Some("no-referrer"));

    // The link: its code, once, for a cookie that is neither the token nor the web key, and
    // that only the login's own path gets.
    let login = web_login(&daemon).await;
    assert_eq!(login.port.to_string(), port);
    assert_eq!(login.url, format!("http://{host}{}", login.path));
    assert!(login.path.starts_with("/login?code="), "{}", login.path);
    assert!(!login.url.contains(&token(&daemon)));
    let (set_cookie, home) = redeem(&daemon, &host, &login.path).await;
    let login_id = home
        .strip_prefix("/s/")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap()
        .to_owned();
    assert_eq!(login_id.len(), 32, "{home}");
    assert!(set_cookie.starts_with("pi_web=v1."), "{set_cookie}");
    assert!(
        set_cookie.ends_with(&format!(
            "; HttpOnly; SameSite=Strict; Path={home}; Max-Age=604800"
        )),
        "{set_cookie}"
    );
    let web_key = std::fs::read_to_string(daemon.paths.web_key_path()).unwrap();
    assert!(!set_cookie.contains(&token(&daemon)), "{set_cookie}");
    assert!(!set_cookie.contains(web_key.trim()), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let again = http(
        &daemon,
        &format!("GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n", login.path),
    )
    .await;
    assert!(
        again.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
        "{again}"
    );
    assert!(
        again.contains("This login link was used already or has expired"),
        "{again}"
    );
    assert!(header_of(&again, "set-cookie").is_none(), "{again}");

    // Logged in: the page and its assets, gzipped when asked.
    let answer = http(
        &daemon,
        &format!("GET {home} HTTP/1.1\r\nHost: {host}\r\nCookie: other=1; {cookie}\r\n\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert_eq!(
        header_of(&answer, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(answer.contains("assets/app.js"), "{answer}");
    let answer = http(
        &daemon,
        &format!(
            "GET {home}assets/app.js HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept-Encoding: gzip, br\r\n\r\n"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert_eq!(header_of(&answer, "content-encoding"), Some("gzip"));
    assert_eq!(
        header_of(&answer, "content-type"),
        Some("text/javascript; charset=utf-8")
    );
    // A forged cookie, or this one under another login's path, is no login.
    // Its MAC's last digit changed (to another digit than it was).
    let last = if cookie.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &cookie[..cookie.len() - 1]);
    let other_home = format!("/s/{}/", "0".repeat(32));
    for (bad, path) in [
        (forged.as_str(), home.as_str()),
        (cookie.as_str(), other_home.as_str()),
    ] {
        let answer = http(
            &daemon,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {bad}\r\n\r\n"),
        )
        .await;
        assert!(
            answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
            "{bad}: {answer}"
        );
    }

    // The WebSocket of the login's path takes the cookie from this origin's pages only.
    let url = format!("ws://{host}{home}rpc");
    let own = format!("http://{host}");
    assert_eq!(
        upgrade_status(&url, &[("cookie", cookie.clone()), ("origin", own.clone())]).await,
        101,
        "the UI's own page"
    );
    assert_eq!(
        upgrade_status(
            &ws_url(&daemon),
            &[("cookie", cookie.clone()), ("origin", own.clone())]
        )
        .await,
        401,
        "the cookie on another path"
    );
    assert_eq!(
        upgrade_status(
            &url,
            &[
                ("cookie", cookie.clone()),
                ("origin", "http://localhost:9".into())
            ]
        )
        .await,
        403,
        "a page of another origin on the same host"
    );
    assert_eq!(
        upgrade_status(&url, &[("cookie", cookie.clone())]).await,
        401,
        "the cookie without the page's origin"
    );
    assert_eq!(
        upgrade_status(&url, &[("origin", own.clone())]).await,
        401,
        "the origin without the cookie"
    );
    // A token still works, from the UI's origin too.
    assert_eq!(
        upgrade_status(
            &ws_url(&daemon),
            &[
                ("authorization", format!("Bearer {}", token(&daemon))),
                ("origin", own.clone())
            ]
        )
        .await,
        101
    );

    // Logout revokes the login (not just the browser's copy), and ends the login's open
    // connections (another tab's); other methods are refused.
    let mut open_tab =
        initialized_socket(&url, &[("cookie", cookie.clone()), ("origin", own.clone())]).await;
    let answer = http(
        &daemon,
        &format!("GET {home}logout HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"),
    )
    .await;
    assert_eq!(
        header_of(&answer, "set-cookie"),
        Some(format!("pi_web=; HttpOnly; SameSite=Strict; Path={home}; Max-Age=0").as_str())
    );
    let answer = http(
        &daemon,
        &format!("GET {home} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
        "{answer}"
    );
    assert!(
        ends(&mut open_tab).await,
        "the open tab's connection ends with its login"
    );
    assert_eq!(
        upgrade_status(&url, &[("cookie", cookie.clone()), ("origin", own)]).await,
        401,
        "a revoked login"
    );
    let answer = http(
        &daemon,
        &format!("POST /login HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
        "{answer}"
    );
    assert!(
        answer.ends_with("`/login` takes GET requests\n"),
        "{answer}"
    );
}

#[tokio::test]
async fn web_logins_are_made_and_revoked_on_the_unix_socket_only() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _notifications) = Client::connect(
        &Endpoint::WebSocket {
            url: ws_url(&daemon),
            token: Some(token(&daemon)),
        },
        pi_client::client_info("ws-test", "0"),
        ClientCapabilities::default(),
    )
    .await
    .unwrap();
    for method in ["web/login", "web/revoke"] {
        let error = client
            .call_raw(method, serde_json::json!({}))
            .await
            .unwrap_err();
        assert_eq!(error.rpc_kind(), Some(pi_protocol::ErrorKind::Unauthorized));
        assert_eq!(
            error.to_string(),
            format!(
                "{method} is answered on the daemon's Unix socket only (`pictl web`), not over the WebSocket"
            )
        );
    }
    // Revoking on the socket logs out a browser logged in before.
    let login = web_login(&daemon).await;
    let host = format!("127.0.0.1:{}", login.port);
    let (set_cookie, home) = redeem(&daemon, &host, &login.path).await;
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let url = format!("ws://{host}{home}rpc");
    let own = format!("http://{host}");
    let mut open_tab =
        initialized_socket(&url, &[("cookie", cookie.clone()), ("origin", own)]).await;
    // A connection made with the token is no login's: revoking leaves it open.
    let mut scripted = initialized_socket(
        &ws_url(&daemon),
        &[("authorization", format!("Bearer {}", token(&daemon)))],
    )
    .await;
    let (unix, _events) = daemon.client().await;
    unix.call::<pi_protocol::v1::WebRevoke>(&pi_protocol::v1::WebRevokeParams {})
        .await
        .unwrap();
    assert!(
        ends(&mut open_tab).await,
        "the open tab's connection ends when every login is revoked"
    );
    {
        use futures_util::SinkExt as _;
        let status =
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "daemon/status", "params": {}});
        scripted
            .send(tokio_tungstenite::tungstenite::Message::Text(
                status.to_string().into(),
            ))
            .await
            .unwrap();
        answer_to(&mut scripted, 2).await;
    }
    let answer = http(
        &daemon,
        &format!("GET {home} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 401 Unauthorized\r\n"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_web_login_and_its_port_outlive_a_daemon_restart() {
    let mut daemon = TempDaemon::start(pid_binary()).await;
    let login = web_login(&daemon).await;
    let host = format!("127.0.0.1:{}", login.port);
    let (set_cookie, home) = redeem(&daemon, &host, &login.path).await;
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    daemon.kill9().await;
    daemon.restart().await;
    // With no port configured, the daemon takes its old one again: open tabs reconnect.
    let port = std::fs::read_to_string(daemon.paths.ws_port_path())
        .unwrap()
        .trim()
        .to_owned();
    assert_eq!(port, login.port.to_string());
    let answer = http(
        &daemon,
        &format!("GET {home} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
}
