//! `pictl mcp list|restart|logs|trust`: the MCP servers the daemon shares between its sessions.

use std::process::ExitCode;

use clap::Subcommand;
use pi_protocol::v1::{
    McpList, McpListParams, McpLogs, McpLogsParams, McpRestart, McpRestartParams, McpSetEnabled,
    McpSetEnabledParams, McpTrust, McpTrustParams, TrustDecision,
};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// `pictl mcp ...`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the servers (one per definition, shared by every session) and, for this
    /// directory, the definitions a session here sees
    List {
        /// Print one JSON object
        #[arg(long)]
        json: bool,
    },
    /// Restart a server by name (its failures are forgotten)
    Restart {
        /// The server's name in mcp.json
        name: String,
    },
    /// Print the end of a server's stderr log
    Logs {
        /// The server's name in mcp.json
        name: String,
        /// How many of the last lines
        #[arg(long, default_value_t = 100)]
        lines: u32,
    },
    /// Stop a session from using a server (its next run goes without it)
    Disable {
        /// The server's name
        name: String,
        /// The session
        #[arg(long)]
        session: String,
    },
    /// Let a session use a server again
    Enable {
        /// The server's name
        name: String,
        /// The session
        #[arg(long)]
        session: String,
    },
    /// Approve a server this directory's .mcp.json or .pi/mcp.json defines, so sessions here
    /// start it without asking (or refuse it, or forget the answer)
    Trust {
        /// The server's name in the project's file
        name: String,
        /// Refuse it: sessions never start it and stop asking
        #[arg(long, conflicts_with = "forget")]
        deny: bool,
        /// Forget the answer: sessions ask again
        #[arg(long)]
        forget: bool,
        /// The project directory (default: the current one)
        #[arg(long)]
        cwd: Option<std::path::PathBuf>,
    },
}

/// Runs `pictl mcp ...`.
pub async fn run(command: McpCommand) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    match command {
        McpCommand::List { json } => {
            let cwd = daemon_client::working_directory(None)?;
            let list = client
                .call::<McpList>(&McpListParams {
                    cwd: Some(cwd.display().to_string()),
                })
                .await?;
            if json {
                print_json(&serde_json::to_value(&list).unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            let mut servers = Table::new(&[
                "SERVER",
                "STATE",
                "TRANSPORT",
                "PID",
                "TOOLS",
                "SESSIONS",
                "LOG",
            ]);
            for server in &list.servers {
                servers.row(vec![
                    server.name.clone(),
                    match &server.last_error {
                        Some(error) if server.state != "ready" => {
                            format!("{} ({error})", server.state)
                        }
                        _ => server.state.clone(),
                    },
                    server.transport.clone(),
                    server.pid.map(|pid| pid.to_string()).unwrap_or_default(),
                    server.tools.len().to_string(),
                    server.sessions.len().to_string(),
                    server.log_path.clone(),
                ]);
            }
            let mut text = servers.render(Style::stdout());
            if !list.definitions.is_empty() {
                let mut definitions = Table::new(&["DEFINED", "TRANSPORT", "TRUST", "FILE"]);
                for definition in &list.definitions {
                    definitions.row(vec![
                        definition.name.clone(),
                        definition.transport.clone(),
                        definition.approval.clone(),
                        definition.file.clone(),
                    ]);
                }
                text.push('\n');
                text.push_str(&definitions.render(Style::stdout()));
            }
            for diagnostic in &list.diagnostics {
                text.push_str(&format!(
                    "warning: {}{}: {}\n",
                    diagnostic.path,
                    diagnostic
                        .key
                        .as_ref()
                        .map(|key| format!(": `{key}`"))
                        .unwrap_or_default(),
                    diagnostic.message
                ));
            }
            print_text(&text);
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Logs { name, lines } => {
            let logs = client
                .call::<McpLogs>(&McpLogsParams {
                    name,
                    lines: Some(lines),
                })
                .await?;
            let mut text = String::new();
            for log in &logs.logs {
                if logs.logs.len() > 1 {
                    text.push_str(&format!("==> {} <==\n", log.path));
                }
                text.push_str(&log.text);
                if !log.text.is_empty() {
                    text.push('\n');
                }
            }
            print_text(&text);
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Trust {
            name,
            deny,
            forget,
            cwd,
        } => {
            let cwd = daemon_client::working_directory(cwd.as_deref())?;
            let decision = match (deny, forget) {
                (true, _) => TrustDecision::Deny,
                (_, true) => TrustDecision::Forget,
                _ => TrustDecision::Approve,
            };
            let answer = client
                .call::<McpTrust>(&McpTrustParams {
                    cwd: cwd.display().to_string(),
                    name,
                    decision,
                })
                .await?;
            print_text(&format!(
                "{} ({}): {}\n",
                answer.name, answer.file, answer.approval
            ));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Disable { name, session } => set_enabled(&client, session, name, false).await,
        McpCommand::Enable { name, session } => set_enabled(&client, session, name, true).await,
        McpCommand::Restart { name } => {
            let restarted = client
                .call::<McpRestart>(&McpRestartParams { name })
                .await?;
            print_json(&serde_json::to_value(&restarted).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `pictl mcp enable|disable NAME --session ID`.
async fn set_enabled(
    client: &pi_client::Client,
    session: String,
    name: String,
    enabled: bool,
) -> Result<ExitCode, CliError> {
    let answer = client
        .call::<McpSetEnabled>(&McpSetEnabledParams {
            session_id: session.clone(),
            name,
            enabled,
        })
        .await?;
    print_text(&format!(
        "{session}: disabled servers: {}\n",
        if answer.disabled_servers.is_empty() {
            "none".to_owned()
        } else {
            answer.disabled_servers.join(", ")
        }
    ));
    Ok(ExitCode::SUCCESS)
}
