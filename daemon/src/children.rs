//! Server processes that die with the daemon (MCP servers, language servers): each runs under
//! a guard (`pid __mcp-guard PROGRAM ARGS`, see `mcp::guard`) that leads its process group and
//! kills it when the daemon dies, also by SIGKILL. Guards are started from one long-lived
//! thread, because the kernel's parent-death signal follows the thread that started the
//! process, not the process.
//!
//! In-process (tests without the `pid` binary) servers lead their own group without a guard.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// Starts server processes for the whole daemon.
#[derive(Debug)]
pub struct Children {
    // `pid` when running as the `pid` binary.
    guard: Option<PathBuf>,
    // The spawning thread's queue, started on first use. A sync mutex, never held across an
    // await.
    jobs: Mutex<Option<std::sync::mpsc::Sender<Job>>>,
}

impl Default for Children {
    fn default() -> Self {
        Children::new()
    }
}

impl Children {
    /// Guarded when this process is the `pid` binary.
    pub fn new() -> Children {
        let guard = std::env::current_exe()
            .ok()
            .filter(|exe| exe.file_name().is_some_and(|name| name == "pid"));
        Children {
            guard,
            jobs: Mutex::new(None),
        }
    }

    /// Whether processes run under the guard (this process is the `pid` binary).
    pub fn guarded(&self) -> bool {
        self.guard.is_some()
    }

    /// A command running `program args` in a process group of its own that dies with the
    /// daemon (once spawned through [`Children::spawn`]).
    pub fn command(&self, program: &Path, args: &[String]) -> tokio::process::Command {
        match &self.guard {
            Some(guard) => {
                let mut command = tokio::process::Command::new(guard);
                command.arg("__mcp-guard").arg(program).args(args);
                command
            }
            None => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).process_group(0);
                command
            }
        }
    }

    /// Runs `job` (which spawns the process) on the spawning thread; its result.
    pub async fn spawn<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = reply.send(job());
        });
        self.queue()?
            .send(job)
            .map_err(|_| "the process spawner stopped".to_owned())?;
        answer
            .await
            .map_err(|_| "the process spawner stopped".to_owned())
    }

    fn queue(&self) -> Result<std::sync::mpsc::Sender<Job>, String> {
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
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
            .map_err(|error| format!("cannot start the process spawner thread: {error}"))?;
        *jobs = Some(sender.clone());
        Ok(sender)
    }
}

/// Kills the process group led by `pid` (a server's guard, or the server in-process).
pub fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Appends a server's stderr to its log file, in the background.
pub fn copy_to_log(mut stderr: tokio::process::ChildStderr, path: PathBuf) {
    tokio::spawn(async move {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
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
