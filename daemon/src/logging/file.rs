//! The daemon's own log file (`pid --log-file PATH`, which autostart passes): stdout and stderr
//! are pointed at it, so panic messages and anything else written there land in it too, and it
//! is rotated by size — past `log.max_bytes` it becomes `PATH.1` (replacing the one before) and
//! a new file starts. Both are 0600. Without `--log-file` logs go to stderr, which journald or
//! launchd keep.
//!
//! Architecture invariant: a log file holds at most `log.max_bytes` plus one line per thread
//! writing when it rotates; with its `.1`, the daemon's logs never take more than about twice
//! that, whatever a peer makes it log.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

/// Where a log file is rotated until `config.toml` says otherwise.
pub const DEFAULT_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// Why the log file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    /// The file cannot be opened, made private or rotated; fix the path or its directory's
    /// permissions.
    #[error("cannot open the log file {path}", path = .path.display())]
    Open {
        /// The log file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// stdout and stderr cannot be pointed at the file.
    #[error("cannot write logs to {path}", path = .path.display())]
    Redirect {
        /// The log file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The log file the process's stdout and stderr point at.
#[derive(Debug)]
pub struct LogFile {
    // Absolute.
    path: PathBuf,
    // `path` with `.1` appended.
    rotated: PathBuf,
    max_bytes: AtomicU64,
    // Bytes in the current file (those logged through `LogWriter` since it was opened, plus
    // its size then).
    written: AtomicU64,
    // Held while rotating, so that one thread rotates. A sync mutex, never held across an
    // await.
    rotation: Mutex<()>,
}

/// The `MakeWriter` of the tracing subscriber: stderr, counted against the log file's limit.
#[derive(Clone, Debug)]
pub struct LogWriter(pub(crate) Option<Arc<LogFile>>);

/// Writes one event to stderr; rotates the log file after it when the file is full.
#[derive(Debug)]
pub struct EventWriter<'a> {
    file: Option<&'a LogFile>,
    written: u64,
}

impl LogFile {
    /// Opens (or creates, 0600) the log file and points stdout and stderr at it; a file already
    /// over [`DEFAULT_MAX_BYTES`] is rotated first.
    pub fn open(path: &Path) -> Result<Arc<LogFile>, LogFileError> {
        let path = std::path::absolute(path).map_err(|source| LogFileError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut rotated = path.clone().into_os_string();
        rotated.push(".1");
        let file = open_private(&path).map_err(|source| LogFileError::Open {
            path: path.clone(),
            source,
        })?;
        let size = file
            .metadata()
            .map_err(|source| LogFileError::Open {
                path: path.clone(),
                source,
            })?
            .len();
        let log = LogFile {
            path,
            rotated: PathBuf::from(rotated),
            max_bytes: AtomicU64::new(DEFAULT_MAX_BYTES),
            written: AtomicU64::new(size),
            rotation: Mutex::new(()),
        };
        let redirected = if size >= DEFAULT_MAX_BYTES {
            log.rotate()
        } else {
            redirect(&file)
        };
        redirected.map_err(|source| LogFileError::Redirect {
            path: log.path.clone(),
            source,
        })?;
        Ok(Arc::new(log))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets the size at which the file is rotated (`log.max_bytes`), rotating now if it is over.
    pub fn set_max_bytes(&self, max_bytes: u64) {
        self.max_bytes.store(max_bytes, Ordering::Relaxed);
        self.wrote(0);
    }

    /// Counts `bytes` written to the file; rotates it once it is full.
    fn wrote(&self, bytes: u64) {
        let total = self.written.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total < self.max_bytes.load(Ordering::Relaxed) {
            return;
        }
        if let Err(error) = self.rotate() {
            // Nothing else can say it: the logger is what failed. The next try is one full
            // file later.
            self.written.store(0, Ordering::Relaxed);
            #[allow(clippy::print_stderr, reason = "the logger's own failure")]
            {
                eprintln!(
                    "pid: cannot rotate the log file {}: {error}; it keeps growing",
                    self.path.display()
                );
            }
        }
    }

    /// Renames the file to `.1` and points stdout and stderr at a new one.
    fn rotate(&self) -> std::io::Result<()> {
        let _rotating = self
            .rotation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.written.load(Ordering::Relaxed) < self.max_bytes.load(Ordering::Relaxed) {
            // Another thread rotated it while this one waited.
            return Ok(());
        }
        std::fs::rename(&self.path, &self.rotated)?;
        let file = open_private(&self.path)?;
        redirect(&file)?;
        self.written.store(0, Ordering::Relaxed);
        Ok(())
    }
}

/// Opens `path` for appending, creating it 0600, and makes an existing one 0600.
fn open_private(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

/// Points stdout and stderr at `file`.
fn redirect(file: &File) -> std::io::Result<()> {
    rustix::stdio::dup2_stdout(file)?;
    rustix::stdio::dup2_stderr(file)?;
    Ok(())
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = EventWriter<'a>;

    fn make_writer(&'a self) -> EventWriter<'a> {
        EventWriter {
            file: self.0.as_deref(),
            written: 0,
        }
    }
}

impl std::io::Write for EventWriter<'_> {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let written = std::io::stderr().write(buffer)?;
        self.written += written as u64;
        Ok(written)
    }

    fn write_all(&mut self, buffer: &[u8]) -> std::io::Result<()> {
        // One lock of stderr for the whole event, so events of different threads never
        // interleave.
        std::io::stderr().write_all(buffer)?;
        self.written += buffer.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl Drop for EventWriter<'_> {
    fn drop(&mut self) {
        // Rotation waits for the end of an event, so a line never spans two files.
        if let Some(file) = self.file {
            file.wrote(self.written);
        }
    }
}
