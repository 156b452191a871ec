//! `pictl`: the command-line client of the pi daemon.
//!
//! Plumbing by design: quiet by default, one JSON object per line where it prints data, exit
//! codes documented in `docs/cli.md` (0 ok, 1 failed, 2 usage, 3 daemon unreachable or
//! incompatible, 130 interrupted).

mod acp;
mod attachments;
mod commands;
mod complete;
mod daemon_client;
mod error;
mod extension_flags;
mod output;
mod pi_cli;
mod pi_events;
mod pi_sessions;
mod rpc;

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

use crate::commands::drive::Delivery;
use crate::error::CliError;

/// pi on the pi daemon: pi's command line (`pictl [options] [@files...] [messages...]`), and
/// the daemon's commands
#[derive(Debug, Parser)]
#[command(
    name = "pictl",
    version,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Run against the daemon on another machine, through ssh (also PI_REMOTE):
    /// ssh://[user@]host[:port][:/path/to/pictl]
    #[arg(long, global = true, value_name = "SSH_URL")]
    remote: Option<String>,
    #[command(flatten)]
    pi: pi_cli::PiArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send prompts and print the reply (pi's print and JSON modes)
    Run(commands::run::RunArgs),
    /// List sessions
    Sessions(commands::sessions::SessionsArgs),
    /// Show, rename, delete, fork, label, export or import a session
    #[command(subcommand)]
    Session(commands::sessions::SessionCommand),
    /// Start a run in a session and return at once
    Send(commands::drive::MessageArgs),
    /// Queue a message for after the running tools of a session
    Steer(commands::drive::MessageArgs),
    /// Queue a message for when a session's agent would stop
    FollowUp(commands::drive::MessageArgs),
    /// Abort a session's run; return once it is idle
    Abort {
        /// Session id or unique prefix
        id: String,
    },
    /// Follow a session's events live
    Watch(commands::watch::WatchArgs),
    /// List the models the daemon knows, with whether their provider has a key
    Models(commands::models::ModelsArgs),
    /// Log in to a subscription (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot), or store
    /// an API key, as pi's /login
    Login(commands::login::LoginArgs),
    /// Log out of a subscription (or remove an API key), as pi's /logout
    Logout(commands::login::LogoutArgs),
    /// Show tokens and cost by model and by day
    Stats(commands::stats::StatsArgs),
    /// List or restart the MCP servers the daemon shares between sessions
    #[command(subcommand)]
    Mcp(commands::mcp::McpCommand),
    /// List or restart the language servers the daemon shares between sessions
    #[command(subcommand)]
    Lsp(commands::lsp::LspCommand),
    /// List the sessions' pi extensions, or restart the extension host
    #[command(subcommand)]
    Extensions(commands::extensions::ExtensionsCommand),
    /// Install a pi package and add it to your settings (or the project's: -l), as `pi install`
    Install(commands::packages::InstallArgs),
    /// Remove a pi package and its source from settings, as `pi remove`
    #[command(alias = "uninstall")]
    Remove(commands::packages::RemoveArgs),
    /// Update your pi packages (or one), as `pi update --extensions`
    Update(commands::packages::UpdateArgs),
    /// List the pi packages of your settings and this project's, as `pi list`
    List(commands::packages::ListArgs),
    /// List (or kill) the background jobs sessions run
    Jobs(commands::pools::JobsArgs),
    /// Test oh-my-pi's stream rules (TTSR) on a piece of a reply
    #[command(subcommand)]
    Rules(commands::rules::RulesCommand),
    /// List the Python kernels of the sessions' `python` tool
    Kernels(commands::pools::KernelsArgs),
    /// Serve the Agent Client Protocol on stdio (for Zed, JetBrains, Neovim), over daemon
    /// sessions
    Acp(acp::AcpArgs),
    /// Bridge pi's RPC protocol (pi --mode rpc) on stdio to a daemon session
    Rpc(rpc::RpcArgs),
    /// Print a shell completion script
    Completions {
        /// The shell
        shell: commands::assets::CompletionShell,
    },
    /// Write completion scripts and man pages into a directory (packaging)
    #[command(hide = true)]
    GenerateAssets {
        /// The directory (`packaging/` in the repository)
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Start, stop, restart or inspect the daemon
    #[command(subcommand)]
    Daemon(commands::daemon::DaemonCommand),
    /// Open the TUI on a session (no ID: pick one of this directory's recent sessions)
    Attach(commands::attach::AttachArgs),
    /// Open the web UI in a browser with a one-time login link (with --remote: forwarded
    /// through ssh)
    Web(commands::web::WebArgs),
    /// Join stdin and stdout to this user's daemon (the far side of --remote; run by ssh)
    #[command(hide = true)]
    Bridge {
        /// Do not start the daemon when none runs
        #[arg(long)]
        no_start: bool,
    },
}

/// Whether this program was installed and called as `pi`.
fn invoked_as_pi() -> bool {
    std::env::args_os()
        .next()
        .and_then(|program| {
            std::path::Path::new(&program)
                .file_name()
                .map(|name| name == "pi")
        })
        .unwrap_or(false)
}

/// `args` without `--remote URL` / `--remote=URL` (before `--`), and the remote they named.
fn take_remote(
    args: Vec<std::ffi::OsString>,
) -> Result<(Vec<std::ffi::OsString>, Option<pi_client::remote::Remote>), CliError> {
    let mut kept = Vec::with_capacity(args.len());
    let mut remote = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_str().unwrap_or_default();
        let value = if text == "--" {
            kept.push(arg);
            kept.extend(args.by_ref());
            break;
        } else if text == "--remote" {
            args.next()
                .and_then(|value| value.into_string().ok())
                .ok_or_else(|| {
                    CliError::usage(
                        "--remote needs a value: ssh://[user@]host[:port][:/path/to/pictl]",
                    )
                })?
        } else if let Some(value) = text.strip_prefix("--remote=") {
            value.to_owned()
        } else {
            kept.push(arg);
            continue;
        };
        remote = Some(
            pi_client::remote::Remote::parse(&value)
                .map_err(|error| CliError::usage(format!("--remote: {error}")))?,
        );
    }
    Ok((kept, remote))
}

fn main() -> ExitCode {
    // `COMPLETE=bash pictl`: the shell's completion, with model ids and session ids from the
    // running daemon (see `complete`); otherwise nothing happens here.
    // Installed as `pi`, the script registers `pi`.
    let completion = clap_complete::CompleteEnv::with_factory(Cli::command);
    if invoked_as_pi() {
        completion.bin("pi").complete();
    } else {
        completion.complete();
    }
    // Installed as `pi`, it ends as pi does: 1 for a bad command line too.
    let as_pi = invoked_as_pi();
    let code = run(as_pi);
    if as_pi && code == ExitCode::from(error::EXIT_USAGE) {
        return ExitCode::from(error::EXIT_FAILED);
    }
    code
}

fn run(as_pi: bool) -> ExitCode {
    // pi's two- and three-letter short options (`-nt`, `-nc`, ...), then the flags pi
    // extensions register: `--name[=value]` pictl does not know, on the commands that start
    // sessions (pi takes them so).
    let args = extension_flags::expand_pi_short_options(std::env::args_os().collect());
    // `--remote` anywhere before `--`: taken out first, so that pi's command line (whose
    // options exclude subcommands) still sees `pictl --remote URL run …` as `run`.
    let (args, remote) = match take_remote(args) {
        Ok(taken) => taken,
        Err(error) => return error.report(),
    };
    if let Some(remote) = remote {
        remote.choose();
    }
    let (args, extension_flags) = extension_flags::split(args, &Cli::command());
    let mut cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    ExitCode::SUCCESS
                }
                _ if as_pi => ExitCode::from(error::EXIT_FAILED),
                _ => ExitCode::from(error::EXIT_USAGE),
            };
        }
    };
    match &mut cli.command {
        Some(Command::Run(args)) => args.options.extensions.extension_flags = extension_flags,
        Some(Command::Rpc(args)) => args.options.extensions.extension_flags = extension_flags,
        Some(Command::Attach(args)) => args.extensions.extension_flags = extension_flags,
        None => cli.pi.options.extensions.extension_flags = extension_flags,
        Some(_) => {}
    }
    match &cli.command {
        Some(Command::Completions { shell }) => {
            return commands::assets::completions(Cli::command(), *shell);
        }
        Some(Command::GenerateAssets { out }) => {
            return commands::assets::generate(Cli::command(), out)
                .unwrap_or_else(CliError::report);
        }
        _ => {}
    }
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
        let Some(command) = cli.command else {
            // No subcommand: pi's command line (the TUI, print, JSON or RPC mode).
            return pi_cli::run(cli.pi).await;
        };
        match command {
            // `pictl run --mode rpc`: pi's RPC mode, as `pictl --mode rpc`.
            Command::Run(args) if args.mode == Some(commands::run::OutputMode::Rpc) => {
                rpc::run(rpc::RpcArgs {
                    options: args.options,
                    ready: false,
                })
                .await
            }
            Command::Run(args) => commands::run::run(args).await,
            Command::Sessions(args) => commands::sessions::list(args).await,
            Command::Session(command) => commands::sessions::run(command).await,
            Command::Send(args) => commands::drive::send(args, Delivery::Prompt).await,
            Command::Steer(args) => commands::drive::send(args, Delivery::Steer).await,
            Command::FollowUp(args) => commands::drive::send(args, Delivery::FollowUp).await,
            Command::Abort { id } => commands::drive::abort(&id).await,
            Command::Watch(args) => commands::watch::run(args).await,
            Command::Models(args) => commands::models::run(args).await,
            Command::Stats(args) => commands::stats::run(args).await,
            Command::Mcp(command) => commands::mcp::run(command).await,
            Command::Lsp(command) => commands::lsp::run(command).await,
            Command::Extensions(command) => commands::extensions::run(command).await,
            Command::Login(args) => commands::login::login(args).await,
            Command::Logout(args) => commands::login::logout(args).await,
            Command::Install(args) => commands::packages::install(args).await,
            Command::Remove(args) => commands::packages::remove(args).await,
            Command::Update(args) => commands::packages::update(args).await,
            Command::List(args) => commands::packages::list(args).await,
            Command::Jobs(args) => commands::pools::jobs(args).await,
            Command::Kernels(args) => commands::pools::kernels(args).await,
            Command::Rules(command) => commands::rules::run(command).await,
            Command::Rpc(args) => rpc::run(args).await,
            Command::Acp(args) => acp::run(args).await,
            Command::Completions { .. } | Command::GenerateAssets { .. } => Ok(ExitCode::SUCCESS),
            Command::Daemon(command) => commands::daemon::run(command).await,
            Command::Attach(args) => commands::attach::attach(args).await,
            Command::Web(args) => commands::web::run(args).await,
            Command::Bridge { no_start } => commands::bridge::run(!no_start).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => error.report(),
    }
}
