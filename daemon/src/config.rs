//! The daemon configuration, `config.toml` in the config directory: `[websocket]`, `[limits]`,
//! `[mcp]`, `[log]`.
//!
//! A missing file means defaults. A file that does not parse, or that names an unknown key,
//! stops the daemon at start with an error naming the file, the line and the key: a typo must
//! never be silently ignored by a service that runs all day.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Default cap on one incoming message: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The loopback WebSocket listener for editor plugins.
    pub websocket: WebSocketConfig,
    /// Per-connection limits.
    pub limits: LimitsConfig,
    /// The MCP servers the sessions share.
    pub mcp: McpConfig,
    /// The daemon's own log file.
    pub log: LogConfig,
}

/// `[log]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// Size in bytes at which the daemon's own log file (`pid --log-file`, as autostart runs
    /// it) is renamed to `.1` and a new one started. Logs on stderr (systemd, launchd) are the
    /// service manager's to rotate.
    pub max_bytes: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            max_bytes: crate::logging::file::DEFAULT_MAX_BYTES,
        }
    }
}

/// `[mcp]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// Seconds an MCP server no session uses keeps running (a session started soon after
    /// reuses it); 0 stops it at once.
    pub linger_secs: u64,
    /// Seconds a run waits, before its first model request, for an MCP server that has never
    /// listed its tools (a definition's first use in a directory, or on a fresh daemon), counted
    /// from the server's start; 0 does not wait. Its tools join a later turn whenever it is
    /// ready.
    pub first_start_wait_secs: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            linger_secs: 60,
            first_start_wait_secs: 30,
        }
    }
}

/// `[websocket]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebSocketConfig {
    /// Whether to listen at all.
    pub enabled: bool,
    /// TCP port on 127.0.0.1; 0 picks a free one (written to `ws.port` in the runtime dir).
    pub port: u16,
    /// Exact `Origin` header values allowed to connect (e.g. `vscode-webview://...`). Requests
    /// with any other `Origin` are refused with 403; requests without one are allowed.
    pub allowed_origins: Vec<String>,
}

/// `[limits]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Largest incoming message in bytes; a larger one gets an error and the connection closes.
    pub max_message_bytes: usize,
    /// Messages queued for one connection before it counts as too slow and is closed.
    pub outbound_queue: usize,
    /// Bytes queued for one connection before it counts as too slow and is closed.
    pub outbound_queue_bytes: usize,
    /// Requests one connection may have in flight; further reads wait.
    pub max_in_flight: usize,
    /// Background jobs running at once, daemon-wide.
    pub jobs: usize,
    /// Background jobs one session runs at once.
    pub jobs_per_session: usize,
    /// Python kernels alive at once; the least recently used idle one makes room.
    pub kernels: usize,
    /// Seconds a kernel may sit idle before it is stopped.
    pub kernel_idle_secs: u64,
    /// Seconds a loaded session with no client attached and nothing running stays in memory
    /// (it loads again from the store on its next use).
    pub session_idle_secs: u64,
    /// Bytes that all sessions with no client attached keep, together, of their recent events
    /// (which make a reconnect gapless); past it, a session whose last client leaves forgets
    /// them at once and a reconnect gets the stored entries.
    pub recent_unwatched_bytes: usize,
    /// Bytes that all sessions keep, together, of their recent events, watched or not; past
    /// it, a window that grows forgets its oldest events down to its newest 4 KiB, and a
    /// client reconnecting from further back gets the stored entries.
    pub recent_bytes: usize,
    /// Seconds a language server may take to accept one message on its input; past it the
    /// server is stuck: its requests fail and it is ended (it starts again on the next use).
    pub lsp_write_timeout_secs: u64,
    /// Seconds a new connection has, from connecting, to complete `initialize` (on the
    /// WebSocket, the HTTP upgrade too); then it is closed.
    pub initialize_timeout_secs: u64,
    /// Connections of one transport (the Unix socket, the WebSocket) that have not completed
    /// `initialize` yet; further ones are refused at once until some finish or time out.
    pub pending_connections: usize,
    /// Seconds one pi extension hook (`tool_call`, `input`, `context`, …) may take, while no
    /// dialog of its session waits for a person; past it the hook is given up, the error
    /// naming the extensions that hold it.
    pub extension_hook_timeout_secs: u64,
}

impl Default for WebSocketConfig {
    fn default() -> Self {
        WebSocketConfig {
            enabled: true,
            port: 0,
            allowed_origins: Vec::new(),
        }
    }
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            outbound_queue: 65_536,
            outbound_queue_bytes: 32 * 1024 * 1024,
            max_in_flight: 64,
            jobs: 64,
            jobs_per_session: 8,
            kernels: 4,
            kernel_idle_secs: 300,
            session_idle_secs: 600,
            recent_unwatched_bytes: crate::session::recent::UNWATCHED_BYTES,
            recent_bytes: crate::session::recent::ALL_WINDOWS_BYTES,
            lsp_write_timeout_secs: 30,
            initialize_timeout_secs: 10,
            pending_connections: 128,
            extension_hook_timeout_secs: 30,
        }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read; fix its permissions.
    #[error("cannot read {path}: {source}", path = .path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a bad key or value; the message names the line.
    #[error("invalid configuration in {path}: {message}", path = .path.display())]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// The parser's explanation, with line, column and key.
        message: String,
    },
    /// Another user could have written the file; the message says how to fix its owner or
    /// mode.
    #[error("refusing {path}: {problem}", path = .path.display())]
    Untrusted {
        /// The config file.
        path: PathBuf,
        /// Who could have written it (part of the message, not a separate cause, so it is
        /// said once).
        problem: pi_paths::UntrustedFile,
    },
    /// A value is out of range.
    #[error("invalid configuration in {path}: `{key}` {problem}", path = .path.display())]
    OutOfRange {
        /// The config file.
        path: PathBuf,
        /// The dotted key.
        key: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl Config {
    /// Loads `path`, or the defaults when it does not exist; refuses a file another user
    /// could have written.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        pi_paths::check_trusted(path).map_err(|problem| ConfigError::Untrusted {
            path: path.to_path_buf(),
            problem,
        })?;
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default());
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Config::parse(path, &text)
    }

    /// Parses configuration text; `path` is used in error messages only.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|error| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        let out_of_range = |key, problem| ConfigError::OutOfRange {
            path: path.to_path_buf(),
            key,
            problem,
        };
        if config.limits.max_message_bytes < 1024 {
            return Err(out_of_range(
                "limits.max_message_bytes",
                "must be at least 1024",
            ));
        }
        if config.limits.outbound_queue == 0 {
            return Err(out_of_range("limits.outbound_queue", "must be at least 1"));
        }
        if config.limits.outbound_queue_bytes < 64 * 1024 {
            return Err(out_of_range(
                "limits.outbound_queue_bytes",
                "must be at least 65536",
            ));
        }
        if config.limits.max_in_flight == 0 {
            return Err(out_of_range("limits.max_in_flight", "must be at least 1"));
        }
        if config.log.max_bytes < 64 * 1024 {
            return Err(out_of_range("log.max_bytes", "must be at least 65536"));
        }
        if config.limits.extension_hook_timeout_secs == 0 {
            return Err(out_of_range(
                "limits.extension_hook_timeout_secs",
                "must be at least 1",
            ));
        }
        if config.limits.initialize_timeout_secs == 0 {
            return Err(out_of_range(
                "limits.initialize_timeout_secs",
                "must be at least 1",
            ));
        }
        for (key, value) in [
            ("limits.jobs", config.limits.jobs),
            ("limits.jobs_per_session", config.limits.jobs_per_session),
            ("limits.kernels", config.limits.kernels),
            (
                "limits.pending_connections",
                config.limits.pending_connections,
            ),
        ] {
            if value == 0 {
                return Err(out_of_range(key, "must be at least 1"));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_error(text: &str, expected_fragments: &[&str]) {
        let error = Config::parse(Path::new("/cfg/config.toml"), text)
            .unwrap_err()
            .to_string();
        for fragment in expected_fragments {
            assert!(error.contains(fragment), "{error:?} lacks {fragment:?}");
        }
    }

    #[test]
    fn empty_file_gives_defaults() {
        let config = Config::parse(Path::new("c.toml"), "").unwrap();
        assert!(config.websocket.enabled);
        assert_eq!(config.websocket.port, 0);
        assert_eq!(config.limits.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
        assert_eq!(config.mcp.linger_secs, 60);
        assert_eq!(config.mcp.first_start_wait_secs, 30);
    }

    #[test]
    fn values_are_read() {
        let config = Config::parse(
            Path::new("c.toml"),
            "[websocket]\nport = 7777\nallowed_origins = [\"vscode-webview://x\"]\n[limits]\nmax_message_bytes = 4096\n[mcp]\nlinger_secs = 5\nfirst_start_wait_secs = 2\n",
        )
        .unwrap();
        assert_eq!(config.mcp.linger_secs, 5);
        assert_eq!(config.mcp.first_start_wait_secs, 2);
        assert_eq!(config.websocket.port, 7777);
        assert_eq!(
            config.websocket.allowed_origins,
            vec!["vscode-webview://x".to_owned()]
        );
        assert_eq!(config.limits.max_message_bytes, 4096);
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        check_error(
            "[websocket]\nprot = 1\n",
            &["/cfg/config.toml", "unknown field `prot`", "line 2"],
        );
        check_error("[websocket]\nport = \"x\"\n", &["/cfg/config.toml", "port"]);
        check_error(
            "[limits]\nmax_message_bytes = 10\n",
            &["`limits.max_message_bytes` must be at least 1024"],
        );
        check_error(
            "[log]\nmax_bytes = 100\n",
            &["`log.max_bytes` must be at least 65536"],
        );
        check_error(
            "[limits]\ninitialize_timeout_secs = 0\n",
            &["`limits.initialize_timeout_secs` must be at least 1"],
        );
        check_error(
            "[limits]\nextension_hook_timeout_secs = 0\n",
            &["`limits.extension_hook_timeout_secs` must be at least 1"],
        );
        check_error(
            "[limits]\npending_connections = 0\n",
            &["`limits.pending_connections` must be at least 1"],
        );
        check_error(
            "not toml at all",
            &["/cfg/config.toml", "invalid configuration"],
        );
    }
}
