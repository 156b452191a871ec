//! Log lines for things that come in floods (refused upgrades, accept errors, connections over
//! a cap), at most one per interval: the first occurrence is logged with its details, the rest
//! are counted, and the count is logged when the interval ends.
//!
//! A flood therefore costs one detailed line and then one summary line per interval, whatever
//! its rate, and nothing is lost: every occurrence is in a line or in a count (a count still
//! held back when the daemon stops is logged as the throttle goes).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// The interval of the throttles the daemon uses.
pub const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Logs the count of the occurrences an interval held back.
pub type Summary = Box<dyn Fn(u64) + Send + Sync>;

/// Counts occurrences of one kind of event and says which to log.
pub struct LogThrottle {
    interval: Duration,
    // Called by the task that ends an interval.
    summary: Summary,
    // A sync mutex, never held across an await.
    state: Mutex<Window>,
}

impl std::fmt::Debug for LogThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogThrottle")
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Window {
    // Until when occurrences are counted rather than logged; `None` before the first.
    end: Option<Instant>,
    // Occurrences counted since the last line.
    suppressed: u64,
}

impl LogThrottle {
    /// A throttle that logs at most one line per `interval`; `summary` logs a count of the
    /// occurrences held back (called from a task, so inside the runtime).
    pub fn new(
        interval: Duration,
        summary: impl Fn(u64) + Send + Sync + 'static,
    ) -> Arc<LogThrottle> {
        Arc::new(LogThrottle {
            interval,
            summary: Box::new(summary),
            state: Mutex::new(Window::default()),
        })
    }

    /// Records one occurrence. `true`: log it now, with its details (the first of an
    /// interval). `false`: it was counted, and the count goes out when the interval ends.
    pub fn hit(self: &Arc<Self>) -> bool {
        let now = Instant::now();
        let mut window = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match window.end {
            Some(end) if now < end => {
                window.suppressed += 1;
                if window.suppressed == 1 {
                    let throttle = self.clone();
                    tokio::spawn(async move { throttle.end_windows(end).await });
                }
                false
            }
            _ => {
                window.end = Some(now + self.interval);
                true
            }
        }
    }

    /// At `end`, logs what the interval held back; a non-empty interval starts the next one,
    /// so a flood that goes on gives one summary per interval and no detailed lines.
    async fn end_windows(self: Arc<Self>, end: Instant) {
        tokio::time::sleep_until(end).await;
        let suppressed = match self.state.lock() {
            Ok(mut window) => {
                let suppressed = std::mem::take(&mut window.suppressed);
                window.end = Some(Instant::now() + self.interval);
                suppressed
            }
            Err(_) => return,
        };
        (self.summary)(suppressed);
    }
}

impl Drop for LogThrottle {
    /// A count still held back (the daemon stops within an interval) is logged on the way out.
    fn drop(&mut self) {
        let suppressed = self
            .state
            .get_mut()
            .map_or(0, |window| std::mem::take(&mut window.suppressed));
        if suppressed > 0 {
            (self.summary)(suppressed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    static SUMMARIES: AtomicU64 = AtomicU64::new(0);
    static SUPPRESSED: AtomicU64 = AtomicU64::new(0);

    fn record(suppressed: u64) {
        SUMMARIES.fetch_add(1, Ordering::SeqCst);
        SUPPRESSED.fetch_add(suppressed, Ordering::SeqCst);
    }

    /// Lets the spawned summary task run.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn one_line_then_a_count_per_interval() {
        let throttle = LogThrottle::new(Duration::from_secs(10), record);
        assert!(throttle.hit(), "the first is logged");
        for _ in 0..999 {
            assert!(!throttle.hit());
        }
        settle().await;
        assert_eq!(SUMMARIES.load(Ordering::SeqCst), 0);

        tokio::time::advance(Duration::from_secs(10)).await;
        settle().await;
        assert_eq!(SUMMARIES.load(Ordering::SeqCst), 1);
        assert_eq!(SUPPRESSED.load(Ordering::SeqCst), 999);

        // The flood goes on: counted into the next interval, no detailed line.
        assert!(!throttle.hit());
        tokio::time::advance(Duration::from_secs(10)).await;
        settle().await;
        assert_eq!(SUMMARIES.load(Ordering::SeqCst), 2);
        assert_eq!(SUPPRESSED.load(Ordering::SeqCst), 1000);

        // A quiet interval ends the flood; the next occurrence is logged in detail again, and
        // an interval without suppressed occurrences logs no summary.
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(throttle.hit());
        tokio::time::advance(Duration::from_secs(30)).await;
        settle().await;
        assert_eq!(SUMMARIES.load(Ordering::SeqCst), 2);
        assert!(throttle.hit());
    }

    #[test]
    fn a_count_held_back_when_the_daemon_stops_is_logged() {
        static COUNTED: AtomicU64 = AtomicU64::new(0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let throttle = LogThrottle::new(Duration::from_secs(10), |suppressed| {
                COUNTED.fetch_add(suppressed, Ordering::SeqCst);
            });
            assert!(throttle.hit());
            assert!(!throttle.hit());
            assert!(!throttle.hit());
            // The listener that owned the throttle is gone; the summary task still holds it.
        });
        assert_eq!(COUNTED.load(Ordering::SeqCst), 0);
        // The runtime's shutdown drops the task, and with it the throttle.
        drop(runtime);
        assert_eq!(COUNTED.load(Ordering::SeqCst), 2);
    }
}
