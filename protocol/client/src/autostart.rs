//! Finding the daemon, and starting it when none answers.
//!
//! Autostart: probe the socket; if nothing listens, take the startup lock (`start.lock`, so
//! concurrent clients start one daemon, not several), probe again, spawn `pid --autostarted
//! --log-file <state dir>/pid.log` detached (its own session; the daemon owns and rotates its
//! log file, and its stdio is appended to the same file until it has opened it), and wait until
//! `initialize` succeeds. A daemon that exits early or never answers gives an error that
//! points at its log.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use pi_paths::Paths;
use pi_protocol::v1::{ClientCapabilities, ClientInfo};

use crate::client::{Client, Endpoint, Notifications};
use crate::error::ClientError;

/// How autostart behaves.
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// The `pid` binary; `None` searches `PI_DAEMON_BIN`, this program's directory, then PATH.
    pub daemon_binary: Option<PathBuf>,
    /// How long to wait for the spawned daemon to answer `initialize`.
    pub timeout: Duration,
    /// What the connection tells the daemon at `initialize` (notifications it does not
    /// want: `pictl run` cannot answer `ui/request`).
    pub capabilities: ClientCapabilities,
    /// This machine's daemon even where a remote is chosen (`pictl bridge`, the far side).
    pub local: bool,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            daemon_binary: None,
            timeout: Duration::from_secs(15),
            capabilities: ClientCapabilities::default(),
            local: false,
        }
    }
}

/// A connection and whether this call started the daemon.
#[derive(Debug)]
pub struct Connected {
    /// The initialized client.
    pub client: Client,
    /// Its notification stream.
    pub notifications: Notifications,
    /// `true` when this call spawned the daemon.
    pub started: bool,
}

/// Connects to a running daemon over its Unix socket; never starts one.
pub async fn connect(
    paths: &Paths,
    client_info: ClientInfo,
) -> Result<(Client, Notifications), ClientError> {
    if let Some(mut remote) = crate::remote::Remote::current()? {
        // Never starts one: nor does the far bridge.
        remote.start = false;
        return Client::connect(
            &Endpoint::Remote(remote),
            client_info,
            ClientCapabilities::default(),
        )
        .await;
    }
    connect_with(paths, client_info, ClientCapabilities::default()).await
}

async fn connect_with(
    paths: &Paths,
    client_info: ClientInfo,
    capabilities: ClientCapabilities,
) -> Result<(Client, Notifications), ClientError> {
    Client::connect(
        &Endpoint::Unix(paths.socket_path()),
        client_info,
        capabilities,
    )
    .await
}

/// Connects to the daemon, starting it first when none answers.
pub async fn connect_or_start(
    paths: &Paths,
    client_info: ClientInfo,
    options: &StartOptions,
) -> Result<Connected, ClientError> {
    // Another machine's daemon: its `pictl bridge` starts it there when none runs.
    if let Some(remote) = crate::remote::Remote::current()?.filter(|_| !options.local) {
        let (client, notifications) = Client::connect(
            &Endpoint::Remote(remote),
            client_info,
            options.capabilities.clone(),
        )
        .await?;
        return Ok(Connected {
            client,
            notifications,
            started: false,
        });
    }
    match connect_with(paths, client_info.clone(), options.capabilities.clone()).await {
        Ok((client, notifications)) => {
            return Ok(Connected {
                client,
                notifications,
                started: false,
            });
        }
        Err(error) if not_listening(&error) => {}
        Err(error) => return Err(error),
    }
    let _start_lock = StartLock::acquire(paths, options.timeout).await?;
    // Someone else may have started it while we waited for the lock.
    match connect_with(paths, client_info.clone(), options.capabilities.clone()).await {
        Ok((client, notifications)) => {
            return Ok(Connected {
                client,
                notifications,
                started: false,
            });
        }
        Err(error) if not_listening(&error) => {}
        Err(error) => return Err(error),
    }
    let binary = daemon_binary(options.daemon_binary.as_deref())?;
    // Where this start's lines begin: a failure shows those, not an earlier start's.
    let log_start = std::fs::metadata(paths.log_file()).map_or(0, |meta| meta.len());
    let mut child = spawn_daemon(paths, &binary)?;
    let deadline = Instant::now() + options.timeout;
    let mut delay = Duration::from_millis(2);
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| ClientError::io("cannot check the daemon process", e))?
        {
            return Err(ClientError::StartFailed {
                status: status.to_string(),
                log: paths.log_file(),
                tail: log_tail(&paths.log_file(), log_start),
            });
        }
        match connect_with(paths, client_info.clone(), options.capabilities.clone()).await {
            Ok((client, notifications)) => {
                return Ok(Connected {
                    client,
                    notifications,
                    started: true,
                });
            }
            Err(error) if not_listening(&error) => {}
            Err(error) => return Err(error),
        }
        if Instant::now() >= deadline {
            return Err(ClientError::StartTimeout {
                timeout: options.timeout,
                log: paths.log_file(),
            });
        }
        // Polling for readiness: the daemon gives no other signal a client could wait on.
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(50));
    }
}

/// Whether a daemon holds the instance lock right now (it is alive, even if not yet
/// listening or already shutting down). Call while holding the [`StartLock`].
pub fn daemon_alive(paths: &Paths) -> Result<bool, ClientError> {
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .open(paths.lock_path())
    {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => {
            return Err(ClientError::io(
                format!("cannot open {}", paths.lock_path().display()),
                error,
            ));
        }
    };
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(error)) => Err(ClientError::io(
            format!("cannot probe {}", paths.lock_path().display()),
            error,
        )),
    }
}

/// Serializes clients that start, stop or restart the daemon.
#[derive(Debug)]
pub struct StartLock {
    // Invariant: holds an exclusive flock on `start.lock` for as long as the value lives.
    _file: File,
}

impl StartLock {
    /// Takes the startup lock, waiting up to `timeout` for another client to release it.
    pub async fn acquire(paths: &Paths, timeout: Duration) -> Result<StartLock, ClientError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&paths.runtime_dir)
            .map_err(|e| {
                ClientError::io(format!("cannot create {}", paths.runtime_dir.display()), e)
            })?;
        // Never a lock in a directory another user made first (a shared `/tmp`).
        pi_paths::trust::check_owned_dir(&paths.runtime_dir)?;
        let path = paths.start_lock_path();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| ClientError::io(format!("cannot open {}", path.display()), e))?;
        let deadline = Instant::now() + timeout;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(StartLock { _file: file }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(ClientError::io(
                        format!(
                            "another client held {} for over {timeout:?}",
                            path.display()
                        ),
                        std::io::Error::from(std::io::ErrorKind::TimedOut),
                    ));
                }
                Err(TryLockError::Error(error)) => {
                    return Err(ClientError::io(
                        format!("cannot lock {}", path.display()),
                        error,
                    ));
                }
            }
        }
    }
}

fn not_listening(error: &ClientError) -> bool {
    match error {
        ClientError::Unreachable { source, .. } => matches!(
            source.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
        ),
        _ => false,
    }
}

/// Finds the `pid` binary: `explicit`, `PI_DAEMON_BIN`, next to this program, then PATH.
pub fn daemon_binary(explicit: Option<&Path>) -> Result<PathBuf, ClientError> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(explicit.map(Path::to_path_buf));
    candidates.extend(
        std::env::var_os("PI_DAEMON_BIN")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    );
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join("pid"));
    }
    for candidate in candidates {
        if candidate.is_file() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("pid");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    tried.push("PATH".to_owned());
    Err(ClientError::DaemonBinaryNotFound {
        tried: tried.join(", "),
    })
}

fn spawn_daemon(paths: &Paths, binary: &Path) -> Result<tokio::process::Child, ClientError> {
    // Private, as the daemon keeps it (the log holds what sessions did).
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&paths.state_dir)
        .map_err(|e| ClientError::io(format!("cannot create {}", paths.state_dir.display()), e))?;
    let log_path = paths.log_file();
    // What the daemon writes before it opens the file itself (an error about its arguments)
    // goes there too; the daemon rotates it.
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log_path)
        .map_err(|e| ClientError::io(format!("cannot open {}", log_path.display()), e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| ClientError::io("cannot duplicate the log file handle", e))?;
    tracing::debug!(binary = %binary.display(), log = %log_path.display(), "starting the daemon");
    tokio::process::Command::new(binary)
        .arg("--autostarted")
        .arg("--log-file")
        .arg(&log_path)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err))
        .kill_on_drop(false)
        .spawn()
        .map_err(|e| ClientError::io(format!("cannot run {}", binary.display()), e))
}

/// The last lines of the log written from byte `from` on (where this start began; a file
/// shorter than that was rotated since, and is all this start's).
fn log_tail(path: &Path, from: u64) -> String {
    let Ok(mut file) = File::open(path) else {
        return "(no log)".to_owned();
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = if length < from { 0 } else { from };
    let _ = file.seek(SeekFrom::Start(from.max(length.saturating_sub(4096))));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return "(nothing)".to_owned();
    }
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::log_tail;

    #[test]
    fn a_failed_start_shows_its_own_lines_of_the_log_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pid.log");
        std::fs::write(&path, "an earlier start's error\n").unwrap();
        let from = std::fs::metadata(&path).unwrap().len();
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(log, "error: this start's reason").unwrap();
        assert_eq!(log_tail(&path, from), "error: this start's reason");
        // Rotated since the start began: the new file is all this start's.
        std::fs::write(&path, "error: after rotation\n").unwrap();
        assert_eq!(log_tail(&path, from + 100), "error: after rotation");
        // Nothing written: said so, rather than an empty tail.
        let quiet = std::fs::metadata(&path).unwrap().len();
        assert_eq!(log_tail(&path, quiet), "(nothing)");
        assert_eq!(log_tail(&dir.path().join("none.log"), 0), "(no log)");
    }
}
