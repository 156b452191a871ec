//! Errors of the client library. Each says what happened and what the user can do.

use std::path::PathBuf;
use std::time::Duration;

use pi_protocol::{ErrorKind, ErrorObject};

/// What `Unreachable` says: the socket is not there or refuses (start a daemon), or it is
/// not this user's to use (no daemon to start: the socket or its directory is another
/// user's).
fn unreachable(socket: &std::path::Path, source: &std::io::Error) -> String {
    if source.kind() == std::io::ErrorKind::PermissionDenied {
        format!(
            "cannot connect to {}: permission denied — the socket or its directory belongs to \
             another user; set PI_HOME or XDG_RUNTIME_DIR to a directory of your own",
            socket.display()
        )
    } else {
        format!(
            "no daemon is listening on {}: {source}; start one with `pictl daemon start`",
            socket.display()
        )
    }
}

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon listens on the socket. Start one (`pictl daemon start`) or let the client
    /// autostart it.
    #[error("{}", unreachable(socket, source))]
    Unreachable {
        /// The socket tried.
        socket: PathBuf,
        /// Why the connection failed.
        source: std::io::Error,
    },
    /// The directory of the daemon's socket, lock and token is another user's (or their
    /// symbolic link): nothing is created in it and nothing is sent.
    #[error(transparent)]
    ForeignRuntimeDir(#[from] pi_paths::trust::ForeignDir),
    /// The process serving the socket runs as another user: it is not this user's daemon,
    /// and nothing was sent to it.
    #[error(
        "{socket} is served by a process of uid {uid}, not by you (uid {own_uid}): another user \
         may be posing as your daemon, so nothing was sent. Remove the socket (`sudo rm \
         {socket}`), or set XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
        socket = .socket.display()
    )]
    NotYourDaemon {
        /// The socket.
        socket: PathBuf,
        /// The serving process's user.
        uid: u32,
        /// The current user.
        own_uid: u32,
    },
    /// The WebSocket connection or upgrade failed (wrong token, refused origin, no listener).
    #[error("cannot connect to {url}: {message}")]
    WebSocket {
        /// The URL tried.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The daemon speaks another protocol version. Restart it if it is the older one.
    #[error(
        "protocol version mismatch: this client speaks protocol {client} but the running daemon \
         (pid {daemon_version}) speaks protocol {daemon}; restart the daemon with \
         `pictl daemon restart` if it is the older one, otherwise upgrade this client"
    )]
    ProtocolMismatch {
        /// This client's protocol version.
        client: u32,
        /// The daemon's protocol version.
        daemon: u32,
        /// The daemon's package version.
        daemon_version: String,
    },
    /// Autostart found no `pid` binary to run. Install it next to this program or on PATH,
    /// or set `PI_DAEMON_BIN`.
    #[error(
        "cannot find the daemon binary `pid`: looked at {tried}; set PI_DAEMON_BIN to its path"
    )]
    DaemonBinaryNotFound {
        /// Where it looked.
        tried: String,
    },
    /// Autostart spawned `pid` but it exited before becoming ready.
    #[error("the daemon exited during startup ({status}); its log {log} ends with:\n{tail}", log = .log.display())]
    StartFailed {
        /// The exit status.
        status: String,
        /// The daemon's log file.
        log: PathBuf,
        /// The last lines of the log.
        tail: String,
    },
    /// Autostart spawned `pid` but it did not answer in time.
    #[error(
        "the daemon did not become ready within {timeout:?}; see its log {log}",
        log = .log.display()
    )]
    StartTimeout {
        /// How long the client waited.
        timeout: Duration,
        /// The daemon's log file.
        log: PathBuf,
    },
    /// The connection through ssh ended before the far daemon answered (ssh could not log
    /// in, the far `pictl` is missing or too old). ssh's own message precedes this one.
    #[error(
        "cannot reach the daemon on {remote} through `{command}`: {}check that you can log in with ssh (a key or an agent: no password prompt) and that the far pictl exists (give its path: ssh://HOST:/path/to/pictl)",
        if said.is_empty() { "the connection ended before it answered; ".to_owned() } else { format!("it said: {said}\n") }
    )]
    RemoteUnreachable {
        /// The remote, as `user@host`.
        remote: String,
        /// The command run.
        command: String,
        /// What ssh (or the far side) wrote on stderr.
        said: String,
    },
    /// The far host runs no daemon, and the far bridge was asked not to start one (`pictl
    /// --remote … daemon status`).
    #[error(
        "no daemon runs on {remote}; `pictl --remote … daemon status` does not start one (any other command does)"
    )]
    RemoteNoDaemon {
        /// The remote, as `user@host`.
        remote: String,
    },
    /// `PI_REMOTE` or `--remote` is not an ssh address.
    #[error(transparent)]
    BadRemote(#[from] crate::remote::BadRemote),
    /// `PI_REMOTE_LINK` is neither `off` nor an idle time.
    #[error(transparent)]
    BadRemoteLink(#[from] crate::remote::BadLinkSetting),
    /// The daemon answered with an error.
    #[error("{}", .0.message)]
    Rpc(ErrorObject),
    /// The connection ended before the response arrived.
    #[error("the daemon closed the connection{}", .reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Disconnected {
        /// Why, when the daemon said so.
        reason: Option<String>,
    },
    /// A response did not match the method's response type (a protocol bug).
    #[error("unexpected response to `{method}`: {message}")]
    Decode {
        /// The method called.
        method: &'static str,
        /// The decoding error.
        message: String,
    },
    /// A local I/O operation failed (lock files, log file, spawning).
    #[error("{context}: {source}")]
    Io {
        /// What the client was doing.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl ClientError {
    /// The daemon's error kind, for RPC errors.
    pub fn rpc_kind(&self) -> Option<ErrorKind> {
        match self {
            ClientError::Rpc(error) => error.kind(),
            _ => None,
        }
    }

    /// Whether the failure means the daemon cannot be reached or used (exit code 3 in pictl).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            ClientError::Unreachable { .. }
                | ClientError::ForeignRuntimeDir(_)
                | ClientError::NotYourDaemon { .. }
                | ClientError::WebSocket { .. }
                | ClientError::RemoteUnreachable { .. }
                | ClientError::RemoteNoDaemon { .. }
                | ClientError::ProtocolMismatch { .. }
                | ClientError::DaemonBinaryNotFound { .. }
                | ClientError::StartFailed { .. }
                | ClientError::StartTimeout { .. }
                | ClientError::Disconnected { .. }
        )
    }

    /// Whether the failure is another user's directory or socket where the daemon's should
    /// be: starting a daemon does not help, removing it (or another runtime directory) does.
    pub fn is_foreign(&self) -> bool {
        matches!(
            self,
            ClientError::ForeignRuntimeDir(_) | ClientError::NotYourDaemon { .. }
        )
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ClientError::Io {
            context: context.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_socket_says_whether_starting_a_daemon_helps() {
        let socket = PathBuf::from("/run/user/1000/pi/pid.sock");
        let absent = ClientError::Unreachable {
            socket: socket.clone(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(
            absent
                .to_string()
                .starts_with("no daemon is listening on /run/user/1000/pi/pid.sock: "),
            "{absent}"
        );
        assert!(
            absent
                .to_string()
                .ends_with("start one with `pictl daemon start`")
        );
        let foreign = ClientError::Unreachable {
            socket,
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(
            foreign.to_string(),
            "cannot connect to /run/user/1000/pi/pid.sock: permission denied — the socket or \
             its directory belongs to another user; set PI_HOME or XDG_RUNTIME_DIR to a \
             directory of your own"
        );
    }
}
