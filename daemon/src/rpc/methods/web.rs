//! `web/login` and `web/revoke`: the web UI's one-time login links and logging every
//! browser out ([`crate::web_auth`]). Both are answered on the Unix socket only — the owner's
//! `pictl`, here or through `--remote`'s bridge — so a browser (or anything holding a
//! cookie) cannot renew its own login.

use pi_protocol::v1::{EmptyResponse, WebLoginParams, WebLoginResponse, WebRevokeParams};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::rpc::connection::TransportKind;
use crate::rpc::dispatch::RequestContext;
use crate::web_auth::WebAuthError;

fn unix_only(context: &RequestContext, method: &str) -> Result<(), ErrorObject> {
    match context.connection.transport() {
        TransportKind::Unix => Ok(()),
        TransportKind::WebSocket => Err(ErrorObject::new(
            ErrorKind::Unauthorized,
            format!(
                "{method} is answered on the daemon's Unix socket only (`pictl web`), not over \
                 the WebSocket"
            ),
        )),
    }
}

fn error(error: WebAuthError) -> ErrorObject {
    let kind = match error {
        WebAuthError::NotListening => ErrorKind::NotFound,
        WebAuthError::Random(_) | WebAuthError::KeyFile { .. } => ErrorKind::Internal,
    };
    ErrorObject::new(kind, error.to_string())
}

/// `web/login`.
pub async fn login(
    context: &RequestContext,
    _params: WebLoginParams,
) -> Result<WebLoginResponse, ErrorObject> {
    unix_only(context, "web/login")?;
    let code = context
        .state
        .web_auth
        .new_code(pi_util::time::now_millis())
        .map_err(error)?;
    let path = format!("/login?code={}", code.code);
    Ok(WebLoginResponse {
        url: format!("http://127.0.0.1:{}{path}", code.port),
        port: code.port,
        path,
        expires_at: code.expires_at,
    })
}

/// `web/revoke`.
pub async fn revoke(
    context: &RequestContext,
    _params: WebRevokeParams,
) -> Result<EmptyResponse, ErrorObject> {
    unix_only(context, "web/revoke")?;
    context.state.web_auth.rotate().map_err(error)?;
    Ok(EmptyResponse {})
}
