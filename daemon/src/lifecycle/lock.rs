//! The instance lock: `pid.lock` in the runtime directory, held with flock for the life of the
//! daemon and holding its pid as text, so a second daemon can name the first.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;

use pi_paths::Paths;

/// The held lock; released when dropped (or when the process dies, however it dies).
#[derive(Debug)]
pub struct InstanceLock {
    // Invariant: this open file holds an exclusive flock for as long as the value lives.
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another daemon holds the lock: use it, or stop it with `pictl daemon stop`.
    #[error(
        "another pid is already running for this user{pid_text} and serving {socket}; \
         stop it with `pictl daemon stop` or use PI_HOME for a separate instance",
        pid_text = .pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
        socket = .socket.display()
    )]
    AlreadyRunning {
        /// The running daemon's pid, when its lock file could be read.
        pid: Option<u32>,
        /// The socket it serves.
        socket: PathBuf,
    },
    /// The lock file cannot be opened or locked.
    #[error("cannot lock {path}: {source}", path = .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl InstanceLock {
    /// Takes the lock without waiting, or reports the daemon that holds it.
    pub fn acquire(paths: &Paths) -> Result<InstanceLock, LockError> {
        let path = paths.lock_path();
        let io_error = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::AlreadyRunning {
                    pid: text.trim().parse().ok(),
                    socket: paths.socket_path(),
                });
            }
            Err(TryLockError::Error(source)) => return Err(io_error(source)),
        }
        file.set_len(0).map_err(io_error)?;
        file.seek(SeekFrom::Start(0)).map_err(io_error)?;
        writeln!(file, "{}", std::process::id()).map_err(io_error)?;
        file.flush().map_err(io_error)?;
        Ok(InstanceLock { _file: file })
    }
}
