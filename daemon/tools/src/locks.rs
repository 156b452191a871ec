//! [`PathLocks`]: the daemon-wide per-path mutation lock. `write` and `edit` hold the lock of
//! the file's canonical path for their whole read-modify-write, so two calls on one file — from
//! one session's parallel tool calls or from two sessions — run one after the other and neither
//! loses the other's change.
//!
//! Architecture invariant: one `PathLocks` per daemon, shared by every session's tools (clone
//! the handle). Different spellings of one file (relative, `..`, symlinks) share one lock
//! because the key is the canonical path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

/// Per-path async mutexes keyed by canonical path. Cheap to clone; clones share the locks.
#[derive(Clone, Debug, Default)]
pub struct PathLocks {
    // Path → its mutex. A sync mutex, never held across `.await`: it only guards lookups,
    // inserts and removals. An entry lives while a guard or a waiter holds its `Arc`; the last
    // guard to drop removes it (see `PathGuard::drop`).
    entries: Arc<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>>,
}

/// Holds one path's lock; dropping it releases the lock.
#[derive(Debug)]
pub struct PathGuard {
    // Invariant: `Some` until `drop`, which releases it before cleaning up the map entry.
    guard: Option<OwnedMutexGuard<()>>,
    key: PathBuf,
    entries: Arc<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>>,
}

impl PathLocks {
    /// A fresh set of locks (one per daemon).
    pub fn new() -> PathLocks {
        PathLocks::default()
    }

    /// Waits for and takes the lock of `path` (absolute; need not exist yet).
    pub async fn lock(&self, path: &Path) -> PathGuard {
        let key = canonical_key(path);
        let mutex = {
            let mut entries = match self.entries.lock() {
                Ok(entries) => entries,
                Err(poisoned) => poisoned.into_inner(),
            };
            entries.entry(key.clone()).or_default().clone()
        };
        let guard = mutex.lock_owned().await;
        PathGuard {
            guard: Some(guard),
            key,
            entries: self.entries.clone(),
        }
    }

    /// Paths with a live lock entry (held or awaited); for tests.
    pub fn live_entries(&self) -> usize {
        match self.entries.lock() {
            Ok(entries) => entries.len(),
            Err(poisoned) => poisoned.into_inner().len(),
        }
    }
}

impl PathGuard {
    /// The canonical path this guard locks.
    pub fn key(&self) -> &Path {
        &self.key
    }
}

impl Drop for PathGuard {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut entries = match self.entries.lock() {
            Ok(entries) => entries,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Only the map holds the mutex now: nobody waits for it, so the entry can go. Waiters
        // clone the `Arc` under this same map lock, so none can appear in between.
        if entries
            .get(&self.key)
            .is_some_and(|mutex| Arc::strong_count(mutex) == 1)
        {
            entries.remove(&self.key);
        }
    }
}

/// The canonical form of `path`: symlinks and `..` resolved for the part that exists, the
/// rest appended as written.
pub fn canonical_key(path: &Path) -> PathBuf {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return canonical;
    }
    let mut missing = Vec::new();
    let mut existing = path;
    while let Some(parent) = existing.parent() {
        if let Some(name) = existing.file_name() {
            missing.push(name.to_owned());
        }
        existing = parent;
        if let Ok(canonical) = std::fs::canonicalize(existing) {
            let mut key = canonical;
            key.extend(missing.iter().rev());
            return key;
        }
    }
    pi_paths::lexical::clean(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn spellings_of_one_file_share_a_lock_and_entries_are_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let locks = PathLocks::new();
        let first = locks.lock(&dir.path().join("sub/../new.txt")).await;
        assert_eq!(
            first.key(),
            std::fs::canonicalize(dir.path()).unwrap().join("new.txt")
        );
        let same_file = dir.path().join("new.txt");
        let second = locks.lock(&same_file);
        tokio::pin!(second);
        assert!(
            futures_poll_once(second.as_mut()).await.is_none(),
            "the second spelling must wait"
        );
        drop(first);
        let second = second.await;
        assert_eq!(locks.live_entries(), 1);
        drop(second);
        assert_eq!(locks.live_entries(), 0);
    }

    async fn futures_poll_once<F: std::future::Future + Unpin>(future: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            output = future => Some(output),
            () = std::future::ready(()) => None,
        }
    }
}
