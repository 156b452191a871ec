//! Client library for the pi daemon, used by `pictl`, the TUI, the bridges and tests.
//!
//! [`Client::connect`] opens a connection over the Unix socket or the WebSocket and performs
//! the `initialize` handshake; [`Client::call`] sends typed requests; notifications arrive on
//! the [`Notifications`] stream. [`autostart::connect_or_start`] starts `pid` when no daemon
//! answers, the way every `pictl` command (but `daemon status` and `daemon stop`) does.
//!
//! Architecture invariant: this crate never depends on `pi-daemon`; it speaks only the wire
//! protocol defined in `pi-protocol`.

#![warn(missing_docs)]

pub mod autostart;
mod client;
mod error;
pub mod model_scope;
pub mod partial;
pub mod pi_files;
pub mod remote;

pub use client::{Client, Endpoint, Notifications, connect_socket};
pub use error::ClientError;
pub use pi_paths::Paths;
pub use pi_protocol as protocol;

/// Identifies the program using this library in `initialize`.
pub fn client_info(name: &str, version: &str) -> pi_protocol::v1::ClientInfo {
    pi_protocol::v1::ClientInfo {
        name: name.to_owned(),
        version: version.to_owned(),
    }
}

/// The names of the variables set (and not empty) in this process's environment, for
/// `model/list {envNames}`: names only, never values.
pub fn env_names() -> Vec<String> {
    std::env::vars_os()
        .filter(|(_, value)| !value.is_empty())
        .filter_map(|(name, _)| name.into_string().ok())
        .collect()
}
