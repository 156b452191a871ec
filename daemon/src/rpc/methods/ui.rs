//! `ui/*` handlers: thin adapters over the registry's questions
//! ([`crate::session::questions`]).

use pi_protocol::ErrorObject;
use pi_protocol::v1::{UiAskParams, UiAskResponse, UiRespondParams, UiRespondResponse};

use crate::rpc::dispatch::RequestContext;

/// `ui/ask`: waits for the first answer.
pub async fn ask(
    context: &RequestContext,
    params: UiAskParams,
) -> Result<UiAskResponse, ErrorObject> {
    context
        .state
        .sessions
        .ask(params)
        .await
        .map_err(crate::rpc::errors::session)
}

/// `ui/respond`.
pub async fn respond(
    context: &RequestContext,
    params: UiRespondParams,
) -> Result<UiRespondResponse, ErrorObject> {
    let connection = &context.connection;
    let by = format!("{} ({})", connection.client_name(), connection.sink().id());
    context
        .state
        .sessions
        .respond(params, by)
        .await
        .map_err(crate::rpc::errors::session)
}
