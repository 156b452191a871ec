//! Test fixtures shared by every crate's integration tests: a real `pid` in a temporary
//! `PI_HOME` ([`daemon::TempDaemon`]), raw line connections for malformed-input tests
//! ([`raw::RawConnection`]), and locating the workspace's binaries.
//!
//! Fixtures panic with a message that says what to do when they cannot work (a missing
//! binary, a daemon that never became ready): tests never skip silently.

#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "test fixtures fail loudly"
)]

pub mod auth_server;
pub mod bedrock_server;
pub mod bench;
pub mod browser;
pub mod daemon;
pub mod documents;
pub mod events;
pub mod model_server;
pub mod peers;
pub mod pi_session;
pub mod procfs;
pub mod raw;
pub mod scenario;
pub mod sshd;

use std::path::PathBuf;

/// Path of a binary of this workspace (`pid`, `pictl`) in the target directory of the running
/// test or bench (debug binaries for tests, release binaries for benches). Panics, saying how
/// to build it, when it is missing.
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    // Test binaries live in target/<profile>/deps; workspace binaries in target/<profile>.
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test binary in target/<profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: build the workspace binaries first with `cargo build --bins` \
         (`tests/run` does this), or `cargo build --release --bins` for the benches",
        path.display()
    );
    path
}
