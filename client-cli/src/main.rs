//! `pictl`: the command-line client of the pi daemon.
//!
//! Plumbing by design: quiet by default, one JSON object per line where it prints data, exit
//! codes documented in `docs/cli.md` (0 ok, 1 failed, 2 usage, 3 daemon unreachable or
//! incompatible, 130 interrupted).

mod commands;
mod error;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

/// Drive the pi daemon from the command line
#[derive(Debug, Parser)]
#[command(name = "pictl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    interactive: commands::attach::InteractiveArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start, stop, restart or inspect the daemon
    #[command(subcommand)]
    Daemon(commands::daemon::DaemonCommand),
    /// Open the TUI on a session (no ID: pick one of this directory's recent sessions)
    Attach(commands::attach::AttachArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return CliError::failed(format!("cannot start the async runtime: {error}")).report();
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Some(Command::Daemon(command)) => commands::daemon::run(command).await,
            Some(Command::Attach(args)) => commands::attach::attach(args).await,
            None => commands::attach::interactive(cli.interactive).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => error.report(),
    }
}
