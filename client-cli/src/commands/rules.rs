//! `pictl rules test [FILE] TEXT`: which of oh-my-pi's stream rules (TTSR) would fire on a
//! piece of a reply (`rules/test`), as `omp ttsr` does — a rule file alone, or every stream
//! rule of this directory's project.

use std::io::Read as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use pi_protocol::v1::{RulesTest, RulesTestParams};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, eprint_line, print_json, print_text};

/// `pictl rules …`.
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Show which stream rules would fire on TEXT (exit 0: one fires, 1: none, 2: a bad call)
    Test(TestArgs),
}

/// Options of `pictl rules test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// The rule file to test (omit with --all: every stream rule of this project)
    #[arg(value_name = "FILE", required_unless_present = "all")]
    pub file: Option<String>,
    /// The text a reply would stream (`-`: read it from stdin); for a tool, its argument JSON
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,
    /// Test every stream rule of this directory's project and of the user instead of one file
    #[arg(long)]
    pub all: bool,
    /// Where the text comes from: text, thinking or tool:NAME
    #[arg(long, default_value = "text", value_name = "SOURCE")]
    pub source: String,
    /// Print the outcome as JSON
    #[arg(long)]
    pub json: bool,
}

/// Runs `pictl rules …`.
pub async fn run(command: RulesCommand) -> Result<ExitCode, CliError> {
    let RulesCommand::Test(args) = command;
    // With --all the one positional is the text.
    let (file, text) = match (args.all, args.file, args.text) {
        (true, Some(_), Some(_)) => {
            return Err(CliError::usage(
                "give a rule FILE or --all, not both: pictl rules test FILE TEXT, or pictl rules test --all TEXT",
            ));
        }
        (true, file, text) => (None, text.or(file)),
        (false, file, text) => (file, text),
    };
    let text = match text.as_deref() {
        None => {
            return Err(CliError::usage(
                "pictl rules test needs the text to match: pictl rules test FILE TEXT, or pictl rules test --all TEXT (TEXT - reads stdin)",
            ));
        }
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| {
                    CliError::usage(format!("cannot read the text from stdin: {error}"))
                })?;
            text
        }
        Some(text) => text.to_owned(),
    };
    let cwd = daemon_client::working_directory(None)?;
    let client = daemon_client::connect().await?.client;
    let tested = client
        .call::<RulesTest>(&RulesTestParams {
            cwd: cwd.display().to_string(),
            rule: file,
            text,
            source: Some(args.source),
        })
        .await
        .map_err(|error| {
            // A missing file or an unknown source: a bad call, not "nothing fires".
            if error.rpc_kind() == Some(pi_protocol::ErrorKind::InvalidParams) {
                CliError::usage(error.to_string())
            } else {
                CliError::from(error)
            }
        })?;
    let fired = tested.rules.iter().any(|rule| rule.fires);
    if args.json {
        print_json(&serde_json::to_value(&tested).unwrap_or_default());
    } else {
        for problem in &tested.diagnostics {
            eprint_line(&format!("{}: {}", problem.path, problem.message));
        }
        if tested.rules.is_empty() {
            if args.all {
                eprint_line(
                    "no stream rules here (rules with a `condition`, found where the settings have \"ompTools\" and their source is not in \"disabledProviders\")",
                );
            }
        } else {
            let mut table = Table::new(&["RULE", "OUTCOME", "FILE"]);
            for rule in &tested.rules {
                let outcome = match (rule.fires, rule.interrupts) {
                    (true, true) => "interrupts",
                    (true, false) => "reminds",
                    (false, _) => "-",
                };
                table.row(vec![
                    rule.name.clone(),
                    outcome.to_owned(),
                    rule.path.clone(),
                ]);
            }
            print_text(&table.render(Style::stdout()));
        }
    }
    Ok(if fired {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
