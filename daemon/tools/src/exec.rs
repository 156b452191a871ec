//! The shell executor behind the `bash` tool and user shell commands (`!cmd`): runs
//! `<shell> -c <command>` in the session's working directory and environment, collects the
//! merged output, reports progress, and ends it on timeout or abort by killing the whole
//! process group.
//!
//! Output is counted in full (bytes and lines) but only a tail window stays in memory. As soon
//! as the output would be truncated it is also written, from its first byte, to an artifact;
//! the result names it so the full output can be read back.
//!
//! Architecture invariant: when `run` returns after a timeout or abort, every process of the
//! command's group has been sent SIGKILL and the shell itself has been reaped. When the shell
//! exits normally, background processes it left behind keep running; output they write after
//! [`DRAIN_GRACE`] is not collected.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::artifacts::{ArtifactError, SessionArtifacts};
pub use crate::output::OutputStyle;
use crate::output::{OutputWindow, TailSnapshot};
use crate::spawn::{SpawnError, SpawnSpec, Spawner};

/// How long output is still read after the shell exits, for processes that keep the pipe open.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// Least time between two progress reports.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);
const READ_BUFFER: usize = 64 * 1024;

/// Which shell runs commands, and what goes before each command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellConfig {
    /// The shell; `None` finds one (`/bin/bash`, `bash` on `PATH`, `sh`).
    pub shell_path: Option<PathBuf>,
    /// Prepended to every command, on its own line (pi's `shellCommandPrefix`).
    pub command_prefix: Option<String>,
}

/// Where a command runs.
#[derive(Clone, Copy, Debug)]
pub struct ExecPlace<'a> {
    /// Working directory.
    pub cwd: &'a Path,
    /// The whole environment.
    pub env: &'a BTreeMap<String, String>,
    /// Shell selection.
    pub shell: &'a ShellConfig,
    /// Where full output goes when truncated.
    pub artifacts: &'a SessionArtifacts,
    /// Confines the command when set.
    pub sandbox: Option<&'a crate::sandbox::Sandbox>,
    /// Starts the command.
    pub spawner: &'a Spawner,
}

/// One command to run.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    /// The command line.
    pub command: String,
    /// Kill it after this long.
    pub timeout: Option<Duration>,
    /// How to decode output.
    pub style: OutputStyle,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecEnd {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by a signal nobody here sent.
    Signaled,
    /// The timeout elapsed; the group was killed.
    TimedOut,
    /// The caller cancelled; the group was killed.
    Aborted,
}

/// What a finished command produced.
#[derive(Clone, Debug)]
pub struct ExecResult {
    /// How it ended.
    pub end: ExecEnd,
    /// The output's tail, truncated, with whole-output totals.
    pub output: TailSnapshot,
}

/// The command could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The session's working directory is gone; the user should recreate it or start a
    /// session elsewhere.
    #[error("Working directory does not exist: {0}\nCannot execute bash commands.")]
    MissingCwd(String),
    /// The shell could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The full output could not be stored.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// Reading the output or waiting for the shell failed.
    #[error("cannot run the command: {0}")]
    Io(#[from] std::io::Error),
}

/// Runs `request`; `on_progress` gets the output so far as pi reports it: the first output at
/// once, then at most every [`PROGRESS_INTERVAL`], and once more at the end if output arrived
/// since the last report.
pub async fn run(
    place: ExecPlace<'_>,
    request: &ExecRequest,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(TailSnapshot) + Send),
) -> Result<ExecResult, ExecError> {
    let spec = shell_spec(place, &request.command)?;
    let (mut child, mut output) = place.spawner.spawn_with_merged_output(&spec)?;
    let mut window = OutputWindow::new(place.artifacts, request.style);
    let deadline = request
        .timeout
        .map(|timeout| tokio::time::Instant::now() + timeout);
    let sleep_until_deadline = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep_until_deadline);
    let mut buffer = vec![0u8; READ_BUFFER];
    // When the last report went out; none yet: the first output is reported at once.
    let mut last_progress: Option<Instant> = None;
    // Output arrived since the last progress report.
    let mut unreported = false;
    let mut pipe_open = true;
    let end = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                child.kill_and_wait().await?;
                break ExecEnd::Aborted;
            }
            () = &mut sleep_until_deadline => {
                child.kill_and_wait().await?;
                break ExecEnd::TimedOut;
            }
            read = output.pipe.read(&mut buffer), if pipe_open => {
                let count = read?;
                if count == 0 {
                    pipe_open = false;
                    continue;
                }
                window.push(&buffer[..count]).await?;
                unreported = true;
                if last_progress.is_none_or(|last| last.elapsed() >= PROGRESS_INTERVAL) {
                    last_progress = Some(Instant::now());
                    unreported = false;
                    on_progress(window.snapshot());
                }
            }
            () = sleep_until_next(last_progress), if unreported => {
                last_progress = Some(Instant::now());
                unreported = false;
                on_progress(window.snapshot());
            }
            status = child.wait() => {
                let status = status?;
                break match status.code() {
                    Some(code) => ExecEnd::Exited(code),
                    None => ExecEnd::Signaled,
                };
            }
        }
    };
    // Collect what is still in the pipe: everything, if the whole group is gone; for a
    // bounded time, if background processes still hold it open.
    let drain_until = tokio::time::Instant::now() + DRAIN_GRACE;
    if pipe_open {
        loop {
            match tokio::time::timeout_at(drain_until, output.pipe.read(&mut buffer)).await {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(count)) => {
                    window.push(&buffer[..count]).await?;
                    unreported = true;
                }
                Ok(Err(error)) => return Err(error.into()),
            }
        }
    }
    if unreported {
        on_progress(window.snapshot());
    }
    let output = window.finish().await?;
    Ok(ExecResult { end, output })
}

/// What starts `command` in `place`: `<shell> -c <prefix + command>` in its directory and
/// environment, through the sandbox when it has one. Also used for background jobs.
pub fn shell_spec(place: ExecPlace<'_>, command: &str) -> Result<SpawnSpec, ExecError> {
    if !place.cwd.is_dir() {
        return Err(ExecError::MissingCwd(place.cwd.display().to_string()));
    }
    let line = match &place.shell.command_prefix {
        Some(prefix) => format!("{prefix}\n{command}"),
        None => command.to_owned(),
    };
    let spec = SpawnSpec {
        program: find_shell(place.shell, place.env),
        args: vec!["-c".into(), line.into()],
        cwd: place.cwd.to_path_buf(),
        env: place.env.clone(),
    };
    Ok(match place.sandbox {
        Some(sandbox) => sandbox.wrap(spec),
        None => spec,
    })
}

/// When the next throttled progress report may go out.
async fn sleep_until_next(last_progress: Option<Instant>) {
    if let Some(last) = last_progress {
        tokio::time::sleep_until((last + PROGRESS_INTERVAL).into()).await;
    }
}

/// The shell to run: the configured one, else `/bin/bash`, else `bash` on the session's
/// `PATH`, else `sh`.
pub fn find_shell(shell: &ShellConfig, env: &BTreeMap<String, String>) -> PathBuf {
    if let Some(path) = &shell.shell_path {
        return path.clone();
    }
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.is_file() {
        return bin_bash.to_path_buf();
    }
    let on_path = env.get("PATH").and_then(|path| {
        path.split(':')
            .map(|dir| Path::new(dir).join("bash"))
            .find(|candidate| candidate.is_file())
    });
    on_path.unwrap_or_else(|| PathBuf::from("sh"))
}
