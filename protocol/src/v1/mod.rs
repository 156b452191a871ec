//! Protocol version 1: the method and notification tables and their payload types, one module
//! per resource.
//!
//! Changes inside v1 are additive only: new methods, new optional fields, new enum variants
//! that old clients can ignore. Regenerate `protocol/schema/` and update `docs/protocol.md` in
//! the same commit.

pub mod connection;
pub mod daemon;
pub mod initialize;

pub use connection::*;
pub use daemon::*;
pub use initialize::*;

crate::method_table! {
    /// Opens the connection: negotiates the protocol version. Must be the first request;
    /// nothing else is served before it.
    Initialize = "initialize" (InitializeParams) -> InitializeResponse;
    /// Reports the daemon's version, process, endpoints and counters.
    DaemonStatus = "daemon/status" (DaemonStatusParams) -> DaemonStatusResponse;
    /// Asks the daemon to shut down gracefully. Answered before the shutdown begins.
    DaemonShutdown = "daemon/shutdown" (DaemonShutdownParams) -> DaemonShutdownResponse;
}

crate::notification_table! {
    /// Sent by the daemon right before it closes a connection on its own initiative, with the
    /// reason. Best effort: a connection closed for being too slow may not receive it.
    ConnectionClosing = "connection/closing" (DaemonToClient, ConnectionClosingParams);
}
