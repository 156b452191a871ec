//! The supervisor against a scripted server, in paused time: every wait below is virtual.

use std::sync::atomic::{AtomicU32, Ordering};

use tokio::sync::Notify;

use super::*;

/// How the next starts go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Script {
    Succeed,
    Fail,
    Hang,
}

#[derive(Debug, Default)]
struct Run {
    // Ends the run as if its process exited.
    exit: Notify,
}

#[derive(Debug)]
struct Fake {
    supervision: Supervision<Arc<Run>>,
    script: Mutex<Script>,
    allowed: AtomicBool,
    starts: AtomicU32,
    ended: AtomicU32,
    forgotten: AtomicU32,
}

impl Fake {
    fn new(policy: RestartPolicy, pool: &Pool) -> Arc<Fake> {
        Arc::new(Fake {
            supervision: Supervision::new(policy, pool, Duration::from_secs(10)),
            script: Mutex::new(Script::Succeed),
            allowed: AtomicBool::new(true),
            starts: AtomicU32::new(0),
            ended: AtomicU32::new(0),
            forgotten: AtomicU32::new(0),
        })
    }

    fn script(&self, script: Script) {
        *self.script.lock().unwrap() = script;
    }

    fn starts(&self) -> u32 {
        self.starts.load(Ordering::SeqCst)
    }

    /// Makes the running instance exit by itself.
    fn crash(&self) {
        self.supervision
            .running()
            .expect("it runs")
            .exit
            .notify_one();
    }
}

impl Child for Fake {
    type Running = Arc<Run>;
    type Error = String;

    fn supervision(&self) -> &Supervision<Arc<Run>> {
        &self.supervision
    }

    fn name(&self) -> &str {
        "fake"
    }

    fn may_start(&self) -> bool {
        self.allowed.load(Ordering::SeqCst)
    }

    fn start(self: Arc<Self>) -> BoxFuture<Result<Started<Arc<Run>>, String>> {
        Box::pin(async move {
            self.starts.fetch_add(1, Ordering::SeqCst);
            let script = *self.script.lock().unwrap();
            match script {
                Script::Succeed => Ok(Started {
                    running: Arc::new(Run::default()),
                    pid: None,
                }),
                Script::Fail => Err("it could not start".to_owned()),
                Script::Hang => std::future::pending().await,
            }
        })
    }

    fn exited(self: Arc<Self>, running: Arc<Run>) -> BoxFuture<String> {
        Box::pin(async move {
            running.exit.notified().await;
            "it exited".to_owned()
        })
    }

    fn end(&self, _running: Arc<Run>, _pid: Option<u32>) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }

    fn forget(&self) {
        self.forgotten.fetch_add(1, Ordering::SeqCst);
    }
}

fn policy(restart: Restart) -> RestartPolicy {
    RestartPolicy {
        start_timeout: Duration::from_secs(60),
        backoff: Duration::from_millis(250),
        max_failures: 5,
        cooldown: Duration::from_secs(60),
        stable_after: Some(Duration::from_secs(30)),
        restart,
        restart_command: "pictl fake restart",
    }
}

/// Lets the spawned tasks run until `done` holds, advancing virtual time 1 ms at a time;
/// fails after `limit` of virtual time.
async fn until(limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {limit:?} of virtual time"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn elapsed_since(start: tokio::time::Instant) -> Duration {
    tokio::time::Instant::now() - start
}

#[tokio::test(start_paused = true)]
async fn a_server_in_use_restarts_by_itself_with_a_doubling_backoff_until_the_breaker_opens() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.script(Script::Fail);
    fake.supervision.add_user("s1", "fake");
    let begun = tokio::time::Instant::now();
    fake.ensure_started();
    // Starts at 0, then after 250, 500, 1,000 and 2,000 ms of backoff.
    let mut at = Vec::new();
    for starts in 1..=5 {
        until(Duration::from_secs(10), || fake.starts() >= starts).await;
        at.push(elapsed_since(begun).as_millis() / 10 * 10);
    }
    assert_eq!(at, [0, 250, 750, 1750, 3750]);
    until(Duration::from_secs(1), || {
        fake.supervision.status().state == "failed"
            && fake
                .supervision
                .last_error()
                .is_some_and(|e| e.contains("5 times"))
    })
    .await;
    assert_eq!(
        fake.supervision.last_error().as_deref(),
        Some(
            "it could not start; it failed 5 times in a row, so it stays stopped for 60 s \
             (`pictl fake restart fake` starts it now)"
        )
    );
    // The breaker holds for the cooldown: no start by itself, none asked for.
    tokio::time::sleep(Duration::from_secs(30)).await;
    fake.ensure_started();
    tokio::time::sleep(Duration::from_secs(29)).await;
    assert_eq!(fake.starts(), 5);
    // Then, still in use, it gets one more try (half-open); failing, the breaker opens again
    // at once.
    until(Duration::from_secs(2), || fake.starts() == 6).await;
    until(Duration::from_secs(1), || {
        fake.supervision
            .last_error()
            .is_some_and(|e| e.contains("6 times"))
    })
    .await;
    tokio::time::sleep(Duration::from_secs(59)).await;
    assert_eq!(fake.starts(), 6);
    // After that cooldown it starts again by itself, and now it runs.
    fake.script(Script::Succeed);
    until(Duration::from_secs(2), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    assert_eq!(fake.starts(), 7);
    assert_eq!(fake.supervision.last_error(), None);
}

#[tokio::test(start_paused = true)]
async fn a_failure_says_what_happens_next_for_each_restart_kind() {
    let pool = Pool::default();
    let unused = Fake::new(policy(Restart::WhileUsed), &pool);
    unused.script(Script::Fail);
    unused.ensure_started();
    until(Duration::from_secs(1), || {
        unused.supervision.last_error().is_some()
    })
    .await;
    assert_eq!(
        unused.supervision.last_error().as_deref(),
        Some("it could not start; it starts again when a session needs it")
    );
    let used = Fake::new(policy(Restart::WhileUsed), &pool);
    used.script(Script::Fail);
    used.supervision.add_user("s1", "fake");
    used.ensure_started();
    until(Duration::from_secs(1), || {
        used.supervision.last_error().is_some()
    })
    .await;
    assert_eq!(
        used.supervision.last_error().as_deref(),
        Some("it could not start; it starts again in 250 ms")
    );
    let lazy = Fake::new(policy(Restart::OnNextUse), &pool);
    lazy.script(Script::Fail);
    lazy.supervision.add_user("s1", "fake");
    lazy.ensure_started();
    until(Duration::from_secs(1), || {
        lazy.supervision.last_error().is_some()
    })
    .await;
    assert_eq!(
        lazy.supervision.last_error().as_deref(),
        Some("it could not start; it starts again on the next use")
    );
    assert_eq!(lazy.supervision.status().state, "failed");
}

#[tokio::test(start_paused = true)]
async fn on_next_use_a_failed_server_waits_out_its_backoff_and_never_starts_by_itself() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::OnNextUse), &pool);
    fake.supervision.add_user("s1", "fake");
    fake.ensure_started();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    fake.crash();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Stopped
    })
    .await;
    assert_eq!(fake.forgotten.load(Ordering::SeqCst), 1);
    // In use, but nothing starts it until it is used.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(fake.starts(), 1);
    // A second failure in a row: the next use waits the rest of 500 ms.
    fake.ensure_started();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    fake.script(Script::Fail);
    fake.crash();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Stopped
    })
    .await;
    let failed = tokio::time::Instant::now();
    fake.ensure_started();
    assert_eq!(fake.supervision.phase(), Phase::Starting);
    until(Duration::from_secs(2), || fake.starts() == 3).await;
    assert_eq!(elapsed_since(failed).as_millis() / 10 * 10, 500);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_ran_long_enough_starts_its_failure_count_afresh() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.supervision.add_user("s1", "fake");
    fake.ensure_started();
    for _ in 0..4 {
        until(Duration::from_secs(10), || {
            fake.supervision.phase() == Phase::Ready
        })
        .await;
        fake.crash();
        until(Duration::from_secs(1), || {
            fake.supervision.phase() != Phase::Ready
        })
        .await;
    }
    // Four quick failures: the next restart waits 2 s.
    assert!(
        fake.supervision
            .last_error()
            .is_some_and(|e| e.ends_with("it starts again in 2000 ms"))
    );
    until(Duration::from_secs(10), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    // It runs past `stable_after`, then fails: counted as the first failure.
    tokio::time::sleep(Duration::from_secs(31)).await;
    fake.crash();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() != Phase::Ready
    })
    .await;
    assert_eq!(
        fake.supervision.last_error().as_deref(),
        Some("it exited; it starts again in 250 ms")
    );
}

#[tokio::test(start_paused = true)]
async fn a_start_past_the_timeout_is_aborted_and_counted() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::OnNextUse), &pool);
    fake.script(Script::Hang);
    fake.ensure_started();
    until(Duration::from_secs(61), || {
        fake.supervision.phase() == Phase::Stopped
    })
    .await;
    assert_eq!(
        fake.supervision.last_error().as_deref(),
        Some("it did not finish starting within 60 s; it starts again on the next use")
    );
    // Whoever waited for it got nothing after the timeout, not a hang.
    fake.ensure_started();
    assert_eq!(fake.supervision.settled().await.map(|_| ()), None);
}

#[tokio::test(start_paused = true)]
async fn a_server_stopped_while_starting_stays_stopped_and_its_start_is_ended() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.supervision.add_user("s1", "fake");
    // The start's task runs only once this test awaits: the stop comes first.
    fake.ensure_started();
    assert_eq!(fake.supervision.phase(), Phase::Starting);
    fake.stop("restart requested");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.supervision.phase(), Phase::Stopped);
    assert!(fake.supervision.running().is_none());
    // The start that finished for an older generation was ended, not kept.
    assert_eq!(fake.ended.load(Ordering::SeqCst), 1);
    // A stale failure changes nothing either: the stop bumped the generation.
    assert_eq!(fake.supervision.last_error(), None);
}

#[tokio::test(start_paused = true)]
async fn an_unused_server_stops_after_its_linger_unless_used_again() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.supervision.add_user("s1", "fake");
    fake.ensure_started();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    fake.release("s1");
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Used again within the linger: it stays.
    fake.supervision.add_user("s2", "other name");
    assert!(fake.supervision.has_name("other name"));
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(fake.supervision.phase(), Phase::Ready);
    assert_eq!(fake.supervision.status().sessions, ["s2"]);
    // Released for good: stopped after 10 s, its run ended.
    fake.release("s2");
    tokio::time::sleep(Duration::from_millis(9_900)).await;
    assert_eq!(fake.supervision.phase(), Phase::Ready);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.supervision.phase(), Phase::Stopped);
    assert_eq!(fake.ended.load(Ordering::SeqCst), 1);
    assert_eq!(fake.supervision.status().state, "stopped");
}

#[tokio::test(start_paused = true)]
async fn nothing_starts_after_the_pool_closed_or_without_leave() {
    let pool = Pool::default();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.allowed.store(false, Ordering::SeqCst);
    fake.ensure_started();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.starts(), 0);
    fake.allowed.store(true, Ordering::SeqCst);
    pool.close();
    fake.ensure_started();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.starts(), 0);
    assert_eq!(fake.supervision.phase(), Phase::Stopped);
}

#[tokio::test(start_paused = true)]
async fn a_restart_forgets_the_failures_and_starts_a_used_server_at_once() {
    let pool = Pool::default();
    let mut changes = pool.subscribe_changes();
    let fake = Fake::new(policy(Restart::WhileUsed), &pool);
    fake.script(Script::Fail);
    fake.supervision.add_user("s1", "fake");
    fake.ensure_started();
    until(Duration::from_secs(10), || fake.starts() == 5).await;
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Stopped
    })
    .await;
    fake.script(Script::Hang);
    fake.restart();
    // Starting again, it shows no stale failure.
    assert_eq!(fake.supervision.status().state, "starting");
    assert_eq!(fake.supervision.last_error(), None);
    fake.stop("test");
    fake.script(Script::Succeed);
    fake.restart();
    until(Duration::from_secs(1), || {
        fake.supervision.phase() == Phase::Ready
    })
    .await;
    assert_eq!(fake.starts(), 7);
    assert_eq!(fake.supervision.status().starts, 7);
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();
    fake.supervision.add_user("s1", "fake");
    assert!(!changes.has_changed().unwrap(), "the same use is no change");
}
