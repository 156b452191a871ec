//! `pictl install|remove|update|list`: pi packages, as `pi install|remove|update|list` manage
//! them (pi's own package manager, run by the daemon's extension host), with each step
//! printed as it happens (stderr) and the outcome on stdout.

use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{
    PackagesInstall, PackagesInstallParams, PackagesList, PackagesListParams, PackagesProgress,
    PackagesRemove, PackagesRemoveParams, PackagesUpdate, PackagesUpdateParams,
};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{eprint_line, print_json, print_text};

/// `pictl install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// npm:NAME[@VERSION], git:HOST/PATH[@REF], a git URL, or a local path
    pub source: String,
    /// Install for this project (.pi/settings.json) instead of for you (~/.pi/agent)
    #[arg(short = 'l', long)]
    pub local: bool,
}

/// `pictl remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The package's source, as settings name it
    pub source: String,
    /// Remove it from this project's settings (.pi/settings.json)
    #[arg(short = 'l', long)]
    pub local: bool,
}

/// `pictl update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// One package (default: every package not pinned to a version or ref)
    pub source: Option<String>,
    /// Packages only (pi's flag; pictl updates only packages)
    #[arg(long)]
    pub extensions: bool,
    /// Update one package (pi's spelling of the positional source)
    #[arg(long, value_name = "SOURCE", conflicts_with = "source")]
    pub extension: Option<String>,
    /// Update pi itself: pictl cannot; update it the way you installed it
    #[arg(long = "self")]
    pub self_update: bool,
}

/// `pictl list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

fn cwd() -> Result<String, CliError> {
    Ok(daemon_client::working_directory(None)?
        .display()
        .to_string())
}

/// Calls `call`, printing each `packages/progress` step to stderr until it is answered.
async fn with_progress<T>(
    notifications: &mut pi_client::Notifications,
    call: impl std::future::Future<Output = Result<T, pi_client::ClientError>>,
) -> Result<T, CliError> {
    tokio::pin!(call);
    loop {
        tokio::select! {
            answer = &mut call => return answer.map_err(CliError::from),
            step = notifications.next_of::<PackagesProgress>() => {
                // A failed step is the answer's error too: said once.
                if let Some(Ok(step)) = step
                    && let Some(message) =
                        step.message.filter(|_| step.kind != "complete" && step.kind != "error")
                {
                    eprint_line(&message);
                }
            }
        }
    }
}

/// `pictl install SOURCE [-l]`.
pub async fn install(args: InstallArgs) -> Result<ExitCode, CliError> {
    let mut connected = daemon_client::connect().await?;
    let params = PackagesInstallParams {
        source: args.source.clone(),
        local: args.local,
        cwd: cwd()?,
    };
    let installed = with_progress(
        &mut connected.notifications,
        connected.client.call::<PackagesInstall>(&params),
    )
    .await?;
    print_text(&format!("Installed {}\n", installed.source));
    if args.local {
        // A project's package is code the project brings, like its own extensions.
        eprint_line(
            "Its extensions load in this project's sessions once approved: `pictl extensions \
             trust` here (sessions ask too).",
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `pictl remove SOURCE [-l]`.
pub async fn remove(args: RemoveArgs) -> Result<ExitCode, CliError> {
    let mut connected = daemon_client::connect().await?;
    let params = PackagesRemoveParams {
        source: args.source.clone(),
        local: args.local,
        cwd: cwd()?,
    };
    let answer = with_progress(
        &mut connected.notifications,
        connected.client.call::<PackagesRemove>(&params),
    )
    .await?;
    if !answer.removed {
        return Err(CliError::failed(format!(
            "No matching package found for {} in {} settings; `pictl list` shows the packages",
            args.source,
            if args.local { "this project's" } else { "your" }
        )));
    }
    print_text(&format!("Removed {}\n", args.source));
    Ok(ExitCode::SUCCESS)
}

/// `pictl update [SOURCE]`.
pub async fn update(args: UpdateArgs) -> Result<ExitCode, CliError> {
    if args.self_update && !args.extensions {
        return Err(CliError::usage(
            "pictl cannot update itself (`--self`); update it the way you installed it. \
             `pictl update` updates your pi packages",
        ));
    }
    let source = args.source.or(args.extension);
    let mut connected = daemon_client::connect().await?;
    let params = PackagesUpdateParams {
        source: source.clone(),
        cwd: cwd()?,
    };
    with_progress(
        &mut connected.notifications,
        connected.client.call::<PackagesUpdate>(&params),
    )
    .await?;
    match source {
        Some(source) => print_text(&format!("Updated {source}\n")),
        None => print_text("Updated packages\n"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `pictl list`: the packages of your settings and of this project's, as `pi list` shows them.
pub async fn list(args: ListArgs) -> Result<ExitCode, CliError> {
    let connected = daemon_client::connect().await?;
    let list = connected
        .client
        .call::<PackagesList>(&PackagesListParams { cwd: cwd()? })
        .await?;
    if args.json {
        print_json(&serde_json::to_value(&list).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    if list.packages.is_empty() {
        print_text("No packages installed.\n");
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for (scope, title) in [("user", "User packages:"), ("project", "Project packages:")] {
        let packages: Vec<_> = list.packages.iter().filter(|p| p.scope == scope).collect();
        if packages.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(title);
        text.push('\n');
        for package in packages {
            let filtered = if package.filtered { " (filtered)" } else { "" };
            text.push_str(&format!("  {}{filtered}\n", package.source));
            if let Some(path) = &package.installed_path {
                text.push_str(&format!("    {path}\n"));
            }
        }
    }
    print_text(&text);
    Ok(ExitCode::SUCCESS)
}
