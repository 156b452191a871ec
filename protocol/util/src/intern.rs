//! One shared copy of equal values: an [`Interner`] hands out an `Arc` of a value equal to
//! the one asked for if anyone still holds one, so a thousand sessions started from one shell
//! hold its environment once. It keeps only weak references: a value goes when its last
//! holder drops it, and the interner forgets it at one of its next calls.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Values shared by equality (see the module).
#[derive(Debug)]
pub struct Interner<T> {
    state: Mutex<State<T>>,
    hasher: RandomState,
}

#[derive(Debug)]
struct State<T> {
    // Values by hash; equal hashes of unequal values share a bucket.
    buckets: HashMap<u64, Vec<Weak<T>>>,
    // Weak references held; past `sweep_at` the dead ones are dropped.
    held: usize,
    sweep_at: usize,
}

/// Weak references held before the first sweep.
const FIRST_SWEEP: usize = 64;

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            state: Mutex::new(State {
                buckets: HashMap::new(),
                held: 0,
                sweep_at: FIRST_SWEEP,
            }),
            hasher: RandomState::new(),
        }
    }
}

impl<T: Hash + Eq> Interner<T> {
    /// An interner holding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// A shared value equal to `value`: one someone holds already, or `value` itself.
    pub fn intern(&self, value: T) -> Arc<T> {
        let hash = self.hasher.hash_one(&value);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match state.find(hash, &value) {
            Some(found) => found,
            None => state.insert(hash, Arc::new(value)),
        }
    }

    /// A shared value equal to `*value`: one someone holds already, or `value` itself.
    pub fn share(&self, value: &Arc<T>) -> Arc<T> {
        let hash = self.hasher.hash_one(&**value);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match state.find(hash, value) {
            Some(found) => found,
            None => state.insert(hash, value.clone()),
        }
    }

    /// How many values are held by someone now.
    pub fn live(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .buckets
            .values()
            .flatten()
            .filter(|weak| weak.strong_count() > 0)
            .count()
    }
}

impl<T: Eq> State<T> {
    fn find(&self, hash: u64, value: &T) -> Option<Arc<T>> {
        self.buckets
            .get(&hash)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|held| **held == *value)
    }

    fn insert(&mut self, hash: u64, value: Arc<T>) -> Arc<T> {
        let bucket = self.buckets.entry(hash).or_default();
        bucket.retain(|weak| weak.strong_count() > 0);
        bucket.push(Arc::downgrade(&value));
        self.held += 1;
        if self.held >= self.sweep_at {
            self.sweep();
        }
        value
    }

    /// Drops the references to values nobody holds any more.
    fn sweep(&mut self) {
        self.buckets.retain(|_, bucket| {
            bucket.retain(|weak| weak.strong_count() > 0);
            !bucket.is_empty()
        });
        self.held = self.buckets.values().map(Vec::len).sum();
        // Sweeping again only once as many more were added keeps each call's cost constant
        // on average.
        self.sweep_at = (self.held * 2).max(FIRST_SWEEP);
        self.buckets.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn equal_values_are_one_shared_value_while_someone_holds_it() {
        let interner = Interner::new();
        let first = interner.intern(env(&[("HOME", "/home/a"), ("TERM", "xterm")]));
        let second = interner.intern(env(&[("TERM", "xterm"), ("HOME", "/home/a")]));
        assert!(Arc::ptr_eq(&first, &second));
        let other = interner.intern(env(&[("HOME", "/home/b")]));
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(interner.live(), 2);

        // `share` gives the held one for an equal `Arc`, and keeps a new one.
        let copy = Arc::new(env(&[("HOME", "/home/a"), ("TERM", "xterm")]));
        assert!(Arc::ptr_eq(&interner.share(&copy), &first));
        let new = Arc::new(env(&[("HOME", "/home/c")]));
        assert!(Arc::ptr_eq(&interner.share(&new), &new));
        assert_eq!(interner.live(), 3);
    }

    #[test]
    fn a_value_nobody_holds_goes_and_is_forgotten() {
        let interner = Interner::new();
        let first = interner.intern(env(&[("A", "1")]));
        let weak = Arc::downgrade(&first);
        drop(first);
        assert!(
            weak.upgrade().is_none(),
            "the interner holds no value itself"
        );
        assert_eq!(interner.live(), 0);
        // A new equal value is a new allocation, not the dropped one revived.
        let again = interner.intern(env(&[("A", "1")]));
        assert_eq!(*again, env(&[("A", "1")]));

        // Many values come and go: the references to dropped ones are swept.
        for n in 0..10 * FIRST_SWEEP {
            drop(interner.intern(env(&[("N", &n.to_string())])));
        }
        let held: usize = interner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buckets
            .values()
            .map(Vec::len)
            .sum();
        assert!(held <= 2 * FIRST_SWEEP, "{held} weak references kept");
        assert_eq!(interner.live(), 1);
    }
}
