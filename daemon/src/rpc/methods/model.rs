//! `model/list`.

use pi_protocol::ErrorObject;
use pi_protocol::v1::{ModelListParams, ModelListResponse};

use crate::rpc::dispatch::RequestContext;
use crate::rpc::errors;

/// Lists known models with whether their provider has a key.
pub async fn list(
    context: &RequestContext,
    params: ModelListParams,
) -> Result<ModelListResponse, ErrorObject> {
    let sessions = &context.state.sessions;
    let provided = match &params.session_id {
        Some(id) => match sessions.hooks(id).await.map_err(errors::session)? {
            Some(hooks) => hooks.models().await,
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    let redefined = |provider: &str| provided.iter().any(|(model, _)| model.provider == provider);
    let mut models: Vec<_> = sessions
        .services()
        .models
        .list()
        .into_iter()
        .filter(|(model, _)| !redefined(&model.provider))
        .chain(provided.iter().cloned())
        .map(|(model, has_key)| {
            // A key the client's environment has counts, as it will for its sessions.
            let in_env = || {
                pi_llm::catalog::provider(&model.provider).is_some_and(|info| {
                    info.env_vars
                        .iter()
                        .any(|name| params.env_names.iter().any(|given| given == name))
                })
            };
            let has_key = has_key || in_env();
            (model, has_key)
        })
        .filter(|(_, has_key)| *has_key || !params.available_only)
        .map(|(model, has_key)| crate::session::model_info(&model, has_key))
        .collect();
    models.sort_by(|a, b| (&a.provider, &a.id).cmp(&(&b.provider, &b.id)));
    Ok(ModelListResponse { models })
}
