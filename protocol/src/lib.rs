//! Wire types of the pi daemon protocol: the JSON-RPC 2.0 envelope, the closed error-kind enum,
//! the method table and every params/response type, plus JSON Schema generation.
//!
//! This crate is the single source of truth for what crosses the wire between `pid` and its
//! clients. It performs no I/O and depends on no runtime: the daemon, `pi-client`, the CLI, the
//! TUI and tests all share these definitions.
//!
//! Architecture invariant: every type that appears on the wire is defined here, derives
//! `Serialize`, `Deserialize` and `JsonSchema`, and is reachable from [`method::METHODS`] or
//! [`method::NOTIFICATIONS`], so that `pid schema` exports it and the drift test guards it.
//! Inside protocol version 1, changes are additive only.

#![warn(missing_docs)]

pub mod error;
pub mod jsonrpc;
pub mod method;
pub mod schema;
pub mod v1;

pub use error::{ErrorData, ErrorKind, ErrorObject};
pub use jsonrpc::{IncomingMessage, Notification, Request, RequestId, Response};
pub use method::{Method, MethodDescriptor, NotificationMethod};

/// The protocol version this build speaks. Sent by clients in `initialize` and compared for
/// equality by the daemon; bumped only for breaking changes.
pub const PROTOCOL_VERSION: u32 = 1;
