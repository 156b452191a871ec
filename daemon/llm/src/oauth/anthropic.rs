//! Claude Pro/Max: authorization code with PKCE (the verifier doubles as `state`, as in pi),
//! callback on `localhost:53692/callback` or a pasted code; tokens from
//! `platform.claude.com`, JSON bodies; access tokens kept until five minutes before expiry.

use std::collections::BTreeMap;

use serde_json::json;

use super::{
    Callback, Endpoints, LoginIo, OAuthError, authorization_code, authorize_url, credential, http,
    pkce, send_json, string_field,
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
    let callback = Callback {
        port: CALLBACK_PORT,
        path: CALLBACK_PATH,
        service: "Anthropic",
        paste_prompt: "Paste the authorization code or full redirect URL:",
    };
    let (code, redirect_uri) =
        authorization_code(endpoints, io, callback, &state, |redirect_uri| {
            authorize_url(
                endpoints,
                AUTHORIZE_URL,
                &[
                    ("code", "true"),
                    ("client_id", CLIENT_ID),
                    ("response_type", "code"),
                    ("redirect_uri", redirect_uri),
                    ("scope", SCOPES),
                    ("code_challenge", &pkce.challenge),
                    ("code_challenge_method", "S256"),
                    ("state", &state),
                ],
            )
        })
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
