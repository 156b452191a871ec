//! L5: bad input on the real sockets, Unix and WebSocket alike: invalid JSON and UTF-8, a
//! 64 MiB line, deep nesting, batches, wrong parameter types, unknown methods, calls before
//! `initialize`, unknown and SQL-looking ids, `..` in every path-like parameter — and two
//! thousand generated messages through the codec and dispatch. Every reply is a structured
//! JSON-RPC response (an error with `data.kind`, or a result where the input was valid), the
//! daemon never crashes, nothing outside the named places is touched, and `daemon/status`
//! answers another client after each case and each batch.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use pi_client::Client;
use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionCreate, SessionCreateParams, SessionInfo, SessionList,
    SessionListParams,
};
use pi_test_support::raw::RawConnection;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::suite::harness::World;

const READ_TIMEOUT: Duration = Duration::from_secs(20);

type WebSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A connection without a client library: bytes in, JSON out.
enum Peer {
    Unix(RawConnection),
    Ws(Box<WebSocket>),
}

impl Peer {
    async fn unix(world: &World) -> Peer {
        Peer::Unix(RawConnection::connect(&world.daemon.paths.socket_path()).await)
    }

    async fn websocket(world: &World) -> Peer {
        let paths = &world.daemon.paths;
        let port = std::fs::read_to_string(paths.ws_port_path()).unwrap();
        let token = std::fs::read_to_string(paths.ws_token_path()).unwrap();
        let mut request = format!("ws://127.0.0.1:{}/", port.trim())
            .into_client_request()
            .unwrap();
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {}", token.trim()).parse().unwrap(),
        );
        let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        Peer::Ws(Box::new(socket))
    }

    /// Sends one message as raw bytes (a line on the socket; a text frame, or a binary one
    /// for bytes that are not UTF-8). `false` when the daemon had closed the connection.
    async fn send_raw(&mut self, bytes: &[u8]) -> bool {
        match self {
            Peer::Unix(raw) => {
                let mut line = bytes.to_vec();
                line.push(b'\n');
                raw.try_send_bytes(&line).await.is_ok()
            }
            Peer::Ws(socket) => {
                let message = match String::from_utf8(bytes.to_vec()) {
                    Ok(text) => Message::text(text),
                    Err(error) => Message::binary(error.into_bytes()),
                };
                socket.send(message).await.is_ok()
            }
        }
    }

    async fn send(&mut self, value: &Value) {
        assert!(self.send_raw(value.to_string().as_bytes()).await);
    }

    /// The next JSON message; `None` once the daemon closed the connection.
    async fn read(&mut self) -> Option<Value> {
        match self {
            Peer::Unix(raw) => raw.read().await,
            Peer::Ws(socket) => loop {
                let message = tokio::time::timeout(READ_TIMEOUT, socket.next())
                    .await
                    .expect("the daemon answered in time");
                match message {
                    Some(Ok(Message::Text(text))) => {
                        return Some(serde_json::from_str(&text).unwrap());
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                    Some(Ok(Message::Binary(bytes))) => {
                        return Some(serde_json::from_slice(&bytes).unwrap());
                    }
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return None,
                }
            },
        }
    }

    async fn request(&mut self, value: Value) -> Value {
        self.send(&value).await;
        self.read().await.expect("the daemon answered")
    }

    async fn initialize(&mut self) {
        let response = self
            .request(json!({
                "jsonrpc": "2.0", "id": "init", "method": "initialize",
                "params": {"protocolVersion": pi_protocol::PROTOCOL_VERSION,
                           "clientInfo": {"name": "hostile", "version": "0"}}
            }))
            .await;
        assert!(response.get("result").is_some(), "{response}");
    }
}

/// A structured JSON-RPC error of `kind` (and its fixed code), with a message.
fn assert_error(response: &Value, kind: &str, case: &str) {
    let error = &response["error"];
    assert!(
        error.is_object(),
        "{case}: expected an error, got {response}"
    );
    assert_eq!(response["jsonrpc"], "2.0", "{case}: {response}");
    assert!(error["code"].is_i64(), "{case}: {response}");
    assert!(
        !error["message"].as_str().unwrap_or_default().is_empty(),
        "{case}: {response}"
    );
    assert_eq!(error["data"]["kind"], kind, "{case}: {response}");
}

/// A well-formed response: a result, or an error with a kind.
fn assert_structured(response: &Value, case: &str) {
    assert_eq!(response["jsonrpc"], "2.0", "{case}: {response}");
    if response.get("result").is_some() {
        return;
    }
    let error = &response["error"];
    assert!(error["code"].is_i64(), "{case}: {response}");
    assert!(error["message"].is_string(), "{case}: {response}");
    assert!(error["data"]["kind"].is_string(), "{case}: {response}");
}

async fn status_answers(bystander: &Client, case: &str) {
    tokio::time::timeout(
        READ_TIMEOUT,
        bystander.call::<DaemonStatus>(&DaemonStatusParams {}),
    )
    .await
    .unwrap_or_else(|_| panic!("daemon/status hung after {case}"))
    .unwrap_or_else(|error| panic!("daemon/status failed after {case}: {error}"));
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The hand-written cases on one connection of each transport.
async fn hostile_cases(world: &World, bystander: &Client, session: &SessionInfo, mut peer: Peer) {
    let home = world.daemon.home.path().display().to_string();
    let sid = session.id.as_str();

    let response = peer.request(request(1, "daemon/status", json!({}))).await;
    assert_error(&response, "not_initialized", "before initialize");
    assert_eq!(response["id"], 1);
    peer.initialize().await;

    let raw_cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("invalid JSON", b"{this is not json".to_vec(), "parse_error"),
        (
            "truncated JSON",
            br#"{"jsonrpc":"2.0","id":2,"method":"#.to_vec(),
            "parse_error",
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xff\xfe\"}".to_vec(),
            "parse_error",
        ),
        (
            "deep nesting",
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"session/get","params":{}{}}}"#,
                "[".repeat(100_000),
                "]".repeat(100_000)
            )
            .into_bytes(),
            "parse_error",
        ),
        (
            "a batch",
            br#"[{"jsonrpc":"2.0","id":5,"method":"daemon/status"}]"#.to_vec(),
            "invalid_request",
        ),
        ("an empty batch", b"[]".to_vec(), "invalid_request"),
        ("a number", b"42".to_vec(), "invalid_request"),
        (
            "no method",
            br#"{"jsonrpc":"2.0","id":6}"#.to_vec(),
            "invalid_request",
        ),
        (
            "wrong jsonrpc version",
            br#"{"jsonrpc":"1.0","id":7,"method":"daemon/status"}"#.to_vec(),
            "invalid_request",
        ),
    ];
    for (case, bytes, kind) in raw_cases {
        assert!(peer.send_raw(&bytes).await, "{case}: the daemon hung up");
        let response = peer.read().await.expect(case);
        assert_error(&response, kind, case);
        status_answers(bystander, case).await;
    }

    let sql = "x' OR '1'='1'; DROP TABLE sessions; --";
    let request_cases: Vec<(&str, Value, &str)> = vec![
        (
            "unknown method",
            request(10, "session/explode", json!({})),
            "method_not_found",
        ),
        (
            "a number for a string",
            request(11, "session/get", json!({"sessionId": 5})),
            "invalid_params",
        ),
        (
            "an array for params",
            request(12, "session/list", json!([1, 2])),
            "invalid_params",
        ),
        (
            "a string for a number",
            request(
                13,
                "session/read",
                json!({"sessionId": sid, "limit": "ten"}),
            ),
            "invalid_params",
        ),
        (
            "a negative seq",
            request(
                14,
                "session/attach",
                json!({"sessionId": sid, "afterSeq": -1}),
            ),
            "invalid_params",
        ),
        (
            "an unknown session",
            request(15, "session/get", json!({"sessionId": "nope"})),
            "not_found",
        ),
        (
            "a SQL-looking session id",
            request(16, "session/get", json!({"sessionId": sql})),
            "not_found",
        ),
        (
            "a SQL-looking read",
            request(17, "session/read", json!({"sessionId": sql})),
            "not_found",
        ),
        (
            "a SQL-looking delete",
            request(18, "session/delete", json!({"sessionId": sql})),
            "not_found",
        ),
        (
            "a SQL-looking entry id",
            request(
                19,
                "session/fork",
                json!({"sessionId": sid, "entryId": sql}),
            ),
            "not_found",
        ),
        (
            "a SQL-looking cursor",
            request(20, "session/list", json!({"cursor": sql})),
            "invalid_params",
        ),
        (
            "`..` as a session id",
            request(21, "session/get", json!({"sessionId": "../../etc"})),
            "not_found",
        ),
        (
            "`..` in an artifact's session",
            request(
                22,
                "artifact/read",
                json!({"sessionId": "../..", "artifactId": "bash-1"}),
            ),
            "not_found",
        ),
        (
            "`..` in an artifact id",
            request(
                23,
                "artifact/read",
                json!({"sessionId": sid, "artifactId": "../../../etc/passwd"}),
            ),
            "invalid_params",
        ),
        (
            "`..` in an artifact URL",
            request(
                24,
                "artifact/read",
                json!({"sessionId": sid, "artifactId": "artifact://../pi.db"}),
            ),
            "invalid_params",
        ),
        (
            "a relative cwd",
            request(25, "session/create", json!({"cwd": "../elsewhere"})),
            "invalid_params",
        ),
        (
            "a cwd through `..` to nowhere",
            request(
                26,
                "session/create",
                json!({"cwd": format!("{home}/missing/../../nowhere")}),
            ),
            "invalid_params",
        ),
        (
            "an import through `..`",
            request(
                27,
                "session/import",
                json!({"path": format!("{home}/x/../missing.jsonl")}),
            ),
            "not_found",
        ),
        (
            "a relative import",
            request(28, "session/import", json!({"path": "../session.jsonl"})),
            "invalid_params",
        ),
        (
            "a relative export",
            request(
                29,
                "session/export",
                json!({"sessionId": sid, "path": "../out.jsonl"}),
            ),
            "invalid_params",
        ),
        (
            "`..` as an entry to navigate to",
            request(
                30,
                "session/navigate",
                json!({"sessionId": sid, "entryId": ".."}),
            ),
            "not_found",
        ),
    ];
    for (case, message, kind) in request_cases {
        let id = message["id"].clone();
        let response = peer.request(message).await;
        assert_error(&response, kind, case);
        assert_eq!(response["id"], id, "{case}");
        status_answers(bystander, case).await;
    }

    // `"id": null` makes a request, which JSON-RPC 2.0 answers with `id: null`.
    let response = peer
        .request(json!({"jsonrpc": "2.0", "id": null, "method": "daemon/status"}))
        .await;
    assert_error(&response, "invalid_request", "a null id");
    assert_eq!(response["id"], Value::Null, "{response}");
    assert_eq!(
        response["error"]["message"],
        "`id` is null; give a request a string or an integer id (a message without `id` is a \
         notification, which gets no reply)"
    );
    // An id a response would have to echo in full is refused.
    let response = peer
        .request(json!({"jsonrpc": "2.0", "id": "i".repeat(100_000), "method": "daemon/status"}))
        .await;
    assert_error(&response, "invalid_request", "a 100 kB id");
    assert_eq!(response["id"], Value::Null, "{response}");
    assert_eq!(
        response["error"]["message"],
        "`id` is a string of 100000 bytes; use at most 256 bytes, or an integer"
    );
    // A 10 MB method name is quoted back cut to its ends and its length: a small error.
    let response = peer
        .request(request(31, &"m".repeat(10 * 1024 * 1024), json!({})))
        .await;
    assert_error(&response, "method_not_found", "a 10 MB method name");
    assert_eq!(
        response["error"]["message"],
        format!(
            "unknown method `{}…{} (10485760 bytes)`; the methods this daemon serves are listed \
             in `capabilities.methods` of the `initialize` response",
            "m".repeat(80),
            "m".repeat(24)
        )
    );
    assert!(response.to_string().len() < 1024, "{response}");
    // A 10 MB key in params comes back in `data.field` cut the same way.
    let response = peer
        .request(request(
            32,
            "session/setEnv",
            json!({"sessionId": sid, "env": {"k".repeat(10 * 1024 * 1024): 5}}),
        ))
        .await;
    assert_error(&response, "invalid_params", "a 10 MB key");
    assert_eq!(
        response["error"]["data"]["field"],
        format!("env.{}…{} (10485764 bytes)", "k".repeat(76), "k".repeat(24))
    );
    assert!(response.to_string().len() < 8192, "{response}");
    status_answers(bystander, "echoed input").await;

    // `..` where the path is legitimate: normalized, and only the named place is touched.
    let response = peer
        .request(request(
            40,
            "session/export",
            json!({"sessionId": sid, "path": format!("{home}/exports/../exported.jsonl")}),
        ))
        .await;
    assert_structured(&response, "an export through `..`");
    assert_eq!(
        response["result"]["path"],
        format!("{home}/exported.jsonl"),
        "{response}"
    );
    assert!(std::path::Path::new(&format!("{home}/exported.jsonl")).is_file());
    assert!(!std::path::Path::new(&format!("{home}/exports")).exists());
    for (id, method, params) in [
        (41, "session/list", json!({"cwd": format!("{home}/a/..")})),
        (
            42,
            "history/search",
            json!({"cwd": format!("{home}/../{home}")}),
        ),
        (
            43,
            "settings/get",
            json!({"cwd": format!("{home}/a/../..")}),
        ),
    ] {
        let response = peer.request(request(id, method, params)).await;
        assert_structured(&response, method);
    }

    // The SQL never ran: the session is still there.
    let listed = bystander
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert!(listed.sessions.iter().any(|listed| listed.id == session.id));

    // A 64 MiB message: an error, the closing notice, then the end of the connection.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":50,"method":"session/get","params":{{"pad":"{}"}}}}"#,
        "x".repeat(64 * 1024 * 1024)
    );
    // The daemon stops reading at its limit, so this write may fail half-way.
    let _ = peer.send_raw(huge.as_bytes()).await;
    let response = peer
        .read()
        .await
        .expect("an answer to the oversized message");
    assert_error(&response, "message_too_large", "a 64 MiB message");
    let closing = peer.read().await.expect("the closing notice");
    assert_eq!(closing["method"], "connection/closing", "{closing}");
    assert_eq!(
        closing["params"]["reason"], "message_too_large",
        "{closing}"
    );
    assert!(peer.read().await.is_none(), "the connection is closed");
    status_answers(bystander, "a 64 MiB message").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_messages_on_both_sockets_get_structured_errors() {
    let world = World::start("openai-completions").await;
    let (bystander, _notifications) = world.client().await;
    let session = bystander
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: world.daemon.home.path().display().to_string(),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    hostile_cases(&world, &bystander, &session, Peer::unix(&world).await).await;
    hostile_cases(&world, &bystander, &session, Peer::websocket(&world).await).await;
}

/// A text frame that is not UTF-8 fails the WebSocket connection with close code 1007 and a
/// reason (RFC 6455 § 8.1), not with a dropped connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_in_a_websocket_text_frame_is_closed_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
    let world = World::start("openai-completions").await;
    let (bystander, _notifications) = world.client().await;
    let Peer::Ws(mut socket) = Peer::websocket(&world).await else {
        unreachable!("a WebSocket peer")
    };
    socket
        .send(Message::Frame(Frame::message(
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}"[..],
            OpCode::Data(Data::Text),
            true,
        )))
        .await
        .unwrap();
    let message = tokio::time::timeout(READ_TIMEOUT, socket.next())
        .await
        .expect("the daemon answers in time");
    match message {
        Some(Ok(Message::Close(Some(CloseFrame { code, reason })))) => {
            assert_eq!(code, CloseCode::Invalid);
            assert_eq!(reason.as_str(), "invalid UTF-8 in a text message");
        }
        other => panic!("expected close code 1007, got {other:?}"),
    }
    status_answers(&bystander, "invalid UTF-8 in a text frame").await;
}

/// A deterministic generator (xorshift): a failure replays the same messages.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A random JSON value from a palette of awkward ones, up to `depth` levels deep.
fn value(random: &mut Random, depth: usize, strings: &[String], keys: &[&str]) -> Value {
    match random.below(if depth == 0 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(random.below(2) == 0),
        2 => json!(*random.pick(&[0i64, -1, 1, i64::MAX, i64::MIN, 4_294_967_296])),
        3 => json!(*random.pick(&[0.5f64, -1e300, 1e-300])),
        4 | 5 => Value::String(random.pick(strings).clone()),
        6 => Value::Array(
            (0..random.below(4))
                .map(|_| value(random, depth - 1, strings, keys))
                .collect(),
        ),
        _ => Value::Object(
            (0..random.below(5))
                .map(|_| {
                    (
                        (*random.pick(keys)).to_owned(),
                        value(random, depth - 1, strings, keys),
                    )
                })
                .collect(),
        ),
    }
}

/// Two thousand generated messages, in batches of a hundred, half on each socket: every reply
/// is a structured response, and `daemon/status` answers after each batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_messages_never_break_the_daemon() {
    let world = World::start("openai-completions").await;
    let (bystander, _notifications) = world.client().await;
    let home = world.daemon.home.path().display().to_string();
    let session = bystander
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: home.clone(),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    // Methods that would act on the machine (shell commands), stop the daemon, or wait for
    // a person are left out; everything else may be called with anything.
    let methods: Vec<&str> = pi_protocol::v1::METHODS
        .iter()
        .map(|method| method.name)
        .filter(|name| !matches!(*name, "session/bash" | "daemon/shutdown" | "ui/ask"))
        .chain(["no/such", "", "session/", "../..", "initialize"])
        .collect();
    let strings: Vec<String> = vec![
        String::new(),
        session.id.clone(),
        "nope".to_owned(),
        "..".to_owned(),
        "../../etc/passwd".to_owned(),
        format!("{home}/../x"),
        format!("{home}/sub/../y.jsonl"),
        "/".to_owned(),
        "' OR 1=1 --".to_owned(),
        "\u{0}\u{202e}\u{fffd}".to_owned(),
        "x".repeat(10_000),
        "high".to_owned(),
        "anthropic/claude".to_owned(),
        "artifact://bash-1".to_owned(),
    ];
    let keys = [
        "sessionId",
        "cwd",
        "path",
        "text",
        "entryId",
        "limit",
        "cursor",
        "afterSeq",
        "model",
        "thinking",
        "name",
        "label",
        "format",
        "scope",
        "artifactId",
        "offset",
        "images",
        "tools",
        "env",
        "query",
        "requestId",
        "answer",
        "protocolVersion",
        "clientInfo",
        "x",
    ];
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut sockets = [Peer::unix(&world).await, Peer::websocket(&world).await];
    for socket in &mut sockets {
        socket.initialize().await;
    }
    for batch in 0..20 {
        let socket = &mut sockets[batch % 2];
        let mut expected = 0;
        for n in 0..100 {
            let id = batch * 100 + n;
            let message = match random.below(10) {
                // Not JSON-RPC at all.
                0 => {
                    let garbage = match random.below(3) {
                        0 => value(&mut random, 3, &strings, &keys).to_string(),
                        1 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":"),
                        _ => "\u{1}{[\"".repeat(random.below(50) + 1),
                    };
                    assert!(socket.send_raw(garbage.as_bytes()).await);
                    expected += 1;
                    continue;
                }
                // A notification (no id): no reply.
                1 => {
                    let message = json!({"jsonrpc": "2.0", "method": random.pick(&methods),
                                         "params": value(&mut random, 3, &strings, &keys)});
                    socket.send(&message).await;
                    continue;
                }
                _ => json!({"jsonrpc": "2.0", "id": id, "method": random.pick(&methods),
                            "params": value(&mut random, 3, &strings, &keys)}),
            };
            socket.send(&message).await;
            expected += 1;
        }
        let mut replies = 0;
        while replies < expected {
            let reply = socket
                .read()
                .await
                .unwrap_or_else(|| panic!("batch {batch}: the daemon closed the connection"));
            if reply.get("method").is_some() {
                // A notification the daemon sent on its own (an attach's events).
                continue;
            }
            assert_structured(&reply, &format!("batch {batch}"));
            replies += 1;
        }
        status_answers(&bystander, &format!("batch {batch}")).await;
    }
}
