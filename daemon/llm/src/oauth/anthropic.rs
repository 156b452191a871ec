//! Claude Pro/Max: authorization code with PKCE (the verifier doubles as `state`, as in pi),
//! callback on `localhost:53692/callback` or a pasted code; tokens from
//! `platform.claude.com`, JSON bodies; access tokens kept until five minutes before expiry.

use std::collections::BTreeMap;

use serde_json::json;

use super::callback::CallbackServer;
use super::{
    Endpoints, LoginEvent, LoginIo, OAuthError, code_from_browser_or_paste, credential, http, pkce,
    send_json, string_field,
};
use crate::auth::OAuthCredential;

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";
/// Tokens count as expired this long before they do.
const MARGIN_MS: i64 = 5 * 60 * 1000;

pub(super) async fn login(
    endpoints: &Endpoints,
    io: &mut LoginIo,
) -> Result<OAuthCredential, OAuthError> {
    let pkce = pkce::generate()?;
    let state = pkce.verifier.clone();
    let port = endpoints.callback_port(CALLBACK_PORT);
    let mut server = match CallbackServer::start(
        &endpoints.callback_host,
        port,
        CALLBACK_PATH,
        state.clone(),
        "Anthropic",
    )
    .await
    {
        Ok(server) => Some(server),
        Err(error) => {
            io.show(LoginEvent::Progress(format!(
                "cannot listen on {}:{port} for the browser ({error}); paste the code instead",
                endpoints.callback_host
            )))
            .await?;
            None
        }
    };
    let port = server.as_ref().map_or(port, |server| server.address.port());
    let redirect_uri = format!("http://localhost:{port}{CALLBACK_PATH}");
    let mut url = url::Url::parse(&endpoints.url(AUTHORIZE_URL))
        .map_err(|error| OAuthError::Local(format!("bad authorization URL: {error}")))?;
    url.query_pairs_mut()
        .append_pair("code", "true")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", SCOPES)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &state);
    io.show(LoginEvent::OpenUrl {
        url: url.to_string(),
        instructions: "Complete login in your browser. If the browser is on another machine, \
                       paste the final redirect URL here."
            .to_owned(),
    })
    .await?;
    let code = code_from_browser_or_paste(
        server.as_mut(),
        io,
        &state,
        "Paste the authorization code or full redirect URL:",
        &redirect_uri,
    )
    .await?;
    drop(server);
    io.show(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".to_owned(),
    ))
    .await?;
    let token_url = endpoints.url(TOKEN_URL);
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    });
    tokens(&token_url, body).await
}

pub(super) async fn refresh(
    endpoints: &Endpoints,
    refresh_token: &str,
) -> Result<OAuthCredential, OAuthError> {
    let body = json!({
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": refresh_token,
    });
    tokens(&endpoints.url(TOKEN_URL), body).await
}

async fn tokens(url: &str, body: serde_json::Value) -> Result<OAuthCredential, OAuthError> {
    let request = http()?
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.to_string());
    let answer = send_json(url, request).await?;
    let invalid = |missing| OAuthError::Invalid {
        url: url.to_owned(),
        missing,
    };
    let access = string_field(&answer, "access_token").ok_or(invalid("an access_token"))?;
    let refresh = string_field(&answer, "refresh_token").ok_or(invalid("a refresh_token"))?;
    let expires_in = answer
        .get("expires_in")
        .and_then(serde_json::Value::as_f64)
        .ok_or(invalid("expires_in"))?;
    let expires = pi_util::time::now_millis() + (expires_in * 1000.0) as i64 - MARGIN_MS;
    Ok(credential(access, refresh, expires, BTreeMap::new()))
}
