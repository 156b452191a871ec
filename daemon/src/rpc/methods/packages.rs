//! `packages/install`, `packages/remove`, `packages/update` and `packages/list`: pi packages,
//! managed by pi's own package manager in the extension host, the steps of each sent to the
//! client that asked (`packages/progress`).

use std::sync::Arc;

use pi_protocol::v1::{
    ConfiguredPackage, PackagesInstallParams, PackagesInstallResponse, PackagesListParams,
    PackagesListResponse, PackagesProgress, PackagesProgressParams, PackagesRemoveParams,
    PackagesRemoveResponse, PackagesUpdateParams, PackagesUpdateResponse,
};
use pi_protocol::{ErrorKind, ErrorObject};
use serde_json::Value;

use crate::extensions::ExtensionError;
use crate::extensions::packages::{PackageOp, Progress};
use crate::rpc::dispatch::RequestContext;

/// Runs `op` for the request's client, its steps sent to it.
async fn run(
    context: &RequestContext,
    op: PackageOp,
    cwd: &str,
    source: Option<&str>,
    local: bool,
) -> Result<Value, ErrorObject> {
    let host = context.state.extensions.as_ref().ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::Internal,
            "this daemon runs no extensions (started without an extension host)",
        )
    })?;
    let cwd =
        crate::session::params::absolute_path("cwd", cwd).map_err(crate::rpc::errors::session)?;
    if matches!(op, PackageOp::Install | PackageOp::Remove)
        && source.is_none_or(|source| source.trim().is_empty())
    {
        return Err(ErrorObject::new(
            ErrorKind::InvalidParams,
            "`source` is empty: name a package (npm:NAME, git:HOST/PATH, a URL or a path)",
        ));
    }
    let connection = context.connection.clone();
    let progress: Progress = Arc::new(move |step: Value| {
        if let Ok(params) = serde_json::from_value::<PackagesProgressParams>(step) {
            let _ = connection.notify::<PackagesProgress>(&params);
        }
    });
    let log = host.status().log_path;
    host.packages(op, &cwd, source, local, progress)
        .await
        .map_err(|error| match error {
            // pi's package manager refused or failed (a bad source, npm or git failing): its
            // own words, and where npm's and git's own output went.
            ExtensionError::Host(message) => ErrorObject::new(
                ErrorKind::InvalidParams,
                format!("{message} (npm's and git's output: {})", log.display()),
            ),
            other => ErrorObject::new(ErrorKind::Internal, other.to_string()),
        })
}

/// `packages/install`.
pub async fn install(
    context: &RequestContext,
    params: PackagesInstallParams,
) -> Result<PackagesInstallResponse, ErrorObject> {
    let answer = run(
        context,
        PackageOp::Install,
        &params.cwd,
        Some(&params.source),
        params.local,
    )
    .await?;
    Ok(PackagesInstallResponse {
        source: params.source,
        installed_path: answer["installedPath"].as_str().map(str::to_owned),
    })
}

/// `packages/remove`.
pub async fn remove(
    context: &RequestContext,
    params: PackagesRemoveParams,
) -> Result<PackagesRemoveResponse, ErrorObject> {
    let answer = run(
        context,
        PackageOp::Remove,
        &params.cwd,
        Some(&params.source),
        params.local,
    )
    .await?;
    Ok(PackagesRemoveResponse {
        removed: answer["removed"].as_bool() == Some(true),
    })
}

/// `packages/update`.
pub async fn update(
    context: &RequestContext,
    params: PackagesUpdateParams,
) -> Result<PackagesUpdateResponse, ErrorObject> {
    run(
        context,
        PackageOp::Update,
        &params.cwd,
        params.source.as_deref(),
        false,
    )
    .await?;
    Ok(PackagesUpdateResponse {})
}

/// `packages/list`.
pub async fn list(
    context: &RequestContext,
    params: PackagesListParams,
) -> Result<PackagesListResponse, ErrorObject> {
    let answer = run(context, PackageOp::List, &params.cwd, None, false).await?;
    let packages: Vec<ConfiguredPackage> = serde_json::from_value(answer["packages"].clone())
        .map_err(|error| {
            ErrorObject::new(
                ErrorKind::Internal,
                format!("the extension host listed packages in a shape pid does not read: {error}"),
            )
        })?;
    Ok(PackagesListResponse { packages })
}
