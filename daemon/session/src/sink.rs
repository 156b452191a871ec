//! Sinks: bounded queues to a session's subscribers.
//!
//! A sink is the sending half of a bounded queue of items (a connection's outbound messages,
//! a watcher's deliveries) plus what the session needs to know of its subscriber: an id, a
//! display name, the notifications it opted out of, and whether it is still there. Whoever
//! consumes the receiving half decides what an item becomes: the RPC layer writes each to a
//! socket (a connection's one outbound queue is a sink), a parent session reads its child's
//! events in process. The session layer knows nothing of connections.
//!
//! The slow-consumer rule: the queue is bounded in items and in bytes (each item's
//! [`Weigh::weight`]); a send that would exceed either closes the sink (`slow_consumer`)
//! instead of blocking the sender or buffering without bound. A session broadcasting to many
//! sinks is never slowed by one.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use pi_protocol::v1::CloseReason;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How many bytes an item counts for against a sink's byte bound.
pub trait Weigh {
    /// The bytes it holds (for a message: its encoded length).
    fn weight(&self) -> usize;
}

impl Weigh for Bytes {
    fn weight(&self) -> usize {
        self.len()
    }
}

/// The bounds of a sink's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SinkLimits {
    /// Items queued at most.
    pub frames: usize,
    /// Bytes queued at most (a single heavier item is still accepted into an empty queue).
    pub bytes: usize,
}

/// The sending half: cheap to clone, shared by everyone who sends to this subscriber.
pub struct Sink<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half, owned by whoever delivers the items.
pub struct SinkReceiver<T> {
    // Dropping it closes the sink: sends fail and `closed()` completes.
    items: mpsc::Receiver<T>,
    shared: Arc<Shared<T>>,
}

struct Shared<T> {
    id: String,
    // Set once: the subscriber's display name (a connection's `clientInfo.name`).
    name: OnceLock<String>,
    // Set once: notification methods the subscriber does not want.
    opt_out: OnceLock<Vec<String>>,
    // Sent to by every `Sink` clone; received by the `SinkReceiver`.
    items: mpsc::Sender<T>,
    // Weight of the items in `items` not yet received; added by `send`, subtracted by the
    // receiver.
    queued_bytes: AtomicUsize,
    limits: SinkLimits,
    // Cancelled when the sink must end now (too slow, transport failed, closed on purpose).
    closed: CancellationToken,
    // Why the sink was closed, if it was closed on purpose. A sync mutex, never held across
    // an await.
    close_reason: Mutex<Option<CloseReason>>,
}

/// The sink is closed; nothing more can be sent to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the subscriber is gone")]
pub struct Closed;

/// A new sink named `id` with its receiver.
pub fn channel<T: Weigh>(id: impl Into<String>, limits: SinkLimits) -> (Sink<T>, SinkReceiver<T>) {
    let (sender, items) = mpsc::channel(limits.frames.max(1));
    let shared = Arc::new(Shared {
        id: id.into(),
        name: OnceLock::new(),
        opt_out: OnceLock::new(),
        items: sender,
        queued_bytes: AtomicUsize::new(0),
        limits,
        closed: CancellationToken::new(),
        close_reason: Mutex::new(None),
    });
    (
        Sink {
            shared: shared.clone(),
        },
        SinkReceiver { items, shared },
    )
}

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Sink {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for Sink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for SinkReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkReceiver")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl<T: Weigh> Sink<T> {
    /// The subscriber's id (a connection's `c12`), unique in the daemon.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The subscriber's display name (empty until set).
    pub fn name(&self) -> &str {
        self.shared
            .name
            .get()
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// Sets the display name; only the first call counts.
    pub fn set_name(&self, name: String) {
        let _ = self.shared.name.set(name);
    }

    /// Sets the notification methods the subscriber does not want; only the first call
    /// counts.
    pub fn set_opt_out(&self, methods: Vec<String>) {
        let _ = self.shared.opt_out.set(methods);
    }

    /// Whether the subscriber said what it wants (a connection: it sent `initialize`).
    pub fn is_initialized(&self) -> bool {
        self.shared.opt_out.get().is_some()
    }

    /// Whether the subscriber wants notifications named `method`.
    pub fn wants(&self, method: &str) -> bool {
        !self
            .shared
            .opt_out
            .get()
            .is_some_and(|names| names.iter().any(|name| name == method))
    }

    /// Queues a notification named `method`, unless the subscriber opted out of it.
    pub fn notify(&self, method: &str, item: T) -> Result<(), Closed> {
        if !self.wants(method) {
            return Ok(());
        }
        self.send(item)
    }

    /// Queues an item. Fails when the sink is closed; a full queue closes it as a slow
    /// consumer and fails.
    pub fn send(&self, item: T) -> Result<(), Closed> {
        if self.shared.closed.is_cancelled() {
            return Err(Closed);
        }
        let length = item.weight();
        let queued = self
            .shared
            .queued_bytes
            .fetch_add(length, Ordering::Relaxed)
            + length;
        if queued > self.shared.limits.bytes && queued > length {
            self.shared
                .queued_bytes
                .fetch_sub(length, Ordering::Relaxed);
            tracing::warn!(
                subscriber = %self.shared.id,
                queued_bytes = queued,
                "outbound queue over its byte budget; closing it as a slow consumer"
            );
            self.close(CloseReason::SlowConsumer);
            return Err(Closed);
        }
        match self.shared.items.try_send(item) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.shared
                    .queued_bytes
                    .fetch_sub(length, Ordering::Relaxed);
                tracing::warn!(
                    subscriber = %self.shared.id,
                    "outbound queue full; closing it as a slow consumer"
                );
                self.close(CloseReason::SlowConsumer);
                Err(Closed)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.shared
                    .queued_bytes
                    .fetch_sub(length, Ordering::Relaxed);
                Err(Closed)
            }
        }
    }

    /// Whether the sink has ended (or been condemned).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled() || self.shared.items.is_closed()
    }

    /// Completes when the sink has ended (or been condemned).
    pub async fn closed(&self) {
        tokio::select! {
            () = self.shared.closed.cancelled() => {}
            () = self.shared.items.closed() => {}
        }
    }

    /// Ends the sink now; queued items are abandoned. The first reason given is kept.
    pub fn close(&self, reason: CloseReason) {
        self.shared
            .close_reason
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(reason);
        self.shared.closed.cancel();
    }

    /// Ends the sink now without a reason (its transport failed).
    pub fn abandon(&self) {
        self.shared.closed.cancel();
    }

    /// Why the sink was closed on purpose, if it was.
    pub fn close_reason(&self) -> Option<CloseReason> {
        *self
            .shared
            .close_reason
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Items and bytes queued right now.
    pub fn queued(&self) -> (usize, usize) {
        (
            self.shared.items.max_capacity() - self.shared.items.capacity(),
            self.shared.queued_bytes.load(Ordering::Relaxed),
        )
    }
}

impl<T: Weigh> SinkReceiver<T> {
    /// Waits for items and moves up to `limit` of them into `into`; 0 once every sender is
    /// gone and the queue is empty. Does not watch `closed`: callers select on it.
    pub async fn recv_many(&mut self, into: &mut Vec<T>, limit: usize) -> usize {
        let start = into.len();
        let received = self.items.recv_many(into, limit).await;
        let bytes: usize = into[start..].iter().map(Weigh::weight).sum();
        self.shared.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
        received
    }

    /// Takes one queued item without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        let item = self.items.try_recv().ok()?;
        self.shared
            .queued_bytes
            .fetch_sub(item.weight(), Ordering::Relaxed);
        Some(item)
    }

    /// Whether the sink was closed on purpose or abandoned.
    pub fn is_condemned(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// The sending half (for code that holds the receiver and must also send).
    pub fn sink(&self) -> Sink<T> {
        Sink {
            shared: self.shared.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &str) -> Bytes {
        Bytes::copy_from_slice(text.as_bytes())
    }

    #[tokio::test]
    async fn frames_arrive_in_order_and_opted_out_ones_are_skipped() {
        let (sink, mut receiver) = channel::<Bytes>(
            "c1",
            SinkLimits {
                frames: 8,
                bytes: 1024,
            },
        );
        sink.set_opt_out(vec!["session/presence".to_owned()]);
        sink.notify("session/event", frame("a")).unwrap();
        sink.notify("session/presence", frame("skipped")).unwrap();
        sink.send(frame("b")).unwrap();
        let mut frames = Vec::new();
        assert_eq!(receiver.recv_many(&mut frames, 10).await, 2);
        assert_eq!(frames, [frame("a"), frame("b")]);
        assert_eq!(sink.queued(), (0, 0));
    }

    #[tokio::test]
    async fn a_full_queue_closes_the_sink_as_a_slow_consumer() {
        let (sink, receiver) = channel::<Bytes>(
            "c1",
            SinkLimits {
                frames: 2,
                bytes: 1024,
            },
        );
        sink.send(frame("1")).unwrap();
        sink.send(frame("2")).unwrap();
        assert_eq!(sink.send(frame("3")), Err(Closed));
        assert!(sink.is_closed());
        assert!(receiver.is_condemned());
        assert_eq!(sink.close_reason(), Some(CloseReason::SlowConsumer));
        assert_eq!(sink.send(frame("4")), Err(Closed));
    }

    #[tokio::test]
    async fn the_byte_budget_closes_the_sink_but_one_large_frame_fits_an_empty_queue() {
        let (sink, _receiver) = channel::<Bytes>(
            "c1",
            SinkLimits {
                frames: 100,
                bytes: 10,
            },
        );
        sink.send(frame(&"x".repeat(50))).unwrap();
        assert_eq!(sink.send(frame("y")), Err(Closed));
        assert_eq!(sink.close_reason(), Some(CloseReason::SlowConsumer));
    }

    #[tokio::test]
    async fn dropping_the_receiver_closes_the_sink() {
        let (sink, receiver) = channel::<Bytes>(
            "c1",
            SinkLimits {
                frames: 2,
                bytes: 1024,
            },
        );
        drop(receiver);
        assert!(sink.is_closed());
        sink.closed().await;
        assert_eq!(sink.send(frame("a")), Err(Closed));
        assert_eq!(sink.close_reason(), None);
    }
}
