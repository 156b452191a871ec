//! The built-in tools (pi-tools) as the sessions' [`ToolFactory`], and user shell commands
//! (`session/bash`, pi's `!cmd`) through the same executor.
//!
//! Architecture invariant: one [`BuiltinTools`] per daemon, so one [`PathLocks`] shared by
//! every session's `write` and `edit`; artifacts live under `<data dir>/artifacts/<session>/`
//! and go with their session.

use std::sync::Arc;

use pi_agent::Tool;
use pi_agent::message::BashExecutionMessage;
use pi_tools::exec::{self, ExecEnd, ExecPlace, ExecRequest, OutputStyle, ShellConfig};
use pi_tools::{Artifacts, DEFAULT_TOOLS, PathLocks, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::session::{ToolEnvironment, ToolFactory};

/// Builds sessions' tools from pi-tools with the daemon's shared locks and artifact store.
#[derive(Clone, Debug)]
pub struct BuiltinTools {
    // The daemon's one set of per-path mutation locks; every session's tools clone it.
    locks: PathLocks,
    artifacts: Artifacts,
    shell: ShellConfig,
}

impl BuiltinTools {
    /// The factory over `artifacts`, with fresh locks (create one per daemon).
    pub fn new(artifacts: Artifacts) -> BuiltinTools {
        BuiltinTools {
            locks: PathLocks::new(),
            artifacts,
            shell: ShellConfig::default(),
        }
    }

    fn context(&self, environment: &ToolEnvironment) -> Result<Arc<ToolContext>, String> {
        let artifacts = self
            .artifacts
            .session(&environment.session_id)
            .map_err(|error| error.to_string())?;
        Ok(Arc::new(ToolContext {
            session_id: environment.session_id.clone(),
            cwd: environment.cwd.clone(),
            env: environment.env.clone(),
            shell: self.shell.clone(),
            artifacts,
            locks: self.locks.clone(),
        }))
    }
}

impl ToolFactory for BuiltinTools {
    fn tools(
        &self,
        environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, String> {
        let context = self.context(environment)?;
        pi_tools::create_tools(names, &context).map_err(|error| error.to_string())
    }

    fn default_names(&self) -> Vec<String> {
        DEFAULT_TOOLS
            .iter()
            .map(|name| (*name).to_owned())
            .collect()
    }

    fn delete_session(&self, session_id: &str) {
        if let Err(error) = self.artifacts.delete_session(session_id) {
            tracing::warn!(session = session_id, %error, "cannot delete the session's artifacts");
        }
    }
}

/// Runs a user shell command (`!cmd`) in the session's cwd and environment with sanitized,
/// tail-truncated output (the full output kept as an artifact), and returns the
/// `bashExecution` message to record. `cancel` kills the command's process group.
pub async fn user_bash(
    environment: &ToolEnvironment,
    artifacts: &Artifacts,
    command: &str,
    exclude_from_context: bool,
    cancel: &CancellationToken,
) -> Result<BashExecutionMessage, String> {
    let session_artifacts = artifacts
        .session(&environment.session_id)
        .map_err(|error| error.to_string())?;
    let shell = ShellConfig::default();
    let place = ExecPlace {
        cwd: &environment.cwd,
        env: &environment.env,
        shell: &shell,
        artifacts: &session_artifacts,
    };
    let request = ExecRequest {
        command: command.to_owned(),
        timeout: None,
        style: OutputStyle::Sanitized,
    };
    let result = exec::run(place, &request, cancel, &mut |_| {})
        .await
        .map_err(|error| error.to_string())?;
    let (exit_code, cancelled) = match result.end {
        ExecEnd::Exited(code) => (Some(code), false),
        ExecEnd::Signaled => (None, false),
        ExecEnd::TimedOut | ExecEnd::Aborted => (None, true),
    };
    let truncation = &result.output.truncation;
    Ok(BashExecutionMessage {
        command: command.to_owned(),
        output: truncation.content.clone(),
        exit_code,
        cancelled,
        truncated: truncation.truncated,
        full_output_path: result.output.artifact_reference(),
        exclude_from_context,
        timestamp: crate::state::unix_millis(),
    })
}
