//! `job/*` and `kernel/*`: the processes sessions keep running (background `bash` jobs, Python
//! kernels), owned by sessions and visible to every client.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `job/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobListParams {
    /// Only this session's jobs; every session's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Response of `job/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobListResponse {
    /// Jobs, oldest first: running ones, and those that ended (also before a daemon restart).
    pub jobs: Vec<JobInfo>,
}

/// One background job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    /// The job's id (also its output's artifact id: `artifact://ID`).
    pub id: String,
    /// The session that started it.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// Its working directory.
    pub cwd: String,
    /// `running`, `exited`, `killed`, or `lost` (it was running when the daemon stopped).
    pub state: String,
    /// The exit code, once `exited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The process leading the job's process group, while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Whether it runs under a terminal.
    pub tty: bool,
    /// Unix milliseconds.
    pub started_at: i64,
    /// Unix milliseconds, once ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    /// Bytes of output so far.
    pub output_bytes: u64,
}

/// Params of `job/kill`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobKillParams {
    /// The session.
    pub session_id: String,
    /// One job; every running job of the session when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// Response of `job/kill`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobKillResponse {
    /// How many running jobs were killed.
    pub killed: u32,
}

/// Params of `kernel/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KernelListParams {}

/// Response of `kernel/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KernelListResponse {
    /// Live kernels, least recently used first.
    pub kernels: Vec<KernelInfo>,
    /// The most kernels alive at once (older idle ones are evicted).
    pub limit: u32,
}

/// One Python kernel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KernelInfo {
    /// The session it belongs to.
    pub session_id: String,
    /// The interpreter running it.
    pub interpreter: String,
    /// `starting`, `idle` or `busy`.
    pub state: String,
    /// The kernel's process (group leader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Cells run.
    pub executions: u64,
    /// How often it was (re)started.
    pub starts: u32,
    /// Unix milliseconds of its last use.
    pub last_used_at: i64,
}

/// Job and kernel counts in `daemon/status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolCounts {
    /// Running jobs.
    pub jobs_running: u32,
    /// The most jobs running at once, daemon-wide.
    pub jobs_limit: u32,
    /// The most jobs one session runs at once.
    pub jobs_per_session_limit: u32,
    /// Live kernels.
    pub kernels: u32,
    /// The most kernels alive at once.
    pub kernels_limit: u32,
}
