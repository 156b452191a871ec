//! `model/list`.

use pi_protocol::ErrorObject;
use pi_protocol::v1::{ModelListParams, ModelListResponse};

use crate::rpc::dispatch::RequestContext;

/// Lists known models with whether their provider has a key.
pub async fn list(
    context: &RequestContext,
    params: ModelListParams,
) -> Result<ModelListResponse, ErrorObject> {
    let mut models: Vec<_> = context
        .state
        .sessions
        .services()
        .models
        .list()
        .into_iter()
        .filter(|(_, has_key)| *has_key || !params.available_only)
        .map(|(model, has_key)| crate::session::model_info(&model, has_key))
        .collect();
    models.sort_by(|a, b| (&a.provider, &a.id).cmp(&(&b.provider, &b.id)));
    Ok(ModelListResponse { models })
}
