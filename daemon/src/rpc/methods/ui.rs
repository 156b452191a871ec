//! `ui/*` handlers: thin adapters over [`crate::ui::UiBroker`].

use pi_protocol::ErrorObject;
use pi_protocol::v1::{UiAskParams, UiAskResponse, UiRespondParams, UiRespondResponse};

use crate::rpc::dispatch::RequestContext;
use crate::ui::UiBroker;

/// `ui/ask`: waits for the first answer.
pub async fn ask(
    context: &RequestContext,
    params: UiAskParams,
) -> Result<UiAskResponse, ErrorObject> {
    UiBroker::ask(&context.state, params)
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
    UiBroker::respond(&context.state, params, by)
        .await
        .map_err(crate::rpc::errors::session)
}
