//! The one place the daemon starts processes: an explicit program, arguments, working
//! directory and environment (never the daemon's own), stdin closed, stdout and stderr merged
//! into one pipe in write order, and the child leading its own process group so the whole tree
//! can be killed at once.
//!
//! Architecture invariant: the group is signalled only while its leader is unreaped, so the
//! group id can never have been reused by an unrelated process. Dropping a [`GroupChild`]
//! whose leader has not been reaped kills the group; tokio reaps the leader in the background.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::net::unix::pipe;

/// What to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnSpec {
    /// The program (absolute, or looked up in `env`'s `PATH`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its whole environment.
    pub env: BTreeMap<String, String>,
}

/// Starting a process failed.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The output pipe could not be made (out of file descriptors); retry later.
    #[error("cannot create an output pipe: {0}")]
    Pipe(io::Error),
    /// The program could not be started; the message names it.
    #[error("cannot start {program}: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
}

/// A running child that leads its own process group.
#[derive(Debug)]
pub struct GroupChild {
    child: tokio::process::Child,
    // Invariant: the leader's pid, which is the group id; `None` once the leader is reaped.
    group: Option<Pid>,
}

/// The read end of the merged stdout+stderr pipe.
#[derive(Debug)]
pub struct MergedOutput {
    /// Readable with tokio's async I/O.
    pub pipe: pipe::Receiver,
}

/// Starts `spec` with stdout and stderr merged into one pipe.
pub fn spawn_with_merged_output(
    spec: &SpawnSpec,
) -> Result<(GroupChild, MergedOutput), SpawnError> {
    let (reader, writer) = io::pipe().map_err(SpawnError::Pipe)?;
    let writer_for_stderr = writer.try_clone().map_err(SpawnError::Pipe)?;
    let start_error = |source| SpawnError::Start {
        program: spec.program.display().to_string(),
        source,
    };
    let child = {
        // The command holds the pipe's write ends; it is dropped at the end of this block so
        // only the child keeps them open and the reader sees end-of-file when the tree exits.
        let mut command = tokio::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(&spec.env)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer_for_stderr))
            .process_group(0)
            .kill_on_drop(true);
        command.spawn().map_err(start_error)?
    };
    let group = child
        .id()
        .and_then(|id| Pid::from_raw(id as i32))
        .ok_or_else(|| start_error(io::Error::other("the child has no process id")))?;
    let pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(SpawnError::Pipe)?;
    Ok((
        GroupChild {
            child,
            group: Some(group),
        },
        MergedOutput { pipe },
    ))
}

impl GroupChild {
    /// The leader's process id (also the group id).
    pub fn id(&self) -> Option<u32> {
        self.group.map(|pid| pid.as_raw_nonzero().get() as u32)
    }

    /// Waits for the leader to exit and reaps it. Other members of the group may live on.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.group = None;
        Ok(status)
    }

    /// Kills every process of the group (SIGKILL) and reaps the leader.
    pub async fn kill_and_wait(&mut self) -> io::Result<ExitStatus> {
        self.kill_group();
        self.wait().await
    }

    /// Sends SIGKILL to the group if the leader is unreaped (see the invariant above).
    fn kill_group(&self) {
        if let Some(group) = self.group {
            match kill_process_group(group, Signal::KILL) {
                Ok(()) => {}
                Err(error) if error == rustix::io::Errno::SRCH => {}
                Err(error) => {
                    tracing::warn!(%error, group = group.as_raw_nonzero().get(), "cannot kill a process group")
                }
            }
        }
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        self.kill_group();
    }
}
