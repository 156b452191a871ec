//! `pictl extensions list|restart|trust`: the extension host every session shares, what each
//! session's pi extensions loaded, and the answers about the extensions projects bring.

use std::process::ExitCode;

use clap::Subcommand;
use pi_protocol::v1::{
    ExtensionsList, ExtensionsListParams, ExtensionsRestart, ExtensionsRestartParams,
    ExtensionsTrust, ExtensionsTrustParams, TrustDecision,
};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// `pictl extensions ...`.
#[derive(Debug, Subcommand)]
pub enum ExtensionsCommand {
    /// Show the extension host and each session's extensions, with what failed to load
    List {
        /// Only this session
        #[arg(long)]
        session: Option<String>,
        /// Print one JSON object
        #[arg(long)]
        json: bool,
    },
    /// End the extension host (failures forgotten); the next use starts it again
    Restart,
    /// Approve the extensions this project brings (they run only once approved); sessions
    /// that skipped them load them now
    Trust {
        /// Only these of its extensions (files or directories; default: all of them)
        paths: Vec<String>,
        /// Refuse them: sessions never load them and stop asking
        #[arg(long, conflicts_with = "forget")]
        deny: bool,
        /// Forget the answer: the next session asks again
        #[arg(long)]
        forget: bool,
        /// The project directory (default: the current one)
        #[arg(long)]
        cwd: Option<std::path::PathBuf>,
    },
}

/// Runs `pictl extensions ...`.
pub async fn run(command: ExtensionsCommand) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    match command {
        ExtensionsCommand::List { session, json } => {
            // An id or unique prefix, as everywhere; an unknown one is an error.
            let session = match session {
                Some(id) => Some(daemon_client::find_session(&client, &id).await?.id),
                None => None,
            };
            let list = client
                .call::<ExtensionsList>(&ExtensionsListParams {
                    session_id: session.clone(),
                })
                .await?;
            if json {
                print_json(&serde_json::to_value(&list).unwrap_or_default());
                return Ok(ExitCode::SUCCESS);
            }
            let host = &list.host;
            let mut text = format!(
                "Extension host: {}{}{}\nLog: {}\n",
                host.state,
                host.pid
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default(),
                host.last_error
                    .as_ref()
                    .map(|error| format!(" — {error}"))
                    .unwrap_or_default(),
                host.log_path,
            );
            if let (Some(id), true) = (&session, list.sessions.is_empty()) {
                text.push_str(&format!(
                    "Session {id} has no extensions loaded (none configured for it, or it is not \
                     loaded now).\n"
                ));
                print_text(&text);
                return Ok(ExitCode::SUCCESS);
            }
            if list.sessions.is_empty() {
                text.push_str(
                    "No session has extensions; they load from ~/.pi/agent/extensions/, settings \
                     `extensions` and `packages`.\n",
                );
                print_text(&text);
                return Ok(ExitCode::SUCCESS);
            }
            let mut table = Table::new(&[
                "SESSION",
                "EXTENSION",
                "TOOLS",
                "COMMANDS",
                "EVENTS",
                "PROBLEM",
            ]);
            for session in &list.sessions {
                for extension in &session.extensions {
                    table.row(vec![
                        session.session_id.clone(),
                        shown_path(&extension.path),
                        extension.tools.join(", "),
                        extension.commands.join(", "),
                        extension.handlers.join(", "),
                        String::new(),
                    ]);
                }
                let problems = session.diagnostics.iter().map(|problem| (problem, ""));
                let skipped = session.skipped.iter().map(|problem| (problem, "skipped: "));
                for (problem, prefix) in problems.chain(skipped) {
                    table.row(vec![
                        session.session_id.clone(),
                        shown_path(&problem.path),
                        String::new(),
                        String::new(),
                        String::new(),
                        // One line per row: a parse error's own line breaks would cut it.
                        format!("{prefix}{}", problem.error.replace('\n', " ")),
                    ]);
                }
            }
            text.push_str(&table.render(Style::stdout()));
            for session in list
                .sessions
                .iter()
                .filter(|session| !session.models.is_empty())
            {
                text.push_str(&format!(
                    "{} has the models of its extensions' providers: {}\n",
                    session.session_id,
                    session.models.join(", ")
                ));
            }
            print_text(&text);
            Ok(ExitCode::SUCCESS)
        }
        ExtensionsCommand::Restart => {
            let restarted = client
                .call::<ExtensionsRestart>(&ExtensionsRestartParams {})
                .await?;
            print_json(&serde_json::to_value(&restarted).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        ExtensionsCommand::Trust {
            paths,
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
                .call::<ExtensionsTrust>(&ExtensionsTrustParams {
                    cwd: cwd.display().to_string(),
                    paths,
                    decision,
                })
                .await?;
            let lines: Vec<String> = answer
                .extensions
                .iter()
                .map(|extension| {
                    format!("{}: {}\n", shown_path(&extension.path), extension.approval)
                })
                .collect();
            print_text(&lines.concat());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A path as the table shows it: under the home directory with `~`.
fn shown_path(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => match path.strip_prefix(&home) {
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_owned(),
        },
        _ => path.to_owned(),
    }
}
