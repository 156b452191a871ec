//! `pictl attach [ID]`, and `pictl` itself on a terminal (`pi.rs`): the TUI (`pi-tui`).
//! Detaching leaves the session running in the daemon.

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
    #[arg(add = clap_complete::engine::ArgValueCandidates::new(crate::complete::sessions))]
    pub session_id: Option<String>,
    /// Use this API key for the session's model's provider, for this session only (beats
    /// auth.json and the environment; needs a session id)
    #[arg(long, value_name = "KEY", requires = "session_id")]
    pub api_key: Option<String>,
    #[command(flatten)]
    pub extensions: ExtensionArgs,
}

/// pi's extension options for the sessions a command starts (`run`, `rpc`, the TUI).
#[derive(Debug, Default, Args)]
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
    /// What the TUI's new sessions load.
    pub fn into_choice(self) -> pi_tui::Extensions {
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
    let subscription_key = args
        .api_key
        .as_deref()
        .is_some_and(|key| key.starts_with("sk-ant-oat"));
    let target = match args.session_id {
        Some(id) => {
            let connected = daemon_client::connect().await?;
            let session = daemon_client::find_session(&connected.client, &id).await?;
            if let Some(key) = args.api_key {
                let Some(model) = &session.model else {
                    return Err(CliError::usage(
                        "--api-key is for the session's model, and this session has none yet; \
                         choose one in the TUI (/model) and attach again with the key",
                    ));
                };
                connected
                    .client
                    .call::<pi_protocol::v1::SessionSetApiKey>(
                        &pi_protocol::v1::SessionSetApiKeyParams {
                            session_id: session.id.clone(),
                            provider: model.provider.clone(),
                            key,
                        },
                    )
                    .await?;
            }
            Target::Session(session.id)
        }
        None => Target::Pick,
    };
    let flags = TuiFlags {
        subscription_key,
        ..TuiFlags::default()
    };
    run_tui(target, args.extensions.into_choice(), flags).await
}

/// The TUI needs a terminal on both ends.
pub fn require_terminal() -> Result<(), CliError> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "the TUI needs a terminal; use a subcommand for scripts (see `pictl --help`)",
        ));
    }
    Ok(())
}

/// pi's command-line options the TUI follows.
#[derive(Debug, Default)]
pub struct TuiFlags {
    /// Ctrl+P's model scope (`--models`); empty: the settings'.
    pub model_scope: Vec<String>,
    /// `--verbose`.
    pub verbose: bool,
    /// `--theme` paths, as given.
    pub theme_paths: Vec<String>,
    /// `--no-themes`.
    pub no_themes: bool,
    /// `--api-key` gave a Claude subscription token.
    pub subscription_key: bool,
}

/// Runs the TUI on `target`.
pub async fn run_tui(
    target: Target,
    extensions: pi_tui::Extensions,
    flags: TuiFlags,
) -> Result<ExitCode, CliError> {
    require_terminal()?;
    let paths = daemon_client::paths()?;
    let cwd = daemon_client::working_directory(None)?;
    let theme_paths = flags
        .theme_paths
        .iter()
        .map(|path| crate::attachments::absolute(path, &cwd))
        .collect();
    let options = AttachOptions {
        theme_paths,
        target,
        cwd,
        paths,
        client_version: env!("CARGO_PKG_VERSION").to_owned(),
        extensions,
        model_scope: flags.model_scope,
        verbose: flags.verbose,
        no_themes: flags.no_themes,
        subscription_key: flags.subscription_key,
    };
    match pi_tui::run(options).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => Err(match error.downcast::<ClientError>() {
            Ok(client_error) => CliError::from(client_error),
            Err(error) => CliError::failed(format!("{error:#}")),
        }),
    }
}
