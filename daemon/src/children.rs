//! What the daemon does with the output of the servers it runs (MCP and language servers):
//! their stderr goes to a log file of their own. Processes themselves start through
//! [`pi_tools::spawn::Spawner`], under the guard.

use std::path::PathBuf;

/// Appends a server's stderr to its log file (0600), in the background.
pub fn copy_to_log(mut stderr: tokio::process::ChildStderr, path: PathBuf) {
    tokio::spawn(async move {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .await;
        match file {
            Ok(mut file) => {
                let _ = tokio::io::copy(&mut stderr, &mut file).await;
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot open a server's log");
                let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
            }
        }
    });
}
