//! The JSON-RPC 2.0 envelope: requests, notifications, responses and the classification of one
//! incoming message.
//!
//! Framing is the transport's business (one object per line on Unix sockets and stdio, one per
//! text frame on WebSocket); this module sees one complete message at a time. Batches (JSON
//! arrays) are refused with a clear `invalid_request` error: every message is a single object.
//!
//! A request with `"id": null` is a request, not a notification (JSON-RPC 2.0 § 4): it gets an
//! `invalid_request` error with `id: null`, as do string ids longer than [`MAX_ID_BYTES`],
//! which a response would otherwise have to echo in full.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{ErrorKind, ErrorObject};

/// The longest string id a request may carry, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// The id of a request: a string or an integer, echoed in its response.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id, as most clients send.
    Integer(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Integer(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// The literal `"2.0"` carried in the `jsonrpc` member of every message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let version = Cow::<'de, str>::deserialize(deserializer)?;
        if version == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom(format!(
                "unsupported jsonrpc version {version:?}, expected \"2.0\""
            )))
        }
    }
}

impl JsonSchema for JsonRpcVersion {
    fn schema_name() -> Cow<'static, str> {
        "JsonRpcVersion".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "const": "2.0" })
    }
}

/// A request: expects exactly one response carrying the same `id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Chosen by the sender, echoed in the response.
    pub id: RequestId,
    /// The method name, `resource/verb`.
    pub method: String,
    /// Named parameters; absent means `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A notification: a one-way message with no response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification name, `resource/verb`.
    pub method: String,
    /// Named parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A successful response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The method's response payload.
    pub result: Value,
}

/// A failed response. `id` is `null` when the request's id could not be read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers, or `null`.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

impl Request {
    /// Builds a request.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params,
        }
    }
}

impl Notification {
    /// Builds a notification.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params,
        }
    }
}

impl Response {
    /// Builds a successful response.
    pub fn new(id: RequestId, result: Value) -> Self {
        Response {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

impl ErrorResponse {
    /// Builds an error response.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

/// One incoming message, classified. Both directions use it: the daemon reads requests,
/// notifications and (for its own requests to clients) responses; clients read the same.
#[derive(Clone, Debug, PartialEq)]
pub enum IncomingMessage {
    /// A request that wants a response.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response to a request this side sent: `Ok(result)` or `Err(error)`.
    Response {
        /// The id of the request it answers (`None` for an error about an unreadable request).
        id: Option<RequestId>,
        /// The result or the error.
        outcome: Result<Value, ErrorObject>,
    },
}

/// Why a message could not be classified. Carries the id when one could be read, so the error
/// response can echo it.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvelopeError {
    /// The request id, when it could be read.
    pub id: Option<RequestId>,
    /// The error to send back.
    pub error: ErrorObject,
}

impl IncomingMessage {
    /// Classifies one complete message.
    ///
    /// Invalid JSON yields `parse_error` (-32700); a batch, a non-object or a malformed envelope
    /// yields `invalid_request` (-32600), each with a message that says what was wrong.
    pub fn parse(bytes: &[u8]) -> Result<IncomingMessage, EnvelopeError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| EnvelopeError {
            id: None,
            error: ErrorObject::new(ErrorKind::ParseError, format!("invalid JSON: {e}")),
        })?;
        let object = match value {
            Value::Object(object) => object,
            Value::Array(_) => {
                return Err(invalid_request(
                    None,
                    "batch requests are not supported; send one JSON object per message",
                ));
            }
            _ => return Err(invalid_request(None, "a message must be a JSON object")),
        };
        classify(object)
    }
}

fn invalid_request(id: Option<RequestId>, message: impl Into<String>) -> EnvelopeError {
    EnvelopeError {
        id,
        error: ErrorObject::new(ErrorKind::InvalidRequest, message),
    }
}

fn classify(mut object: Map<String, Value>) -> Result<IncomingMessage, EnvelopeError> {
    // `None` for both an absent and a null id; `null_id` tells them apart.
    let null_id = matches!(object.get("id"), Some(Value::Null));
    let id = match object.remove("id") {
        None | Some(Value::Null) => None,
        Some(raw) => match serde_json::from_value::<RequestId>(raw) {
            Ok(RequestId::String(text)) if text.len() > MAX_ID_BYTES => {
                return Err(invalid_request(
                    None,
                    format!(
                        "`id` is a string of {} bytes; use at most {MAX_ID_BYTES} bytes, or an \
                         integer",
                        text.len()
                    ),
                ));
            }
            Ok(id) => Some(id),
            Err(_) => return Err(invalid_request(None, "`id` must be a string or an integer")),
        },
    };
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        Some(_) => return Err(invalid_request(id, "`jsonrpc` must be \"2.0\"")),
        None => {
            return Err(invalid_request(
                id,
                "missing `jsonrpc`: every message needs \"jsonrpc\": \"2.0\"",
            ));
        }
    }
    let params = object.remove("params");
    if let Some(method) = object.remove("method") {
        let Value::String(method) = method else {
            return Err(invalid_request(id, "`method` must be a string"));
        };
        if null_id {
            return Err(invalid_request(
                None,
                "`id` is null; give a request a string or an integer id (a message without \
                 `id` is a notification, which gets no reply)",
            ));
        }
        return Ok(match id {
            Some(id) => IncomingMessage::Request(Request::new(id, method, params)),
            None => IncomingMessage::Notification(Notification::new(method, params)),
        });
    }
    if let Some(result) = object.remove("result") {
        let Some(id) = id else {
            return Err(invalid_request(None, "a response needs an `id`"));
        };
        return Ok(IncomingMessage::Response {
            id: Some(id),
            outcome: Ok(result),
        });
    }
    if let Some(error) = object.remove("error") {
        let error: ErrorObject = serde_json::from_value(error)
            .map_err(|e| invalid_request(id.clone(), format!("malformed `error` object: {e}")))?;
        return Ok(IncomingMessage::Response {
            id,
            outcome: Err(error),
        });
    }
    Err(invalid_request(
        id,
        "a message needs `method` (request or notification) or `result`/`error` (response)",
    ))
}
