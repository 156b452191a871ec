//! `pictl models [SEARCH] [--available] [--json] [--session ID]`: the models the daemon
//! knows (and a session's extensions' providers').
//!
//! A table (provider, model, context window, max output, reasoning, images, key status) or one
//! `ModelInfo` per line with `--json`. `SEARCH` keeps models whose `provider/id` or name
//! contains it (case-insensitive).

use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{ModelList, ModelListParams};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// Options of `pictl models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Only models whose provider/id or name contains this
    pub search: Option<String>,
    /// Only models whose provider has a key
    #[arg(long)]
    pub available: bool,
    /// Print one JSON object per model
    #[arg(long)]
    pub json: bool,
    /// With this session's models too: the providers its pi extensions register (id or
    /// unique prefix)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

/// Runs `pictl models`.
pub async fn run(args: ModelsArgs) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    let cwd = daemon_client::working_directory(None)?;
    daemon_client::warn_config_problems(&client, &cwd).await;
    let session_id = match &args.session {
        Some(id) => Some(daemon_client::find_session(&client, id).await?.id),
        None => None,
    };
    let models = client
        .call::<ModelList>(&ModelListParams {
            available_only: args.available,
            session_id,
            env_names: pi_client::env_names(),
        })
        .await?
        .models;
    let search = args.search.as_deref().map(str::to_lowercase);
    let models: Vec<_> = models
        .into_iter()
        .filter(|model| match &search {
            Some(search) => {
                format!("{}/{}", model.provider, model.id)
                    .to_lowercase()
                    .contains(search)
                    || model.name.to_lowercase().contains(search)
            }
            None => true,
        })
        .collect();
    if args.json {
        for model in &models {
            print_json(&serde_json::to_value(model).unwrap_or_default());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let style = Style::stdout();
    let mut table = Table::new(&[
        "PROVIDER", "MODEL", "CONTEXT", "MAX-OUT", "THINKING", "IMAGES", "KEY",
    ]);
    for model in &models {
        let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
        table.row(vec![
            model.provider.clone(),
            model.id.clone(),
            tokens(model.context_window),
            tokens(model.max_tokens),
            yes_no(model.reasoning),
            yes_no(model.images),
            if model.has_key {
                style.green("yes")
            } else {
                style.dim("no")
            },
        ]);
    }
    if !models.is_empty() {
        print_text(&table.render(style));
    }
    Ok(ExitCode::SUCCESS)
}

/// `200K`, `1M`, `32000` as pi's `--list-models` writes token counts.
fn tokens(count: u64) -> String {
    if count >= 1_000_000 && count.is_multiple_of(1_000_000) {
        format!("{}M", count / 1_000_000)
    } else if count >= 1000 && count.is_multiple_of(1000) {
        format!("{}K", count / 1000)
    } else {
        count.to_string()
    }
}
