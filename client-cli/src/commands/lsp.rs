//! `pictl lsp list|restart`: the language servers the daemon shares between its sessions.

use std::process::ExitCode;

use clap::Subcommand;
use pi_protocol::v1::{LspList, LspListParams, LspRestart, LspRestartParams};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// `pictl lsp ...`.
#[derive(Debug, Subcommand)]
pub enum LspCommand {
    /// List the language servers (one per server and workspace root, shared by every session
    /// working there)
    List {
        /// Print one JSON object
        #[arg(long)]
        json: bool,
    },
    /// Restart the servers of a name (their failures are forgotten; the next use starts them)
    Restart {
        /// The server's name (`pyright`, `typescript`, ...)
        name: String,
    },
}

/// Runs `pictl lsp ...`.
pub async fn run(command: LspCommand) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    match command {
        LspCommand::List { json } => {
            let list = client.call::<LspList>(&LspListParams::default()).await?;
            if json {
                print_json(&serde_json::to_value(&list).unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            if list.servers.is_empty() {
                print_text(
                    "No language server has run yet; one starts when a session's `lsp` tool (or \
                     a `write`) needs it.\n",
                );
                return Ok(ExitCode::SUCCESS);
            }
            let mut table =
                Table::new(&["SERVER", "STATE", "PID", "SESSIONS", "FILES", "ROOT", "LOG"]);
            for server in &list.servers {
                table.row(vec![
                    server.name.clone(),
                    match &server.last_error {
                        Some(error) if server.state != "ready" => {
                            format!("{} ({error})", server.state)
                        }
                        _ => server.state.clone(),
                    },
                    server.pid.map(|pid| pid.to_string()).unwrap_or_default(),
                    server.sessions.len().to_string(),
                    server.open_files.to_string(),
                    server.root.clone(),
                    server.log_path.clone(),
                ]);
            }
            print_text(&table.render(Style::stdout()));
            Ok(ExitCode::SUCCESS)
        }
        LspCommand::Restart { name } => {
            let restarted = client
                .call::<LspRestart>(&LspRestartParams { name })
                .await?;
            print_json(&serde_json::to_value(&restarted).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
    }
}
