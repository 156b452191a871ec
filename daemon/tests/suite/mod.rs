mod bad_input;
mod coding;
mod guard;
mod handshake;
mod lifecycle;
mod migrations;
mod packaging;
mod sessions;
mod tool_docs;
mod usage;
mod websocket;

use std::path::Path;

/// The `pid` binary built for this test run.
pub fn pid_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_pid"))
}
