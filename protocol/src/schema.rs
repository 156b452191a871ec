//! JSON Schema export of the whole protocol, as the files committed under `protocol/schema/`.
//!
//! [`generate`] is deterministic: keys are sorted and every file ends with a newline, so the
//! drift test can compare bytes. `pid schema --out protocol/schema` writes the files.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::error::{ErrorData, ErrorKind, ErrorObject};
use crate::jsonrpc::{ErrorResponse, Notification, Request, Response};
use crate::method::Direction;
use crate::{PROTOCOL_VERSION, v1};

/// One generated schema file: its path relative to the schema directory and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaFile {
    /// Relative path with `/` separators, e.g. `v1/methods/daemon.status.json`.
    pub path: String,
    /// Pretty-printed JSON with sorted keys and a trailing newline.
    pub contents: String,
}

/// Generates every schema file of the protocol.
pub fn generate() -> Vec<SchemaFile> {
    let mut files = Vec::new();
    let version_dir = format!("v{PROTOCOL_VERSION}");

    let mut generator = new_generator();
    let properties = json!({
        "request": generator.subschema_for::<Request>(),
        "notification": generator.subschema_for::<Notification>(),
        "response": generator.subschema_for::<Response>(),
        "errorResponse": generator.subschema_for::<ErrorResponse>(),
        "errorObject": generator.subschema_for::<ErrorObject>(),
        "errorData": generator.subschema_for::<ErrorData>(),
        "errorKind": generator.subschema_for::<ErrorKind>(),
    });
    let error_codes: Map<String, Value> = all_error_kinds()
        .into_iter()
        .map(|kind| (kind_name(kind), json!(kind.code())))
        .collect();
    files.push(document(
        format!("{version_dir}/envelope.json"),
        "envelope",
        "The JSON-RPC 2.0 envelope and the error object of the pi daemon protocol.",
        properties,
        Some(json!({ "errorCodes": error_codes, "protocolVersion": PROTOCOL_VERSION })),
        &mut generator,
    ));

    for method in v1::METHODS {
        let mut generator = new_generator();
        let properties = json!({
            "params": (method.params_schema)(&mut generator),
            "result": (method.response_schema)(&mut generator),
        });
        files.push(document(
            format!(
                "{version_dir}/methods/{}.json",
                method.name.replace('/', ".")
            ),
            method.name,
            method.summary.trim(),
            properties,
            None,
            &mut generator,
        ));
    }

    for notification in v1::NOTIFICATIONS {
        let mut generator = new_generator();
        let properties = json!({ "params": (notification.params_schema)(&mut generator) });
        let direction = match notification.direction {
            Direction::DaemonToClient => "daemonToClient",
            Direction::ClientToDaemon => "clientToDaemon",
        };
        files.push(document(
            format!(
                "{version_dir}/notifications/{}.json",
                notification.name.replace('/', ".")
            ),
            notification.name,
            notification.summary.trim(),
            properties,
            Some(json!({ "direction": direction })),
            &mut generator,
        ));
    }
    files
}

fn new_generator() -> SchemaGenerator {
    SchemaGenerator::new(SchemaSettings::draft2020_12())
}

fn document(
    path: String,
    title: &str,
    description: &str,
    properties: Value,
    extra: Option<Value>,
    generator: &mut SchemaGenerator,
) -> SchemaFile {
    let mut root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
        "type": "object",
        "properties": properties,
    });
    if let (Some(Value::Object(extra)), Value::Object(root)) = (extra, &mut root) {
        root.insert("x-pi".to_owned(), Value::Object(extra));
    }
    let definitions = generator.take_definitions(true);
    if !definitions.is_empty()
        && let Value::Object(root) = &mut root
    {
        root.insert("$defs".to_owned(), Value::Object(definitions));
    }
    let mut contents = to_pretty(&canonical(root));
    contents.push('\n');
    SchemaFile { path, contents }
}

fn to_pretty(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings and it holds no non-finite floats.
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Sorts object keys recursively so output does not depend on serde_json's map order.
fn canonical(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

fn kind_name(kind: ErrorKind) -> String {
    match serde_json::to_value(kind) {
        Ok(Value::String(name)) => name,
        _ => format!("{kind:?}"),
    }
}

/// Every error kind, for the code table. Kept exhaustive by the match below.
fn all_error_kinds() -> Vec<ErrorKind> {
    let kinds = [
        ErrorKind::ParseError,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::Overloaded,
        ErrorKind::NotInitialized,
        ErrorKind::AlreadyInitialized,
        ErrorKind::ProtocolMismatch,
        ErrorKind::MessageTooLarge,
        ErrorKind::ShuttingDown,
        ErrorKind::Unauthorized,
        ErrorKind::NotFound,
        ErrorKind::Busy,
        ErrorKind::ResyncRequired,
        ErrorKind::ContextOverflow,
        ErrorKind::ProviderError,
        ErrorKind::Storage,
        ErrorKind::Cancelled,
    ];
    // A new variant fails to compile here until it is added to the list above.
    for kind in kinds {
        match kind {
            ErrorKind::ParseError
            | ErrorKind::InvalidRequest
            | ErrorKind::MethodNotFound
            | ErrorKind::InvalidParams
            | ErrorKind::Internal
            | ErrorKind::Overloaded
            | ErrorKind::NotInitialized
            | ErrorKind::AlreadyInitialized
            | ErrorKind::ProtocolMismatch
            | ErrorKind::MessageTooLarge
            | ErrorKind::ShuttingDown
            | ErrorKind::Unauthorized
            | ErrorKind::NotFound
            | ErrorKind::Busy
            | ErrorKind::ResyncRequired
            | ErrorKind::ContextOverflow
            | ErrorKind::ProviderError
            | ErrorKind::Storage
            | ErrorKind::Cancelled => {}
        }
    }
    kinds.to_vec()
}

/// Makes `T`'s schema available to callers that want a single type's schema (tests, docs).
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut generator = new_generator();
    let schema = generator.root_schema_for::<T>();
    canonical(schema.to_value())
}
