//! The kernel pool: persistent Python kernels for the `python` tool, one per session and
//! interpreter, speaking the Jupyter wire protocol (ZeroMQ, `jupyter-zmq-client`) to a real
//! `ipykernel`.
//!
//! A kernel is `<interpreter> -m ipykernel_launcher -f <connection file>` in the session's
//! directory and environment, under the guard that takes it down with the daemon
//! (`children.rs`). The pool keeps at most `limits.max` kernels: starting one more stops the
//! least recently used idle kernel; a kernel idle longer than `limits.idle` is stopped. A
//! kernel that died (killed, crashed) is started again on the next cell, and the tool says
//! its state was lost.
//!
//! A cell's text output goes through the same tail window as `bash` (everything past 50 KB
//! or 2000 lines spills to an artifact), so the daemon's memory does not grow with a cell's
//! output.

pub mod tool;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use jupyter_protocol::{
    ConnectionInfo, ExecuteRequest, ExecutionState, InterruptRequest, JupyterMessage,
    JupyterMessageContent, KernelInfoRequest, MediaType, ReplyStatus, ShutdownRequest, Transport,
};
use jupyter_zmq_client::{ClientControlConnection, ClientIoPubConnection, ClientShellConnection};
use pi_protocol::v1::KernelInfo;
use tokio::sync::watch;

use pi_tools::spawn::Spawner;

/// How long a kernel may take to start and answer.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Run in every kernel at start: stdout and stderr flush every 1 MB, so a cell that prints a
/// lot sends many bounded `stream` messages instead of one per 0.2 s of any size (the daemon
/// holds at most one message at a time).
const BOUNDED_OUTPUT: &str = r#"import sys


def _pi_bound(stream, limit=1 << 20):
    write, flush = stream.write, stream.flush
    pending = [0]

    def bounded(text):
        count = write(text)
        pending[0] += len(text)
        if pending[0] > limit:
            pending[0] = 0
            flush()
        return count

    stream.write = bounded


for _pi_stream in (sys.stdout, sys.stderr):
    try:
        _pi_bound(_pi_stream)
    except Exception:
        pass
del _pi_bound, _pi_stream
"#;

/// How long a session waits for a kernel of the full pool to become idle.
const ROOM_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an interrupted cell may take to stop.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);

/// The pool's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelLimits {
    /// Kernels alive at once.
    pub max: usize,
    /// Idle time after which a kernel stops.
    pub idle: Duration,
}

/// Who asks for a kernel, and where.
#[derive(Clone, Debug)]
pub struct KernelPlace {
    /// The session.
    pub session_id: String,
    /// Its directory.
    pub cwd: PathBuf,
    /// Its environment.
    pub env: std::sync::Arc<BTreeMap<String, String>>,
}

/// What a cell produced besides its text (which goes to the caller's output window).
#[derive(Debug, Default)]
pub struct CellOutput {
    /// PNG images (base64) the cell displayed.
    pub images: Vec<String>,
    /// The error, when the cell raised one: `Name: value`.
    pub error: Option<String>,
    /// Why the cell stopped early (`interrupted`, the kernel died), when so.
    pub stopped: Option<String>,
    /// The kernel was (re)started for this cell, losing earlier state (not on a first
    /// start).
    pub restarted: Option<String>,
}

/// Receives a cell's text output (streams, results, tracebacks) as it arrives: a tail in
/// memory, everything past the limits in an artifact; and is told the output so far.
pub struct TextSink<'a, 'w> {
    /// The output window.
    pub window: &'a mut pi_tools::output::OutputWindow<'w>,
    /// Progress: the output so far (throttled).
    pub on_output: &'a mut (dyn FnMut(pi_tools::output::TailSnapshot) + Send),
}

/// Least time between two progress reports.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

struct Kernel {
    session_id: String,
    interpreter: PathBuf,
    pid: Option<u32>,
    shell: tokio::sync::Mutex<ClientShellConnection>,
    iopub: tokio::sync::Mutex<ClientIoPubConnection>,
    control: tokio::sync::Mutex<ClientControlConnection>,
    connection_file: PathBuf,
    // The kernel's Unix sockets are `<prefix>-1` ... `<prefix>-5`.
    ipc_prefix: String,
    // `Some(reason)` once the process is gone.
    exited: watch::Sender<Option<String>>,
    busy: AtomicBool,
    last_used: Mutex<Instant>,
    last_used_at: AtomicU64,
    executions: AtomicU64,
    starts: u32,
}

/// A kernel's session and interpreter.
type KernelKey = (String, PathBuf);

/// The daemon's Python kernels.
pub struct KernelPool {
    spawner: Spawner,
    limits: KernelLimits,
    kernels: Mutex<HashMap<(String, PathBuf), Arc<Kernel>>>,
    // Kernel processes not in the map: being started, or removed and being stopped. Counted
    // against the limit with the map, under the map's lock.
    starting: Mutex<usize>,
    // How often each (session, interpreter) was started; a restart is start > 1.
    starts: Mutex<HashMap<KernelKey, (u32, Option<String>)>>,
    reaper: OnceLock<()>,
    // Notified whenever a cell ends (a kernel may be evicted now).
    idle: tokio::sync::Notify,
}

impl std::fmt::Debug for KernelPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelPool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl KernelPool {
    /// A pool starting kernels through `children`.
    pub fn new(spawner: Spawner, limits: KernelLimits) -> KernelPool {
        KernelPool {
            spawner,
            limits,
            kernels: Mutex::new(HashMap::new()),
            starting: Mutex::new(0),
            starts: Mutex::new(HashMap::new()),
            reaper: OnceLock::new(),
            idle: tokio::sync::Notify::new(),
        }
    }

    fn kernels(&self) -> std::sync::MutexGuard<'_, HashMap<(String, PathBuf), Arc<Kernel>>> {
        self.kernels.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The limits.
    pub fn limits(&self) -> KernelLimits {
        self.limits
    }

    /// Live kernels.
    pub fn count(&self) -> usize {
        self.kernels().len()
    }

    /// Live kernels as `kernel/list` shows them, least recently used first.
    pub fn list(&self) -> Vec<KernelInfo> {
        let mut kernels: Vec<Arc<Kernel>> = self.kernels().values().cloned().collect();
        kernels.sort_by_key(|kernel| {
            *kernel
                .last_used
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        });
        kernels
            .iter()
            .map(|kernel| KernelInfo {
                session_id: kernel.session_id.clone(),
                interpreter: kernel.interpreter.display().to_string(),
                state: if kernel.busy.load(Ordering::SeqCst) {
                    "busy".to_owned()
                } else {
                    "idle".to_owned()
                },
                pid: kernel.pid,
                executions: kernel.executions.load(Ordering::SeqCst),
                starts: kernel.starts,
                last_used_at: kernel.last_used_at.load(Ordering::SeqCst) as i64,
            })
            .collect()
    }

    /// The interpreter for a session in `cwd`: the project's `.venv`, else `python3` on the
    /// session's `PATH`.
    pub fn interpreter(cwd: &Path, env: &BTreeMap<String, String>) -> Result<PathBuf, KernelError> {
        let venv = cwd.join(".venv/bin/python");
        if venv.is_file() {
            return Ok(venv);
        }
        env.get("PATH")
            .into_iter()
            .flat_map(|path| path.split(':'))
            .map(|dir| Path::new(dir).join("python3"))
            .find(|candidate| candidate.is_file())
            .ok_or(KernelError::NoInterpreter)
    }

    /// Runs `code` in the session's kernel (started, or restarted when `reset`), streaming
    /// text to `sink`; stops it at `timeout` or `cancel` with an interrupt.
    pub async fn execute(
        self: &Arc<Self>,
        place: &KernelPlace,
        code: &str,
        reset: bool,
        timeout: Option<Duration>,
        cancel: &tokio_util::sync::CancellationToken,
        sink: TextSink<'_, '_>,
    ) -> Result<CellOutput, KernelError> {
        let interpreter = Self::interpreter(&place.cwd, &place.env)?;
        let key = (place.session_id.clone(), interpreter.clone());
        let removed = if reset {
            self.take(std::slice::from_ref(&key))
        } else {
            Vec::new()
        };
        for kernel in removed {
            self.retire(&kernel).await;
            self.note_start_reason(&key, "the kernel was reset as asked");
        }
        // `live` and `start` hand the kernel over marked busy.
        let kernel = match self.live(&key) {
            Some(kernel) => kernel,
            None => self.start(place, &interpreter).await?,
        };
        let restarted = self
            .starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&key)
            .and_then(|(_, reason)| reason.take());
        let result = {
            let _busy = Busy {
                kernel: &kernel,
                idle: &self.idle,
            };
            run_cell(&kernel, code, timeout, cancel, sink).await
        };
        kernel.executions.fetch_add(1, Ordering::SeqCst);
        touch(&kernel);
        let mut output = result?;
        output.restarted = restarted;
        if let Some(reason) = kernel.exited.borrow().clone() {
            // Died during the cell: the next cell starts a new one.
            self.kernels().remove(&key);
            self.note_start_reason(&key, &reason);
            output.stopped = Some(format!(
                "{reason}; the next cell starts a new kernel (all variables and imports are lost)"
            ));
        }
        Ok(output)
    }

    fn note_start_reason(&self, key: &(String, PathBuf), reason: &str) {
        self.starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.clone())
            .or_insert((0, None))
            .1 = Some(reason.to_owned());
    }

    /// The live kernel of `key`; a dead one is dropped (and the next start says why).
    fn live(&self, key: &(String, PathBuf)) -> Option<Arc<Kernel>> {
        let mut kernels = self.kernels();
        let kernel = kernels.get(key)?.clone();
        let exited = kernel.exited.borrow().clone();
        match exited {
            None => {
                kernel.busy.store(true, Ordering::SeqCst);
                Some(kernel)
            }
            Some(reason) => {
                kernels.remove(key);
                drop(kernels);
                self.note_start_reason(key, &reason);
                None
            }
        }
    }

    /// Interrupts the session's running cells (`session/abort`).
    pub async fn interrupt_session(&self, session_id: &str) {
        let kernels: Vec<Arc<Kernel>> = self
            .kernels()
            .values()
            .filter(|kernel| kernel.session_id == session_id && kernel.busy.load(Ordering::SeqCst))
            .cloned()
            .collect();
        for kernel in kernels {
            interrupt(&kernel).await;
        }
    }

    /// Stops a deleted session's kernels.
    pub async fn session_deleted(&self, session_id: &str) {
        let keys: Vec<KernelKey> = self
            .kernels()
            .keys()
            .filter(|(session, _)| session == session_id)
            .cloned()
            .collect();
        for kernel in self.take(&keys) {
            self.retire(&kernel).await;
        }
    }

    /// Removes the kernels of `keys` from the map, their slots still counted until
    /// [`KernelPool::retire`] has stopped them.
    fn take(&self, keys: &[KernelKey]) -> Vec<Arc<Kernel>> {
        let mut kernels = self.kernels();
        let mut outside = self.starting.lock().unwrap_or_else(PoisonError::into_inner);
        let taken: Vec<Arc<Kernel>> = keys.iter().filter_map(|key| kernels.remove(key)).collect();
        *outside += taken.len();
        taken
    }

    /// Stops a kernel [`KernelPool::take`] removed and frees its slot.
    async fn retire(&self, kernel: &Kernel) {
        stop(kernel).await;
        tracing::debug!(pid = kernel.pid, exited = ?kernel.exited.borrow().clone(), "kernel retired");
        *self.starting.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        self.idle.notify_waiters();
    }

    /// Stops every kernel (the daemon stops).
    pub async fn shutdown(&self) {
        let kernels: Vec<Arc<Kernel>> = self.kernels().drain().map(|(_, kernel)| kernel).collect();
        for kernel in kernels {
            stop(&kernel).await;
        }
    }

    /// Makes room for one more kernel: stops the least recently used idle one when the pool
    /// is full; an error when every kernel is busy.
    async fn make_room(&self) -> Result<(), KernelError> {
        loop {
            // Registered before looking, so a cell ending in between is not missed.
            let idle = self.idle.notified();
            let removed = {
                let mut kernels = self.kernels();
                let mut starting = self.starting.lock().unwrap_or_else(PoisonError::into_inner);
                if kernels.len() + *starting < self.limits.max {
                    *starting += 1;
                    tracing::debug!(
                        live = kernels.len(),
                        outside = *starting,
                        "kernel slot taken"
                    );
                    return Ok(());
                }
                // The least recently used idle kernel; removed under the lock that `live`
                // takes to mark a kernel busy, so it cannot start a cell meanwhile.
                let victim = kernels
                    .iter()
                    .filter(|(_, kernel)| !kernel.busy.load(Ordering::SeqCst))
                    .min_by_key(|(_, kernel)| {
                        *kernel
                            .last_used
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                    })
                    .map(|(key, _)| key.clone());
                let removed =
                    victim.and_then(|key| kernels.remove(&key).map(|kernel| (key, kernel)));
                // Its process counts until it is gone.
                *starting += usize::from(removed.is_some());
                removed
            };
            let Some((key, kernel)) = removed else {
                // Every kernel is busy: wait for a cell to end.
                if tokio::time::timeout(ROOM_TIMEOUT, idle).await.is_err() {
                    return Err(KernelError::AllBusy {
                        limit: self.limits.max,
                        seconds: ROOM_TIMEOUT.as_secs(),
                    });
                }
                continue;
            };
            {
                tracing::info!(
                    session = kernel.session_id,
                    "evicting the least recently used kernel"
                );
                self.note_start_reason(
                    &key,
                    "the kernel was stopped to make room for another session's (the pool's limit)",
                );
                self.retire(&kernel).await;
            }
        }
    }

    async fn start(
        self: &Arc<Self>,
        place: &KernelPlace,
        interpreter: &Path,
    ) -> Result<Arc<Kernel>, KernelError> {
        self.make_room().await?;
        let started = self.spawn(place, interpreter).await;
        // The slot and the kernel change places under both locks: never one too many.
        let mut kernels = self.kernels();
        *self.starting.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        let kernel = Arc::new(started?);
        kernel.busy.store(true, Ordering::SeqCst);
        kernels.insert(
            (place.session_id.clone(), interpreter.to_path_buf()),
            kernel.clone(),
        );
        drop(kernels);
        self.spawn_reaper();
        Ok(kernel)
    }

    /// Stops kernels idle longer than the limit, every few seconds while any live.
    fn spawn_reaper(self: &Arc<Self>) {
        if self.reaper.set(()).is_err() {
            return;
        }
        let pool = Arc::downgrade(self);
        let every =
            (self.limits.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(pool) = pool.upgrade() else {
                    return;
                };
                // Chosen and removed under the lock `live` takes to mark a kernel busy.
                let idle: Vec<(KernelKey, Arc<Kernel>)> = {
                    let mut kernels = pool.kernels();
                    let keys: Vec<KernelKey> = kernels
                        .iter()
                        .filter(|(_, kernel)| {
                            !kernel.busy.load(Ordering::SeqCst)
                                && kernel
                                    .last_used
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .elapsed()
                                    >= pool.limits.idle
                        })
                        .map(|(key, _)| key.clone())
                        .collect();
                    let removed: Vec<(KernelKey, Arc<Kernel>)> = keys
                        .into_iter()
                        .filter_map(|key| kernels.remove(&key).map(|kernel| (key, kernel)))
                        .collect();
                    *pool.starting.lock().unwrap_or_else(PoisonError::into_inner) += removed.len();
                    removed
                };
                for (key, kernel) in idle {
                    pool.note_start_reason(
                        &key,
                        &format!(
                            "the kernel was stopped after {} s idle",
                            pool.limits.idle.as_secs()
                        ),
                    );
                    pool.retire(&kernel).await;
                }
            }
        });
    }

    async fn spawn(&self, place: &KernelPlace, interpreter: &Path) -> Result<Kernel, KernelError> {
        check_ipykernel(&self.spawner, place, interpreter).await?;
        let failed = |why: String| KernelError::Start {
            interpreter: interpreter.to_path_buf(),
            why,
            stderr: String::new(),
        };
        let mut key_bytes = [0u8; 16];
        getrandom::fill(&mut key_bytes)
            .map_err(|error| failed(format!("no randomness: {error}")))?;
        // Unix sockets in a private directory, not TCP ports: no port can be taken between
        // choosing it and the kernel binding it, and no other user can connect.
        let runtime_dir = std::env::temp_dir().join(format!(
            "pid-kernels-{}",
            rustix::process::getuid().as_raw()
        ));
        pi_tools::private_dir::ensure(&runtime_dir).map_err(|error| failed(error.to_string()))?;
        let info = ConnectionInfo {
            ip: runtime_dir
                .join(format!("k-{}", hex(&key_bytes[..6])))
                .display()
                .to_string(),
            transport: Transport::IPC,
            shell_port: 1,
            iopub_port: 2,
            stdin_port: 3,
            control_port: 4,
            hb_port: 5,
            key: hex(&key_bytes),
            signature_scheme: "hmac-sha256".to_owned(),
            kernel_name: Some("python3".to_owned()),
        };
        let connection_file = runtime_dir.join(format!("kernel-{}.json", hex(&key_bytes[..8])));
        let json = serde_json::to_vec(&info).map_err(|error| failed(error.to_string()))?;
        let cannot_write = |path: &Path, error: std::io::Error| {
            failed(format!("cannot write {}: {error}", path.display()))
        };
        write_private(&connection_file, &json)
            .map_err(|error| cannot_write(&connection_file, error))?;
        let startup = runtime_dir.join("pi_bounded_output.py");
        write_private(&startup, BOUNDED_OUTPUT.as_bytes())
            .map_err(|error| cannot_write(&startup, error))?;
        let args = vec![
            "-m".to_owned(),
            "ipykernel_launcher".to_owned(),
            "-f".to_owned(),
            connection_file.display().to_string(),
            format!("--IPKernelApp.exec_files={}", startup.display()),
        ];
        let mut command = self.spawner.server_command(interpreter, &args, None);
        command
            .current_dir(&place.cwd)
            .env_clear()
            .envs(place.env.iter())
            .env("PYDEVD_DISABLE_FILE_VALIDATION", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(false);
        let mut child = self
            .spawner
            .spawn_on_thread(move || command.spawn())
            .await
            .map_err(|error| failed(error.to_string()))?
            .map_err(|error| failed(format!("cannot start {}: {error}", interpreter.display())))?;
        let pid = child.id();
        // The kernel's stderr: kept (the last lines) to explain a crash.
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        if let Some(mut stderr) = child.stderr.take() {
            let tail = stderr_tail.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt as _;
                let mut buffer = vec![0u8; 8192];
                while let Ok(count) = stderr.read(&mut buffer).await {
                    if count == 0 {
                        break;
                    }
                    let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                    tail.push_str(&String::from_utf8_lossy(&buffer[..count]));
                    if tail.len() > 4096 {
                        let cut = tail.len() - 4096;
                        let cut = (cut..tail.len())
                            .find(|at| tail.is_char_boundary(*at))
                            .unwrap_or(0);
                        tail.replace_range(..cut, "");
                    }
                }
            });
        }
        let exited = watch::channel(None::<String>).0;
        let watcher = exited.clone();
        let status_tail = stderr_tail.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            let reason = match status {
                Ok(status) => match status.code() {
                    Some(code) => format!("the kernel exited (code {code})"),
                    None => "the kernel was killed".to_owned(),
                },
                Err(error) => format!("the kernel was lost ({error})"),
            };
            let stderr = status_tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if !stderr.trim().is_empty() {
                tracing::info!(stderr = stderr.trim(), "{reason}");
            }
            watcher.send_replace(Some(reason));
        });
        let client_session = format!("pid-{}", hex(&key_bytes[8..]));
        let connect = async {
            let identity = jupyter_zmq_client::peer_identity_for_session(&client_session)
                .map_err(|error| error.to_string())?;
            let shell = jupyter_zmq_client::create_client_shell_connection_with_identity(
                &info,
                &client_session,
                identity,
            )
            .await
            .map_err(|error| error.to_string())?;
            let iopub =
                jupyter_zmq_client::create_client_iopub_connection(&info, "", &client_session)
                    .await
                    .map_err(|error| error.to_string())?;
            let control =
                jupyter_zmq_client::create_client_control_connection(&info, &client_session)
                    .await
                    .map_err(|error| error.to_string())?;
            Ok::<_, String>((shell, iopub, control))
        };
        let mut exited_early = exited.subscribe();
        let connected = tokio::select! {
            connected = connect => connected,
            reason = exit_reason(&mut exited_early) => Err(reason),
        };
        let (shell, iopub, control) = match connected {
            Ok(sockets) => sockets,
            Err(error) => {
                if let Some(pid) = pid {
                    pi_tools::spawn::kill_group(pid);
                }
                let _ = std::fs::remove_file(&connection_file);
                let stderr = stderr_tail
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                return Err(KernelError::Start {
                    interpreter: interpreter.to_path_buf(),
                    why: format!("cannot connect to it ({error})"),
                    stderr,
                });
            }
        };
        let starts = {
            let mut starts = self.starts.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = starts
                .entry((place.session_id.clone(), interpreter.to_path_buf()))
                .or_insert((0, None));
            entry.0 += 1;
            entry.0
        };
        let kernel = Kernel {
            session_id: place.session_id.clone(),
            interpreter: interpreter.to_path_buf(),
            pid,
            shell: tokio::sync::Mutex::new(shell),
            iopub: tokio::sync::Mutex::new(iopub),
            control: tokio::sync::Mutex::new(control),
            connection_file,
            ipc_prefix: info.ip.clone(),
            exited,
            busy: AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
            last_used_at: AtomicU64::new(pi_util::time::now_millis() as u64),
            executions: AtomicU64::new(0),
            starts,
        };
        let ready = tokio::time::timeout(START_TIMEOUT, wait_ready(&kernel)).await;
        match ready {
            Ok(Ok(())) => Ok(kernel),
            failed => {
                stop(&kernel).await;
                let stderr = stderr_tail
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let why = match failed {
                    Ok(Err(error)) => error.to_string(),
                    _ => format!("it did not answer within {} s", START_TIMEOUT.as_secs()),
                };
                Err(KernelError::Start {
                    interpreter: interpreter.to_path_buf(),
                    why,
                    stderr,
                })
            }
        }
    }
}

/// Why the `python` tool could not run a cell; its text is what the tool tells the model.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// Neither the project's `.venv` nor `python3` on the session's `PATH`.
    #[error(
        "No Python interpreter: the project has no .venv and python3 is not on the session's \
         PATH. Install Python 3 or create a .venv in the project."
    )]
    NoInterpreter,
    /// The interpreter has no ipykernel.
    #[error(
        "ipykernel is not installed for {python}, so the python tool cannot start a kernel. \
         Install it with:\n  {python} -m pip install ipykernel",
        python = .0.display()
    )]
    NoIpykernel(PathBuf),
    /// Every kernel of the pool stayed busy.
    #[error(
        "All {limit} Python kernels stayed busy for {seconds} s (the limit is `kernels` in \
         config.toml's [limits]). Try again when a cell finishes."
    )]
    AllBusy {
        /// The pool's limit.
        limit: usize,
        /// How long the cell waited.
        seconds: u64,
    },
    /// The kernel did not start: why, and the last lines of its stderr.
    #[error(
        "The Python kernel ({}) did not start: {why}{}",
        interpreter.display(),
        stderr_lines(stderr)
    )]
    Start {
        /// The interpreter.
        interpreter: PathBuf,
        /// What went wrong.
        why: String,
        /// The end of the kernel's stderr (may be empty).
        stderr: String,
    },
    /// The kernel stopped answering (the reason, as the kernel's exit or the transport says).
    #[error("{0}")]
    Lost(String),
    /// The cell's output could not be kept.
    #[error("cannot keep the cell's output: {0}")]
    Output(#[source] pi_tools::ArtifactError),
}

/// `stderr` as lines after an error message (nothing when empty).
fn stderr_lines(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\n{}", stderr.trim())
    }
}

/// Marks a kernel idle again (and tells those waiting for room) when the cell ends, also
/// when its future is dropped.
struct Busy<'a> {
    kernel: &'a Kernel,
    idle: &'a tokio::sync::Notify,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.kernel.busy.store(false, Ordering::SeqCst);
        self.idle.notify_waiters();
    }
}

fn touch(kernel: &Kernel) {
    *kernel
        .last_used
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    kernel
        .last_used_at
        .store(pi_util::time::now_millis() as u64, Ordering::SeqCst);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

/// Whether `interpreter` has ipykernel; an error with the exact install command if not.
async fn check_ipykernel(
    spawner: &Spawner,
    place: &KernelPlace,
    interpreter: &Path,
) -> Result<(), KernelError> {
    let spec = pi_tools::spawn::SpawnSpec {
        program: interpreter.to_path_buf(),
        args: vec!["-c".into(), "import ipykernel".into()],
        cwd: place.cwd.clone(),
        env: (*place.env).clone(),
    };
    let output = spawner
        .output(&spec)
        .await
        .map_err(|error| KernelError::Start {
            interpreter: interpreter.to_path_buf(),
            why: format!("cannot run {}: {error}", interpreter.display()),
            stderr: String::new(),
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(KernelError::NoIpykernel(interpreter.to_path_buf()))
}

/// Waits until the kernel answers on shell and its status reaches our iopub subscription
/// (a subscription takes a moment to take effect; messages before it are lost).
async fn wait_ready(kernel: &Kernel) -> Result<(), KernelError> {
    let mut exited = kernel.exited.subscribe();
    loop {
        let request: JupyterMessage = KernelInfoRequest {}.into();
        let mut shell = kernel.shell.lock().await;
        shell
            .send(request)
            .await
            .map_err(|error| KernelError::Lost(format!("cannot reach the kernel: {error}")))?;
        tokio::select! {
            reply = shell.read() => {
                reply.map_err(|error| {
                    KernelError::Lost(format!("the kernel's answer was unreadable: {error}"))
                })?;
            }
            reason = exit_reason(&mut exited) => {
                return Err(KernelError::Lost(reason));
            }
        }
        drop(shell);
        let mut iopub = kernel.iopub.lock().await;
        if tokio::time::timeout(Duration::from_millis(200), iopub.read())
            .await
            .is_ok()
        {
            // Drain the rest of that request's status messages.
            while tokio::time::timeout(Duration::from_millis(50), iopub.read())
                .await
                .is_ok()
            {}
            return Ok(());
        }
    }
}

/// Waits for the kernel's process to end; why it ended.
async fn exit_reason(exited: &mut watch::Receiver<Option<String>>) -> String {
    match exited.wait_for(Option::is_some).await {
        Ok(reason) => reason.clone().unwrap_or_default(),
        Err(_) => "the kernel was lost".to_owned(),
    }
}

async fn interrupt(kernel: &Kernel) {
    let request: JupyterMessage = InterruptRequest {}.into();
    let mut control = kernel.control.lock().await;
    if let Err(error) = control.send(request).await {
        tracing::warn!(%error, "cannot interrupt a kernel");
    }
}

/// Asks the kernel to shut down, then kills its group.
async fn stop(kernel: &Kernel) {
    if kernel.exited.borrow().is_none() {
        let request: JupyterMessage = ShutdownRequest { restart: false }.into();
        if let Ok(mut control) =
            tokio::time::timeout(Duration::from_millis(500), kernel.control.lock()).await
        {
            let _ = control.send(request).await;
        }
        let mut exited = kernel.exited.subscribe();
        if tokio::time::timeout(Duration::from_secs(2), exited.wait_for(Option::is_some))
            .await
            .is_err()
            && let Some(pid) = kernel.pid
        {
            pi_tools::spawn::kill_group(pid);
            // Gone (reaped) before the slot is given to another kernel.
            let _ = tokio::time::timeout(Duration::from_secs(5), exited.wait_for(Option::is_some))
                .await;
        }
    }
    let _ = std::fs::remove_file(&kernel.connection_file);
    for port in 1..=5 {
        let _ = std::fs::remove_file(format!("{}-{port}", kernel.ipc_prefix));
    }
}

/// Runs one cell: sends it, collects its iopub output until the kernel is idle again,
/// interrupting it at `timeout` or `cancel`.
async fn run_cell(
    kernel: &Kernel,
    code: &str,
    timeout: Option<Duration>,
    cancel: &tokio_util::sync::CancellationToken,
    sink: TextSink<'_, '_>,
) -> Result<CellOutput, KernelError> {
    let mut last_progress: Option<Instant> = None;
    let mut request = ExecuteRequest::new(code.to_owned());
    request.allow_stdin = false;
    request.store_history = true;
    let message: JupyterMessage = request.into();
    let msg_id = message.header.msg_id.clone();
    let mut iopub = kernel.iopub.lock().await;
    {
        let mut shell = kernel.shell.lock().await;
        shell.send(message).await.map_err(|error| {
            KernelError::Lost(format!("cannot send the cell to the kernel: {error}"))
        })?;
    }
    let mut output = CellOutput::default();
    let mut exited = kernel.exited.subscribe();
    let deadline = timeout.map(|timeout| tokio::time::Instant::now() + timeout);
    let mut interrupted_at: Option<tokio::time::Instant> = None;
    loop {
        let until_deadline = async {
            match (deadline, interrupted_at) {
                (_, Some(at)) => tokio::time::sleep_until(at + INTERRUPT_GRACE).await,
                (Some(deadline), None) => tokio::time::sleep_until(deadline).await,
                (None, None) => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            reason = exit_reason(&mut exited) => {
                output.stopped = Some(reason);
                return Ok(output);
            }
            () = cancel.cancelled(), if interrupted_at.is_none() => {
                interrupt(kernel).await;
                interrupted_at = Some(tokio::time::Instant::now());
                output.stopped = Some("interrupted (the run was aborted)".to_owned());
            }
            () = until_deadline => {
                if interrupted_at.is_some() {
                    // The interrupt did not stop it: the kernel goes.
                    if let Some(pid) = kernel.pid {
                        pi_tools::spawn::kill_group(pid);
                    }
                    continue;
                }
                interrupt(kernel).await;
                interrupted_at = Some(tokio::time::Instant::now());
                output.stopped = Some(format!(
                    "timed out after {} s and was interrupted",
                    timeout.unwrap_or_default().as_secs_f64()
                ));
            }
            message = iopub.read() => {
                let message = message.map_err(|error| {
                    KernelError::Lost(format!("the kernel's output was unreadable: {error}"))
                })?;
                if message.parent_header.as_ref().is_none_or(|parent| parent.msg_id != msg_id) {
                    continue;
                }
                let text = match message.content {
                    JupyterMessageContent::StreamContent(stream) => Some(stream.text),
                    JupyterMessageContent::ExecuteResult(result) => {
                        add_media(&mut output, &result.data.content)
                    }
                    JupyterMessageContent::DisplayData(display) => {
                        add_media(&mut output, &display.data.content)
                    }
                    JupyterMessageContent::ErrorOutput(error) => {
                        output.error = Some(format!("{}: {}", error.ename, error.evalue));
                        Some(trim_traceback(&error.traceback))
                    }
                    JupyterMessageContent::Status(status)
                        if status.execution_state == ExecutionState::Idle =>
                    {
                        break;
                    }
                    _ => None,
                };
                if let Some(text) = text {
                    sink.window
                        .push(text.as_bytes())
                        .await
                        .map_err(KernelError::Output)?;
                    if last_progress.is_none_or(|last| last.elapsed() >= PROGRESS_INTERVAL) {
                        last_progress = Some(Instant::now());
                        (sink.on_output)(sink.window.snapshot());
                    }
                }
            }
        }
    }
    // The reply on shell (its status; the outputs came on iopub).
    let mut shell = kernel.shell.lock().await;
    if let Ok(Ok(reply)) = tokio::time::timeout(Duration::from_secs(5), shell.read()).await
        && let JupyterMessageContent::ExecuteReply(reply) = reply.content
        && reply.status == ReplyStatus::Aborted
        && output.stopped.is_none()
    {
        output.stopped = Some("the kernel aborted the cell".to_owned());
    }
    Ok(output)
}

/// A result or display: an image the model can see (kept in `output`), else its plain text.
fn add_media(output: &mut CellOutput, media: &[MediaType]) -> Option<String> {
    if let Some(png) = media.iter().find_map(|item| match item {
        MediaType::Png(data) => Some(data.replace('\n', "")),
        _ => None,
    }) {
        output.images.push(png);
        return None;
    }
    media.iter().find_map(|item| match item {
        MediaType::Plain(text) => Some(format!("{text}\n")),
        _ => None,
    })
}

/// A traceback without colours, at most its last 30 lines.
fn trim_traceback(traceback: &[String]) -> String {
    let text = pi_tools::output::sanitize(&traceback.join("\n"));
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len().saturating_sub(30);
    let mut trimmed = String::new();
    if keep > 0 {
        trimmed.push_str(&format!("[{keep} earlier traceback lines skipped]\n"));
    }
    trimmed.push_str(&lines[keep..].join("\n"));
    trimmed.push('\n');
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_is_the_projects_venv_or_python3_on_path_or_a_clear_error() {
        let project = tempfile::tempdir().unwrap();
        let no_path = BTreeMap::new();
        let error = KernelPool::interpreter(project.path(), &no_path).unwrap_err();
        assert!(matches!(error, KernelError::NoInterpreter));
        assert_eq!(
            error.to_string(),
            "No Python interpreter: the project has no .venv and python3 is not on the \
             session's PATH. Install Python 3 or create a .venv in the project."
        );
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(bin.path().join("python3"), "").unwrap();
        let path = BTreeMap::from([(
            "PATH".to_owned(),
            format!("/nowhere:{}", bin.path().display()),
        )]);
        assert_eq!(
            KernelPool::interpreter(project.path(), &path).unwrap(),
            bin.path().join("python3")
        );
        std::fs::create_dir_all(project.path().join(".venv/bin")).unwrap();
        std::fs::write(project.path().join(".venv/bin/python"), "").unwrap();
        assert_eq!(
            KernelPool::interpreter(project.path(), &path).unwrap(),
            project.path().join(".venv/bin/python")
        );
    }

    #[test]
    fn failures_say_what_happened_and_what_to_do() {
        let python = PathBuf::from("/opt/py/bin/python3");
        assert_eq!(
            KernelError::NoIpykernel(python.clone()).to_string(),
            "ipykernel is not installed for /opt/py/bin/python3, so the python tool cannot \
             start a kernel. Install it with:\n  /opt/py/bin/python3 -m pip install ipykernel"
        );
        assert_eq!(
            KernelError::AllBusy {
                limit: 4,
                seconds: 60
            }
            .to_string(),
            "All 4 Python kernels stayed busy for 60 s (the limit is `kernels` in config.toml's \
             [limits]). Try again when a cell finishes."
        );
        let start = |stderr: &str| KernelError::Start {
            interpreter: python.clone(),
            why: "it did not answer within 30 s".to_owned(),
            stderr: stderr.to_owned(),
        };
        assert_eq!(
            start("  \n").to_string(),
            "The Python kernel (/opt/py/bin/python3) did not start: it did not answer within 30 s"
        );
        assert_eq!(
            start("Traceback …\nImportError: no zmq\n").to_string(),
            "The Python kernel (/opt/py/bin/python3) did not start: it did not answer within \
             30 s\nTraceback …\nImportError: no zmq"
        );
        assert_eq!(
            KernelError::Lost("the kernel exited (code 1)".to_owned()).to_string(),
            "the kernel exited (code 1)"
        );
    }
}
