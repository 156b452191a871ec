//! Resolution of the daemon's directories and files, shared by `pid` and every client so both
//! sides agree on where the socket is.
//!
//! Default layout follows XDG (via `directories`): config dir (`config.toml`), data dir (SQLite
//! database, artifacts), runtime dir (socket, lock, WebSocket token and port), state dir (logs).
//! `PI_HOME=DIR` puts all of them under DIR, including the pi-compatible agent directory
//! (`DIR/.pi/agent`), which makes isolated instances for tests and CI trivial.
//!
//! Architecture invariant: every path returned is absolute. Nothing here creates directories;
//! callers that own a directory create it with the right mode.

#![warn(missing_docs)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub mod lexical;
pub mod trust;

pub use trust::{UntrustedFile, check_trusted};

/// Longest socket path that fits `sockaddr_un.sun_path` on every supported platform (macOS has
/// 104 bytes including the terminating NUL).
pub const MAX_SOCKET_PATH_BYTES: usize = 103;

/// The resolved directories of one daemon instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// Holds `config.toml`, and our own `models.json` and `auth.json`.
    pub config_dir: PathBuf,
    /// Holds the SQLite database and artifacts.
    pub data_dir: PathBuf,
    /// Holds the socket, the instance lock, the WebSocket token and port. Mode 0700.
    pub runtime_dir: PathBuf,
    /// Holds logs (the autostarted daemon's stdio goes to `pid.log` here).
    pub state_dir: PathBuf,
    /// pi's agent directory (`~/.pi/agent`, or `PI_CODING_AGENT_DIR`), read for zero-setup
    /// migration from pi.
    pub pi_agent_dir: PathBuf,
}

/// Why the paths could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    /// Neither `PI_HOME` nor a home directory is available; set `PI_HOME`.
    #[error("cannot find a home directory; set PI_HOME to a directory for the daemon's files")]
    NoHome,
    /// `PI_HOME` is relative and the current directory is unknown; use an absolute path.
    #[error("PI_HOME is relative and the current directory cannot be read: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The socket path would not fit in a Unix socket address.
    #[error(
        "socket path {path} is {len} bytes, over the {max}-byte limit of Unix sockets; \
         set PI_HOME (or XDG_RUNTIME_DIR) to a shorter directory",
        path = .path.display(),
        max = MAX_SOCKET_PATH_BYTES
    )]
    SocketPathTooLong {
        /// The offending path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
}

const APP_NAME: &str = "pi-daemon";

/// A short, stable key of a home directory (FNV-1a of its path, folded to 32 bits): the same
/// in every build, so every `pictl` and `pid` of a home find one runtime directory.
fn home_key(home: &Path) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in home.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash ^ (hash >> 32)) as u32
}

impl Paths {
    /// Resolves the paths from the process environment.
    pub fn from_env() -> Result<Paths, PathsError> {
        Paths::resolve(|name| std::env::var_os(name))
    }

    /// Resolves the paths, reading environment variables through `env` (tests pass their own).
    pub fn resolve(env: impl Fn(&str) -> Option<OsString>) -> Result<Paths, PathsError> {
        let pi_agent_override = env("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty());
        if let Some(home) = env("PI_HOME").filter(|v| !v.is_empty()) {
            let home = absolute(PathBuf::from(home))?;
            let pi_agent_dir = match pi_agent_override {
                Some(dir) => expand_tilde(&dir, &home),
                None => home.join(".pi").join("agent"),
            };
            let paths = Paths {
                config_dir: home.join("config"),
                data_dir: home.join("data"),
                runtime_dir: home.join("run"),
                state_dir: home.join("state"),
                pi_agent_dir,
            };
            paths.check_socket_len()?;
            return Ok(paths);
        }

        let project = directories::ProjectDirs::from("", "", APP_NAME).ok_or(PathsError::NoHome)?;
        let base = directories::BaseDirs::new().ok_or(PathsError::NoHome)?;
        let user_home = base.home_dir().to_path_buf();
        let runtime_dir = match project.runtime_dir() {
            Some(dir) => dir.to_path_buf(),
            // macOS and Linux without XDG_RUNTIME_DIR: a private directory in the temp dir,
            // keyed by uid so users never share it, and by home so one user's two homes
            // (`HOME=/other pictl`) get a daemon each, as they do with XDG_RUNTIME_DIR.
            None => std::env::temp_dir().join(format!(
                "{APP_NAME}-{}-{:08x}",
                rustix::process::getuid().as_raw(),
                home_key(&user_home)
            )),
        };
        let state_dir = match project.state_dir() {
            Some(dir) => dir.to_path_buf(),
            None => project.data_local_dir().join("state"),
        };
        let pi_agent_dir = match pi_agent_override {
            Some(dir) => expand_tilde(&dir, &user_home),
            None => user_home.join(".pi").join("agent"),
        };
        let paths = Paths {
            config_dir: project.config_dir().to_path_buf(),
            data_dir: project.data_dir().to_path_buf(),
            runtime_dir: absolute(runtime_dir)?,
            state_dir,
            pi_agent_dir,
        };
        paths.check_socket_len()?;
        Ok(paths)
    }

    /// The Unix socket clients connect to.
    pub fn socket_path(&self) -> PathBuf {
        self.runtime_dir.join("pid.sock")
    }

    /// The instance lock: held (flock) by the running daemon, holds its pid as text.
    pub fn lock_path(&self) -> PathBuf {
        self.runtime_dir.join("pid.lock")
    }

    /// The startup lock: serializes clients that autostart or stop the daemon.
    pub fn start_lock_path(&self) -> PathBuf {
        self.runtime_dir.join("start.lock")
    }

    /// The WebSocket token (0600), required at the HTTP upgrade.
    pub fn ws_token_path(&self) -> PathBuf {
        self.runtime_dir.join("ws.token")
    }

    /// The key that signs the web UI's cookies (0600; replaced by `web/revoke`).
    pub fn web_key_path(&self) -> PathBuf {
        self.runtime_dir.join("web.key")
    }

    /// The web UI's logins logged out before they expire, one `LOGIN EXPIRY` per line.
    pub fn web_revoked_path(&self) -> PathBuf {
        self.runtime_dir.join("web.revoked")
    }

    /// The web UI's one-time link as a page that loads it, for the browser `pictl web` opens
    /// (0600: the code stays out of the opener's command line).
    pub fn web_open_path(&self) -> PathBuf {
        self.runtime_dir.join("web-open.html")
    }

    /// The WebSocket port actually bound, as decimal text.
    pub fn ws_port_path(&self) -> PathBuf {
        self.runtime_dir.join("ws.port")
    }

    /// The SQLite database.
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("pi.db")
    }

    /// Stored tool output, one subdirectory per session.
    pub fn artifacts_dir(&self) -> PathBuf {
        self.data_dir.join("artifacts")
    }

    /// The daemon configuration file.
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// The log file an autostarted daemon writes its stdout and stderr to.
    pub fn log_file(&self) -> PathBuf {
        self.state_dir.join("pid.log")
    }

    fn check_socket_len(&self) -> Result<(), PathsError> {
        let path = self.socket_path();
        let len = path.as_os_str().len();
        if len > MAX_SOCKET_PATH_BYTES {
            return Err(PathsError::SocketPathTooLong { path, len });
        }
        Ok(())
    }
}

fn absolute(path: PathBuf) -> Result<PathBuf, PathsError> {
    if path.is_absolute() {
        return Ok(path);
    }
    let cwd = std::env::current_dir().map_err(PathsError::CurrentDir)?;
    Ok(cwd.join(path))
}

fn expand_tilde(value: &OsString, home: &Path) -> PathBuf {
    let text = value.to_string_lossy();
    if text == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = text.strip_prefix("~/") {
        return home.join(rest);
    }
    PathBuf::from(value)
}

#[cfg(test)]
mod tests {

    #[test]
    fn two_homes_key_two_runtime_directories() {
        let a = super::home_key(std::path::Path::new("/home/ada"));
        let b = super::home_key(std::path::Path::new("/home/ada/other-home"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            super::home_key(std::path::Path::new("/home/ada")),
            "stable"
        );
        // FNV-1a of the bytes, folded: the same value in every build.
        assert_eq!(
            super::home_key(std::path::Path::new("")),
            0xcbf2_9ce4 ^ 0x8422_2325
        );
    }

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn pi_home_puts_everything_under_one_directory() {
        let paths = Paths::resolve(env_of(&[("PI_HOME", "/srv/pi")])).unwrap();
        assert_eq!(paths.config_dir, PathBuf::from("/srv/pi/config"));
        assert_eq!(paths.data_dir, PathBuf::from("/srv/pi/data"));
        assert_eq!(paths.runtime_dir, PathBuf::from("/srv/pi/run"));
        assert_eq!(paths.state_dir, PathBuf::from("/srv/pi/state"));
        assert_eq!(paths.pi_agent_dir, PathBuf::from("/srv/pi/.pi/agent"));
        assert_eq!(paths.socket_path(), PathBuf::from("/srv/pi/run/pid.sock"));
        assert_eq!(paths.database_path(), PathBuf::from("/srv/pi/data/pi.db"));
        assert_eq!(
            paths.config_file(),
            PathBuf::from("/srv/pi/config/config.toml")
        );
    }

    #[test]
    fn relative_pi_home_becomes_absolute() {
        let paths = Paths::resolve(env_of(&[("PI_HOME", "rel/home")])).unwrap();
        assert!(paths.runtime_dir.is_absolute());
        assert!(paths.runtime_dir.ends_with("rel/home/run"));
    }

    #[test]
    fn coding_agent_dir_override_expands_tilde() {
        let paths = Paths::resolve(env_of(&[
            ("PI_HOME", "/srv/pi"),
            ("PI_CODING_AGENT_DIR", "~/agents"),
        ]))
        .unwrap();
        assert_eq!(paths.pi_agent_dir, PathBuf::from("/srv/pi/agents"));
    }

    #[test]
    fn too_long_socket_path_is_refused_with_advice() {
        let long = format!("/{}", "x".repeat(120));
        let error = Paths::resolve(env_of(&[("PI_HOME", &long)])).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("over the 103-byte limit"), "{message}");
        assert!(message.contains("set PI_HOME"), "{message}");
    }
}
