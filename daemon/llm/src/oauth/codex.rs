//! ChatGPT Plus/Pro (Codex): authorization code with PKCE and a random `state`, callback on
//! `localhost:1455/auth/callback` or a pasted code; tokens from `auth.openai.com` as form
//! posts; the account id read from the access token's claims and stored as `accountId`.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;

use super::{
    Callback, Endpoints, LoginIo, OAuthError, authorization_code, authorize_url, credential, pkce,
    post_form, string_field,
};
use crate::auth::OAuthCredential;

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const SCOPE: &str = "openid profile email offline_access";
const CLAIMS: &str = "https://api.openai.com/auth";

pub(super) async fn login(
    endpoints: &Endpoints,
    io: &mut LoginIo,
) -> Result<OAuthCredential, OAuthError> {
    let pkce = pkce::generate()?;
    let state = pkce::random_hex_state()?;
    let callback = Callback {
        port: CALLBACK_PORT,
        path: CALLBACK_PATH,
        service: "OpenAI",
        paste_prompt: "Paste the authorization code (or full redirect URL):",
    };
    let (code, redirect_uri) =
        authorization_code(endpoints, io, callback, &state, |redirect_uri| {
            authorize_url(
                endpoints,
                AUTHORIZE_URL,
                &[
                    ("response_type", "code"),
                    ("client_id", CLIENT_ID),
                    ("redirect_uri", redirect_uri),
                    ("scope", SCOPE),
                    ("code_challenge", &pkce.challenge),
                    ("code_challenge_method", "S256"),
                    ("state", &state),
                    ("id_token_add_organizations", "true"),
                    ("codex_cli_simplified_flow", "true"),
                    ("originator", "pi"),
                ],
            )
        })
        .await?;
    tokens(
        endpoints,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", &code),
            ("code_verifier", &pkce.verifier),
            ("redirect_uri", &redirect_uri),
        ],
    )
    .await
}

pub(super) async fn refresh(
    endpoints: &Endpoints,
    refresh_token: &str,
) -> Result<OAuthCredential, OAuthError> {
    tokens(
        endpoints,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", CLIENT_ID),
        ],
    )
    .await
}

async fn tokens(
    endpoints: &Endpoints,
    form: &[(&str, &str)],
) -> Result<OAuthCredential, OAuthError> {
    let url = endpoints.url(TOKEN_URL);
    let answer = post_form(&url, form, &[]).await?;
    let invalid = |missing| OAuthError::Invalid {
        url: url.clone(),
        missing,
    };
    let access = string_field(&answer, "access_token").ok_or(invalid("an access_token"))?;
    let refresh = string_field(&answer, "refresh_token").ok_or(invalid("a refresh_token"))?;
    let expires_in = answer
        .get("expires_in")
        .and_then(Value::as_f64)
        .ok_or(invalid("expires_in"))?;
    let account = account_id(&access).ok_or(invalid("a ChatGPT account id in the access token"))?;
    let expires = pi_util::time::now_millis() + (expires_in * 1000.0) as i64;
    let extra = BTreeMap::from([("accountId".to_owned(), Value::String(account))]);
    Ok(credential(access, refresh, expires, extra))
}

/// `chatgpt_account_id` of the access token's `https://api.openai.com/auth` claim.
pub fn account_id(access_token: &str) -> Option<String> {
    let payload = access_token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims[CLAIMS]["chatgpt_account_id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}
