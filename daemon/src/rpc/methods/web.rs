//! `web/login`: a one-time login link for the web UI ([`crate::web_auth`]).

use pi_protocol::v1::{WebLoginParams, WebLoginResponse};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::rpc::dispatch::RequestContext;
use crate::web_auth::WebAuthError;

/// `web/login`.
pub async fn login(
    context: &RequestContext,
    _params: WebLoginParams,
) -> Result<WebLoginResponse, ErrorObject> {
    let code = context
        .state
        .web_auth
        .new_code(pi_util::time::now_millis())
        .map_err(|error| {
            let kind = match error {
                WebAuthError::NotListening => ErrorKind::NotFound,
                WebAuthError::Random(_) => ErrorKind::Internal,
            };
            ErrorObject::new(kind, error.to_string())
        })?;
    let path = format!("/login?code={}", code.code);
    Ok(WebLoginResponse {
        url: format!("http://127.0.0.1:{}{path}", code.port),
        port: code.port,
        path,
        expires_at: code.expires_at,
    })
}
