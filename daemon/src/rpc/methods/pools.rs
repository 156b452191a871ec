//! `job/list`, `job/kill` and `kernel/list`: the processes sessions keep running.

use pi_protocol::v1::{
    JobKillParams, JobKillResponse, JobListParams, JobListResponse, KernelListParams,
    KernelListResponse,
};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::rpc::dispatch::RequestContext;

fn jobs(context: &RequestContext) -> Result<&std::sync::Arc<crate::jobs::JobPool>, ErrorObject> {
    context.state.jobs.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no background jobs (started without a job pool)",
        )
    })
}

/// `job/list`.
pub async fn list_jobs(
    context: &RequestContext,
    params: JobListParams,
) -> Result<JobListResponse, ErrorObject> {
    let jobs = jobs(context)?
        .list(params.session_id.as_deref())
        .await
        .map_err(|error| {
            ErrorObject::new(ErrorKind::Storage, format!("cannot list the jobs: {error}"))
        })?;
    Ok(JobListResponse { jobs })
}

/// `job/kill`.
pub async fn kill_job(
    context: &RequestContext,
    params: JobKillParams,
) -> Result<JobKillResponse, ErrorObject> {
    let pool = jobs(context)?;
    let killed = match &params.job_id {
        None => pool.kill_session(&params.session_id).await,
        Some(id) => u32::from(pool.kill(&params.session_id, id).await.map_err(|error| {
            ErrorObject::new(ErrorKind::NotFound, error.to_string()).with_field("jobId")
        })?),
    };
    Ok(JobKillResponse { killed })
}

/// `kernel/list`.
pub async fn list_kernels(
    context: &RequestContext,
    _params: KernelListParams,
) -> Result<KernelListResponse, ErrorObject> {
    let pool = context.state.kernels.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no Python kernels (started without a kernel pool)",
        )
    })?;
    Ok(KernelListResponse {
        kernels: pool.list(),
        limit: pool.limits().max as u32,
    })
}
