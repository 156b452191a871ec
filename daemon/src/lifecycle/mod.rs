//! Process lifecycle: private directories, the one-daemon-per-user lock, stale socket cleanup,
//! signals and the supervisor guess.
//!
//! Architecture invariant: at most one `pid` serves a given runtime directory. The instance
//! lock (`pid.lock`, an flock held for the process's life) is taken before anything touches the
//! socket, so removing a stale socket can never pull it from under a live daemon.

mod lock;

pub use lock::{InstanceLock, LockError};

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use anyhow::{Context as _, bail};
use pi_paths::Paths;
use pi_protocol::v1::Supervisor;
use tokio_util::sync::CancellationToken;

/// Makes every file and directory this process creates private (file-creation mask `077`),
/// whatever mask the user started it with; returns the user's mask, which the processes the
/// daemon starts get back (through the guard, `pi_tools::guard`).
pub fn private_umask() -> u32 {
    rustix::process::umask(rustix::fs::Mode::from_bits_truncate(0o077)).bits()
}

/// Creates the daemon's directories, each 0700 and the current user's: the runtime directory
/// (socket, lock, token), the config directory (keys in `auth.json`), the data directory (the
/// sessions' database) and its artifacts and the state directory (logs, which quote what peers
/// sent). Other users cannot even list them. A directory an older daemon (or another mask)
/// made readable by others is tightened, and so are the database's files in it.
pub fn prepare_directories(paths: &Paths) -> anyhow::Result<()> {
    for dir in [
        &paths.config_dir,
        &paths.data_dir,
        &paths.state_dir,
        &paths.runtime_dir,
        &paths.artifacts_dir(),
    ] {
        pi_tools::private_dir::ensure(dir)?;
    }
    let database = paths.database_path();
    let mut database_files = vec![database.clone()];
    for suffix in ["-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        database_files.push(name.into());
    }
    for file in database_files.iter().chain([&paths.log_file()]) {
        match std::fs::metadata(file) {
            Ok(metadata) if metadata.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
                    .with_context(|| format!("cannot make {} private (0600)", file.display()))?;
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(error).with_context(|| format!("cannot inspect {}", file.display()));
            }
        }
    }
    Ok(())
}

/// Removes a socket file left by a daemon that was killed. Call only while holding the
/// instance lock. Refuses to remove something that is not a socket.
pub fn remove_stale_socket(socket: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(socket) {
        Ok(metadata) if metadata.file_type().is_socket() => {
            std::fs::remove_file(socket)
                .with_context(|| format!("cannot remove the stale socket {}", socket.display()))?;
            let own_uid = rustix::process::geteuid().as_raw();
            if metadata.uid() == own_uid {
                tracing::info!(socket = %socket.display(), "removed a stale socket left by a previous daemon");
            } else {
                tracing::warn!(
                    socket = %socket.display(),
                    owner = metadata.uid(),
                    "removed a socket another user put in the runtime directory"
                );
            }
            Ok(())
        }
        Ok(_) => bail!(
            "{} exists and is not a socket; move it away so the daemon can listen there",
            socket.display()
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error).with_context(|| format!("cannot inspect {}", socket.display())),
    }
}

/// Removes the socket and the WebSocket port file at exit (the token stays: editors keep it).
pub fn remove_runtime_files(paths: &Paths) {
    for path in [paths.socket_path(), paths.ws_port_path()] {
        if let Err(error) = std::fs::remove_file(&path)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), %error, "cannot remove runtime file");
        }
    }
}

/// The soft limit tried when the hard limit on open files is "unlimited" (which the kernel
/// does not take as a soft limit), then macOS's `OPEN_MAX`.
const UNLIMITED_OPEN_FILES_TRIES: [u64; 2] = [1 << 20, 10_240];

/// Raises the soft limit on open files to the hard limit, and logs what it did. The soft
/// default of service managers and shells (1,024; 256 on macOS) is too low for a daemon that
/// holds a socket per client and pipes per server and job; reaching it makes accepts fail,
/// which is how another user's flood once locked the owner out. Children inherit the raised
/// limit, as under systemd's `LimitNOFILE=`.
pub fn raise_open_files_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum;
    let tries: &[u64] = match hard {
        Some(hard) => &[hard],
        None => &UNLIMITED_OPEN_FILES_TRIES,
    };
    let Some(previous) = limit.current else {
        tracing::debug!("the open-files limit is unlimited already");
        return;
    };
    if tries.first().is_some_and(|&target| previous >= target) {
        tracing::info!(soft = previous, hard, "open-files limit");
        return;
    }
    let mut last_error = None;
    for &target in tries {
        match setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(target),
                maximum: hard,
            },
        ) {
            Ok(()) => {
                tracing::info!(
                    soft = target,
                    previous,
                    hard,
                    "raised the open-files limit to the hard limit"
                );
                return;
            }
            Err(error) => last_error = Some(error),
        }
    }
    tracing::warn!(
        soft = previous,
        hard,
        error = ?last_error,
        "cannot raise the open-files limit; the daemon may refuse connections when it reaches it"
    );
}

/// Guesses who started this process, for `daemon/status`.
pub fn detect_supervisor(autostarted: bool) -> Supervisor {
    if autostarted {
        return Supervisor::Client;
    }
    let parent_comm = std::fs::read_to_string(format!(
        "/proc/{}/comm",
        rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get())
    ))
    .unwrap_or_default();
    if std::env::var_os("INVOCATION_ID").is_some() && parent_comm.trim() == "systemd" {
        return Supervisor::Systemd;
    }
    let launchd_job =
        std::env::var("XPC_SERVICE_NAME").is_ok_and(|name| !name.is_empty() && name != "0");
    if launchd_job && rustix::process::getppid().is_some_and(|p| p.is_init()) {
        return Supervisor::Launchd;
    }
    Supervisor::Manual
}

/// Cancels `shutdown` on SIGTERM or SIGINT. SIGHUP is logged and ignored, so closing the
/// terminal that started a manual daemon does not stop it.
pub fn spawn_signal_handler(shutdown: CancellationToken) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate =
        signal(SignalKind::terminate()).context("cannot install the SIGTERM handler")?;
    let mut interrupt =
        signal(SignalKind::interrupt()).context("cannot install the SIGINT handler")?;
    let mut hangup = signal(SignalKind::hangup()).context("cannot install the SIGHUP handler")?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = terminate.recv() => { tracing::info!(signal = "SIGTERM", "received"); break; }
                _ = interrupt.recv() => { tracing::info!(signal = "SIGINT", "received"); break; }
                _ = hangup.recv() => {
                    tracing::info!(signal = "SIGHUP", "ignored; restart the daemon to reload its configuration");
                }
                _ = shutdown.cancelled() => return,
            }
        }
        shutdown.cancel();
    });
    Ok(())
}

/// `pid paths`: prints the resolved paths as one JSON object.
pub fn print_paths() -> anyhow::Result<()> {
    let paths = Paths::from_env().context("cannot resolve the daemon's directories")?;
    let text = |path: &Path| path.display().to_string();
    let object = serde_json::json!({
        "configDir": text(&paths.config_dir),
        "dataDir": text(&paths.data_dir),
        "runtimeDir": text(&paths.runtime_dir),
        "stateDir": text(&paths.state_dir),
        "piAgentDir": text(&paths.pi_agent_dir),
        "socketPath": text(&paths.socket_path()),
        "databasePath": text(&paths.database_path()),
        "configFile": text(&paths.config_file()),
        "logFile": text(&paths.log_file()),
    });
    #[allow(clippy::print_stdout, reason = "the command's output")]
    {
        println!("{object}");
    }
    Ok(())
}
