//! `pictl jobs` and `pictl kernels`: the background jobs and Python kernels sessions keep
//! running.

use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{
    JobKill, JobKillParams, JobList, JobListParams, KernelList, KernelListParams,
};

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{Style, Table, print_json, print_text};

/// `pictl jobs`.
#[derive(Debug, Args)]
pub struct JobsArgs {
    /// Only this session's jobs (id or unique prefix)
    #[arg(long)]
    session: Option<String>,
    /// Kill this job (and everything it started)
    #[arg(long, value_name = "JOB_ID")]
    kill: Option<String>,
    /// Print one JSON object
    #[arg(long)]
    json: bool,
}

/// `pictl kernels`.
#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// Print one JSON object
    #[arg(long)]
    json: bool,
}

/// Runs `pictl jobs`.
pub async fn jobs(args: JobsArgs) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    let session_id = match &args.session {
        Some(id) => Some(daemon_client::find_session(&client, id).await?.id),
        None => None,
    };
    let list = client
        .call::<JobList>(&JobListParams { session_id })
        .await?;
    if let Some(id) = &args.kill {
        let Some(job) = list.jobs.iter().find(|job| &job.id == id) else {
            return Err(CliError::failed(format!(
                "no job {id}; `pictl jobs` lists them"
            )));
        };
        let killed = client
            .call::<JobKill>(&JobKillParams {
                session_id: job.session_id.clone(),
                job_id: Some(job.id.clone()),
            })
            .await?;
        print_json(&serde_json::to_value(&killed).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        print_json(&serde_json::to_value(&list).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    if list.jobs.is_empty() {
        print_text(
            "No background jobs. A session starts one with `bash` and `background: true` (its tools must include `job`).\n",
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["JOB", "SESSION", "STATE", "PID", "OUTPUT", "COMMAND"]);
    for job in &list.jobs {
        table.row(vec![
            job.id.clone(),
            job.session_id.chars().take(8).collect(),
            match job.exit_code {
                Some(code) => format!("{} ({code})", job.state),
                None => job.state.clone(),
            },
            job.pid.map(|pid| pid.to_string()).unwrap_or_default(),
            format!("{} B", job.output_bytes),
            job.command.clone(),
        ]);
    }
    print_text(&table.render(Style::stdout()));
    Ok(ExitCode::SUCCESS)
}

/// Runs `pictl kernels`.
pub async fn kernels(args: KernelsArgs) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    let list = client.call::<KernelList>(&KernelListParams {}).await?;
    if args.json {
        print_json(&serde_json::to_value(&list).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    if list.kernels.is_empty() {
        print_text(&format!(
            "No Python kernel is running (at most {}); one starts when a session's `python` tool runs a cell.\n",
            list.limit
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["SESSION", "STATE", "PID", "CELLS", "STARTS", "INTERPRETER"]);
    for kernel in &list.kernels {
        table.row(vec![
            kernel.session_id.chars().take(8).collect(),
            kernel.state.clone(),
            kernel.pid.map(|pid| pid.to_string()).unwrap_or_default(),
            kernel.executions.to_string(),
            kernel.starts.to_string(),
            kernel.interpreter.clone(),
        ]);
    }
    print_text(&table.render(Style::stdout()));
    print_text(&format!(
        "{} of at most {} kernels\n",
        list.kernels.len(),
        list.limit
    ));
    Ok(ExitCode::SUCCESS)
}
