//! Which key a provider's requests use, in pi's precedence order: an explicit key (`--api-key`
//! or set at runtime), then `auth.json` `api_key`, then the `auth.json` OAuth `access` token
//! (refreshed when expired, for the logins the daemon can refresh), then the provider's environment variables, then `models.json` `apiKey`. `auth.json` keys and
//! `models.json` keys go through [`ConfigValueResolver`] (`!command`, variable name, literal).
//!
//! Guarantees: keys only leave as [`ApiKey`]; errors name the variables and files to set but
//! never a key or a command. [`KeySources::has_key`] never runs a command, so listing models is
//! cheap; it answers whether a key is configured, not whether it works.

use std::fmt;
use std::path::PathBuf;

use crate::auth::{AuthCredential, AuthFile};
use crate::config_value::ConfigValueResolver;
use crate::provider::ApiKey;

/// Where a key came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Given explicitly (`--api-key`, or set at runtime).
    Explicit,
    /// An `api_key` entry of this `auth.json`.
    AuthFile(PathBuf),
    /// The OAuth access token of this `auth.json`.
    OAuth(PathBuf),
    /// This environment variable.
    Environment(String),
    /// The provider's `apiKey` in this `models.json`.
    ModelsJson(PathBuf),
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Explicit => f.write_str("the explicit key"),
            KeySource::AuthFile(path) => write!(f, "the api_key entry in {}", path.display()),
            KeySource::OAuth(path) => write!(f, "the OAuth login in {}", path.display()),
            KeySource::Environment(variable) => write!(f, "${variable}"),
            KeySource::ModelsJson(path) => write!(f, "\"apiKey\" in {}", path.display()),
        }
    }
}

/// A key and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedKey {
    /// The key.
    pub key: ApiKey,
    /// Its source.
    pub source: KeySource,
}

/// A provider's `apiKey` from `models.json`, as written (resolved when used). `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfiguredKey {
    /// The `models.json` it came from.
    pub path: PathBuf,
    /// The raw value: a literal, an environment variable name or a `!command`.
    pub value: String,
}

impl fmt::Debug for ConfiguredKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfiguredKey")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// No key could be found for a provider.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_missing(self))]
pub struct KeyError {
    /// The provider.
    pub provider: String,
    /// Environment variables that would supply a key.
    pub env_vars: Vec<String>,
    /// The `auth.json` a key can be added to.
    pub auth_path: Option<PathBuf>,
    /// Configured sources that yielded nothing, and why (no secrets).
    pub notes: Vec<String>,
}

fn describe_missing(error: &KeyError) -> String {
    let provider = &error.provider;
    let mut remedies = Vec::new();
    if !error.env_vars.is_empty() {
        remedies.push(format!("set {}", error.env_vars.join(" or ")));
    }
    if let Some(path) = &error.auth_path {
        remedies.push(format!(
            "add {{\"{provider}\": {{\"type\": \"api_key\", \"key\": \"...\"}}}} to {}",
            path.display()
        ));
    }
    if error.env_vars.is_empty() {
        remedies.push(format!(
            "set \"apiKey\" for provider \"{provider}\" in models.json"
        ));
    }
    let mut text = format!("no API key for {provider}: {}", remedies.join(" or "));
    for note in &error.notes {
        text.push_str("; ");
        text.push_str(note);
    }
    text
}

/// Everything that may hold one provider's key.
#[derive(Clone, Copy)]
pub struct KeySources<'a> {
    /// The provider.
    pub provider: &'a str,
    /// An explicit key.
    pub explicit: Option<&'a ApiKey>,
    /// `auth.json` files, first wins.
    pub auth_files: &'a [AuthFile],
    /// The provider's environment variables, in order.
    pub env_vars: &'a [&'a str],
    /// The provider's `apiKey` from `models.json`.
    pub models_json: Option<&'a ConfiguredKey>,
    /// Resolves `!command`s and variable names; its environment is the one read.
    pub resolver: &'a ConfigValueResolver,
    /// Now, Unix milliseconds (OAuth expiry).
    pub now_millis: i64,
    /// What refreshes subscription logins (`None`: they are used until they expire).
    pub logins: Option<&'a std::sync::Arc<crate::oauth::Logins>>,
}

impl KeySources<'_> {
    /// The key to use, by precedence. Runs `!command`s (cached), so may block.
    pub fn resolve(&self) -> Result<ResolvedKey, KeyError> {
        let mut notes = Vec::new();
        if let Some(key) = self.explicit {
            return Ok(ResolvedKey {
                key: key.clone(),
                source: KeySource::Explicit,
            });
        }
        if let Some((file, AuthCredential::ApiKey { key })) = self.auth_credential() {
            match self.resolver.resolve(key) {
                Ok(Some(value)) => {
                    return Ok(ResolvedKey {
                        key: ApiKey::new(value),
                        source: KeySource::AuthFile(file.path().to_owned()),
                    });
                }
                Ok(None) => notes.push(format!(
                    "the \"{}\" key in {} is empty",
                    self.provider,
                    file.path().display()
                )),
                Err(error) => notes.push(format!(
                    "the \"{}\" key in {}: {error}",
                    self.provider,
                    file.path().display()
                )),
            }
        }
        if let Some((file, AuthCredential::Oauth(oauth))) = self.auth_credential() {
            if let Some(logins) = self.refresher(oauth) {
                // Made fresh (and refreshed on a 401) when a request goes out.
                return Ok(ResolvedKey {
                    key: ApiKey::from_login(
                        oauth.access.clone(),
                        crate::oauth::LoginRef::new(
                            logins.clone(),
                            self.provider,
                            file.path(),
                            oauth.clone(),
                        ),
                    ),
                    source: KeySource::OAuth(file.path().to_owned()),
                });
            }
            if oauth.access.is_empty() {
                notes.push(format!(
                    "the \"{}\" OAuth login in {} has no access token",
                    self.provider,
                    file.path().display()
                ));
            } else if self.oauth_expired(oauth.expires) {
                notes.push(format!(
                    "the \"{}\" OAuth token in {} has expired and the daemon cannot refresh \"{}\" logins; log in again with pi",
                    self.provider,
                    file.path().display(),
                    self.provider
                ));
            } else {
                return Ok(ResolvedKey {
                    key: ApiKey::new(oauth.access.clone()),
                    source: KeySource::OAuth(file.path().to_owned()),
                });
            }
        }
        for variable in self.env_vars {
            if let Some(value) = self.resolver.environment().var(variable) {
                return Ok(ResolvedKey {
                    key: ApiKey::new(value),
                    source: KeySource::Environment((*variable).to_owned()),
                });
            }
        }
        if let Some(configured) = self.models_json {
            match self.resolver.resolve(&configured.value) {
                Ok(Some(value)) => {
                    return Ok(ResolvedKey {
                        key: ApiKey::new(value),
                        source: KeySource::ModelsJson(configured.path.clone()),
                    });
                }
                Ok(None) => notes.push(format!(
                    "\"apiKey\" in {} is empty",
                    configured.path.display()
                )),
                Err(error) => notes.push(format!(
                    "\"apiKey\" in {}: {error}",
                    configured.path.display()
                )),
            }
        }
        Err(KeyError {
            provider: self.provider.to_owned(),
            env_vars: self
                .env_vars
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            auth_path: self.auth_files.last().map(|file| file.path().to_owned()),
            notes,
        })
    }

    /// The source [`KeySources::resolve`] would use, and a login's expiry; runs no command.
    pub fn status(&self) -> Option<(KeySource, Option<i64>)> {
        if self.explicit.is_some() {
            return Some((KeySource::Explicit, None));
        }
        match self.auth_credential() {
            Some((file, AuthCredential::ApiKey { key })) if !key.is_empty() => {
                return Some((KeySource::AuthFile(file.path().to_owned()), None));
            }
            Some((file, AuthCredential::Oauth(oauth)))
                if self.refresher(oauth).is_some()
                    || (!oauth.access.is_empty() && !self.oauth_expired(oauth.expires)) =>
            {
                return Some((
                    KeySource::OAuth(file.path().to_owned()),
                    Some(oauth.expires),
                ));
            }
            _ => {}
        }
        if let Some(variable) = self
            .env_vars
            .iter()
            .find(|variable| self.resolver.environment().var(variable).is_some())
        {
            return Some((KeySource::Environment((*variable).to_owned()), None));
        }
        self.models_json
            .filter(|configured| !configured.value.is_empty())
            .map(|configured| (KeySource::ModelsJson(configured.path.clone()), None))
    }

    /// Whether some source is configured; runs no command (pi's `hasAuth`).
    pub fn has_key(&self) -> bool {
        let in_auth_file = match self.auth_credential() {
            Some((_, AuthCredential::ApiKey { key })) => !key.is_empty(),
            Some((_, AuthCredential::Oauth(oauth))) => {
                self.refresher(oauth).is_some()
                    || (!oauth.access.is_empty() && !self.oauth_expired(oauth.expires))
            }
            None => false,
        };
        // Vertex AI on Application Default Credentials needs no key.
        let vertex_adc = self.provider == "google-vertex"
            && crate::oauth::adc::configured(|name| self.resolver.environment().var(name));
        // Bedrock on AWS credentials (keys, a profile, a web identity, a Bedrock API key).
        let aws = self.provider == "amazon-bedrock"
            && crate::aws::configured(&|name: &str| self.resolver.environment().var(name));
        self.explicit.is_some()
            || vertex_adc
            || aws
            || in_auth_file
            || self
                .env_vars
                .iter()
                .any(|variable| self.resolver.environment().var(variable).is_some())
            || self
                .models_json
                .is_some_and(|configured| !configured.value.is_empty())
    }

    fn auth_credential(&self) -> Option<(&AuthFile, &AuthCredential)> {
        self.auth_files
            .iter()
            .find_map(|file| file.get(self.provider).map(|credential| (file, credential)))
    }

    /// The refresher of this login, when the daemon can refresh it.
    fn refresher(
        &self,
        oauth: &crate::auth::OAuthCredential,
    ) -> Option<&std::sync::Arc<crate::oauth::Logins>> {
        let refreshable = crate::oauth::OAuthKind::for_provider(self.provider).is_some()
            && (!oauth.refresh.is_empty()
                || (!oauth.access.is_empty() && !self.oauth_expired(oauth.expires)));
        self.logins.filter(|_| refreshable)
    }

    fn oauth_expired(&self, expires: i64) -> bool {
        // pi stores no expiry as 0; treat it as "unknown, try it".
        expires > 0 && self.now_millis >= expires
    }
}
