//! The one place the daemon starts processes: an explicit program, arguments, working
//! directory and environment (never the daemon's own), each process leading a process group
//! of its own so the whole tree can be killed at once, and — when this process is the `pid`
//! binary — under the guard ([`crate::guard`]), so that every process the daemon starts, for
//! any tool, user command, server or job, dies with the daemon, even by SIGKILL, and gets the
//! user's file-creation mask back.
//!
//! [`Spawner`] is given to whatever starts processes. Short commands (`bash`, `!cmd`, git)
//! start with [`Spawner::spawn_group`] or [`Spawner::spawn_with_merged_output`] (the guard's
//! exec mode); servers, jobs and kernels with [`Spawner::server_command`] spawned through
//! [`Spawner::spawn_on_thread`] (server mode, whose death signal follows the spawning thread).
//! In-process (tests without the `pid` binary) processes lead their own group without a
//! guard.
//!
//! Architecture invariant: a group is signalled only while its leader is unreaped, so the
//! group id can never have been reused by an unrelated process. Dropping a [`GroupChild`]
//! whose command has not ended kills its tree.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt as _;
use tokio::net::unix::pipe;
use tokio::sync::oneshot;

use crate::guard::GuardArgs;

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
    /// The daemon's spawning thread is gone (the daemon is stopping) or could not start.
    #[error("the process spawner is not running: {0}")]
    Spawner(String),
}

/// Starts processes for the whole daemon. Cheap to clone: clones share the spawning thread.
#[derive(Clone, Debug, Default)]
pub struct Spawner {
    inner: Arc<SpawnerInner>,
}

#[derive(Debug, Default)]
struct SpawnerInner {
    // The guard program (`pid`) and the user's file-creation mask; `None` in-process.
    guard: Option<GuardProgram>,
    // The spawning thread's queue (server mode), started on first use. A sync mutex, never
    // held across an await.
    jobs: Mutex<Option<std::sync::mpsc::Sender<Job>>>,
}

#[derive(Debug)]
struct GuardProgram {
    program: PathBuf,
    umask: Option<u32>,
}

type Job = Box<dyn FnOnce() + Send>;

/// How long a guard asked to kill its command (its control socket closed) has to do so before
/// the daemon kills its group itself.
const GUARD_KILL_GRACE: Duration = Duration::from_secs(2);

impl Spawner {
    /// Processes start directly (in-process tests): each leads its own group, nothing watches
    /// for the daemon's death.
    pub fn direct() -> Spawner {
        Spawner::default()
    }

    /// Processes start under `guard` (the `pid` binary), which gives them `umask` (the user's
    /// file-creation mask) back.
    pub fn guarded(guard: PathBuf, umask: Option<u32>) -> Spawner {
        Spawner {
            inner: Arc::new(SpawnerInner {
                guard: Some(GuardProgram {
                    program: guard,
                    umask,
                }),
                jobs: Mutex::new(None),
            }),
        }
    }

    /// Guarded when this process is the `pid` binary, else direct.
    pub fn for_current_exe(umask: Option<u32>) -> Spawner {
        match std::env::current_exe()
            .ok()
            .filter(|exe| exe.file_name().is_some_and(|name| name == "pid"))
        {
            Some(exe) => Spawner::guarded(exe, umask),
            None => Spawner::direct(),
        }
    }

    /// Whether processes run under the guard.
    pub fn is_guarded(&self) -> bool {
        self.inner.guard.is_some()
    }

    /// The user's file-creation mask, which the daemon's own mask (`077`) replaced: what the
    /// tools create for the user follows it. `None` in-process, where the mask was not
    /// changed.
    pub fn user_umask(&self) -> Option<u32> {
        self.inner.guard.as_ref().and_then(|guard| guard.umask)
    }

    /// A command running `program args` that keeps its stdio for the daemon (a server, a job,
    /// a kernel), in a process group of its own that dies with the daemon once spawned
    /// through [`Spawner::spawn_on_thread`]. With `status_file`, a guarded command's exit
    /// code is written there (the guard's own status cannot carry it).
    pub fn server_command(
        &self,
        program: &Path,
        args: &[String],
        status_file: Option<&Path>,
    ) -> tokio::process::Command {
        match &self.inner.guard {
            Some(guard) => {
                let mut command = tokio::process::Command::new(&guard.program);
                command.arg(crate::guard::HELPER_ARG).args(
                    GuardArgs {
                        umask: guard.umask,
                        status_file: status_file.map(|file| file.as_os_str().to_owned()),
                        exec: false,
                        command: std::iter::once(program.as_os_str().to_owned())
                            .chain(args.iter().map(OsString::from))
                            .collect(),
                    }
                    .to_args(),
                );
                command
            }
            None => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).process_group(0);
                command
            }
        }
    }

    /// Runs `job` (which spawns a server-mode process) on the spawning thread; its result.
    pub async fn spawn_on_thread<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, SpawnError> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = reply.send(job());
        });
        let stopped = || SpawnError::Spawner("the spawning thread stopped".to_owned());
        self.queue()?.send(job).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())
    }

    fn queue(&self) -> Result<std::sync::mpsc::Sender<Job>, SpawnError> {
        let mut jobs = self
            .inner
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(jobs) = jobs.as_ref() {
            return Ok(jobs.clone());
        }
        let runtime = tokio::runtime::Handle::current();
        let (sender, queue) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("pid-spawner".to_owned())
            .spawn(move || {
                let _entered = runtime.enter();
                while let Ok(job) = queue.recv() {
                    job();
                }
            })
            .map_err(|error| SpawnError::Spawner(format!("cannot start its thread: {error}")))?;
        *jobs = Some(sender.clone());
        Ok(sender)
    }

    /// Starts `spec` with an empty stdin and the given stdout and stderr: a short command
    /// whose whole tree is killed by [`GroupChild::kill_and_wait`], by dropping the
    /// [`GroupChild`] before it ended, or by the daemon's death. Processes it leaves running
    /// once it exited normally keep running, while the daemon lives.
    pub fn spawn_group(
        &self,
        spec: &SpawnSpec,
        stdout: Stdio,
        stderr: Stdio,
    ) -> Result<GroupChild, SpawnError> {
        let start_error = |source| SpawnError::Start {
            program: spec.program.display().to_string(),
            source,
        };
        let (mut command, control) = match &self.inner.guard {
            Some(guard) => {
                let (ours, theirs) =
                    std::os::unix::net::UnixStream::pair().map_err(SpawnError::Pipe)?;
                let mut command = tokio::process::Command::new(&guard.program);
                command
                    .arg(crate::guard::HELPER_ARG)
                    .args(
                        GuardArgs {
                            umask: guard.umask,
                            status_file: None,
                            exec: true,
                            command: std::iter::once(spec.program.as_os_str().to_owned())
                                .chain(spec.args.iter().cloned())
                                .collect(),
                        }
                        .to_args(),
                    )
                    .stdin(Stdio::from(OwnedFd::from(theirs)));
                ours.set_nonblocking(true).map_err(SpawnError::Pipe)?;
                let ours = tokio::net::UnixStream::from_std(ours).map_err(SpawnError::Pipe)?;
                (command, Some(ours))
            }
            None => {
                let mut command = tokio::process::Command::new(&spec.program);
                command
                    .args(&spec.args)
                    .stdin(Stdio::null())
                    .process_group(0)
                    .kill_on_drop(true);
                (command, None)
            }
        };
        command
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(&spec.env)
            .stdout(stdout)
            .stderr(stderr);
        let child = command.spawn().map_err(start_error)?;
        // The command holds the pipes' and the guard's socket's other ends; only the child
        // keeps them now.
        drop(command);
        let group = child
            .id()
            .and_then(|id| Pid::from_raw(id as i32))
            .ok_or_else(|| start_error(io::Error::other("the child has no process id")))?;
        Ok(GroupChild {
            child: Some(child),
            group: Some(group),
            control,
        })
    }

    /// Starts `spec` with stdout and stderr merged into one pipe, in write order.
    pub fn spawn_with_merged_output(
        &self,
        spec: &SpawnSpec,
    ) -> Result<(GroupChild, MergedOutput), SpawnError> {
        let (reader, writer) = io::pipe().map_err(SpawnError::Pipe)?;
        let writer_for_stderr = writer.try_clone().map_err(SpawnError::Pipe)?;
        let child = self.spawn_group(spec, Stdio::from(writer), Stdio::from(writer_for_stderr))?;
        let pipe =
            pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(SpawnError::Pipe)?;
        Ok((child, MergedOutput { pipe }))
    }

    /// Runs `spec` to its end with stdout and stderr collected (a short command: git, a
    /// probe), killed when the returned future is dropped.
    pub async fn output(&self, spec: &SpawnSpec) -> Result<std::process::Output, SpawnError> {
        let (out_reader, out_writer) = io::pipe().map_err(SpawnError::Pipe)?;
        let (err_reader, err_writer) = io::pipe().map_err(SpawnError::Pipe)?;
        let mut child = self.spawn_group(spec, Stdio::from(out_writer), Stdio::from(err_writer))?;
        let read_all = |reader: io::PipeReader| async move {
            let mut pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).await?;
            io::Result::Ok(bytes)
        };
        let io_error = |source| SpawnError::Start {
            program: spec.program.display().to_string(),
            source,
        };
        let (stdout, stderr, status) =
            tokio::join!(read_all(out_reader), read_all(err_reader), child.wait());
        Ok(std::process::Output {
            status: status.map_err(io_error)?,
            stdout: stdout.map_err(io_error)?,
            stderr: stderr.map_err(io_error)?,
        })
    }
}

/// A running command that leads its own process group (the guard's, when guarded).
#[derive(Debug)]
pub struct GroupChild {
    // `None` once handed to the task that reaps a guard lingering for what its command left.
    child: Option<tokio::process::Child>,
    // Invariant: the leader's pid, which is the group id; `None` once the leader is reaped or
    // the command ended (then what it left is the guard's business).
    group: Option<Pid>,
    // Exec mode: the daemon's end of the guard's control socket (reads the command's status;
    // closing it makes the guard kill the tree).
    control: Option<tokio::net::UnixStream>,
}

/// The read end of the merged stdout+stderr pipe.
#[derive(Debug)]
pub struct MergedOutput {
    /// Readable with tokio's async I/O.
    pub pipe: pipe::Receiver,
}

impl GroupChild {
    /// The leader's process id (also the group id).
    pub fn id(&self) -> Option<u32> {
        self.group.map(|pid| pid.as_raw_nonzero().get() as u32)
    }

    /// Waits for the command to exit; its status. Other members of the group may live on.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(control) = &mut self.control {
            // The guard's report: the raw wait status, on one line.
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while control.read(&mut byte).await? == 1 && byte[0] != b'\n' {
                line.push(byte[0]);
            }
            let reported = std::str::from_utf8(&line)
                .ok()
                .and_then(|text| text.parse::<i32>().ok());
            if let Some(raw) = reported {
                // The command ended; the guard stays for what it left running, holding our
                // end open until it exits, and is reaped then.
                self.group = None;
                if let (Some(mut child), Some(control)) = (self.child.take(), self.control.take()) {
                    tokio::spawn(async move {
                        let _ = child.wait().await;
                        drop(control);
                    });
                }
                return Ok(ExitStatus::from_raw(raw));
            }
            // No report: the guard itself was killed.
        }
        let status = match &mut self.child {
            Some(child) => child.wait().await?,
            None => return Err(io::Error::other("the command was already waited for")),
        };
        self.group = None;
        Ok(status)
    }

    /// Kills every process of the command's tree (SIGKILL) and reaps the leader.
    pub async fn kill_and_wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(control) = self.control.take() {
            // The guard kills the group and what it adopted, then dies.
            drop(control);
            if let Some(child) = &mut self.child
                && let Ok(status) = tokio::time::timeout(GUARD_KILL_GRACE, child.wait()).await
            {
                self.group = None;
                return status;
            }
        }
        self.kill_group();
        let status = match &mut self.child {
            Some(child) => child.wait().await?,
            None => return Err(io::Error::other("the command was already waited for")),
        };
        self.group = None;
        Ok(status)
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
        if self.control.is_some() {
            // Closing the control socket (with the fields) has the guard kill the tree; tokio
            // reaps the guard.
            return;
        }
        self.kill_group();
    }
}

/// Kills the process group led by `pid` (a server's guard, or the server in-process).
pub fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// Waits for a server's process to exit; if `stuck` completes first (the server stopped
/// reading its input), ends its process group and then waits. The exit status, and whether
/// it was ended as stuck.
pub async fn wait_or_end_stuck(
    child: &mut tokio::process::Child,
    stuck: impl std::future::Future<Output = ()>,
) -> (std::io::Result<std::process::ExitStatus>, bool) {
    let pid = child.id();
    tokio::select! {
        status = child.wait() => (status, false),
        () = stuck => {
            if let Some(pid) = pid {
                kill_group(pid);
            }
            let _ = child.start_kill();
            (child.wait().await, true)
        }
    }
}

/// Appends a server's stderr (an MCP or language server's) to its log file (0600), in the
/// background.
pub fn copy_to_log(mut stderr: tokio::process::ChildStderr, path: std::path::PathBuf) {
    tokio::spawn(async move {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .await;
        match file {
            Ok(mut file) => {
                let _ = tokio::io::copy(&mut stderr, &mut file).await;
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot open a server's log");
                let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
            }
        }
    });
}
