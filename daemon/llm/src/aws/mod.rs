//! Amazon Bedrock's credentials and request signing.
//!
//! Credentials, in the AWS SDKs' order after pi's own first: `AWS_BEARER_TOKEN_BEDROCK` (a
//! Bedrock API key, sent as a Bearer token); `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`
//! (`AWS_SESSION_TOKEN`); the profile `AWS_PROFILE` (or `default`) of the shared files
//! (`~/.aws/credentials`, `~/.aws/config`, or `AWS_SHARED_CREDENTIALS_FILE`/`AWS_CONFIG_FILE`)
//! with static keys, a `credential_process`, or AWS SSO (the token `aws sso login` cached,
//! traded at the SSO portal for the role's keys); a web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` and
//! `AWS_ROLE_ARN`, as EKS's IRSA sets them) traded at STS. The region: `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, the profile's, else the model's endpoint's. Requests are signed with
//! SigV4 by awslabs' `aws-sigv4`.
//!
//! Guarantees: no secret key, session token or bearer token appears in an error; errors say
//! which variable or file to set.

pub mod eventstream;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::SystemTime;

/// Keys for SigV4.
#[derive(Clone)]
pub struct AwsKeys {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl std::fmt::Debug for AwsKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsKeys").finish_non_exhaustive()
    }
}

impl AwsKeys {
    /// Keys as given.
    pub fn new(access_key_id: &str, secret_access_key: &str, session_token: Option<&str>) -> Self {
        AwsKeys {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            session_token: session_token.map(str::to_owned),
        }
    }
}

/// How Bedrock requests authenticate.
#[derive(Clone, Debug)]
pub enum BedrockAuth {
    /// A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`).
    Bearer(String),
    /// SigV4 with these keys.
    SigV4(AwsKeys),
}

/// A profile's settings from the shared files.
#[derive(Clone, Debug, Default)]
struct Profile {
    values: HashMap<String, String>,
}

/// Reads `[name]` (credentials file) or `[profile name]` / `[default]` (config file) from an
/// INI-style file.
fn read_profile(path: &std::path::Path, name: &str, config: bool, into: &mut Profile) {
    let wanted = if config && name != "default" {
        format!("profile {name}")
    } else {
        name.to_owned()
    };
    read_section(path, &wanted, into);
}

/// Reads the section `[wanted]` of an INI-style file (values already set are kept).
fn read_section(path: &std::path::Path, wanted: &str, into: &mut Profile) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(section) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            inside = section.trim() == wanted;
            continue;
        }
        if inside && let Some((key, value)) = line.split_once('=') {
            into.values
                .entry(key.trim().to_owned())
                .or_insert_with(|| value.trim().to_owned());
        }
    }
}

fn profile(var: &dyn Fn(&str) -> Option<String>) -> (String, Profile) {
    let name = var("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
    let home = var("HOME").map(PathBuf::from).unwrap_or_default();
    let credentials = var("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".aws/credentials"));
    let config = var("AWS_CONFIG_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".aws/config"));
    // Read again only when a file changed (every request asks).
    let modified = |path: &std::path::Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let stamp = (modified(&credentials), modified(&config));
    let key = (credentials.clone(), config.clone(), name.clone());
    if let Some((seen, found)) = PROFILES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        && *seen == stamp
    {
        return (name, found.clone());
    }
    let mut found = Profile::default();
    read_profile(&credentials, &name, false, &mut found);
    read_profile(&config, &name, true, &mut found);
    // An SSO profile's session: its start URL and region.
    if let Some(session) = found.values.get("sso_session").cloned() {
        read_section(&config, &format!("sso-session {session}"), &mut found);
    }
    PROFILES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, (stamp, found.clone()));
    (name, found)
}

/// When each file was last modified, as seen.
type Stamp = (Option<SystemTime>, Option<SystemTime>);

/// A profile: the credentials file, the config file, the name.
type ProfileKey = (PathBuf, PathBuf, String);

/// Profiles read, with the files' modification times then.
static PROFILES: LazyLock<Mutex<HashMap<ProfileKey, (Stamp, Profile)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The region requests go to: the environment's, the profile's, else `fallback`.
pub fn region(var: &dyn Fn(&str) -> Option<String>, fallback: Option<&str>) -> String {
    var("AWS_REGION")
        .or_else(|| var("AWS_DEFAULT_REGION"))
        .or_else(|| profile(var).1.values.get("region").cloned())
        .or_else(|| fallback.map(str::to_owned))
        .unwrap_or_else(|| "us-east-1".to_owned())
}

/// Whether any credential source is configured (no file is read beyond the profile's).
pub fn configured(var: &dyn Fn(&str) -> Option<String>) -> bool {
    var("AWS_BEARER_TOKEN_BEDROCK").is_some()
        || var("AWS_ACCESS_KEY_ID").is_some()
        || (var("AWS_WEB_IDENTITY_TOKEN_FILE").is_some() && var("AWS_ROLE_ARN").is_some())
        || {
            let (_, found) = profile(var);
            found.values.contains_key("aws_access_key_id")
                || found.values.contains_key("credential_process")
                || found.values.contains_key("sso_account_id")
        }
}

/// Web identity credentials by role and token file, until a few minutes before they expire.
static ASSUMED: LazyLock<Mutex<HashMap<String, (AwsKeys, i64)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The credentials to use, by the chain above.
pub async fn credentials(
    var: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<BedrockAuth, String> {
    if let Some(token) = var("AWS_BEARER_TOKEN_BEDROCK") {
        return Ok(BedrockAuth::Bearer(token));
    }
    if let (Some(id), Some(secret)) = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
        return Ok(BedrockAuth::SigV4(AwsKeys::new(
            &id,
            &secret,
            var("AWS_SESSION_TOKEN").as_deref(),
        )));
    }
    let (name, found) = profile(var);
    let value = |key: &str| found.values.get(key).cloned();
    if let (Some(id), Some(secret)) = (value("aws_access_key_id"), value("aws_secret_access_key")) {
        return Ok(BedrockAuth::SigV4(AwsKeys::new(
            &id,
            &secret,
            value("aws_session_token").as_deref(),
        )));
    }
    if let Some(command) = value("credential_process") {
        return credential_process(&name, &command).await;
    }
    if let (Some(account), Some(role)) = (value("sso_account_id"), value("sso_role_name")) {
        // The session's name (a legacy profile's start URL) keys `aws sso login`'s cache.
        let cache_key = value("sso_session").or_else(|| value("sso_start_url"));
        let sso_region = value("sso_region").unwrap_or_else(|| region(var, None));
        return sso(var, &name, cache_key, &sso_region, &account, &role).await;
    }
    if let (Some(token_file), Some(role)) =
        (var("AWS_WEB_IDENTITY_TOKEN_FILE"), var("AWS_ROLE_ARN"))
    {
        return web_identity(var, &token_file, &role).await;
    }
    Err(
        "no AWS credentials for Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or \
         AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile with keys, \
         a credential_process or AWS SSO (`aws configure sso`, then `aws sso login`) in \
         ~/.aws/credentials or ~/.aws/config, or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN"
            .to_owned(),
    )
}

/// AWS SSO (IAM Identity Center): the access token `aws sso login` cached in
/// `~/.aws/sso/cache/SHA1(session).json` traded for the role's credentials at the portal
/// (`AWS_ENDPOINT_URL_SSO` replaces its address).
async fn sso(
    var: &(dyn Fn(&str) -> Option<String> + Sync),
    profile: &str,
    cache_key: Option<String>,
    sso_region: &str,
    account: &str,
    role: &str,
) -> Result<BedrockAuth, String> {
    use sha1::Digest;
    let login_again = format!("run `aws sso login --profile {profile}`");
    let cache_key = cache_key.ok_or_else(|| {
        format!("AWS profile {profile:?} names no sso_session or sso_start_url; configure it with `aws configure sso`")
    })?;
    let remembered = format!("sso\n{cache_key}\n{account}\n{role}");
    let now = pi_util::time::now_millis();
    if let Some((keys, expires)) = ASSUMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&remembered)
        && now < *expires - 300_000
    {
        return Ok(BedrockAuth::SigV4(keys.clone()));
    }
    let hash: String = sha1::Sha1::digest(cache_key.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let home = var("HOME").map(PathBuf::from).unwrap_or_default();
    let cache = home.join(".aws/sso/cache").join(format!("{hash}.json"));
    let cached: serde_json::Value = std::fs::read_to_string(&cache)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .ok_or_else(|| format!("no AWS SSO login for profile {profile:?}; {login_again}"))?;
    let token = cached["accessToken"].as_str().ok_or_else(|| {
        format!("the AWS SSO login for profile {profile:?} has no token; {login_again}")
    })?;
    if cached["expiresAt"]
        .as_str()
        .and_then(pi_util::time::millis_from_iso)
        .is_some_and(|expires| expires <= now)
    {
        return Err(format!(
            "the AWS SSO login for profile {profile:?} has expired; {login_again}"
        ));
    }
    let endpoint = var("AWS_ENDPOINT_URL_SSO")
        .unwrap_or_else(|| format!("https://portal.sso.{sso_region}.amazonaws.com"));
    let mut url = url::Url::parse(&format!(
        "{}/federation/credentials",
        endpoint.trim_end_matches('/')
    ))
    .map_err(|error| format!("the AWS SSO portal address is not a URL ({error})"))?;
    url.query_pairs_mut()
        .append_pair("account_id", account)
        .append_pair("role_name", role);
    let client = crate::oauth::shared_http().map_err(|error| error.to_string())?;
    let response = client
        .get(url.as_str())
        .header("x-amz-sso_bearer_token", token)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(|error| {
            format!(
                "could not reach the AWS SSO portal: {}",
                error.without_url()
            )
        })?;
    let status = response.status().as_u16();
    let json: serde_json::Value = response
        .bytes()
        .await
        .ok()
        .and_then(|body| serde_json::from_slice(&body).ok())
        .unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(format!(
            "the AWS SSO portal refused the role {role} of account {account} (HTTP {status}); {login_again}"
        ));
    }
    let credentials = &json["roleCredentials"];
    let (Some(id), Some(secret)) = (
        credentials["accessKeyId"].as_str(),
        credentials["secretAccessKey"].as_str(),
    ) else {
        return Err(format!(
            "the AWS SSO portal answered without keys; {login_again}"
        ));
    };
    let keys = AwsKeys::new(id, secret, credentials["sessionToken"].as_str());
    let expires = credentials["expiration"]
        .as_i64()
        .unwrap_or(now + 3_600_000);
    ASSUMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(remembered, (keys.clone(), expires));
    Ok(BedrockAuth::SigV4(keys))
}

/// A profile's `credential_process`: its JSON output's keys.
async fn credential_process(profile: &str, command: &str) -> Result<BedrockAuth, String> {
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|error| {
            format!("the credential_process of AWS profile {profile:?} did not run: {error}")
        })?;
    if !output.status.success() {
        return Err(format!(
            "the credential_process of AWS profile {profile:?} failed ({})",
            output.status
        ));
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        format!("the credential_process of AWS profile {profile:?} printed no JSON credentials")
    })?;
    match (
        json["AccessKeyId"].as_str(),
        json["SecretAccessKey"].as_str(),
    ) {
        (Some(id), Some(secret)) => Ok(BedrockAuth::SigV4(AwsKeys::new(
            id,
            secret,
            json["SessionToken"].as_str(),
        ))),
        _ => Err(format!(
            "the credential_process of AWS profile {profile:?} printed no AccessKeyId and SecretAccessKey"
        )),
    }
}

/// IRSA: the web identity token traded at STS (`AssumeRoleWithWebIdentity`, unsigned);
/// `AWS_ENDPOINT_URL_STS` replaces STS's address.
async fn web_identity(
    var: &(dyn Fn(&str) -> Option<String> + Sync),
    token_file: &str,
    role: &str,
) -> Result<BedrockAuth, String> {
    let cache_key = format!("{role}\n{token_file}");
    let now = pi_util::time::now_millis();
    if let Some((keys, expires)) = ASSUMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&cache_key)
        && now < *expires - 300_000
    {
        return Ok(BedrockAuth::SigV4(keys.clone()));
    }
    let token = std::fs::read_to_string(token_file).map_err(|error| {
        format!(
            "cannot read the web identity token {token_file} (AWS_WEB_IDENTITY_TOKEN_FILE): {error}"
        )
    })?;
    let region = region(var, None);
    let endpoint = var("AWS_ENDPOINT_URL_STS")
        .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
    let session = var("AWS_ROLE_SESSION_NAME").unwrap_or_else(|| "pi-daemon".to_owned());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("Action", "AssumeRoleWithWebIdentity"),
            ("Version", "2011-06-15"),
            ("RoleArn", role),
            ("RoleSessionName", &session),
            ("WebIdentityToken", token.trim()),
        ])
        .finish();
    let client = crate::oauth::shared_http().map_err(|error| error.to_string())?;
    let url = format!("{}/", endpoint.trim_end_matches('/'));
    let response = client
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .timeout(std::time::Duration::from_secs(30))
        .body(body)
        .send()
        .await
        .map_err(|error| format!("could not reach AWS STS at {url}: {}", error.without_url()))?;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        Some(text[start..end].trim().to_owned())
    };
    if !(200..300).contains(&status) {
        return Err(format!(
            "AWS STS refused the web identity of {role} (HTTP {status}){}",
            tag("Message").map(|m| format!(": {m}")).unwrap_or_default()
        ));
    }
    let (Some(id), Some(secret)) = (tag("AccessKeyId"), tag("SecretAccessKey")) else {
        return Err(format!(
            "AWS STS answered the web identity of {role} without keys"
        ));
    };
    let keys = AwsKeys::new(&id, &secret, tag("SessionToken").as_deref());
    let expires = tag("Expiration")
        .and_then(|text| pi_util::time::millis_from_iso(&text))
        .unwrap_or(now + 3_600_000);
    ASSUMED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(cache_key, (keys.clone(), expires));
    Ok(BedrockAuth::SigV4(keys))
}

/// Signs a request for `service` in `region` at `time` with SigV4: the headers to add
/// (`authorization`, `x-amz-date`, `x-amz-security-token`, …).
#[allow(
    clippy::too_many_arguments,
    reason = "one request's parts, named at the call"
)]
pub fn sign(
    keys: &AwsKeys,
    region: &str,
    service: &str,
    time: SystemTime,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<Vec<(String, String)>, String> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings};
    let identity = aws_credential_types::Credentials::new(
        keys.access_key_id.clone(),
        keys.secret_access_key.clone(),
        keys.session_token.clone(),
        None,
        "pi-daemon",
    )
    .into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|error| format!("cannot sign the request: {error}"))?
        .into();
    let signable = SignableRequest::new(
        method,
        url,
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
        SignableBody::Bytes(body),
    )
    .map_err(|error| format!("cannot sign the request: {error}"))?;
    let (instructions, _) = aws_sigv4::http_request::sign(signable, &params)
        .map_err(|error| format!("cannot sign the request: {error}"))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's SigV4 test suite, `get-vanilla`: `GET /` to `example.amazonaws.com` at
    /// 2015-08-30T12:36:00Z for service `service` in us-east-1.
    #[test]
    fn sigv4_matches_aws_published_test_vector() {
        let keys = AwsKeys::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
        );
        let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_440_938_160);
        let added = sign(
            &keys,
            "us-east-1",
            "service",
            time,
            "GET",
            "https://example.amazonaws.com/",
            &[("host".to_owned(), "example.amazonaws.com".to_owned())],
            b"",
        )
        .unwrap();
        let header = |name: &str| {
            added
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        };
        assert_eq!(header("x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(
            header("authorization"),
            Some(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
            )
        );
    }

    #[test]
    fn profiles_come_from_the_shared_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".aws")).unwrap();
        std::fs::write(
            dir.path().join(".aws/credentials"),
            "[default]\naws_access_key_id = AKIDEFAULT\naws_secret_access_key = s\n\n[work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=t\naws_session_token=tok\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".aws/config"),
            "[default]\nregion = eu-west-1\n[profile work]\nregion = us-west-2\n",
        )
        .unwrap();
        let home = dir.path().display().to_string();
        let env = |profile: Option<&'static str>| {
            let home = home.clone();
            move |name: &str| match name {
                "HOME" => Some(home.clone()),
                "AWS_PROFILE" => profile.map(str::to_owned),
                _ => None,
            }
        };
        assert_eq!(region(&env(None), None), "eu-west-1");
        assert_eq!(region(&env(Some("work")), None), "us-west-2");
        assert!(configured(&env(Some("work"))));
        let (name, found) = profile(&env(Some("work")));
        assert_eq!(name, "work");
        assert_eq!(found.values["aws_access_key_id"], "AKIDWORK");
        assert_eq!(found.values["aws_session_token"], "tok");
    }
}
