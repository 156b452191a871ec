//! `pictl bridge`: the far side of `pictl --remote ssh://…`. Joins this program's stdin and
//! stdout to this user's daemon socket (starting the daemon when none runs), byte for byte,
//! until either side ends. ssh runs it; people do not.

use std::process::ExitCode;

use pi_client::autostart::{self, StartOptions};
use tokio::io::AsyncWriteExt as _;

use crate::daemon_client;
use crate::error::CliError;

/// Runs `pictl bridge` (`start`: start the daemon when none runs).
pub async fn run(start: bool) -> Result<ExitCode, CliError> {
    let paths = daemon_client::paths()?;
    let socket = paths.socket_path();
    let stream = match pi_client::connect_socket(&socket).await {
        Ok(stream) => stream,
        Err(pi_client::ClientError::Unreachable { .. }) if !start => {
            // Said in words the near side tells apart from a failed login.
            crate::output::eprint_line(pi_client::remote::NO_FAR_DAEMON);
            return Ok(ExitCode::from(crate::error::EXIT_UNREACHABLE));
        }
        Err(error) if !start => {
            return Err(CliError::from(error).with_hint(
                "no daemon runs on this host; `pictl --remote … daemon status` does not start one",
            ));
        }
        Err(_) => {
            // None runs (or it is starting): start it here, whatever remote this side names.
            let options = StartOptions {
                local: true,
                ..StartOptions::default()
            };
            autostart::connect_or_start(&paths, daemon_client::client_info(), &options)
                .await
                .map_err(CliError::from)?;
            pi_client::connect_socket(&socket)
                .await
                .map_err(CliError::from)?
        }
    };
    let (mut from_daemon, mut to_daemon) = stream.into_split();
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let up = async {
        let copied = tokio::io::copy(&mut stdin, &mut to_daemon).await;
        // The client is gone: the daemon ends the connection.
        let _ = to_daemon.shutdown().await;
        copied
    };
    let down = async {
        let copied = tokio::io::copy(&mut from_daemon, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    // Done when the daemon's side ends (after the client's, or on its own).
    tokio::pin!(up);
    let down = tokio::select! {
        down = down => down,
        _ = &mut up => {
            // The client's side ended first: what the daemon still sends goes out.
            let mut rest = tokio::io::stdout();
            let copied = tokio::io::copy(&mut from_daemon, &mut rest).await;
            let _ = rest.flush().await;
            copied
        }
    };
    match down {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(error) => Err(CliError::failed(format!(
            "the bridge to the daemon at {} broke: {error}",
            socket.display()
        ))),
    }
}
