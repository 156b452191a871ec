//! Classification of incoming messages and the errors for malformed ones.

use pi_protocol::jsonrpc::EnvelopeError;
use pi_protocol::{ErrorKind, IncomingMessage, RequestId};
use serde_json::json;

fn check_error(input: &str, kind: ErrorKind, message_start: &str, id: Option<RequestId>) {
    let EnvelopeError { id: got_id, error } = IncomingMessage::parse(input.as_bytes()).unwrap_err();
    assert_eq!(error.kind(), Some(kind), "{input}");
    assert_eq!(error.code, kind.code());
    assert!(
        error.message.starts_with(message_start),
        "{:?} does not start with {message_start:?}",
        error.message
    );
    assert_eq!(got_id, id, "{input}");
}

#[test]
fn malformed_messages_get_precise_errors() {
    check_error("{not json", ErrorKind::ParseError, "invalid JSON: ", None);
    check_error(
        "[1,2]",
        ErrorKind::InvalidRequest,
        "batch requests are not supported",
        None,
    );
    check_error(
        "42",
        ErrorKind::InvalidRequest,
        "a message must be a JSON object",
        None,
    );
    check_error(
        r#"{"id":1,"method":"x"}"#,
        ErrorKind::InvalidRequest,
        "missing `jsonrpc`",
        Some(RequestId::Integer(1)),
    );
    check_error(
        r#"{"jsonrpc":"1.0","id":"a","method":"x"}"#,
        ErrorKind::InvalidRequest,
        "`jsonrpc` must be \"2.0\"",
        Some(RequestId::String("a".into())),
    );
    check_error(
        r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
        ErrorKind::InvalidRequest,
        "`id` must be a string or an integer",
        None,
    );
    check_error(
        r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
        ErrorKind::InvalidRequest,
        "`method` must be a string",
        Some(RequestId::Integer(3)),
    );
    check_error(
        r#"{"jsonrpc":"2.0","id":3}"#,
        ErrorKind::InvalidRequest,
        "a message needs `method`",
        Some(RequestId::Integer(3)),
    );
}

#[test]
fn a_request_with_a_null_id_is_answered_with_a_null_id() {
    // JSON-RPC 2.0: `"id": null` makes a request (answered with `id: null`), not a
    // notification; only a message without `id` is a notification.
    check_error(
        r#"{"jsonrpc":"2.0","id":null,"method":"daemon/status"}"#,
        ErrorKind::InvalidRequest,
        "`id` is null; give a request a string or an integer id (a message without `id` is a \
         notification, which gets no reply)",
        None,
    );
    let notification = IncomingMessage::parse(br#"{"jsonrpc":"2.0","method":"x"}"#).unwrap();
    assert!(matches!(notification, IncomingMessage::Notification(_)));
}

#[test]
fn string_ids_are_bounded() {
    let longest = "i".repeat(pi_protocol::jsonrpc::MAX_ID_BYTES);
    let request = IncomingMessage::parse(
        format!(r#"{{"jsonrpc":"2.0","id":"{longest}","method":"x"}}"#).as_bytes(),
    )
    .unwrap();
    assert!(matches!(request, IncomingMessage::Request(r) if r.id == RequestId::String(longest)));
    let too_long = "i".repeat(10_000);
    check_error(
        &format!(r#"{{"jsonrpc":"2.0","id":"{too_long}","method":"x"}}"#),
        ErrorKind::InvalidRequest,
        "`id` is a string of 10000 bytes; use at most 256 bytes, or an integer",
        None,
    );
}

#[test]
fn echoed_input_is_cut_with_its_length() {
    use pi_protocol::error::echo;
    assert_eq!(echo("session/get"), "session/get");
    let exact = "m".repeat(pi_protocol::error::ECHO_MAX_BYTES);
    assert_eq!(echo(&exact), exact);
    let long = format!("{}{}", "a".repeat(10 * 1024 * 1024), "z".repeat(30));
    assert_eq!(
        echo(&long),
        format!("{}…{} (10485790 bytes)", "a".repeat(80), "z".repeat(24))
    );
    // Cuts fall on character boundaries.
    let wide = "é".repeat(200);
    let cut = echo(&wide);
    assert_eq!(
        cut,
        format!("{}…{} (400 bytes)", "é".repeat(40), "é".repeat(12))
    );
}

#[test]
fn error_messages_and_fields_are_bounded() {
    let message = format!("unknown thing `{}`; do this instead", "x".repeat(1_000_000));
    let error = pi_protocol::ErrorObject::new(ErrorKind::NotFound, message);
    assert!(error.message.len() < 4096, "{}", error.message.len());
    assert!(error.message.starts_with("unknown thing `xxx"));
    assert!(
        error
            .message
            .ends_with("`; do this instead (1000033 bytes)"),
        "{}",
        &error.message[3000..]
    );
    let error = pi_protocol::ErrorObject::new(ErrorKind::InvalidParams, "bad")
        .with_field(format!("env.{}", "k".repeat(1000)));
    let field = error.data.unwrap().field.unwrap();
    assert_eq!(
        field,
        format!("env.{}…{} (1004 bytes)", "k".repeat(76), "k".repeat(24))
    );
}

#[test]
fn well_formed_messages_are_classified() {
    let request =
        IncomingMessage::parse(br#"{"jsonrpc":"2.0","id":7,"method":"daemon/status","params":{}}"#)
            .unwrap();
    let IncomingMessage::Request(request) = request else {
        panic!("not a request")
    };
    assert_eq!(request.id, RequestId::Integer(7));
    assert_eq!(request.method, "daemon/status");
    assert_eq!(request.params, Some(json!({})));

    let notification =
        IncomingMessage::parse(br#"{"jsonrpc":"2.0","method":"session/event","params":{"seq":1}}"#)
            .unwrap();
    assert!(
        matches!(notification, IncomingMessage::Notification(n) if n.method == "session/event")
    );

    let response =
        IncomingMessage::parse(br#"{"jsonrpc":"2.0","id":"x","result":{"ok":true}}"#).unwrap();
    assert_eq!(
        response,
        IncomingMessage::Response {
            id: Some(RequestId::String("x".into())),
            outcome: Ok(json!({"ok": true}))
        }
    );

    let error = IncomingMessage::parse(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":{"kind":"parse_error"}}}"#,
    )
    .unwrap();
    let IncomingMessage::Response {
        id: None,
        outcome: Err(error),
    } = error
    else {
        panic!("not an error response")
    };
    assert_eq!(error.kind(), Some(ErrorKind::ParseError));
}

#[test]
fn error_objects_serialize_with_kind_field_and_details() {
    let error =
        pi_protocol::ErrorObject::new(ErrorKind::InvalidParams, "bad cwd").with_field("cwd");
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({"code": -32602, "message": "bad cwd", "data": {"kind": "invalid_params", "field": "cwd"}})
    );
}
