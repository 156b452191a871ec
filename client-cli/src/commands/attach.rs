//! `pictl attach [ID]`, and `pictl [--model M] [--thinking L] [-c]` on a terminal: the TUI
//! (`pi-tui`). Detaching leaves the session running in the daemon.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Args;
use pi_client::ClientError;
use pi_tui::{AttachOptions, Target};

use crate::daemon_client;
use crate::error::CliError;

/// `pictl attach` arguments.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The session to attach to (id or unique prefix); without it, pick among this directory's
    /// recent sessions
    pub session_id: Option<String>,
    #[command(flatten)]
    pub extensions: ExtensionArgs,
}

/// Flags of `pictl` without a subcommand (interactive use).
#[derive(Debug, Args)]
pub struct InteractiveArgs {
    /// Model of the new session (`provider/id`, an id or a search term, optional `:level`)
    #[arg(long, global = false)]
    pub model: Option<String>,
    /// Thinking level of the new session (off, minimal, low, medium, high, xhigh)
    #[arg(long)]
    pub thinking: Option<String>,
    /// Continue the most recent session in this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,
    #[command(flatten)]
    pub extensions: ExtensionArgs,
}

/// pi's extension options for the sessions a command starts (`run`, `rpc`, the TUI).
#[derive(Debug, Args)]
pub struct ExtensionArgs {
    /// Load this pi extension in new sessions besides the configured ones (a file,
    /// directory or package source; repeatable)
    #[arg(short = 'e', long = "extension", value_name = "PATH")]
    pub extensions: Vec<String>,
    /// Load none of the configured pi extensions in new sessions (-e ones still load)
    #[arg(long)]
    pub no_extensions: bool,
    /// Flags the sessions' extensions register (`--name[=value]` not known to pictl).
    #[arg(skip)]
    pub extension_flags: std::collections::BTreeMap<String, serde_json::Value>,
}

impl ExtensionArgs {
    fn choice(self) -> pi_tui::Extensions {
        pi_tui::Extensions {
            paths: self.extensions,
            none_configured: self.no_extensions,
            flags: self.extension_flags,
        }
    }
}

/// `pictl attach [ID]`.
pub async fn attach(args: AttachArgs) -> Result<ExitCode, CliError> {
    require_terminal()?;
    let target = match args.session_id {
        Some(id) => {
            let connected = daemon_client::connect().await?;
            Target::Session(
                daemon_client::find_session(&connected.client, &id)
                    .await?
                    .id,
            )
        }
        None => Target::Pick,
    };
    run_tui(target, args.extensions.choice()).await
}

/// `pictl` with no subcommand: a new session (or `-c`, the latest) in the TUI.
pub async fn interactive(args: InteractiveArgs) -> Result<ExitCode, CliError> {
    let target = if args.continue_session {
        Target::Continue
    } else {
        Target::New {
            model: args.model,
            thinking: args.thinking,
        }
    };
    run_tui(target, args.extensions.choice()).await
}

fn require_terminal() -> Result<(), CliError> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "the TUI needs a terminal; use a subcommand for scripts (see `pictl --help`)",
        ));
    }
    Ok(())
}

async fn run_tui(target: Target, extensions: pi_tui::Extensions) -> Result<ExitCode, CliError> {
    require_terminal()?;
    let paths = daemon_client::paths()?;
    let cwd = std::env::current_dir()
        .map_err(|error| CliError::failed(format!("cannot read the working directory: {error}")))?;
    let options = AttachOptions {
        target,
        cwd,
        paths,
        client_version: env!("CARGO_PKG_VERSION").to_owned(),
        extensions,
    };
    match pi_tui::run(options).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => Err(match error.downcast::<ClientError>() {
            Ok(client_error) => CliError::from(client_error),
            Err(error) => CliError::failed(format!("{error:#}")),
        }),
    }
}
