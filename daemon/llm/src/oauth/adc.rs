//! Google's Application Default Credentials, for Vertex AI: the file
//! `$GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
//! `~/.config/gcloud/application_default_credentials.json` (`gcloud auth application-default
//! login`). An `authorized_user` file trades its refresh token for an access token; a
//! `service_account` file signs a JWT (RS256) with its private key and trades that. Tokens are
//! kept until a minute before they expire, one fetch at a time per file.
//!
//! Guarantees: no token, key or refresh token appears in an error; errors name the file and
//! what to do.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Deserialize;
use serde_json::json;

use super::{Endpoints, OAuthError, post_form, string_field};

/// gcloud's token endpoint.
const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
/// What the token may do: Vertex AI is a Cloud Platform API.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Tokens count as expired this long before they do.
const MARGIN_MS: i64 = 60_000;

/// The credentials file to use: `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's when it exists.
pub fn credentials_file(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = var("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    let gcloud =
        PathBuf::from(var("HOME")?).join(".config/gcloud/application_default_credentials.json");
    gcloud.is_file().then_some(gcloud)
}

/// Whether Vertex AI can run on these credentials (pi's test): a credentials file, a project
/// and a location.
pub fn configured(var: impl Fn(&str) -> Option<String>) -> bool {
    let file = credentials_file(&var).is_some_and(|file| file.is_file());
    let project = var("GOOGLE_CLOUD_PROJECT").or_else(|| var("GCLOUD_PROJECT"));
    file && project.is_some() && var("GOOGLE_CLOUD_LOCATION").is_some()
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Credentials {
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
    },
    ServiceAccount {
        client_email: String,
        private_key: String,
        #[serde(default)]
        token_uri: Option<String>,
    },
}

type Cached = Arc<tokio::sync::Mutex<Option<(String, i64)>>>;

/// The cached token of each credentials file (one fetch at a time per file).
static TOKENS: LazyLock<Mutex<HashMap<PathBuf, Cached>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// An access token for Vertex AI from the credentials in `file`.
pub async fn token(file: &Path, endpoints: &Endpoints) -> Result<String, OAuthError> {
    let cached = TOKENS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(file.to_owned())
        .or_default()
        .clone();
    let mut slot = cached.lock().await;
    let now = pi_util::time::now_millis();
    if let Some((token, expires)) = slot.as_ref()
        && now < *expires - MARGIN_MS
    {
        return Ok(token.clone());
    }
    let (token, expires_in) = fetch(file, endpoints).await?;
    *slot = Some((token.clone(), now + expires_in * 1000));
    Ok(token)
}

async fn fetch(file: &Path, endpoints: &Endpoints) -> Result<(String, i64), OAuthError> {
    let shown = file.display();
    let text = std::fs::read_to_string(file).map_err(|error| {
        OAuthError::Local(format!(
            "cannot read the Google credentials {shown} ({error}); run `gcloud auth \
             application-default login` or set GOOGLE_APPLICATION_CREDENTIALS to a key file"
        ))
    })?;
    let credentials: Credentials = serde_json::from_str(&text).map_err(|error| {
        OAuthError::Local(format!(
            "{shown} is no Google credentials file this daemon reads ({}); it takes \
             \"authorized_user\" (gcloud's) and \"service_account\" keys",
            crate::config_value::redact_serde_message(&error.to_string())
        ))
    })?;
    let (url, form): (String, Vec<(&str, String)>) = match credentials {
        Credentials::AuthorizedUser {
            client_id,
            client_secret,
            refresh_token,
        } => (
            endpoints.url(GOOGLE_TOKEN_URL),
            vec![
                ("client_id", client_id),
                ("client_secret", client_secret),
                ("refresh_token", refresh_token),
                ("grant_type", "refresh_token".to_owned()),
            ],
        ),
        Credentials::ServiceAccount {
            client_email,
            private_key,
            token_uri,
        } => {
            let audience = token_uri.unwrap_or_else(|| GOOGLE_TOKEN_URL.to_owned());
            let assertion = signed_assertion(&client_email, &private_key, &audience)
                .map_err(|why| OAuthError::Local(format!("{shown}: {why}")))?;
            (
                audience,
                vec![
                    (
                        "grant_type",
                        "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
                    ),
                    ("assertion", assertion),
                ],
            )
        }
    };
    let form: Vec<(&str, &str)> = form
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let answer = post_form(&url, &form, &[]).await?;
    let token = string_field(&answer, "access_token").ok_or(OAuthError::Invalid {
        url: url.clone(),
        missing: "an access_token",
    })?;
    let expires_in = answer
        .get("expires_in")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(3600);
    Ok((token, expires_in))
}

/// A service account's JWT for `audience`, signed RS256 with its PKCS#8 PEM key.
fn signed_assertion(email: &str, pem: &str, audience: &str) -> Result<String, String> {
    let der: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .map(str::trim)
        .collect();
    let der = STANDARD
        .decode(der)
        .map_err(|_| "its private_key is not a PEM key".to_owned())?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|error| format!("its private_key is not an RSA PKCS#8 key ({error})"))?;
    let now = pi_util::time::now_millis() / 1000;
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "RS256", "typ": "JWT"}).to_string());
    let claims = URL_SAFE_NO_PAD.encode(
        json!({"iss": email, "scope": SCOPE, "aud": audience, "iat": now, "exp": now + 3600})
            .to_string(),
    );
    let signing_input = format!("{header}.{claims}");
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "signing with its private_key failed".to_owned())?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}
