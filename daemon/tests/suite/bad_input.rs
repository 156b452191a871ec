//! Bad input gets the right error and never disturbs other connections.

use pi_client::ClientError;
use pi_protocol::v1::{DaemonStatus, DaemonStatusParams};
use pi_test_support::daemon::TempDaemon;
use pi_test_support::raw::RawConnection;
use serde_json::{Value, json};

use super::pid_binary;

fn assert_error(response: &Value, code: i64, kind: &str, message_fragment: &str) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert_eq!(response["error"]["code"], code, "{response}");
    assert_eq!(response["error"]["data"]["kind"], kind, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(message_fragment),
        "{message:?} lacks {message_fragment:?}"
    );
}

#[tokio::test]
async fn malformed_input_gets_errors_while_another_connection_is_served() {
    let daemon =
        TempDaemon::start_with_config(pid_binary(), "[limits]\nmax_message_bytes = 4096\n").await;
    let (bystander, _notifications) = daemon.client().await;
    let bystander_ok = || async {
        bystander
            .call::<DaemonStatus>(&DaemonStatusParams {})
            .await
            .unwrap()
    };

    let socket = daemon.paths.socket_path();
    let mut raw = RawConnection::connect(&socket).await;

    // Before initialize.
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "daemon/status"}))
        .await;
    assert_error(
        &response,
        -32002,
        "not_initialized",
        "send `initialize` first",
    );
    assert_eq!(response["id"], 1);
    bystander_ok().await;

    // Invalid JSON, then a batch: the connection stays usable.
    raw.send_bytes(b"{this is not json\n").await;
    let response = raw.read().await.unwrap();
    assert_error(&response, -32700, "parse_error", "invalid JSON");
    assert_eq!(response["id"], Value::Null);
    let response = raw
        .request(json!([{"jsonrpc": "2.0", "id": 2, "method": "daemon/status"}]))
        .await;
    assert_error(
        &response,
        -32600,
        "invalid_request",
        "batch requests are not supported",
    );
    bystander_ok().await;

    // Bad initialize params name the field.
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    assert_error(
        &response,
        -32602,
        "invalid_params",
        "missing field `clientInfo`",
    );
    assert_eq!(response["error"]["data"]["field"], "clientInfo");

    raw.close().await;
    let mut raw = RawConnection::initialized(&socket).await;
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 4, "method": "no/such"}))
        .await;
    assert_error(
        &response,
        -32601,
        "method_not_found",
        "unknown method `no/such`",
    );
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 5, "method": "initialize",
                        "params": {"protocolVersion": 1, "clientInfo": {"name": "x", "version": "1"}}}))
        .await;
    assert_error(
        &response,
        -32003,
        "already_initialized",
        "already initialized",
    );
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 6, "method": "daemon/status", "params": [1]}))
        .await;
    assert_error(
        &response,
        -32602,
        "invalid_params",
        "params must be an object",
    );
    bystander_ok().await;

    // Oversized message: an error, then the connection is closed.
    let mut big = json!({"jsonrpc": "2.0", "id": 7, "method": "daemon/status", "params": {"pad": "x".repeat(10_000)}}).to_string();
    big.push('\n');
    raw.send_bytes(big.as_bytes()).await;
    let response = raw.read().await.unwrap();
    assert_error(&response, -32005, "message_too_large", "4096-byte limit");
    let closing = raw.read().await.unwrap();
    assert_eq!(closing["method"], "connection/closing");
    assert_eq!(closing["params"]["reason"], "message_too_large");
    assert!(
        raw.read().await.is_none(),
        "the connection should be closed"
    );

    let status = bystander_ok().await;
    assert_eq!(status.connections, 1, "only the bystander remains");
}

#[tokio::test]
async fn protocol_mismatch_says_how_to_restart() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let mut raw = RawConnection::connect(&daemon.paths.socket_path()).await;
    let response = raw
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": 99, "clientInfo": {"name": "future", "version": "9"}}}))
        .await;
    assert_error(
        &response,
        -32004,
        "protocol_mismatch",
        "restart it with `pictl daemon restart`",
    );
    assert_eq!(
        response["error"]["data"]["details"]["daemonProtocolVersion"],
        pi_protocol::PROTOCOL_VERSION
    );
    assert_eq!(
        response["error"]["data"]["details"]["clientProtocolVersion"],
        99
    );

    // pi-client turns it into a typed error with the same advice.
    let error = ClientError::ProtocolMismatch {
        client: 2,
        daemon: 1,
        daemon_version: "0.1.0".into(),
    };
    assert!(
        error.to_string().contains("`pictl daemon restart`"),
        "{error}"
    );
}

#[tokio::test]
async fn logs_of_a_language_server_that_never_ran_say_where_to_look() {
    let daemon = TempDaemon::start(pid_binary()).await;
    let (client, _events) = daemon.client().await;
    for (params, said) in [
        (
            json!({"name": "pyright"}),
            "no language server named \"pyright\" has run in this daemon; `pictl lsp list` shows those that have",
        ),
        (
            json!({"name": "pyright", "root": "/srv/app"}),
            "no language server named \"pyright\" has run in this daemon for /srv/app; `pictl lsp list` shows those that have",
        ),
    ] {
        let error = client.call_raw("lsp/logs", params).await.unwrap_err();
        assert_eq!(error.rpc_kind(), Some(pi_protocol::ErrorKind::NotFound));
        assert_eq!(error.to_string(), said);
    }
}
