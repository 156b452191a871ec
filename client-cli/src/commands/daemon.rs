//! `pictl daemon start|stop|restart|status`: each prints exactly one JSON object.
//!
//! `start` is idempotent and returns once the daemon answers `initialize`; `stop` asks for a
//! graceful shutdown and kills the process if it has not exited in time; `status` never starts
//! a daemon and exits 3 when none runs.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Subcommand;
use pi_client::autostart::{self, StartLock, StartOptions};
use pi_client::{ClientError, Paths};
use pi_protocol::v1::{
    DaemonShutdown, DaemonShutdownParams, DaemonStatus, DaemonStatusParams, DaemonStatusResponse,
};
use serde_json::{Value, json};

use crate::error::{CliError, EXIT_UNREACHABLE};
use crate::output::print_json;

/// Daemon lifecycle subcommands.
#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the daemon unless it runs; return once it is ready
    Start,
    /// Stop the daemon gracefully, killing it if it does not exit in time
    Stop {
        /// Seconds to wait for a graceful exit before killing
        #[arg(long, default_value_t = 10)]
        timeout: u64,
    },
    /// Stop the daemon, then start a new one
    Restart {
        /// Seconds to wait for a graceful exit before killing
        #[arg(long, default_value_t = 10)]
        timeout: u64,
    },
    /// Report whether the daemon runs, and its status; exit 3 when it does not
    Status {
        /// One JSON object (the default when stdout is not a terminal)
        #[arg(long, conflicts_with = "human")]
        json: bool,
        /// Lines for a person (the default on a terminal)
        #[arg(long)]
        human: bool,
    },
}

/// Runs one lifecycle subcommand.
pub async fn run(command: DaemonCommand) -> Result<ExitCode, CliError> {
    let paths = Paths::from_env().map_err(|error| CliError::failed(error.to_string()))?;
    // Starting and stopping are the far host's business: its lock, its process.
    if !matches!(command, DaemonCommand::Status { .. })
        && let Ok(Some(remote)) = pi_client::remote::Remote::current()
    {
        let subcommand = match command {
            DaemonCommand::Start => "start",
            DaemonCommand::Restart { .. } => "restart",
            _ => "stop",
        };
        return Err(CliError::usage(format!(
            "`pictl daemon start|stop|restart` manages this machine's daemon; run it on the far \
             host instead: {}",
            remote.ssh_line(&["daemon", subcommand])
        )));
    }
    match command {
        DaemonCommand::Start => {
            let status = start(&paths).await?;
            print_json(&status);
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Stop { timeout } => {
            let stopped = stop(&paths, Duration::from_secs(timeout)).await?;
            print_json(&stopped);
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Restart { timeout } => {
            let stopped = stop(&paths, Duration::from_secs(timeout)).await?;
            let started = start(&paths).await?;
            print_json(&json!({
                "restarted": true,
                "previousPid": stopped.get("pid").cloned().unwrap_or(Value::Null),
                "pid": started["pid"],
                "version": started["version"],
                "socketPath": started["socketPath"],
            }));
            Ok(ExitCode::SUCCESS)
        }
        DaemonCommand::Status { json, human } => {
            let human = human || (!json && std::io::stdout().is_terminal());
            status(&paths, human).await
        }
    }
}

async fn start(paths: &Paths) -> Result<Value, CliError> {
    let connected =
        autostart::connect_or_start(paths, client_info(), &StartOptions::default()).await?;
    let status = connected
        .client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await?;
    let mut object = status_object(&status);
    object["started"] = json!(connected.started);
    Ok(object)
}

async fn status(paths: &Paths, human: bool) -> Result<ExitCode, CliError> {
    match autostart::connect(paths, client_info()).await {
        Ok((client, _notifications)) => {
            let status = client.call::<DaemonStatus>(&DaemonStatusParams {}).await?;
            if human {
                crate::output::print_text(&human_status(&status));
            } else {
                print_json(&status_object(&status));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(ClientError::RemoteNoDaemon { remote }) if human => {
            crate::output::print_line(&format!(
                "The daemon on {remote} is not running. Any other `pictl --remote` command \
                 starts it (`pictl daemon status` does not)."
            ));
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
        Err(ClientError::RemoteNoDaemon { remote }) => {
            print_json(&json!({ "running": false, "remote": remote }));
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
        Err(ClientError::Unreachable { .. }) if human => {
            crate::output::print_line(&format!(
                "The daemon is not running (socket {}). `pictl` and `pictl run` start it; \
                 so does `pictl daemon start`.",
                paths.socket_path().display()
            ));
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
        Err(ClientError::Unreachable { .. }) => {
            print_json(&json!({
                "running": false,
                "socketPath": paths.socket_path().display().to_string(),
            }));
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
        Err(error @ ClientError::ProtocolMismatch { .. }) => {
            print_json(&json!({
                "running": true,
                "compatible": false,
                "socketPath": paths.socket_path().display().to_string(),
                "error": error.to_string(),
            }));
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
        Err(error) => Err(error.into()),
    }
}

async fn stop(paths: &Paths, timeout: Duration) -> Result<Value, CliError> {
    let _lock = StartLock::acquire(paths, Duration::from_secs(30)).await?;
    let pid = match autostart::connect(paths, client_info()).await {
        Ok((client, _notifications)) => {
            let response = client
                .call::<DaemonShutdown>(&DaemonShutdownParams {})
                .await?;
            Some(response.pid)
        }
        Err(ClientError::Unreachable { .. } | ClientError::ProtocolMismatch { .. }) => {
            if !autostart::daemon_alive(paths)? {
                return Ok(json!({ "running": false, "stopped": false }));
            }
            // Alive but not answering (starting, hung or incompatible): signal it.
            let pid = locked_pid(paths);
            if let Some(pid) = pid {
                send_signal(pid, rustix::process::Signal::TERM);
            }
            pid
        }
        Err(error) => return Err(error.into()),
    };
    if wait_for_exit(paths, timeout).await? {
        return Ok(json!({ "stopped": true, "pid": pid, "forced": false }));
    }
    let Some(pid) = pid.or_else(|| locked_pid(paths)) else {
        return Err(CliError::failed(
            "the daemon did not exit and its pid is unknown; kill it by hand",
        ));
    };
    send_signal(pid, rustix::process::Signal::KILL);
    if wait_for_exit(paths, Duration::from_secs(5)).await? {
        // A killed daemon cannot remove its socket; the next one cleans it up, but tidy now.
        let _ = std::fs::remove_file(paths.socket_path());
        return Ok(json!({ "stopped": true, "pid": pid, "forced": true }));
    }
    Err(CliError::failed(format!(
        "the daemon (pid {pid}) survived SIGKILL; check `ps -p {pid}`"
    )))
}

async fn wait_for_exit(paths: &Paths, timeout: Duration) -> Result<bool, CliError> {
    let deadline = Instant::now() + timeout;
    loop {
        if !autostart::daemon_alive(paths)? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        // Polling: the instance lock is released by the kernel at exit, with no event to await.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn locked_pid(paths: &Paths) -> Option<u32> {
    std::fs::read_to_string(paths.lock_path())
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn send_signal(pid: u32, signal: rustix::process::Signal) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process(pid, signal);
}

/// `daemon status` for a person: what runs, where, and what is wrong.
fn human_status(status: &DaemonStatusResponse) -> String {
    let uptime = {
        let seconds = status.uptime_ms / 1000;
        match seconds {
            0..60 => format!("{seconds}s"),
            60..3600 => format!("{}m {}s", seconds / 60, seconds % 60),
            _ => format!("{}h {}m", seconds / 3600, seconds / 60 % 60),
        }
    };
    let started_by = match status.supervisor {
        pi_protocol::v1::Supervisor::Systemd => "systemd",
        pi_protocol::v1::Supervisor::Launchd => "launchd",
        pi_protocol::v1::Supervisor::Client => "a client (autostart)",
        pi_protocol::v1::Supervisor::Manual => "hand",
    };
    let websocket = match (&status.websocket_url, &status.websocket_error) {
        (Some(url), _) => url.clone(),
        (None, Some(error)) => format!("not running: {error}"),
        (None, None) => "off".to_owned(),
    };
    let mut lines = vec![
        format!(
            "pi daemon {} (protocol {}), pid {}, up {uptime}, started by {started_by}",
            status.version, status.protocol_version, status.pid
        ),
        format!(
            "sessions     {} loaded, {} stored; {} client connection(s)",
            status.sessions.loaded, status.sessions.stored, status.connections
        ),
        format!("socket       {}", status.socket_path),
        format!("websocket    {websocket}"),
        format!(
            "database     {} (schema {})",
            status.database_path, status.database_schema_version
        ),
        format!("config       {}", status.config_dir),
        format!(
            "mcp          {} server(s), {} running (pictl mcp list)",
            status.mcp.servers, status.mcp.running
        ),
        format!(
            "lsp          {} server(s), {} running (pictl lsp list)",
            status.lsp.servers, status.lsp.running
        ),
        format!(
            "jobs         {} running of {} (pictl jobs); kernels {} of {} (pictl kernels)",
            status.pools.jobs_running,
            status.pools.jobs_limit,
            status.pools.kernels,
            status.pools.kernels_limit
        ),
        format!(
            "extensions   host {}, {} session(s), {} loaded (pictl extensions list)",
            if status.extensions.host.is_empty() {
                "not started"
            } else {
                status.extensions.host.as_str()
            },
            status.extensions.sessions,
            status.extensions.loaded
        ),
    ];
    if let Some(memory) = &status.memory {
        lines.push(format!(
            "memory       {} MiB resident",
            memory.rss_bytes / (1024 * 1024)
        ));
    }
    let problems: Vec<_> = status
        .config
        .diagnostics
        .iter()
        .filter(|problem| problem.kind == pi_protocol::v1::ResourceDiagnosticKind::Warning)
        .collect();
    if problems.is_empty() {
        lines.push("config files fine".to_owned());
    } else {
        lines.push(format!("config files {} problem(s):", problems.len()));
        for problem in problems {
            let key = problem
                .key
                .as_deref()
                .map(|key| format!(" `{key}`:"))
                .unwrap_or_default();
            lines.push(format!("  {}:{key} {}", problem.path, problem.message));
        }
    }
    let not_applied = status
        .config
        .diagnostics
        .iter()
        .filter(|problem| problem.kind == pi_protocol::v1::ResourceDiagnosticKind::NotApplied)
        .count();
    if not_applied > 0 {
        lines.push(format!(
            "  {not_applied} pi setting(s) not applied, each with why (pictl daemon status --json)"
        ));
    }
    if let Some(error) = &status.config.watch_error {
        lines.push(format!("  not watched: {error}"));
    }
    lines.join("\n") + "\n"
}

fn status_object(status: &DaemonStatusResponse) -> Value {
    let mut object = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
    object["running"] = json!(true);
    object
}

fn client_info() -> pi_protocol::v1::ClientInfo {
    pi_client::client_info("pictl", env!("CARGO_PKG_VERSION"))
}
