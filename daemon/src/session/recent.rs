//! The recent events of one session, live ones included, so that a client that reconnects
//! with `session/attach {afterSeq}` gets every event it missed — streaming deltas too — and
//! not only the durable ones the store can replay.
//!
//! Bounded in events and in bytes (the size of their frames); the oldest go first. Kept in
//! memory only: after a restart, or for a cursor older than what is kept, replay falls back
//! to the stored entries.

use std::collections::VecDeque;

use pi_protocol::v1::SessionEvent;

/// Events kept at most.
pub const MAX_EVENTS: usize = 4096;
/// Bytes (of serialized frames) kept at most.
pub const MAX_BYTES: usize = 1024 * 1024;

/// The newest events of a session, in `seq` order.
#[derive(Debug, Default)]
pub struct RecentEvents {
    // Invariant: seqs strictly increase from front to back.
    events: VecDeque<(u64, SessionEvent, usize)>,
    // Invariant: the sum of the sizes in `events`.
    bytes: usize,
}

impl RecentEvents {
    /// Remembers `event` (numbered `seq`, `size` bytes on the wire), forgetting the oldest
    /// past the bounds. An event whose seq does not follow the newest one restarts the window
    /// (gaplessness is only claimed for a contiguous run).
    pub fn push(&mut self, seq: u64, event: SessionEvent, size: usize) {
        if self
            .events
            .back()
            .is_some_and(|(newest, _, _)| *newest + 1 != seq)
        {
            self.clear();
        }
        self.events.push_back((seq, event, size));
        self.bytes += size;
        while self.events.len() > MAX_EVENTS || (self.bytes > MAX_BYTES && self.events.len() > 1) {
            if let Some((_, _, size)) = self.events.pop_front() {
                self.bytes -= size;
            }
        }
    }

    /// Every event after `after_seq` up to `last_seq`, if all of them are kept.
    pub fn after(&self, after_seq: u64, last_seq: u64) -> Option<Vec<(u64, SessionEvent)>> {
        if after_seq == last_seq {
            return Some(Vec::new());
        }
        let (oldest, _, _) = self.events.front()?;
        let (newest, _, _) = self.events.back()?;
        if *oldest > after_seq + 1 || *newest != last_seq {
            return None;
        }
        Some(
            self.events
                .iter()
                .filter(|(seq, _, _)| *seq > after_seq)
                .map(|(seq, event, _)| (*seq, event.clone()))
                .collect(),
        )
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.events.clear();
        self.bytes = 0;
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
    use super::*;

    fn seqs(events: Option<Vec<(u64, SessionEvent)>>) -> Option<Vec<u64>> {
        events.map(|events| events.into_iter().map(|(seq, _)| seq).collect())
    }

    #[test]
    fn replays_what_it_still_holds_and_nothing_else() {
        let mut recent = RecentEvents::default();
        assert_eq!(seqs(recent.after(5, 5)), Some(vec![]));
        assert_eq!(seqs(recent.after(4, 5)), None);
        for seq in 6..=10 {
            recent.push(seq, SessionEvent::TurnStart, 10);
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
            recent.push(seq, SessionEvent::TurnStart, 1);
        }
        assert_eq!(recent.len(), MAX_EVENTS);
        assert_eq!(
            seqs(recent.after(10, MAX_EVENTS as u64 + 10)).map(|s| s.len()),
            Some(MAX_EVENTS)
        );
        recent.push(MAX_EVENTS as u64 + 20, SessionEvent::TurnStart, 1);
        assert_eq!(recent.len(), 1);
        let mut recent = RecentEvents::default();
        recent.push(1, SessionEvent::TurnStart, MAX_BYTES / 2);
        recent.push(2, SessionEvent::TurnStart, MAX_BYTES / 2);
        recent.push(3, SessionEvent::TurnStart, MAX_BYTES / 2);
        assert_eq!(seqs(recent.after(1, 3)), Some(vec![2, 3]));
        assert_eq!(seqs(recent.after(0, 3)), None);
    }
}
