//! The Unix socket transport: mode 0600 in the 0700 runtime directory, newline-delimited JSON,
//! and a peer-credential check that refuses processes of any other uid (root included).
//!
//! Connections that have not initialized are capped and have a deadline
//! ([`crate::rpc::admission`]); one over the cap gets one `overloaded` error line, written
//! without waiting, and is closed at once.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use futures_util::StreamExt as _;
use pi_protocol::jsonrpc::ErrorResponse;
use pi_protocol::{ErrorKind, ErrorObject};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::codec::FramedRead;
use tokio_util::task::TaskTracker;

use crate::logging::throttle::{LOG_INTERVAL, LogThrottle};
use crate::rpc::admission::{AcceptErrors, Admission};
use crate::rpc::codec::{LineCodec, LineSink};
use crate::rpc::connection::{self, TransportKind};
use crate::state::DaemonState;

/// How much the socket writer buffers before it writes to the socket. Small: a frame waiting
/// in the connection's queue is shared with the other subscribers and the recent window, one
/// copied into the write buffer is this connection's own (a thousand slow readers hold a
/// thousand buffers).
const WRITE_BUFFER_BYTES: usize = 8 * 1024;
/// The read buffer a connection starts with.
const READ_BUFFER_BYTES: usize = 1024;

/// Binds the socket and makes it 0600.
pub fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    let listener = std::os::unix::net::UnixListener::bind(path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make {} private (0600)", path.display()))?;
    listener
        .set_nonblocking(true)
        .context("cannot make the socket non-blocking")?;
    UnixListener::from_std(listener).context("cannot register the socket with the runtime")
}

/// Accepts connections until shutdown; each runs on `tracker`.
pub async fn accept_loop(state: Arc<DaemonState>, listener: UnixListener, tracker: TaskTracker) {
    let own_uid = rustix::process::geteuid().as_raw();
    let admission = Admission::new(TransportKind::Unix, &state.config.limits);
    let mut accept_errors = AcceptErrors::new(TransportKind::Unix);
    let foreign_log = LogThrottle::new(LOG_INTERVAL, |suppressed| {
        tracing::warn!(suppressed, "refused more connections from other users");
    });
    loop {
        let accepted = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                accept_errors.succeeded();
                stream
            }
            Err(error) => {
                accept_errors.failed(&error, &state.shutdown).await;
                continue;
            }
        };
        let peer_uid = match stream.peer_cred() {
            Ok(credentials) => credentials.uid(),
            Err(error) => {
                tracing::warn!(%error, "cannot read peer credentials; refusing the connection");
                continue;
            }
        };
        if !peer_allowed(peer_uid, own_uid) {
            if foreign_log.hit() {
                tracing::warn!(peer_uid, own_uid, "refusing a connection from another user");
            }
            refuse(
                &stream,
                ErrorKind::Unauthorized,
                format!(
                    "connection refused: your uid {peer_uid} is not the daemon owner's uid \
                     {own_uid}; every user runs their own daemon"
                ),
            );
            continue;
        }
        let Some(pending) = admission.admit() else {
            refuse(&stream, ErrorKind::Overloaded, admission.refusal_message());
            continue;
        };
        let max_bytes = state.config.limits.max_message_bytes;
        let (read, write) = stream.into_split();
        // Small to start with (most messages are), grown for bigger ones.
        let incoming =
            FramedRead::with_capacity(read, LineCodec::new(max_bytes), READ_BUFFER_BYTES);
        // The writer feeds every queued frame before one flush; let a batch reach the socket
        // in large writes rather than every 8 KiB.
        let outgoing = LineSink::new(write, max_bytes, WRITE_BUFFER_BYTES);
        tracker.spawn(connection::serve(
            state.clone(),
            TransportKind::Unix,
            pending,
            incoming.boxed(),
            Box::pin(outgoing),
        ));
    }
}

/// Only the daemon's own user may connect.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// Writes one error line to a connection the daemon refuses, without waiting (a new socket's
/// buffer has room for it; a peer that cannot take it loses only the explanation). The caller
/// drops the stream right after, so a refused connection holds nothing.
fn refuse(stream: &UnixStream, kind: ErrorKind, message: String) {
    let error = ErrorObject::new(kind, message);
    if let Ok(mut text) = serde_json::to_string(&ErrorResponse::new(None, error)) {
        text.push('\n');
        let _ = stream.try_write(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_owner_may_connect() {
        assert!(super::peer_allowed(1000, 1000));
        assert!(!super::peer_allowed(0, 1000));
        assert!(!super::peer_allowed(1001, 1000));
    }
}
