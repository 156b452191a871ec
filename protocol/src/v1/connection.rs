//! `connection/*`: notifications about the connection itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `connection/closing`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionClosingParams {
    /// Why the daemon closes the connection.
    pub reason: CloseReason,
    /// A sentence for humans.
    pub message: String,
}

/// Why the daemon closed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// The daemon is shutting down.
    Shutdown,
    /// The client read too slowly and its outbound queue overflowed; reconnect and catch up
    /// with a cursor.
    SlowConsumer,
    /// The client sent a message over the size limit.
    MessageTooLarge,
    /// The client did not complete `initialize` within the daemon's deadline
    /// (`limits.initialize_timeout_secs`, 10 s by default) of connecting.
    InitializeTimeout,
}
