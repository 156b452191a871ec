//! `pictl stats [--since WHEN] [--json]`: tokens and cost by model and by day, from the
//! daemon's usage ledger (`usage/stats`: every stored assistant message).

use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{UsageStats, UsageStatsParams, UsageTotals};
use pi_util::time::{millis_from_date, now_millis};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// Options of `pictl stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only usage from this UTC day (YYYY-MM-DD) or this many days back (7d)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Print the sums as one JSON object
    #[arg(long)]
    pub json: bool,
}

/// Runs `pictl stats`.
pub async fn run(args: StatsArgs) -> Result<ExitCode, CliError> {
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let client = daemon_client::connect().await?.client;
    let stats = client
        .call::<UsageStats>(&UsageStatsParams { since })
        .await?;
    if args.json {
        print_json(&serde_json::to_value(&stats).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    let style = Style::stdout();
    let columns = [
        "MESSAGES",
        "INPUT",
        "OUTPUT",
        "CACHE-READ",
        "CACHE-WRITE",
        "COST",
    ];
    let mut by_model = Table::new(&[&["MODEL"], &columns[..]].concat());
    for model in &stats.by_model {
        by_model.row(row(
            format!("{}/{}", model.provider, model.model),
            &model.usage,
        ));
    }
    by_model.row(row("total".to_owned(), &stats.total));
    let mut by_day = Table::new(&[&["DAY"], &columns[..]].concat());
    for day in &stats.by_day {
        by_day.row(row(day.day.clone(), &day.usage));
    }
    let mut by_project = Table::new(&[&["PROJECT"], &columns[..]].concat());
    for project in &stats.by_project {
        by_project.row(row(project.cwd.clone(), &project.usage));
    }
    let mut text = by_model.render(style);
    text.push('\n');
    text.push_str(&by_day.render(style));
    text.push('\n');
    text.push_str(&by_project.render(style));
    print_text(&text);
    Ok(ExitCode::SUCCESS)
}

fn row(label: String, usage: &UsageTotals) -> Vec<String> {
    vec![
        label,
        usage.messages.to_string(),
        usage.tokens.input.to_string(),
        usage.tokens.output.to_string(),
        usage.tokens.cache_read.to_string(),
        usage.tokens.cache_write.to_string(),
        format!("${:.4}", usage.cost),
    ]
}

/// `YYYY-MM-DD` (UTC midnight) or `Nd` (N days before now), as Unix ms.
fn parse_since(text: &str) -> Result<i64, CliError> {
    if let Some(days) = text.strip_suffix('d')
        && let Ok(days) = days.parse::<i64>()
    {
        return Ok(now_millis() - days * 86_400_000);
    }
    millis_from_date(text).ok_or_else(|| {
        CliError::usage(format!(
            "--since {text:?} is neither a date (2026-03-15) nor a number of days (7d)"
        ))
    })
}
