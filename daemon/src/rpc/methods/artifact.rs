//! `artifact/*` handlers: byte ranges of stored tool output.

use pi_protocol::v1::{ArtifactReadParams, ArtifactReadResponse};
use pi_protocol::{ErrorKind, ErrorObject};
use pi_tools::{ARTIFACT_SCHEME, ArtifactError};

use crate::rpc::dispatch::RequestContext;

/// Bytes `artifact/read` returns when no limit is given.
const DEFAULT_LIMIT: u64 = 1 << 20;
/// Most bytes one `artifact/read` returns.
const MAX_LIMIT: u64 = 4 << 20;

/// `artifact/read`.
pub async fn read(
    context: &RequestContext,
    params: ArtifactReadParams,
) -> Result<ArtifactReadResponse, ErrorObject> {
    // The session must exist (deleted sessions have no artifacts either).
    context
        .state
        .sessions
        .stored_info(&params.session_id)
        .await
        .map_err(crate::rpc::errors::session)?;
    let artifact_id = params
        .artifact_id
        .strip_prefix(ARTIFACT_SCHEME)
        .unwrap_or(&params.artifact_id)
        .to_owned();
    let artifacts = context.state.artifacts.clone();
    let session_id = params.session_id.clone();
    let offset = params.offset.unwrap_or(0);
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let chunk = tokio::task::spawn_blocking(move || {
        artifacts
            .session(&session_id)?
            .read_range(&artifact_id, offset, limit)
    })
    .await
    .map_err(crate::rpc::errors::internal)?
    .map_err(|error| match error {
        ArtifactError::InvalidId { .. } => {
            ErrorObject::new(ErrorKind::InvalidParams, error.to_string()).with_field("artifactId")
        }
        ArtifactError::NotFound(_) => {
            ErrorObject::new(ErrorKind::NotFound, error.to_string()).with_field("artifactId")
        }
        ArtifactError::Io { .. } => crate::rpc::errors::internal(error),
    })?;
    let bytes = chunk.data.len() as u64;
    Ok(ArtifactReadResponse {
        data: String::from_utf8_lossy(&chunk.data).into_owned(),
        offset: chunk.offset,
        bytes,
        total_bytes: chunk.total_bytes,
        eof: chunk.offset + bytes >= chunk.total_bytes,
    })
}
