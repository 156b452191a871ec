//! Process lifecycle: private directories, the one-daemon-per-user lock, stale socket cleanup,
//! signals and the supervisor guess.
//!
//! Architecture invariant: at most one `pid` serves a given runtime directory. The instance
//! lock (`pid.lock`, an flock held for the process's life) is taken before anything touches the
//! socket, so removing a stale socket can never pull it from under a live daemon.

mod lock;

pub use lock::{InstanceLock, LockError};

use std::fs::DirBuilder;
use std::os::unix::fs::{
    DirBuilderExt as _, FileTypeExt as _, MetadataExt as _, PermissionsExt as _,
};
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

/// Creates the daemon's directories, each 0700 and the current user's; a directory an older
/// daemon (or another mask) made readable by others is tightened, and so are the database's
/// files in it.
pub fn prepare_directories(paths: &Paths) -> anyhow::Result<()> {
    for dir in [
        &paths.config_dir,
        &paths.data_dir,
        &paths.state_dir,
        &paths.runtime_dir,
    ] {
        ensure_private_dir(dir)?;
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

/// Creates `dir` with mode 0700, or tightens an existing one; refuses a directory that belongs
/// to another user.
pub fn ensure_private_dir(dir: &Path) -> anyhow::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let metadata =
        std::fs::metadata(dir).with_context(|| format!("cannot inspect {}", dir.display()))?;
    let own_uid = rustix::process::geteuid().as_raw();
    if metadata.uid() != own_uid {
        bail!(
            "{} belongs to uid {}, not to you (uid {own_uid}); remove it or set PI_HOME elsewhere",
            dir.display(),
            metadata.uid()
        );
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
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
            tracing::info!(socket = %socket.display(), "removed a stale socket left by a previous daemon");
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
