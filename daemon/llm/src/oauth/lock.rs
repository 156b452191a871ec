//! The lock pi's `auth.json` writer takes (npm `proper-lockfile`, as pi uses it): a directory
//! `<file>.lock` made with `mkdir`, whose modification time the holder refreshes while it
//! holds it; one whose time is older than [`STALE`] is taken over.
//!
//! Guarantees: while an [`AuthLock`] lives, no pi and no other daemon writes the file
//! through its own lock; the lock directory is removed on drop (a crash leaves it, and it
//! goes stale after [`STALE`]).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

/// When a lock nobody refreshed is taken over (pi's asynchronous lock uses the same).
pub const STALE: Duration = Duration::from_secs(30);
/// How often a held lock's time is refreshed (`proper-lockfile`: half the stale time).
const REFRESH: Duration = Duration::from_secs(5);
/// How long to wait for another holder before giving up.
const WAIT: Duration = Duration::from_secs(60);

/// A held lock on one file.
#[derive(Debug)]
pub struct AuthLock {
    directory: PathBuf,
    refresher: CancellationToken,
}

impl AuthLock {
    /// Takes the lock of `file`, waiting (up to a minute) while someone else holds it.
    pub async fn acquire(file: &Path) -> io::Result<AuthLock> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let directory = PathBuf::from(name);
        if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            match std::fs::create_dir(&directory) {
                Ok(()) => break,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&directory) {
                        // Someone crashed holding it: take it over, as proper-lockfile does.
                        let _ = std::fs::remove_dir(&directory);
                        continue;
                    }
                    if started.elapsed() > WAIT {
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            format!(
                                "{} has been locked by another program for over a minute; \
                                 if no pi or pi daemon is writing it, remove {}",
                                file.display(),
                                directory.display()
                            ),
                        ));
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                Err(error) => return Err(error),
            }
        }
        let refresher = CancellationToken::new();
        let held = directory.clone();
        let stop = refresher.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(REFRESH) => touch(&held),
                }
            }
        });
        Ok(AuthLock {
            directory,
            refresher,
        })
    }
}

impl Drop for AuthLock {
    fn drop(&mut self) {
        self.refresher.cancel();
        let _ = std::fs::remove_dir(&self.directory);
    }
}

fn is_stale(directory: &Path) -> bool {
    std::fs::metadata(directory)
        .and_then(|metadata| metadata.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|age| age > STALE)
}

fn touch(directory: &Path) {
    if let Ok(handle) = std::fs::File::open(directory) {
        let _ = handle.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_holder_waits_and_a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let first = AuthLock::acquire(&file).await.unwrap();
        assert!(dir.path().join("auth.json.lock").is_dir());
        let second = tokio::spawn({
            let file = file.clone();
            async move { AuthLock::acquire(&file).await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished());
        drop(first);
        second.await.unwrap().unwrap();
        assert!(!dir.path().join("auth.json.lock").exists());

        // A lock left by a crashed holder, last refreshed long ago.
        let left = dir.path().join("auth.json.lock");
        std::fs::create_dir(&left).unwrap();
        std::fs::File::open(&left)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(120))
            .unwrap();
        let taken = AuthLock::acquire(&file).await.unwrap();
        assert!(left.is_dir());
        drop(taken);
        assert!(!left.exists());
    }
}
