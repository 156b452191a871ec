//! `pictl [options] [@files...] [messages...]`: pi's command line, with pi's meanings.
//!
//! Which mode runs follows pi: `--mode rpc` is the RPC bridge (`pictl rpc`); `--mode json`,
//! `--mode text`, `-p`, or stdin that is not a terminal is print mode (`pictl run`); anything
//! else is the TUI, with the messages sent as the session's first prompts. `-v` prints the
//! version, `--export FILE [OUT]` writes an HTML page of a session, `--list-models [SEARCH]`
//! lists the models that have a key, as pi prints them.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{ModelInfo, SessionMessageParams};

use crate::attachments;
use crate::commands::run::{OutputMode, RunArgs, SessionOptions, parse_output_mode};
use crate::daemon_client;
use crate::error::CliError;
use crate::output::print_line;

/// pi's options of `pictl` without a subcommand.
#[derive(Debug, Args)]
pub struct PiArgs {
    #[command(flatten)]
    pub options: SessionOptions,
    /// Non-interactive: process the messages, print the answer and exit
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Output mode: text (default), json or rpc
    #[arg(long, value_name = "MODE", value_parser = parse_output_mode,
          add = clap_complete::engine::ArgValueCandidates::new(crate::complete::output_modes))]
    pub mode: Option<OutputMode>,
    /// Pick a session to resume in the TUI
    #[arg(short = 'r', long = "resume")]
    pub resume: bool,
    /// Export a session (a pi session file, or a daemon session id) to HTML and exit; the
    /// first message is the output file
    #[arg(long, value_name = "FILE")]
    pub export: Option<String>,
    /// List the models that have a key (with an optional fuzzy search) and exit
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,
    /// Print the version and exit
    #[arg(short = 'v', visible_short_alias = 'V', long = "version")]
    pub version: bool,
    /// Files to attach (@path) and messages, each message a prompt of its own
    #[arg(value_name = "@FILE|MESSAGE")]
    pub inputs: Vec<String>,
}

/// Runs `pictl` without a subcommand.
pub async fn run(args: PiArgs) -> Result<ExitCode, CliError> {
    if args.version {
        // Installed as `pi`, the bare version, as pi prints its own.
        if crate::invoked_as_pi() {
            print_line(env!("CARGO_PKG_VERSION"));
        } else {
            print_line(&format!("pictl {}", env!("CARGO_PKG_VERSION")));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(source) = &args.export {
        let client = daemon_client::connect().await?.client;
        let out = args.inputs.iter().find(|input| !input.starts_with('@'));
        let written =
            crate::pi_sessions::export_html(&client, source, out.map(String::as_str)).await?;
        print_line(&format!("Exported to: {}", written.display()));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(search) = &args.list_models {
        return list_models(search).await;
    }
    if args.mode == Some(OutputMode::Rpc) {
        if args.inputs.iter().any(|input| input.starts_with('@')) {
            return Err(CliError::usage(
                "@file arguments are not supported in RPC mode",
            ));
        }
        return crate::rpc::run(crate::rpc::RpcArgs {
            options: args.options,
            ready: false,
        })
        .await;
    }
    let explicit = args.print || args.mode.is_some();
    if explicit || !std::io::stdin().is_terminal() {
        // pi's print mode, also for piped stdin (none on a terminal).
        let piped = attachments::read_piped_stdin()?;
        // pi with nothing to send (`pi < /dev/null`, `echo | pi -p`) does nothing and ends 0
        // — once its options are known to be right: options no flag of pictl's names are
        // the extensions' to accept, which takes a session to load them.
        if piped.is_none() && args.inputs.is_empty() {
            if !args.options.extensions.extension_flags.is_empty() {
                let client = daemon_client::connect().await?.client;
                let cwd = daemon_client::working_directory(args.options.cwd.as_deref())?;
                let opened =
                    crate::commands::run::open_session(&client, &args.options, &cwd).await?;
                if opened.created {
                    let _ = client
                        .call::<pi_protocol::v1::SessionDelete>(&pi_protocol::v1::SessionIdParams {
                            session_id: opened.info.id,
                        })
                        .await;
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
        return crate::commands::run::run(RunArgs {
            options: args.options,
            mode: args.mode,
            print: true,
            json: false,
            pi_compat: false,
            inputs: args.inputs,
            piped,
        })
        .await;
    }
    interactive(args).await
}

/// The TUI on the session the options name, with the messages as its first prompts.
async fn interactive(args: PiArgs) -> Result<ExitCode, CliError> {
    crate::commands::attach::require_terminal()?;
    let flags = crate::commands::attach::TuiFlags {
        model_scope: args.options.models.clone(),
        verbose: args.options.verbose,
        theme_paths: args.options.themes.clone(),
        no_themes: args.options.no_themes,
        subscription_key: args
            .options
            .api_key
            .as_deref()
            .is_some_and(|key| key.starts_with("sk-ant-oat")),
    };
    if args.resume {
        return crate::commands::attach::run_tui(
            pi_tui::Target::Pick,
            args.options.extensions.into_choice(),
            flags,
        )
        .await;
    }
    let cwd = daemon_client::working_directory(args.options.cwd.as_deref())?;
    let (attached, messages) = attachments::split_inputs(&args.inputs)?;
    let client = daemon_client::connect().await?.client;
    let resize = !attached.has_images() || attachments::resize_setting(&client, &cwd).await;
    let prompts = attachments::first_messages(None, attached.finish(resize), &messages);
    let session = crate::commands::run::open_session(&client, &args.options, &cwd)
        .await?
        .info;
    // pi sends the first message, then each further one after the previous run: a follow-up
    // waits for exactly that.
    for (index, (text, images)) in prompts.into_iter().enumerate() {
        let params = SessionMessageParams {
            session_id: session.id.clone(),
            text,
            images,
        };
        if index == 0 {
            client
                .call::<pi_protocol::v1::SessionPrompt>(&params)
                .await?;
        } else {
            client
                .call::<pi_protocol::v1::SessionFollowUp>(&params)
                .await?;
        }
    }
    crate::commands::attach::run_tui(
        pi_tui::Target::Session(session.id),
        args.options.extensions.into_choice(),
        flags,
    )
    .await
}

/// pi's `--list-models [SEARCH]`: the models with a key, fuzzy-filtered, sorted by provider
/// and id, as pi's table.
async fn list_models(search: &str) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    let models = daemon_client::models_with_keys(&client).await?;
    if models.is_empty() {
        print_line(
            "No models available. Set a provider's API key (see `pictl models`) or log in with `pictl login`.",
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut models: Vec<ModelInfo> = models
        .into_iter()
        .filter(|model| fuzzy_matches(search, &format!("{} {}", model.provider, model.id)))
        .collect();
    if models.is_empty() {
        print_line(&format!("No models matching \"{search}\""));
        return Ok(ExitCode::SUCCESS);
    }
    models.sort_by(|a, b| a.provider.cmp(&b.provider).then_with(|| a.id.cmp(&b.id)));
    for line in model_table(&models) {
        print_line(&line);
    }
    Ok(ExitCode::SUCCESS)
}

/// pi's table of models: provider, model, context, max-out, thinking, images; columns two
/// spaces apart, padded (the last too).
fn model_table(models: &[ModelInfo]) -> Vec<String> {
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ]
    .map(str::to_owned);
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|model| {
            [
                model.provider.clone(),
                model.id.clone(),
                token_count(model.context_window),
                token_count(model.max_tokens),
                yes_no(model.reasoning),
                yes_no(model.images),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|cell| cell.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            row.iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

fn yes_no(flag: bool) -> String {
    if flag { "yes" } else { "no" }.to_owned()
}

/// pi's token counts: `200K`, `1M`, `1.5M`, `128` .
fn token_count(count: u64) -> String {
    let scaled = |value: u64, unit: u64, suffix: &str| {
        if value.is_multiple_of(unit) {
            format!("{}{suffix}", value / unit)
        } else {
            #[allow(clippy::cast_precision_loss, reason = "display only")]
            let fraction = value as f64 / unit as f64;
            format!("{fraction:.1}{suffix}")
        }
    };
    if count >= 1_000_000 {
        scaled(count, 1_000_000, "M")
    } else if count >= 1_000 {
        scaled(count, 1_000, "K")
    } else {
        count.to_string()
    }
}

/// pi's fuzzy filter: every space-separated token of `query` is a subsequence of `text`
/// (ignoring case), or is when its letters and digits trade places (`gpt4` ~ `4gpt`).
fn fuzzy_matches(query: &str, text: &str) -> bool {
    let text = text.to_lowercase();
    query.split_whitespace().all(|token| {
        let token = token.to_lowercase();
        subsequence(&token, &text)
            || swapped(&token).is_some_and(|swapped| subsequence(&swapped, &text))
    })
}

fn subsequence(needle: &str, haystack: &str) -> bool {
    let mut rest = haystack.chars();
    needle.chars().all(|wanted| rest.any(|c| c == wanted))
}

/// `abc123` as `123abc` and back; `None` for any other shape.
fn swapped(token: &str) -> Option<String> {
    let split = token
        .find(|c: char| c.is_ascii_digit() != token.starts_with(|c: char| c.is_ascii_digit()))?;
    let (head, tail) = token.split_at(split);
    let letters = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase());
    let digits = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
    ((letters(head) && digits(tail)) || (digits(head) && letters(tail)))
        .then(|| format!("{tail}{head}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_as_pi_writes_them() {
        assert_eq!(token_count(200_000), "200K");
        assert_eq!(token_count(1_000_000), "1M");
        assert_eq!(token_count(1_048_576), "1.0M");
        assert_eq!(token_count(128_000), "128K");
        assert_eq!(token_count(8_192), "8.2K");
        assert_eq!(token_count(512), "512");
    }

    #[test]
    fn the_fuzzy_filter_wants_every_token_in_order() {
        assert!(fuzzy_matches("sonnet", "anthropic claude-sonnet-4-5"));
        assert!(fuzzy_matches("anth snt", "anthropic claude-sonnet-4-5"));
        assert!(!fuzzy_matches("gpt sonnet", "anthropic claude-sonnet-4-5"));
        assert!(fuzzy_matches("4o", "openai gpt-4o"));
        assert!(fuzzy_matches("o4", "openai gpt-4o"));
        assert!(!fuzzy_matches("zz", "openai gpt-4o"));
    }
}
