//! `pi-supervisor`: one supervisor for the child servers the daemon shares between sessions
//! (MCP servers, language servers). A server is a [`Child`]: it knows how to start itself
//! (process, handshake), how to tell that it ended and how to end it; it embeds a
//! [`Supervision`], which holds its life — phase, generation, users, failures, last error —
//! and the [`RestartPolicy`] its pool chose. The provided methods of [`Child`] do the rest,
//! the same way for every kind of server: one start at a time, a start that takes too long
//! aborted, a server that fails started again after a backoff that doubles with each
//! failure in a row (by itself while in use, or at its next use), a circuit breaker after
//! too many failures, users by session, a linger once nobody uses it, and nothing started
//! after the pool closed.
//!
//! Architecture invariant: every phase change happens under the life's lock, with the
//! generation bumped at every start and stop, so a stale start, exit watcher, backoff or
//! linger timer (an older generation) changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// A future a [`Child`] returns, boxed so the trait stays object-free and simple.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Where a server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Starting (waiting out a backoff, the process, the handshake).
    Starting,
    /// Serving.
    Ready,
    /// Not running: never started, stopped, exited or failed.
    Stopped,
}

/// When a failed server starts again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// By itself after the backoff, while a session uses it (MCP servers: runs wait for
    /// their tools).
    WhileUsed,
    /// At its next use, once the backoff has passed (language servers: used per call).
    OnNextUse,
}

/// How a pool's servers are started and restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartPolicy {
    /// How long a start (process, handshake, first listing) may take; a start past it is
    /// aborted and counts as a failure.
    pub start_timeout: Duration,
    /// The wait before the first restart; doubled for each further failure in a row, up to
    /// 32 times.
    pub backoff: Duration,
    /// Failures in a row after which the server is left stopped for `cooldown`.
    pub max_failures: u32,
    /// How long the circuit breaker keeps a failing server stopped.
    pub cooldown: Duration,
    /// A server that ran this long before failing starts its count afresh.
    pub stable_after: Option<Duration>,
    /// When a failed server starts again.
    pub restart: Restart,
    /// The command that restarts a server now (`pictl mcp restart`), named in the breaker's
    /// message.
    pub restart_command: &'static str,
}

impl RestartPolicy {
    /// The wait before the next start after `failures` failures in a row.
    pub fn backoff_after(&self, failures: u32) -> Duration {
        self.backoff * 2u32.pow(failures.saturating_sub(1).min(5))
    }
}

/// What a pool's servers share: the change counter its `*/list` watchers follow, and
/// whether it closed (daemon shutdown: nothing starts any more).
#[derive(Clone, Debug)]
pub struct Pool {
    changes: watch::Sender<u64>,
    closed: Arc<AtomicBool>,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            changes: watch::Sender::new(0),
            closed: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Pool {
    /// Follows changes of what the pool's `*/list` shows.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Announces a change of what `*/list` shows.
    pub fn changed(&self) {
        self.changes.send_modify(|count| *count += 1);
    }

    /// The change counter itself (for what announces changes on its own, like a server's
    /// notification handler).
    pub fn changes(&self) -> &watch::Sender<u64> {
        &self.changes
    }

    /// Closes the pool: no server of it starts any more.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// Whether the pool closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// A server's life, as its supervision keeps it.
#[derive(Debug)]
struct Life<R> {
    running: Option<R>,
    pid: Option<u32>,
    // The sessions using it, each with the names it has for them.
    users: BTreeMap<String, BTreeSet<String>>,
    linger: Duration,
    last_error: Option<String>,
    failures: u32,
    failed_at: Option<Instant>,
    ready_at: Option<Instant>,
    starts: u32,
    // Bumped at every start and stop.
    generation: u64,
}

/// The supervision a server embeds: its phase and life under its pool's policy.
#[derive(Debug)]
pub struct Supervision<R> {
    policy: RestartPolicy,
    pool: Pool,
    phase: watch::Sender<Phase>,
    // A sync mutex, never held across an await.
    life: Mutex<Life<R>>,
}

/// What `*/list` shows of a server's supervision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// `starting`, `ready`, `failed` (stopped after a failure) or `stopped`.
    pub state: &'static str,
    /// Its process, while it runs.
    pub pid: Option<u32>,
    /// The sessions using it.
    pub sessions: Vec<String>,
    /// Every name the sessions give it.
    pub names: BTreeSet<String>,
    /// Its last failure, and what happens next.
    pub last_error: Option<String>,
    /// How many times it was started.
    pub starts: u32,
}

/// A started server: what runs, and its process when it has one.
#[derive(Debug)]
pub struct Started<R> {
    /// What lives and dies with the server (its connection).
    pub running: R,
    /// Its process (the leader of its group).
    pub pid: Option<u32>,
}

impl<R: Clone + Send + Sync + 'static> Supervision<R> {
    /// A stopped server of `pool`, supervised under `policy`, lingering `linger` once
    /// unused.
    pub fn new(policy: RestartPolicy, pool: &Pool, linger: Duration) -> Supervision<R> {
        Supervision {
            policy,
            pool: pool.clone(),
            phase: watch::Sender::new(Phase::Stopped),
            life: Mutex::new(Life {
                running: None,
                pid: None,
                users: BTreeMap::new(),
                linger,
                last_error: None,
                failures: 0,
                failed_at: None,
                ready_at: None,
                starts: 0,
                generation: 0,
            }),
        }
    }

    fn life(&self) -> MutexGuard<'_, Life<R>> {
        self.life.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_phase(&self, phase: Phase) {
        self.phase.send_replace(phase);
        self.pool.changed();
    }

    /// Shows it in `phase` without a start or a stop (feature `testing`: a pool's unit tests
    /// of a starting server's tools).
    #[cfg(feature = "testing")]
    pub fn show_phase_for_tests(&self, phase: Phase) {
        self.phase.send_replace(phase);
    }

    /// Its pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Its pool's policy.
    pub fn policy(&self) -> &RestartPolicy {
        &self.policy
    }

    /// Where it is.
    pub fn phase(&self) -> Phase {
        *self.phase.borrow()
    }

    /// Follows its phase.
    pub fn subscribe(&self) -> watch::Receiver<Phase> {
        self.phase.subscribe()
    }

    /// What runs, while it is ready.
    pub fn running(&self) -> Option<R> {
        self.life().running.clone()
    }

    /// What runs, waiting while it starts (at most the start timeout).
    pub async fn settled(&self) -> Option<R> {
        let mut phase = self.phase.subscribe();
        let _ = tokio::time::timeout(
            self.policy.start_timeout,
            phase.wait_for(|phase| *phase != Phase::Starting),
        )
        .await;
        self.running()
    }

    /// Its process, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.life().pid
    }

    /// Its last failure, and what happens next.
    pub fn last_error(&self) -> Option<String> {
        self.life().last_error.clone()
    }

    /// Whether a session uses it.
    pub fn is_used(&self) -> bool {
        !self.life().users.is_empty()
    }

    /// Whether session `session` uses it.
    pub fn used_by(&self, session: &str) -> bool {
        self.life().users.contains_key(session)
    }

    /// The names session `session` gives it (none when it does not use it).
    pub fn names_for(&self, session: &str) -> BTreeSet<String> {
        self.life().users.get(session).cloned().unwrap_or_default()
    }

    /// Whether a session uses it under `name`.
    pub fn has_name(&self, name: &str) -> bool {
        self.life().users.values().any(|names| names.contains(name))
    }

    /// Session `session` now uses it (also) under `name`; announced when that is new.
    pub fn add_user(&self, session: &str, name: &str) {
        let added = self
            .life()
            .users
            .entry(session.to_owned())
            .or_default()
            .insert(name.to_owned());
        if added {
            self.pool.changed();
        }
    }

    /// Session `session` now uses it under exactly `names`; announced when they changed.
    pub fn set_user(&self, session: &str, names: BTreeSet<String>) {
        let before = self.life().users.insert(session.to_owned(), names.clone());
        if before.as_ref() != Some(&names) {
            self.pool.changed();
        }
    }

    /// How long it keeps running once no session uses it (from the next release).
    pub fn set_linger(&self, linger: Duration) {
        self.life().linger = linger;
    }

    /// Forgets its failures and its last error: the circuit breaker closes, the next start
    /// waits for nothing.
    pub fn reset_failures(&self) {
        let mut life = self.life();
        life.failures = 0;
        life.failed_at = None;
        life.last_error = None;
    }

    /// What `*/list` shows of it.
    pub fn status(&self) -> Status {
        let phase = self.phase();
        let life = self.life();
        Status {
            state: match phase {
                Phase::Starting => "starting",
                Phase::Ready => "ready",
                Phase::Stopped if life.last_error.is_some() => "failed",
                Phase::Stopped => "stopped",
            },
            pid: life.pid,
            sessions: life.users.keys().cloned().collect(),
            names: life.users.values().flatten().cloned().collect(),
            last_error: life.last_error.clone(),
            starts: life.starts,
        }
    }
}

/// A server a pool supervises. Implement the required methods; the provided ones start,
/// restart, release and stop it under its [`Supervision`].
pub trait Child: Send + Sync + Sized + 'static {
    /// What lives and dies with one run of the server (its connection, its process).
    type Running: Clone + Send + Sync + 'static;

    /// Why a start failed; its text is what `*/list` shows as the last error.
    type Error: std::fmt::Display + Send + 'static;

    /// Its supervision.
    fn supervision(&self) -> &Supervision<Self::Running>;

    /// Its name, for logs.
    fn name(&self) -> &str;

    /// Whether it may start now (a project server not approved may not).
    fn may_start(&self) -> bool {
        true
    }

    /// A start begins (called under the life's lock: keep it short, take no lock of the
    /// supervision).
    fn starting(&self) {}

    /// Starts it: the process, the handshake, what it lists. Runs in a task of its own,
    /// aborted at the start timeout (so whatever it started must end when dropped).
    fn start(self: Arc<Self>) -> BoxFuture<Result<Started<Self::Running>, Self::Error>>;

    /// It is about to be shown ready (write caches whoever sees it ready expects).
    fn ready(self: Arc<Self>, _running: Self::Running) -> BoxFuture<()> {
        Box::pin(async {})
    }

    /// Completes when `running` ended by itself, saying how.
    fn exited(self: Arc<Self>, running: Self::Running) -> BoxFuture<String>;

    /// Ends `running` now (its process group, its connection).
    fn end(&self, running: Self::Running, pid: Option<u32>);

    /// It is gone (failed or stopped): forget what belonged to its process.
    fn forget(&self) {}

    /// Starts it unless it runs, is starting, is cooling down after failures, may not
    /// start, or its pool closed.
    fn ensure_started(self: &Arc<Self>) {
        let supervision = self.supervision();
        if supervision.pool.is_closed() || !self.may_start() {
            return;
        }
        let policy = supervision.policy;
        let (generation, delay) = {
            let mut life = supervision.life();
            if supervision.phase() != Phase::Stopped {
                return;
            }
            let since = life.failed_at.map(|at| at.elapsed());
            if life.failures >= policy.max_failures
                && since.is_some_and(|since| since < policy.cooldown)
            {
                return;
            }
            let delay = match (policy.restart, life.failures, since) {
                (Restart::OnNextUse, 1.., Some(since)) => {
                    policy.backoff_after(life.failures).saturating_sub(since)
                }
                _ => Duration::ZERO,
            };
            life.generation += 1;
            life.starts += 1;
            self.starting();
            supervision.set_phase(Phase::Starting);
            (life.generation, delay)
        };
        let child = self.clone();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            // In a task of its own: a panic there fails this start, not the pool.
            let mut starting = tokio::spawn(child.clone().start());
            let outcome = match tokio::time::timeout(policy.start_timeout, &mut starting).await {
                Ok(Ok(outcome)) => outcome.map_err(|error| error.to_string()),
                Ok(Err(error)) => Err(format!("starting it failed: {error}")),
                Err(_) => {
                    // The stuck start goes, with what it started.
                    starting.abort();
                    Err(format!(
                        "it did not finish starting within {} s",
                        policy.start_timeout.as_secs()
                    ))
                }
            };
            match outcome {
                Ok(started) => started_as(child, started, generation).await,
                Err(error) => {
                    tracing::warn!(server = child.name(), %error, "server failed to start");
                    failed(&child, generation, error);
                }
            }
        });
    }

    /// Session `session` no longer uses it; left unused, it stops after its linger.
    fn release(self: &Arc<Self>, session: &str) {
        // The daemon's runtime is going away: its shutdown stops every server.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let supervision = self.supervision();
        let (was_user, unused, generation, linger) = {
            let mut life = supervision.life();
            let was_user = life.users.remove(session).is_some();
            (
                was_user,
                was_user && life.users.is_empty(),
                life.generation,
                life.linger,
            )
        };
        if was_user {
            supervision.pool.changed();
        }
        if unused {
            let child = self.clone();
            runtime.spawn(async move {
                tokio::time::sleep(linger).await;
                let still_unused = {
                    let life = child.supervision().life();
                    life.users.is_empty() && life.generation == generation
                };
                if still_unused {
                    child.stop("no session uses it");
                }
            });
        }
    }

    /// Stops it now (its whole process group) and forgets its connection.
    fn stop(&self, why: &str) {
        let supervision = self.supervision();
        let (running, pid) = {
            let mut life = supervision.life();
            life.generation += 1;
            supervision.set_phase(Phase::Stopped);
            (life.running.take(), life.pid.take())
        };
        if let Some(running) = running {
            self.end(running, pid);
        }
        self.forget();
        tracing::info!(server = self.name(), why, "server stopped");
    }

    /// Restarts it: stopped now, failures forgotten; under [`Restart::WhileUsed`] started
    /// again at once when a session uses it, otherwise by its next use.
    fn restart(self: &Arc<Self>) {
        self.stop("restart requested");
        let supervision = self.supervision();
        supervision.reset_failures();
        if supervision.policy.restart == Restart::WhileUsed && supervision.is_used() {
            self.ensure_started();
        }
    }
}

/// A start of generation `generation` succeeded: shown ready and watched, unless it was
/// stopped meanwhile (then what it started ends).
async fn started_as<C: Child>(child: Arc<C>, started: Started<C::Running>, generation: u64) {
    let supervision = child.supervision();
    let current = {
        let mut life = supervision.life();
        let current = life.generation == generation;
        if current {
            life.running = Some(started.running.clone());
            life.pid = started.pid;
            life.ready_at = Some(Instant::now());
            life.last_error = None;
        }
        current
    };
    if !current {
        child.end(started.running, started.pid);
        return;
    }
    child.clone().ready(started.running.clone()).await;
    {
        // Stopped meanwhile: stays stopped (`stop` ended it).
        let life = supervision.life();
        if life.generation != generation {
            return;
        }
        supervision.set_phase(Phase::Ready);
    }
    tracing::info!(server = child.name(), pid = started.pid, "server ready");
    tokio::spawn(async move {
        let what = child.clone().exited(started.running).await;
        tracing::warn!(server = child.name(), %what, "server ended");
        failed(&child, generation, what);
    });
}

/// Generation `generation` failed (`what`): what happens next is added to the text `*/list`
/// shows; a server in use under [`Restart::WhileUsed`] starts again after the backoff, and
/// after `max_failures` in a row it stays stopped for the cooldown and then gets one more
/// try (half-open: a failure then opens the breaker again at once). What ran is dropped, not
/// ended: its process is gone (or going), and its group may be signalled only while its
/// leader is unreaped.
fn failed<C: Child>(child: &Arc<C>, generation: u64, what: String) {
    let supervision = child.supervision();
    let policy = supervision.policy;
    let (in_use, failures) = {
        let mut life = supervision.life();
        if life.generation != generation {
            return;
        }
        let stable = life.ready_at.take().is_some_and(|at| {
            policy
                .stable_after
                .is_some_and(|stable| at.elapsed() >= stable)
        });
        life.failures = if stable { 1 } else { life.failures + 1 };
        life.failed_at = Some(Instant::now());
        let failures = life.failures;
        let in_use = !life.users.is_empty();
        let next = if failures >= policy.max_failures {
            format!(
                "it failed {failures} times in a row, so it stays stopped for {} s (`{} {}` \
                 starts it now)",
                policy.cooldown.as_secs(),
                policy.restart_command,
                child.name()
            )
        } else {
            match policy.restart {
                Restart::WhileUsed if in_use => format!(
                    "it starts again in {} ms",
                    policy.backoff_after(failures).as_millis()
                ),
                Restart::WhileUsed => "it starts again when a session needs it".to_owned(),
                Restart::OnNextUse => "it starts again on the next use".to_owned(),
            }
        };
        life.last_error = Some(format!("{what}; {next}"));
        life.running = None;
        life.pid = None;
        (in_use, failures)
    };
    child.forget();
    supervision.set_phase(Phase::Stopped);
    if policy.restart != Restart::WhileUsed || !in_use {
        return;
    }
    // In use: again after the backoff, or once the breaker's cooldown is over (one try; a
    // failure then opens it again at once).
    let wait = if failures >= policy.max_failures {
        policy.cooldown
    } else {
        policy.backoff_after(failures)
    };
    let child = child.clone();
    tokio::spawn(async move {
        tokio::time::sleep(wait).await;
        let due = {
            let life = child.supervision().life();
            life.generation == generation && !life.users.is_empty()
        };
        if due {
            child.ensure_started();
        }
    });
}

#[cfg(test)]
mod tests;
