//! The page cache: fetched pages by the URL asked for, so that reading a long page a window
//! at a time does not fetch it again.
//!
//! Bounded three ways: a page lives at most `ttl`, the cache holds at most `max_entries`
//! pages and at most `max_bytes` of their text (the least recently used go first), and a
//! page larger than `max_bytes` on its own is not kept. Time comes in as an argument, so the
//! cache does no I/O and reads no clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Page;

/// Pages by URL, least recently used first.
#[derive(Debug)]
pub(crate) struct PageCache {
    /// `(url, fetched at, page)`, the least recently used at the front.
    entries: VecDeque<(String, Instant, Arc<Page>)>,
    /// Invariant: the sum of `weight` over `entries`.
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
    ttl: Duration,
}

impl PageCache {
    /// An empty cache; `max_entries` 0 keeps nothing.
    pub(crate) fn new(max_entries: usize, max_bytes: usize, ttl: Duration) -> PageCache {
        PageCache {
            entries: VecDeque::new(),
            bytes: 0,
            max_entries,
            max_bytes,
            ttl,
        }
    }

    /// The page fetched for `url` less than `ttl` before `now`, marked as just used.
    pub(crate) fn get(&mut self, url: &str, now: Instant) -> Option<Arc<Page>> {
        let index = self.entries.iter().position(|(key, ..)| key == url)?;
        let (key, fetched_at, page) = self.entries.remove(index)?;
        if now.saturating_duration_since(fetched_at) >= self.ttl {
            self.bytes -= weight(&page);
            return None;
        }
        self.entries.push_back((key, fetched_at, page.clone()));
        Some(page)
    }

    /// Keeps `page` for `url` (replacing an older copy), then drops expired pages and the
    /// least recently used until the bounds hold.
    pub(crate) fn insert(&mut self, url: String, page: Arc<Page>, now: Instant) {
        if let Some(index) = self.entries.iter().position(|(key, ..)| *key == url)
            && let Some((.., old)) = self.entries.remove(index)
        {
            self.bytes -= weight(&old);
        }
        let ttl = self.ttl;
        let mut expired = 0;
        self.entries.retain(|(_, fetched_at, page)| {
            let keep = now.saturating_duration_since(*fetched_at) < ttl;
            if !keep {
                expired += weight(page);
            }
            keep
        });
        self.bytes -= expired;
        if self.max_entries == 0 || weight(&page) > self.max_bytes {
            return;
        }
        self.bytes += weight(&page);
        self.entries.push_back((url, now, page));
        while self.entries.len() > self.max_entries || self.bytes > self.max_bytes {
            let Some((.., evicted)) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= weight(&evicted);
        }
    }

    /// How many pages are kept.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// What a page costs the cache: its text (the rest is small).
fn weight(page: &Page) -> usize {
    page.text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Arc<Page> {
        Arc::new(Page {
            url: "https://example.test/".to_owned(),
            requested_url: "https://example.test/".to_owned(),
            status: 200,
            content_type: "text/plain".to_owned(),
            text: text.to_owned(),
            notes: Vec::new(),
            bytes: text.len() as u64,
        })
    }

    #[test]
    fn pages_expire_after_the_ttl() {
        let start = Instant::now();
        let mut cache = PageCache::new(4, 1000, Duration::from_secs(60));
        cache.insert("a".to_owned(), page("one"), start);
        assert!(cache.get("a", start + Duration::from_secs(59)).is_some());
        assert!(cache.get("a", start + Duration::from_secs(60)).is_none());
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.bytes, 0);
    }

    #[test]
    fn the_least_recently_used_goes_first() {
        let now = Instant::now();
        let mut cache = PageCache::new(2, 1000, Duration::from_secs(60));
        cache.insert("a".to_owned(), page("one"), now);
        cache.insert("b".to_owned(), page("two"), now);
        assert!(cache.get("a", now).is_some());
        cache.insert("c".to_owned(), page("three"), now);
        assert!(cache.get("b", now).is_none());
        assert!(cache.get("a", now).is_some());
        assert!(cache.get("c", now).is_some());
    }

    #[test]
    fn the_byte_bound_holds() {
        let now = Instant::now();
        let mut cache = PageCache::new(10, 10, Duration::from_secs(60));
        cache.insert("a".to_owned(), page("12345"), now);
        cache.insert("b".to_owned(), page("12345"), now);
        cache.insert("c".to_owned(), page("123"), now);
        assert!(cache.get("a", now).is_none());
        assert_eq!(cache.bytes, 8);
        // A page larger than the whole cache is not kept, and does not empty it.
        cache.insert("d".to_owned(), page("12345678901"), now);
        assert!(cache.get("d", now).is_none());
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn replacing_a_page_keeps_the_count_right() {
        let now = Instant::now();
        let mut cache = PageCache::new(2, 1000, Duration::from_secs(60));
        cache.insert("a".to_owned(), page("one"), now);
        cache.insert("a".to_owned(), page("uno"), now);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.bytes, 3);
        assert_eq!(cache.get("a", now).unwrap().text, "uno");
    }

    #[test]
    fn zero_entries_keeps_nothing() {
        let now = Instant::now();
        let mut cache = PageCache::new(0, 1000, Duration::from_secs(60));
        cache.insert("a".to_owned(), page("one"), now);
        assert!(cache.get("a", now).is_none());
    }
}
