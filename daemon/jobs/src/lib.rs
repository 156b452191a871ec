//! The process pool: background jobs (`bash` with `background: true`), owned by sessions and
//! shared infrastructure of the daemon.
//!
//! A job is `<shell> -c <command>` in the session's directory and environment (confined by the
//! session's sandbox, if any), under a guard that leads its process group and takes it down
//! when the daemon dies, also by SIGKILL (`pi_tools::guard`). Its output (stdout and stderr
//! merged, or a terminal's output with `tty`) goes straight to a file, an artifact of the
//! session (`artifact://<job id>`): the daemon keeps no output in memory, whatever the volume.
//! The model reads new output with the `job` tool (`tool.rs`), writes to its stdin, waits for
//! it, kills it.
//!
//! Every job is a row in the store (`jobs`), written when it starts and ends; at start the
//! daemon reports rows still `running` as `lost`.
//!
//! Architecture invariant: a session runs at most `jobs_per_session` jobs at once and the
//! daemon `jobs`; deleting a session, aborting it (`session/abort`) and stopping the daemon
//! kill its jobs' whole process groups.

pub mod tool;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use pi_protocol::v1::JobInfo;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::watch;

use pi_store::{JobRow, Store};
use pi_tools::spawn::Spawner;

/// Most output one read returns; the rest stays in the file (`artifact://<job id>`).
pub const MAX_READ_BYTES: u64 = 50 * 1024;
/// How often a waiting reader looks at the output file again.
const POLL_INTERVAL: Duration = Duration::from_millis(25);

/// How many jobs may run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLimits {
    /// Per session.
    pub per_session: usize,
    /// In the whole daemon.
    pub total: usize,
}

/// What a job should run.
#[derive(Clone, Debug)]
pub struct JobRequest {
    /// The session starting it.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// The shell's program and arguments up to the command (`/bin/bash -c`), possibly
    /// through the sandbox helper.
    pub program: PathBuf,
    /// Arguments, the command last.
    pub args: Vec<std::ffi::OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The whole environment.
    pub env: BTreeMap<String, String>,
    /// Under a terminal.
    pub tty: bool,
    /// Where the output file goes.
    pub artifacts: pi_tools::SessionArtifacts,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobEnd {
    /// Its shell exited with this code.
    Exited(i32),
    /// Killed (by `kill`, an abort, the session's deletion, or a signal).
    Killed,
}

enum Stdin {
    Pipe(tokio::process::ChildStdin),
    Terminal(Box<dyn std::io::Write + Send>),
}

/// A job this daemon started.
struct Job {
    row: JobRow,
    pid: Option<u32>,
    end: watch::Sender<Option<JobEnd>>,
    stdin: tokio::sync::Mutex<Option<Stdin>>,
    // Where the model's last read of new output stopped.
    cursor: Mutex<u64>,
    // Set before the daemon kills it, so the end reads `killed`.
    killing: AtomicBool,
}

/// New output of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobOutput {
    /// The text (terminal control sequences removed).
    pub text: String,
    /// Bytes skipped before it (more new output than one read returns).
    pub skipped: u64,
    /// The output's size now.
    pub total: u64,
}

/// The daemon's jobs.
pub struct JobPool {
    spawner: Spawner,
    limits: JobLimits,
    store: OnceLock<Store>,
    jobs: Mutex<HashMap<String, Arc<Job>>>,
}

impl std::fmt::Debug for JobPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobPool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl JobPool {
    /// A pool starting processes through `spawner`.
    pub fn new(spawner: Spawner, limits: JobLimits) -> JobPool {
        JobPool {
            spawner,
            limits,
            store: OnceLock::new(),
            jobs: Mutex::new(HashMap::new()),
        }
    }

    /// Where jobs are recorded; marks the jobs a previous daemon left running as lost.
    pub async fn attach_store(&self, store: Store) -> Result<u64, pi_store::StoreError> {
        let lost = store.mark_jobs_lost(pi_util::time::now_millis()).await?;
        let _ = self.store.set(store);
        Ok(lost)
    }

    fn jobs(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Job>>> {
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The limits.
    pub fn limits(&self) -> JobLimits {
        self.limits
    }

    /// Running jobs: of `session_id`, or all.
    pub fn running(&self, session_id: Option<&str>) -> usize {
        self.jobs()
            .values()
            .filter(|job| job.end.borrow().is_none())
            .filter(|job| session_id.is_none_or(|id| job.row.session_id == id))
            .count()
    }

    /// Starts a job; its id and process id.
    pub async fn start(self: &Arc<Self>, request: JobRequest) -> Result<JobInfo, JobError> {
        if self.running(Some(&request.session_id)) >= self.limits.per_session {
            return Err(JobError::SessionLimit(self.limits.per_session));
        }
        if self.running(None) >= self.limits.total {
            return Err(JobError::DaemonLimit(self.limits.total));
        }
        let (id, file) = request
            .artifacts
            .create("job")
            .map_err(|error| JobError::OutputFile(error.to_string()))?;
        let spool = request.artifacts.dir().join(&id);
        let status_file = request.artifacts.dir().join(format!("{id}.status"));
        let started = if request.tty {
            self.spawn_terminal(&request, file, &status_file).await
        } else {
            self.spawn_piped(&request, file, &status_file).await
        };
        let (pid, stdin, waiter) = started.inspect_err(|_| {
            let _ = std::fs::remove_file(&spool);
        })?;
        let row = JobRow {
            id: id.clone(),
            session_id: request.session_id.clone(),
            command: request.command.clone(),
            cwd: request.cwd.display().to_string(),
            tty: request.tty,
            state: "running".to_owned(),
            exit_code: None,
            started_at: pi_util::time::now_millis(),
            ended_at: None,
            spool: spool.display().to_string(),
        };
        if let Some(store) = self.store.get()
            && let Err(error) = store.insert_job(&row).await
        {
            tracing::warn!(%error, job = id, "cannot record a job");
        }
        let job = Arc::new(Job {
            row,
            pid,
            end: watch::channel(None).0,
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            cursor: Mutex::new(0),
            killing: AtomicBool::new(false),
        });
        self.jobs().insert(id.clone(), job.clone());
        let info = self.info_of_live(&job);
        let pool = self.clone();
        tokio::spawn(async move {
            let code = waiter.await;
            // The guard writes the shell's code to the status file (its own status is its
            // group's SIGKILL); without a guard the shell's own status counts.
            let recorded = std::fs::read_to_string(&status_file)
                .ok()
                .and_then(|text| text.trim().parse::<i32>().ok());
            let _ = std::fs::remove_file(&status_file);
            let end = match recorded.or(code) {
                _ if job.killing.load(Ordering::SeqCst) => JobEnd::Killed,
                Some(code) => JobEnd::Exited(code),
                None => JobEnd::Killed,
            };
            pool.finish(&job, end).await;
        });
        Ok(info)
    }

    async fn finish(&self, job: &Job, end: JobEnd) {
        *job.stdin.lock().await = None;
        let (state, code) = match end {
            JobEnd::Exited(code) => ("exited", Some(i64::from(code))),
            JobEnd::Killed => ("killed", None),
        };
        if let Some(store) = self.store.get()
            && let Err(error) = store
                .end_job(&job.row.id, state, code, pi_util::time::now_millis())
                .await
        {
            tracing::warn!(%error, job = job.row.id, "cannot record a job's end");
        }
        job.end.send_replace(Some(end));
    }

    /// A piped job: stdout and stderr to the file, stdin a pipe.
    async fn spawn_piped(
        &self,
        request: &JobRequest,
        file: std::fs::File,
        status_file: &Path,
    ) -> Result<(Option<u32>, Stdin, Waiter), JobError> {
        let args: Vec<String> = request
            .args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let mut command = self
            .spawner
            .server_command(&request.program, &args, Some(status_file));
        let stderr = file
            .try_clone()
            .map_err(|error| JobError::Start(error.to_string()))?;
        command
            .current_dir(&request.cwd)
            .env_clear()
            .envs(&request.env)
            .stdin(std::process::Stdio::piped())
            .stdout(file)
            .stderr(stderr)
            .kill_on_drop(false);
        let mut child = self
            .spawner
            .spawn_on_thread(move || command.spawn())
            .await
            .map_err(|error| JobError::Start(error.to_string()))?
            .map_err(|error| JobError::Start(format!("{}: {error}", request.program.display())))?;
        let pid = child.id();
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| JobError::Start("the job has no stdin".to_owned()))?;
        let waiter: Waiter =
            Box::pin(async move { child.wait().await.ok().and_then(|status| status.code()) });
        Ok((pid, Stdin::Pipe(stdin), waiter))
    }

    /// A job under a terminal: the terminal's output copied to the file by a thread.
    async fn spawn_terminal(
        &self,
        request: &JobRequest,
        mut file: std::fs::File,
        status_file: &Path,
    ) -> Result<(Option<u32>, Stdin, Waiter), JobError> {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 160,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|error| JobError::Start(format!("cannot open a terminal: {error}")))?;
        let args: Vec<String> = request
            .args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let plain = self
            .spawner
            .server_command(&request.program, &args, Some(status_file));
        let std_command = plain.as_std();
        let mut command = CommandBuilder::new(std_command.get_program());
        command.args(std_command.get_args());
        command.cwd(&request.cwd);
        command.env_clear();
        for (key, value) in &request.env {
            command.env(key, value);
        }
        if !request.env.contains_key("TERM") {
            command.env("TERM", "dumb");
        }
        let slave = pair.slave;
        let mut child = self
            .spawner
            .spawn_on_thread(move || slave.spawn_command(command))
            .await
            .map_err(|error| JobError::Start(error.to_string()))?
            .map_err(|error| JobError::Start(format!("{}: {error}", request.program.display())))?;
        let pid = child.process_id();
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|error| JobError::Start(format!("cannot read the terminal: {error}")))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|error| JobError::Start(format!("cannot write to the terminal: {error}")))?;
        // The copier ends when every process holding the terminal is gone (EOF or EIO). It
        // and the waiter below block for the job's whole life: on threads of their own, not
        // the runtime's bounded blocking pool, which a few dozen jobs would otherwise fill and
        // every session's file tools would wait behind.
        let copied = on_own_thread("pid-job-output", move || {
            let mut buffer = vec![0u8; 16 * 1024];
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(count) => {
                        if file.write_all(&buffer[..count]).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let master = pair.master;
        let waiter: Waiter = Box::pin(async move {
            let status = on_own_thread("pid-job-wait", move || child.wait()).await;
            // The terminal goes when the job does; its last output is in the file first.
            drop(master);
            let _ = copied.await;
            match status {
                Ok(Ok(status)) if status.signal().is_none() => {
                    i32::try_from(status.exit_code()).ok()
                }
                _ => None,
            }
        });
        Ok((pid, Stdin::Terminal(writer), waiter))
    }

    fn live(&self, session_id: &str, id: &str) -> Option<Arc<Job>> {
        self.jobs()
            .get(id)
            .filter(|job| job.row.session_id == session_id)
            .cloned()
    }

    /// The stored row of a job of `session_id` (also one a previous daemon ran).
    async fn row(&self, session_id: &str, id: &str) -> Result<JobRow, JobError> {
        if let Some(job) = self.live(session_id, id) {
            return Ok(job.row.clone());
        }
        let rows = match self.store.get() {
            Some(store) => store.jobs(Some(session_id)).await?,
            None => Vec::new(),
        };
        rows.into_iter()
            .find(|row| row.id == id)
            .ok_or_else(|| no_such_job(id))
    }

    /// Writes `input` to job `id`'s stdin (or terminal).
    pub async fn write(&self, session_id: &str, id: &str, input: &str) -> Result<usize, JobError> {
        let job = self.live(session_id, id).ok_or_else(|| no_such_job(id))?;
        let mut stdin = job.stdin.lock().await;
        let result = match stdin.as_mut() {
            None => return Err(JobError::StdinClosed(id.to_owned())),
            Some(Stdin::Pipe(pipe)) => pipe.write_all(input.as_bytes()).await,
            Some(Stdin::Terminal(writer)) => writer
                .write_all(input.as_bytes())
                .and_then(|()| writer.flush()),
        };
        result
            .map(|()| input.len())
            .map_err(|source| JobError::Write {
                id: id.to_owned(),
                source,
            })
    }

    /// Closes job `id`'s stdin (end of input).
    pub async fn close_stdin(&self, session_id: &str, id: &str) -> Result<(), JobError> {
        let job = self.live(session_id, id).ok_or_else(|| no_such_job(id))?;
        *job.stdin.lock().await = None;
        Ok(())
    }

    /// New output of job `id` since the last read (or from `offset`), waiting up to `wait`
    /// for output containing `wait_for` when given.
    pub async fn output(
        &self,
        session_id: &str,
        id: &str,
        offset: Option<u64>,
        wait_for: Option<&str>,
        wait: Duration,
    ) -> Result<(JobOutput, bool), JobError> {
        let row = self.row(session_id, id).await?;
        let live = self.live(session_id, id);
        let start = match (offset, &live) {
            (Some(offset), _) => offset,
            (None, Some(job)) => *job.cursor.lock().unwrap_or_else(PoisonError::into_inner),
            (None, None) => 0,
        };
        let deadline = tokio::time::Instant::now() + wait;
        let mut found = wait_for.is_none();
        let output = loop {
            let output = read_from(Path::new(&row.spool), start, row.tty)?;
            let ended = live.as_ref().is_none_or(|job| job.end.borrow().is_some());
            if let Some(needle) = wait_for
                && output.text.contains(needle)
            {
                found = true;
            }
            if found || ended || tokio::time::Instant::now() >= deadline {
                break output;
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        };
        if offset.is_none()
            && let Some(job) = &live
        {
            *job.cursor.lock().unwrap_or_else(PoisonError::into_inner) = output.total;
        }
        Ok((output, found))
    }

    /// Waits up to `timeout` for job `id` to end; how it ended, if it did.
    pub async fn wait(
        &self,
        session_id: &str,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<JobEnd>, JobError> {
        let Some(job) = self.live(session_id, id) else {
            let row = self.row(session_id, id).await?;
            return Ok(Some(match row.exit_code {
                Some(code) => JobEnd::Exited(code as i32),
                None => JobEnd::Killed,
            }));
        };
        let mut end = job.end.subscribe();
        let ended = tokio::time::timeout(timeout, end.wait_for(Option::is_some)).await;
        Ok(match ended {
            Ok(Ok(end)) => *end,
            _ => None,
        })
    }

    /// Kills job `id`'s process group; waits for its end.
    pub async fn kill(&self, session_id: &str, id: &str) -> Result<bool, JobError> {
        let job = self.live(session_id, id).ok_or_else(|| no_such_job(id))?;
        Ok(kill_job(&job).await)
    }

    /// Kills every running job of `session_id`; how many.
    pub async fn kill_session(&self, session_id: &str) -> u32 {
        let jobs: Vec<Arc<Job>> = self
            .jobs()
            .values()
            .filter(|job| job.row.session_id == session_id)
            .cloned()
            .collect();
        let mut killed = 0;
        for job in jobs {
            if kill_job(&job).await {
                killed += 1;
            }
        }
        killed
    }

    /// Kills a deleted session's jobs and forgets them (without waiting).
    pub fn session_deleted(&self, session_id: &str) {
        let mut jobs = self.jobs();
        for job in jobs.values().filter(|job| job.row.session_id == session_id) {
            signal_kill(job);
        }
        jobs.retain(|_, job| job.row.session_id != session_id);
    }

    /// Kills every job (the daemon stops).
    pub async fn shutdown(&self) {
        let jobs: Vec<Arc<Job>> = self.jobs().values().cloned().collect();
        for job in jobs {
            kill_job(&job).await;
        }
    }

    /// Jobs as `job/list` shows them: of `session_id`, or all; stored ones included.
    pub async fn list(&self, session_id: Option<&str>) -> Result<Vec<JobInfo>, JobError> {
        let rows = match self.store.get() {
            Some(store) => store.jobs(session_id).await?,
            None => Vec::new(),
        };
        let live = self.jobs();
        let mut infos: Vec<JobInfo> = rows
            .into_iter()
            .map(|row| match live.get(&row.id) {
                Some(job) => self.info_of_live(job),
                None => info_of_row(&row, None),
            })
            .collect();
        // Jobs not (yet) in the store.
        for job in live.values() {
            if session_id.is_none_or(|id| job.row.session_id == id)
                && !infos.iter().any(|info| info.id == job.row.id)
            {
                infos.push(self.info_of_live(job));
            }
        }
        infos.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
        Ok(infos)
    }

    fn info_of_live(&self, job: &Job) -> JobInfo {
        let end = *job.end.borrow();
        let mut row = job.row.clone();
        match end {
            None => {}
            Some(JobEnd::Exited(code)) => {
                row.state = "exited".to_owned();
                row.exit_code = Some(i64::from(code));
            }
            Some(JobEnd::Killed) => row.state = "killed".to_owned(),
        }
        info_of_row(&row, if end.is_none() { job.pid } else { None })
    }
}

type Waiter = std::pin::Pin<Box<dyn std::future::Future<Output = Option<i32>> + Send>>;

/// Runs `work` on a thread of its own; the receiver gets its result (an error when the thread
/// could not start, which is logged).
fn on_own_thread<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> tokio::sync::oneshot::Receiver<T> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let _ = reply.send(work());
        });
    if let Err(error) = started {
        tracing::warn!(thread = name, %error, "cannot start a thread for a job");
    }
    answer
}

fn no_such_job(id: &str) -> JobError {
    JobError::NoSuchJob(id.to_owned())
}

/// Why a job operation failed; its text is what the job tool tells the model.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The session runs its limit of jobs.
    #[error(
        "This session already runs {0} background jobs, its limit (`jobs_per_session` in \
         config.toml's [limits]). Wait for one or kill one with the job tool first."
    )]
    SessionLimit(usize),
    /// The daemon runs its limit of jobs.
    #[error(
        "The daemon already runs {0} background jobs, its limit (`jobs` in config.toml's \
         [limits]). Wait for one or kill one with the job tool first."
    )]
    DaemonLimit(usize),
    /// No such job of the session.
    #[error("No job {0} in this session. The job tool's `list` shows the session's jobs.")]
    NoSuchJob(String),
    /// The job's input is closed.
    #[error("Job {0} has ended; its stdin is closed.")]
    StdinClosed(String),
    /// Writing to the job's input failed.
    #[error("cannot write to job {id}: {source}")]
    Write {
        /// The job.
        id: String,
        /// Why.
        source: std::io::Error,
    },
    /// The output file could not be made.
    #[error("cannot create the job's output file: {0}")]
    OutputFile(String),
    /// The process could not be started (the program and the reason).
    #[error("cannot start the job: {0}")]
    Start(String),
    /// The output file is gone.
    #[error("the job's output file is gone (its session's artifacts were deleted)")]
    OutputGone,
    /// The output file could not be read.
    #[error("cannot read the job's output: {0}")]
    Output(#[source] std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] pi_store::StoreError),
    /// What was wrong with the job tool's call (its action, a missing argument).
    #[error("{0}")]
    Call(String),
}

/// Kills `job`'s group if it runs; waits for its end. Whether it was running.
async fn kill_job(job: &Job) -> bool {
    if !signal_kill(job) {
        return false;
    }
    let mut end = job.end.subscribe();
    let _ = tokio::time::timeout(Duration::from_secs(5), end.wait_for(Option::is_some)).await;
    true
}

/// Sends SIGKILL to `job`'s group if it runs; whether it did.
fn signal_kill(job: &Job) -> bool {
    if job.end.borrow().is_some() {
        return false;
    }
    job.killing.store(true, Ordering::SeqCst);
    if let Some(pid) = job.pid {
        pi_tools::spawn::kill_group(pid);
    }
    true
}

fn info_of_row(row: &JobRow, pid: Option<u32>) -> JobInfo {
    JobInfo {
        id: row.id.clone(),
        session_id: row.session_id.clone(),
        command: row.command.clone(),
        cwd: row.cwd.clone(),
        state: row.state.clone(),
        exit_code: row.exit_code.map(|code| code as i32),
        pid,
        tty: row.tty,
        started_at: row.started_at,
        ended_at: row.ended_at,
        output_bytes: std::fs::metadata(&row.spool).map_or(0, |meta| meta.len()),
    }
}

/// The output file from `start`: at most [`MAX_READ_BYTES`] (the newest), as text.
fn read_from(path: &Path, start: u64, tty: bool) -> Result<JobOutput, JobError> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(JobError::OutputGone);
        }
        Err(error) => return Err(JobError::Output(error)),
    };
    let total = file.metadata().map_err(JobError::Output)?.len();
    let start = start.min(total);
    let from = start.max(total.saturating_sub(MAX_READ_BYTES));
    file.seek(SeekFrom::Start(from)).map_err(JobError::Output)?;
    let mut bytes = Vec::new();
    file.take(total - from)
        .read_to_end(&mut bytes)
        .map_err(JobError::Output)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = if tty || text.contains('\u{1b}') {
        pi_tools::output::sanitize(&text)
    } else {
        text.into_owned()
    };
    Ok(JobOutput {
        text,
        skipped: from - start,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages the e2e suite does not reach (`pools.rs` checks the session limit and an
    /// unknown job): each says what happened and what to do.
    #[test]
    fn the_other_job_errors_say_what_to_do() {
        assert_eq!(
            JobError::DaemonLimit(64).to_string(),
            "The daemon already runs 64 background jobs, its limit (`jobs` in config.toml's \
             [limits]). Wait for one or kill one with the job tool first."
        );
        assert_eq!(
            JobError::StdinClosed("job-1".to_owned()).to_string(),
            "Job job-1 has ended; its stdin is closed."
        );
        assert_eq!(
            JobError::OutputGone.to_string(),
            "the job's output file is gone (its session's artifacts were deleted)"
        );
        let broken = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(
            JobError::Write {
                id: "job-1".to_owned(),
                source: broken,
            }
            .to_string(),
            "cannot write to job job-1: broken pipe"
        );
        assert_eq!(
            JobError::NoSuchJob("job-2".to_owned()).to_string(),
            "No job job-2 in this session. The job tool's `list` shows the session's jobs."
        );
    }
}
