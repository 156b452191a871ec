//! The recent events of one session, live ones included, so that a client that reconnects
//! with `session/attach {afterSeq}` gets every event it missed — streaming deltas too — and
//! not only the durable ones the store can replay.
//!
//! Bounded in events and in bytes (the size of their encoded form); the oldest go first. An
//! event the session's encoder made bytes of is kept as those bytes only, the typed value
//! dropped once the subscribers have it: a replay is rare, and the encoder reads its own bytes
//! back ([`EventEncoder::decode`](crate::events::EventEncoder::decode)). Without an
//! encoder the shared event is kept. In memory only: after a restart, or for a cursor older
//! than what is kept, replay falls back to the stored entries.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use crate::events::Event;

/// Events kept at most.
pub const MAX_EVENTS: usize = 4096;
/// Bytes (of encoded events) kept at most.
pub const MAX_BYTES: usize = 1024 * 1024;
/// The default [`WindowBudget`]: a thousand idle sessions' windows would hold 50–100 MiB.
pub const UNWATCHED_BYTES: usize = 4 * 1024 * 1024;
/// The default [`WindowPool`]: what every window holds together, watched or not.
pub const ALL_WINDOWS_BYTES: usize = 4 * 1024 * 1024;
/// A window's index keeps at least this room for events once it grew past it.
const SHRINK_ABOVE_EVENTS: usize = 64;
/// What a window keeps of its newest events when the [`WindowPool`] is full.
pub const FLOOR_BYTES: usize = 4 * 1024;

/// One event as the window keeps it.
#[derive(Clone, Debug)]
pub enum Kept {
    /// What the session's encoder made of event `seq`.
    Encoded {
        /// The event's number.
        seq: u64,
        /// Its bytes.
        bytes: Bytes,
    },
    /// An event of a session without an encoder.
    Typed(Arc<Event>),
}

impl Kept {
    fn of(event: Arc<Event>) -> Kept {
        if event.encoded().is_empty() {
            Kept::Typed(event)
        } else {
            Kept::Encoded {
                seq: event.seq(),
                bytes: event.encoded().clone(),
            }
        }
    }

    /// The event's number.
    pub fn seq(&self) -> u64 {
        match self {
            Kept::Encoded { seq, .. } => *seq,
            Kept::Typed(event) => event.seq(),
        }
    }

    /// What keeping the event costs: its bytes and its place in the window's index.
    fn size(&self) -> usize {
        let bytes = match self {
            Kept::Encoded { bytes, .. } => bytes.len(),
            Kept::Typed(event) => event.encoded().len(),
        };
        bytes + std::mem::size_of::<Kept>()
    }
}

/// The bytes that sessions nobody watches may keep in their recent windows, daemon-wide,
/// shared by every session of a registry (the settings carry one). A session that loses its
/// last subscriber takes its window's bytes from the budget, or forgets the window at once
/// when they do not fit; what it took goes back when it is watched again, forgets the window
/// or goes away ([`WindowShare`]'s drop).
#[derive(Clone, Debug)]
pub struct WindowBudget {
    inner: Arc<BudgetInner>,
}

#[derive(Debug)]
struct BudgetInner {
    limit: usize,
    // Invariant: the sum of the live shares' bytes.
    taken: std::sync::atomic::AtomicUsize,
}

/// What one unwatched session took from the [`WindowBudget`]; given back when dropped.
#[derive(Debug)]
pub struct WindowShare {
    budget: WindowBudget,
    bytes: usize,
}

impl WindowBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> WindowBudget {
        WindowBudget {
            inner: Arc::new(BudgetInner {
                limit,
                taken: std::sync::atomic::AtomicUsize::new(0),
            }),
        }
    }

    /// `bytes` of the budget, if they fit.
    pub fn take(&self, bytes: usize) -> Option<WindowShare> {
        use std::sync::atomic::Ordering;
        self.inner
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                taken
                    .checked_add(bytes)
                    .filter(|total| *total <= self.inner.limit)
            })
            .ok()
            .map(|_| WindowShare {
                budget: self.clone(),
                bytes,
            })
    }

    /// Bytes taken now.
    pub fn taken(&self) -> usize {
        self.inner.taken.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Default for WindowBudget {
    /// [`UNWATCHED_BYTES`].
    fn default() -> WindowBudget {
        WindowBudget::new(UNWATCHED_BYTES)
    }
}

impl Drop for WindowShare {
    fn drop(&mut self) {
        self.budget
            .inner
            .taken
            .fetch_sub(self.bytes, std::sync::atomic::Ordering::AcqRel);
    }
}

/// The bytes all recent windows of a registry hold together, watched or not. Past its limit
/// a window that grows forgets its own oldest events down to [`FLOOR_BYTES`]: under load
/// (a thousand sessions streaming at once) the windows shrink instead of the daemon growing,
/// and a client reconnecting past what was kept gets the stored entries, as for any cursor
/// older than the window.
#[derive(Clone, Debug)]
pub struct WindowPool {
    inner: Arc<PoolInner>,
}

#[derive(Debug)]
struct PoolInner {
    limit: usize,
    // Invariant: the sum of the bytes of the windows in the pool.
    used: std::sync::atomic::AtomicUsize,
}

impl WindowPool {
    /// A pool of `limit` bytes.
    pub fn new(limit: usize) -> WindowPool {
        WindowPool {
            inner: Arc::new(PoolInner {
                limit,
                used: std::sync::atomic::AtomicUsize::new(0),
            }),
        }
    }

    /// Bytes the windows hold now.
    pub fn used(&self) -> usize {
        self.inner.used.load(std::sync::atomic::Ordering::Acquire)
    }

    fn full(&self) -> bool {
        self.used() > self.inner.limit
    }

    fn add(&self, bytes: usize) {
        self.inner
            .used
            .fetch_add(bytes, std::sync::atomic::Ordering::AcqRel);
    }

    fn remove(&self, bytes: usize) {
        self.inner
            .used
            .fetch_sub(bytes, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Default for WindowPool {
    /// [`ALL_WINDOWS_BYTES`].
    fn default() -> WindowPool {
        WindowPool::new(ALL_WINDOWS_BYTES)
    }
}

/// The newest events of a session, in `seq` order.
#[derive(Debug, Default)]
pub struct RecentEvents {
    // Invariant: seqs strictly increase from front to back.
    events: VecDeque<Kept>,
    // Invariant: the sum of the encoded sizes in `events`; counted in `pool`.
    bytes: usize,
    pool: WindowPool,
}

impl Drop for RecentEvents {
    fn drop(&mut self) {
        self.pool.remove(self.bytes);
    }
}

impl RecentEvents {
    /// An empty window whose bytes count in `pool`.
    pub fn in_pool(pool: WindowPool) -> RecentEvents {
        RecentEvents {
            events: VecDeque::new(),
            bytes: 0,
            pool,
        }
    }

    /// Remembers `event`, forgetting the oldest past the bounds. An event whose seq does not
    /// follow the newest one restarts the window (gaplessness is only claimed for a
    /// contiguous run).
    pub fn push(&mut self, event: Arc<Event>) {
        if self
            .events
            .back()
            .is_some_and(|newest| newest.seq() + 1 != event.seq())
        {
            self.clear();
        }
        let kept = Kept::of(event);
        self.bytes += kept.size();
        self.pool.add(kept.size());
        self.events.push_back(kept);
        while self.events.len() > MAX_EVENTS
            || (self.events.len() > 1
                && (self.bytes > MAX_BYTES || (self.bytes > FLOOR_BYTES && self.pool.full())))
        {
            if let Some(oldest) = self.events.pop_front() {
                self.bytes -= oldest.size();
                self.pool.remove(oldest.size());
            }
        }
        // A window trimmed far below what it once held gives the index's room back.
        let capacity = self.events.capacity();
        if capacity > SHRINK_ABOVE_EVENTS && self.events.len() * 4 < capacity {
            self.events.shrink_to(self.events.len() * 2);
        }
    }

    /// Every event after `after_seq` up to `last_seq`, if all of them are kept.
    pub fn after(&self, after_seq: u64, last_seq: u64) -> Option<Vec<Kept>> {
        if after_seq == last_seq {
            return Some(Vec::new());
        }
        let oldest = self.events.front()?;
        let newest = self.events.back()?;
        if oldest.seq() > after_seq + 1 || newest.seq() != last_seq {
            return None;
        }
        Some(
            self.events
                .iter()
                .filter(|event| event.seq() > after_seq)
                .cloned()
                .collect(),
        )
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.events.clear();
        self.pool.remove(self.bytes);
        self.bytes = 0;
    }

    /// Bytes (of encoded events) kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Events kept.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use pi_protocol::v1::SessionEvent;

    use super::*;

    /// What an event costs besides its bytes.
    const KEPT: usize = std::mem::size_of::<Kept>();

    fn seqs(events: Option<Vec<Kept>>) -> Option<Vec<u64>> {
        events.map(|events| events.iter().map(|event| event.seq()).collect())
    }

    /// A turn start numbered `seq`, `size` bytes encoded.
    fn event(seq: u64, size: usize) -> Arc<Event> {
        let encoded = Bytes::from(vec![b' '; size]);
        Arc::new(Event::new(
            "s".into(),
            seq,
            SessionEvent::TurnStart,
            encoded,
        ))
    }

    #[test]
    fn replays_what_it_still_holds_and_nothing_else() {
        let mut recent = RecentEvents::default();
        assert_eq!(seqs(recent.after(5, 5)), Some(vec![]));
        assert_eq!(seqs(recent.after(4, 5)), None);
        for seq in 6..=10 {
            recent.push(event(seq, 10));
        }
        assert_eq!(seqs(recent.after(5, 10)), Some(vec![6, 7, 8, 9, 10]));
        assert_eq!(seqs(recent.after(8, 10)), Some(vec![9, 10]));
        assert_eq!(seqs(recent.after(10, 10)), Some(vec![]));
        // Older than what is kept, or a window that does not reach the newest seq.
        assert_eq!(seqs(recent.after(4, 10)), None);
        assert_eq!(seqs(recent.after(8, 11)), None);
    }

    #[test]
    fn bounds_drop_the_oldest_and_a_jump_restarts_the_window() {
        let mut recent = RecentEvents::default();
        for seq in 1..=(MAX_EVENTS as u64 + 10) {
            recent.push(event(seq, 1));
        }
        assert_eq!(recent.len(), MAX_EVENTS);
        assert_eq!(
            seqs(recent.after(10, MAX_EVENTS as u64 + 10)).map(|s| s.len()),
            Some(MAX_EVENTS)
        );
        recent.push(event(MAX_EVENTS as u64 + 20, 1));
        assert_eq!(recent.len(), 1);
        let mut recent = RecentEvents::default();
        recent.push(event(1, MAX_BYTES / 2 - KEPT));
        recent.push(event(2, MAX_BYTES / 2 - KEPT));
        recent.push(event(3, MAX_BYTES / 2 - KEPT));
        assert_eq!(seqs(recent.after(1, 3)), Some(vec![2, 3]));
        assert_eq!(seqs(recent.after(0, 3)), None);
    }

    #[test]
    fn the_budget_gives_shares_that_fit_and_takes_them_back_when_dropped() {
        let budget = WindowBudget::new(100);
        let first = budget.take(60).unwrap();
        assert!(budget.take(41).is_none());
        let second = budget.take(40).unwrap();
        assert_eq!(budget.taken(), 100);
        drop(first);
        assert_eq!(budget.taken(), 40);
        assert!(budget.take(60).is_some());
        assert_eq!(budget.taken(), 40);
        drop(second);
        assert_eq!(budget.taken(), 0);
        assert!(WindowBudget::new(0).take(1).is_none());
    }

    #[test]
    fn a_full_pool_trims_the_growing_window_to_its_floor_and_gets_bytes_back() {
        let pool = WindowPool::new(3 * FLOOR_BYTES);
        // What each event costs: its bytes and its place in the index.
        let step = FLOOR_BYTES / 4;
        let mut quiet = RecentEvents::in_pool(pool.clone());
        for seq in 1..=12 {
            quiet.push(event(seq, step - KEPT));
        }
        assert_eq!(pool.used(), 3 * FLOOR_BYTES);
        // The busy window grows past what the pool holds: it forgets its own oldest events,
        // keeping at least the floor, and the quiet one keeps everything.
        let mut busy = RecentEvents::in_pool(pool.clone());
        for seq in 1..=40 {
            busy.push(event(seq, step - KEPT));
        }
        assert_eq!(quiet.bytes(), 3 * FLOOR_BYTES);
        assert_eq!(busy.bytes(), FLOOR_BYTES);
        assert_eq!(seqs(busy.after(36, 40)), Some(vec![37, 38, 39, 40]));
        assert_eq!(seqs(busy.after(30, 40)), None);
        assert_eq!(pool.used(), 4 * FLOOR_BYTES);
        // Once the pool has room, windows grow again.
        quiet.clear();
        assert_eq!(pool.used(), FLOOR_BYTES);
        for seq in 41..=44 {
            busy.push(event(seq, step - KEPT));
        }
        assert_eq!(busy.bytes(), 2 * FLOOR_BYTES);
        drop(busy);
        assert_eq!(pool.used(), 0);
    }

    #[test]
    fn a_window_trimmed_to_its_floor_gives_its_index_room_back() {
        let pool = WindowPool::new(16 * FLOOR_BYTES);
        let mut window = RecentEvents::in_pool(pool.clone());
        // A burst of small events while the pool has room: the index grows.
        for seq in 1..=2000 {
            window.push(event(seq, 8));
        }
        let grown = window.events.capacity();
        assert!(grown >= 1000, "{grown}");
        // Another window fills the pool: this one is trimmed to its floor as it grows, and
        // its index shrinks with it.
        let mut other = RecentEvents::in_pool(pool.clone());
        other.push(event(1, 16 * FLOOR_BYTES));
        for seq in 2001..=2010 {
            window.push(event(seq, 8));
        }
        assert!(window.bytes() <= FLOOR_BYTES + 8 + KEPT);
        assert!(
            window.events.capacity() < grown / 2,
            "{} of {grown}",
            window.events.capacity()
        );
        assert_eq!(window.bytes(), window.len() * (8 + KEPT));
    }

    #[test]
    fn encoded_events_are_kept_as_their_bytes_and_others_whole() {
        let mut recent = RecentEvents::default();
        recent.push(event(1, 3));
        recent.push(event(2, 0));
        let kept = recent.after(0, 2).unwrap();
        assert!(matches!(&kept[0], Kept::Encoded { seq: 1, bytes } if bytes.len() == 3));
        assert!(matches!(&kept[1], Kept::Typed(event) if event.seq() == 2));
    }
}
