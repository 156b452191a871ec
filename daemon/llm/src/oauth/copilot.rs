//! GitHub Copilot: GitHub's device flow (github.com or an Enterprise domain), then the GitHub
//! token traded for a short-lived Copilot token (`copilot_internal/v2/token`), which is the
//! key; the GitHub token is the "refresh" token. After a login the account's models are
//! enabled, as pi does.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::{
    Endpoints, LoginEvent, LoginIo, LoginOptions, OAuthError, credential, http, post_form,
    send_json, string_field,
};
use crate::auth::OAuthCredential;

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The identity pi sends Copilot (also every Copilot model's `headers`).
const HEADERS: [(&str, &str); 4] = [
    ("user-agent", USER_AGENT),
    ("editor-version", "vscode/1.107.0"),
    ("editor-plugin-version", "copilot-chat/0.35.0"),
    ("copilot-integration-id", "vscode-chat"),
];
/// What GitHub's device-flow posts carry besides the form.
const FORM_HEADERS: &[(&str, &str)] = &[("accept", "application/json"), ("user-agent", USER_AGENT)];
/// Copilot tokens count as expired this long before they do.
const MARGIN_MS: i64 = 5 * 60 * 1000;
/// The API of individual accounts (the catalog's base URL).
pub const INDIVIDUAL_API: &str = "https://api.individual.githubcopilot.com";

/// The host of `input` (a domain or URL), `None` when it is none.
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let url = if trimmed.contains("://") {
        url::Url::parse(trimmed)
    } else {
        url::Url::parse(&format!("https://{trimmed}"))
    };
    url.ok()?.host_str().map(str::to_owned)
}

/// The API base URL for a Copilot token: its `proxy-ep` with `proxy.` turned into `api.`;
/// else the Enterprise domain's; else individual accounts'.
pub fn copilot_base_url(token: &str, enterprise: Option<&str>) -> String {
    let proxy = token
        .split(';')
        .find_map(|part| part.trim().strip_prefix("proxy-ep="))
        .filter(|host| !host.is_empty());
    match (proxy, enterprise) {
        (Some(host), _) => {
            let host = host
                .strip_prefix("proxy.")
                .map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
            format!("https://{host}")
        }
        (None, Some(domain)) => format!("https://copilot-api.{domain}"),
        (None, None) => INDIVIDUAL_API.to_owned(),
    }
}

pub(super) async fn login(
    endpoints: &Endpoints,
    options: &LoginOptions,
    io: &mut LoginIo,
) -> Result<OAuthCredential, OAuthError> {
    let input = match &options.enterprise_domain {
        Some(domain) => domain.clone(),
        None => {
            io.ask(
                "GitHub Enterprise URL/domain (blank for github.com)",
                Some("company.ghe.com"),
                true,
            )
            .await?
        }
    };
    let enterprise = normalize_domain(&input);
    if !input.trim().is_empty() && enterprise.is_none() {
        return Err(OAuthError::Local(format!(
            "{:?} is not a GitHub Enterprise URL or domain; give one like company.ghe.com, or \
             nothing for github.com",
            input.trim()
        )));
    }
    let domain = enterprise
        .clone()
        .unwrap_or_else(|| "github.com".to_owned());
    let device_url = endpoints.url(&format!("https://{domain}/login/device/code"));
    let device = post_form(
        &device_url,
        &[("client_id", CLIENT_ID), ("scope", "read:user")],
        FORM_HEADERS,
    )
    .await?;
    let invalid = |missing| OAuthError::Invalid {
        url: device_url.clone(),
        missing,
    };
    let device_code = string_field(&device, "device_code").ok_or(invalid("a device_code"))?;
    let user_code = string_field(&device, "user_code").ok_or(invalid("a user_code"))?;
    let verification_uri =
        string_field(&device, "verification_uri").ok_or(invalid("a verification_uri"))?;
    let interval = device
        .get("interval")
        .and_then(Value::as_f64)
        .ok_or(invalid("an interval"))?;
    let expires_in = device
        .get("expires_in")
        .and_then(Value::as_f64)
        .ok_or(invalid("expires_in"))?;
    io.show(LoginEvent::OpenUrl {
        url: verification_uri,
        instructions: format!("Enter code: {user_code}"),
    })
    .await?;
    let github_token = poll(endpoints, &domain, &device_code, interval, expires_in).await?;
    let credential = copilot_token(endpoints, &github_token, enterprise.as_deref()).await?;
    io.show(LoginEvent::Progress("Enabling models...".to_owned()))
        .await?;
    enable_models(
        endpoints,
        &credential,
        enterprise.as_deref(),
        &options.copilot_models,
    )
    .await;
    Ok(credential)
}

/// Polls for the GitHub token as pi does: the server's interval (at least a second) times
/// 1.2, and after `slow_down` its new interval (or five seconds more) times 1.4.
async fn poll(
    endpoints: &Endpoints,
    domain: &str,
    device_code: &str,
    interval_seconds: f64,
    expires_in: f64,
) -> Result<String, OAuthError> {
    let url = endpoints.url(&format!("https://{domain}/login/oauth/access_token"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(expires_in.max(0.0));
    let mut interval_ms = ((interval_seconds * 1000.0) as u64).max(1000);
    let mut multiplier = 1.2;
    let mut slowed_down = false;
    loop {
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        if remaining.is_zero() {
            break;
        }
        let wait = Duration::from_millis((interval_ms as f64 * multiplier).ceil() as u64);
        tokio::time::sleep(wait.min(remaining)).await;
        let answer = post_form(
            &url,
            &[
                ("client_id", CLIENT_ID),
                ("device_code", device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ],
            FORM_HEADERS,
        )
        .await?;
        if let Some(token) = string_field(&answer, "access_token") {
            return Ok(token);
        }
        match answer.get("error").and_then(Value::as_str) {
            Some("authorization_pending") => {}
            Some("slow_down") => {
                slowed_down = true;
                interval_ms = match answer.get("interval").and_then(Value::as_f64) {
                    Some(seconds) if seconds > 0.0 => (seconds * 1000.0) as u64,
                    _ => (interval_ms + 5000).max(1000),
                };
                multiplier = 1.4;
            }
            Some(error) => {
                let description = answer
                    .get("error_description")
                    .and_then(Value::as_str)
                    .map(|text| format!(": {text}"))
                    .unwrap_or_default();
                return Err(OAuthError::DeviceFlow(format!(
                    "the device flow failed: {error}{description}"
                )));
            }
            None => {
                return Err(OAuthError::Invalid {
                    url: url.clone(),
                    missing: "an access_token or an error",
                });
            }
        }
    }
    Err(OAuthError::DeviceFlow(if slowed_down {
        "the device flow timed out after the server asked to slow down, which clock drift in \
         WSL or a VM often causes; sync the clock and try again"
            .to_owned()
    } else {
        "the device flow timed out: the code was not entered in time; log in again".to_owned()
    }))
}

/// Trades the GitHub token for a Copilot token.
pub(super) async fn copilot_token(
    endpoints: &Endpoints,
    github_token: &str,
    enterprise: Option<&str>,
) -> Result<OAuthCredential, OAuthError> {
    let domain = enterprise.unwrap_or("github.com");
    let url = endpoints.url(&format!("https://api.{domain}/copilot_internal/v2/token"));
    let mut request = http()?
        .get(&url)
        .header("accept", "application/json")
        .bearer_auth(github_token);
    for (name, value) in HEADERS {
        request = request.header(name, value);
    }
    let answer = send_json(&url, request).await?;
    let invalid = |missing| OAuthError::Invalid {
        url: url.clone(),
        missing,
    };
    let token = string_field(&answer, "token").ok_or(invalid("a token"))?;
    let expires_at = answer
        .get("expires_at")
        .and_then(Value::as_f64)
        .ok_or(invalid("expires_at"))?;
    let mut extra = BTreeMap::new();
    if let Some(domain) = enterprise {
        extra.insert("enterpriseUrl".to_owned(), Value::String(domain.to_owned()));
    }
    Ok(credential(
        token,
        github_token.to_owned(),
        (expires_at * 1000.0) as i64 - MARGIN_MS,
        extra,
    ))
}

/// Accepts each model's policy for the account (some need it before use); failures are
/// ignored, as in pi.
async fn enable_models(
    endpoints: &Endpoints,
    credential: &OAuthCredential,
    enterprise: Option<&str>,
    models: &[String],
) {
    let Ok(client) = http() else { return };
    let base = match endpoints.overridden() {
        Some(origin) => origin.to_owned(),
        None => copilot_base_url(&credential.access, enterprise),
    };
    let requests = models.iter().map(|model| {
        let mut request = client
            .post(format!("{base}/models/{model}/policy"))
            .bearer_auth(&credential.access)
            .header("content-type", "application/json")
            .header("openai-intent", "chat-policy")
            .header("x-interaction-type", "chat-policy")
            .timeout(Duration::from_secs(30))
            .body(r#"{"state":"enabled"}"#);
        for (name, value) in HEADERS {
            request = request.header(name, value);
        }
        request.send()
    });
    for result in futures_join(requests).await {
        if let Err(error) = result {
            tracing::debug!(error = %error.without_url(), "enabling a Copilot model failed");
        }
    }
}

/// Runs the requests at once (a few dozen) and gathers their results.
async fn futures_join<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut results = Vec::with_capacity(handles.len());
    for handle in handles {
        if let Ok(result) = handle.await {
            results.push(result);
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_follows_the_tokens_proxy_endpoint() {
        assert_eq!(
            copilot_base_url(
                "tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;x=y",
                None
            ),
            "https://api.business.githubcopilot.com"
        );
        assert_eq!(
            copilot_base_url("tid=1", Some("acme.ghe.com")),
            "https://copilot-api.acme.ghe.com"
        );
        assert_eq!(copilot_base_url("opaque", None), INDIVIDUAL_API);
        assert_eq!(
            normalize_domain(" https://acme.ghe.com/x "),
            Some("acme.ghe.com".into())
        );
        assert_eq!(
            normalize_domain("acme.ghe.com"),
            Some("acme.ghe.com".into())
        );
        assert_eq!(normalize_domain(""), None);
    }
}
