//! What can go wrong between a session and its language servers. The text is what the `lsp`
//! tool tells the model and what `lsp/list` shows as a server's last error, so every message
//! says what happened and, where there is something to do, what.

use std::path::PathBuf;

use super::rpc::RpcError;

/// Why a language-server operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// Every server known for the extension is disabled in settings.
    #[error(
        "the language servers for .{extension} files ({}) are disabled in settings \
         (lsp.servers.<name>.disabled)",
        names.join(", ")
    )]
    Disabled {
        /// The file's extension.
        extension: String,
        /// The disabled servers.
        names: Vec<String>,
    },
    /// No server is known for the file (`.ext`, or the file's path without an extension).
    #[error("no language server is known for {0} files")]
    Unknown(String),
    /// Servers are known for the extension but none is installed.
    #[error(
        "no language server for .{extension} files is installed; install one of: {}",
        options.join(", ")
    )]
    NotInstalled {
        /// The file's extension.
        extension: String,
        /// Each candidate with its install command.
        options: Vec<String>,
    },
    /// The server's process could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The daemon's process starter failed (its thread is gone).
    #[error("{0}")]
    Spawner(String),
    /// The started process has no stdin or stdout.
    #[error("the server's pipes are missing")]
    Pipes,
    /// `initialize` failed.
    #[error("initialize failed: {0}")]
    Initialize(#[source] RpcError),
    /// The server is not running (why it stopped).
    #[error("language server {name} ({}) is not running: {reason}", root.display())]
    NotRunning {
        /// The server.
        name: String,
        /// Its root.
        root: PathBuf,
        /// Why it stopped.
        reason: String,
    },
    /// The session's server did not start (or stopped at once): why.
    #[error("language server {name} for {} is not running: {reason}", root.display())]
    NotStarted {
        /// The server.
        name: String,
        /// Its root.
        root: PathBuf,
        /// Its last error.
        reason: String,
    },
    /// The server is not running (a file could not be sent to it).
    #[error("language server {0} is not running")]
    Down(String),
    /// The server stopped while answering a request.
    #[error(
        "language server {name} stopped while answering {method} (it exited or crashed; it \
         starts again on the next use; see {})",
        log.display()
    )]
    Stopped {
        /// The server.
        name: String,
        /// The request.
        method: String,
        /// Its log.
        log: PathBuf,
    },
    /// A request failed otherwise (timeout, refusal, a server that stopped reading).
    #[error("language server {name}: {source}")]
    Rpc {
        /// The server.
        name: String,
        /// Why.
        source: RpcError,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The sandbox refused an edit's file (its own message).
    #[error("{0}")]
    Sandbox(String),
    /// An edit names something other than a file.
    #[error("not a file URI: {0}")]
    NotFileUri(String),
    /// An edit would create, rename or delete a file.
    #[error("the edit would {0} a file, which pid does not do for a language server")]
    FileOperation(String),
    /// The server's answer cannot be used (an edit without a position, overlapping edits,
    /// no rename at the position).
    #[error("{0}")]
    Answer(String),
    /// What was wrong with the tool call: the action, its arguments, a line or symbol that
    /// is not in the file.
    #[error("{0}")]
    Call(String),
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn every_failure_names_the_server_or_file_and_what_to_do() {
        let cases = [
            (
                LspError::Disabled {
                    extension: "py".into(),
                    names: vec!["pyright".into(), "pylsp".into()],
                },
                "the language servers for .py files (pyright, pylsp) are disabled in settings \
                 (lsp.servers.<name>.disabled)",
            ),
            (
                LspError::Unknown(".xyz".into()),
                "no language server is known for .xyz files",
            ),
            (
                LspError::NotInstalled {
                    extension: "rs".into(),
                    options: vec!["rust-analyzer (`rustup component add rust-analyzer`)".into()],
                },
                "no language server for .rs files is installed; install one of: rust-analyzer \
                 (`rustup component add rust-analyzer`)",
            ),
            (
                LspError::Spawn {
                    program: "/bin/ra".into(),
                    source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
                },
                "cannot start /bin/ra: permission denied",
            ),
            (LspError::Pipes, "the server's pipes are missing"),
            (
                LspError::Initialize(RpcError::Timeout(Duration::from_secs(30))),
                "initialize failed: the language server did not answer within 30 s",
            ),
            (
                LspError::NotRunning {
                    name: "pyright".into(),
                    root: "/p".into(),
                    reason: "the server exited (exit status: 1)".into(),
                },
                "language server pyright (/p) is not running: the server exited (exit status: 1)",
            ),
            (
                LspError::NotStarted {
                    name: "pyright".into(),
                    root: "/p".into(),
                    reason: "it did not start".into(),
                },
                "language server pyright for /p is not running: it did not start",
            ),
            (
                LspError::Down("pyright".into()),
                "language server pyright is not running",
            ),
            (
                LspError::Stopped {
                    name: "pyright".into(),
                    method: "textDocument/hover".into(),
                    log: "/logs/pyright.log".into(),
                },
                "language server pyright stopped while answering textDocument/hover (it exited \
                 or crashed; it starts again on the next use; see /logs/pyright.log)",
            ),
            (
                LspError::Rpc {
                    name: "pyright".into(),
                    source: RpcError::Stuck,
                },
                "language server pyright: the language server stopped reading its input; it \
                 is restarted on the next use",
            ),
            (
                LspError::Read {
                    path: "/p/a.py".into(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                },
                "cannot read /p/a.py: entity not found",
            ),
            (
                LspError::NotFileUri("untitled:1".into()),
                "not a file URI: untitled:1",
            ),
            (
                LspError::FileOperation("rename".into()),
                "the edit would rename a file, which pid does not do for a language server",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
