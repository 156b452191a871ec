//! [`ModelRegistry`]: the models the daemon knows (built-ins merged with `models.json`), the keys
//! to use them (`auth.json`, environment, `models.json`), resolution of what users type, and the
//! default model. It is what the daemon's `ModelService` wraps.
//!
//! Guarantees: a bad `models.json` or `auth.json` never stops the registry; the file is skipped,
//! the built-ins keep working and the problem is reported by [`ModelRegistry::diagnostics`].
//! [`ModelRegistry::reload`] re-reads every file; a file that was good and no longer reads or
//! parses keeps its last good version (with a diagnostic) until it is fixed or deleted;
//! `!command` results stay cached across reloads.
//! No key appears in `Debug`, in errors or in diagnostics.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::auth::{AuthCredential, AuthError, AuthFile};
use crate::catalog::{self, PROVIDERS};
use crate::config_value::{ConfigValueResolver, Environment};
use crate::keys::{ConfiguredKey, KeyError, KeySources, ResolvedKey};
use crate::model::{Model, ThinkingLevel};
use crate::models_json::{ModelsFile, ModelsJsonError};
use crate::models_merge::merge;
use crate::oauth::{Endpoints, LoginError, Logins, OAuthKind};
use crate::provider::ApiKey;
use crate::resolve::{ResolveError, resolve_spec};
use pi_util::time::now_millis;

/// Now, in Unix milliseconds (injected so tests control OAuth expiry).
pub type Clock = crate::oauth::Clock;

/// Where a registry reads its models and keys from.
pub struct RegistryConfig {
    /// Built-in models, usually [`catalog::builtin_models`].
    pub builtins: Vec<Model>,
    /// `models.json` files, highest precedence first (the daemon's, then `~/.pi/agent`'s).
    pub models_json: Vec<PathBuf>,
    /// `auth.json` files, highest precedence first; [`ModelRegistry::store_api_key`] writes the
    /// first.
    pub auth_json: Vec<PathBuf>,
    /// Environment variables (keys, `!command` environment, variable-name values).
    pub environment: Arc<dyn Environment>,
    /// The configured default model (`provider`, `id`), used when it exists.
    pub default_model: Option<(String, String)>,
    /// The clock.
    pub clock: Clock,
}

impl RegistryConfig {
    /// Built-in models only, reading keys from `environment`, with the system clock.
    pub fn new(environment: Arc<dyn Environment>) -> Self {
        RegistryConfig {
            builtins: catalog::builtin_models(),
            models_json: Vec::new(),
            auth_json: Vec::new(),
            environment,
            default_model: None,
            clock: Arc::new(now_millis),
        }
    }
}

/// What kind of file a [`Diagnostic`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// A `models.json` was skipped, or part of it could not be applied.
    ModelsJson,
    /// An `auth.json` could not be read and was skipped.
    AuthJson,
    /// An `auth.json` is readable by other users; `chmod 600` it.
    AuthPermissions,
}

/// A problem with a configuration file, as a sentence naming the file and field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The kind of problem.
    pub kind: DiagnosticKind,
    /// The file.
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Models, keys and resolution. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct ModelRegistry {
    config: RegistryConfig,
    resolver: ConfigValueResolver,
    // Replaced whole by `reload`; readers clone the `Arc`. A sync lock, never held across await.
    snapshot: RwLock<Arc<Snapshot>>,
    // Keys given at runtime (`--api-key`), by provider. A sync lock, never held across await.
    explicit: RwLock<BTreeMap<String, ApiKey>>,
    // One reload at a time, so a slower one never replaces a newer snapshot. A sync lock,
    // held only by `reload` (which does blocking file reads, never awaits).
    reloading: Mutex<()>,
    // Refreshes subscription logins; shared by every key it hands out.
    logins: Arc<Logins>,
}

struct Snapshot {
    models: Vec<Model>,
    provider_keys: BTreeMap<String, ConfiguredKey>,
    auth_files: Vec<AuthFile>,
    diagnostics: Vec<Diagnostic>,
    // The version in use of every file that loaded: what a later bad edit falls back to.
    good_models: BTreeMap<PathBuf, ModelsFile>,
    good_auth: BTreeMap<PathBuf, AuthFile>,
}

impl fmt::Debug for ModelRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let snapshot = self.snapshot();
        f.debug_struct("ModelRegistry")
            .field("models", &snapshot.models.len())
            .field("models_json", &self.config.models_json)
            .field("auth_json", &self.config.auth_json)
            .field("diagnostics", &snapshot.diagnostics.len())
            .finish_non_exhaustive()
    }
}

impl ModelRegistry {
    /// Loads every configured file.
    pub fn new(config: RegistryConfig) -> Self {
        let resolver = ConfigValueResolver::new(config.environment.clone());
        let snapshot = load(&config, &resolver, None);
        let logins = Arc::new(Logins::new(
            Endpoints::from_env(config.environment.as_ref()),
            config.clock.clone(),
        ));
        ModelRegistry {
            config,
            resolver,
            snapshot: RwLock::new(Arc::new(snapshot)),
            explicit: RwLock::new(BTreeMap::new()),
            reloading: Mutex::new(()),
            logins,
        }
    }

    /// Re-reads every `models.json` and `auth.json`. A file that no longer reads or parses
    /// keeps the version loaded before, reported by [`ModelRegistry::diagnostics`]; a deleted
    /// file no longer applies.
    pub fn reload(&self) {
        let _one_at_a_time = self
            .reloading
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let previous = self.snapshot();
        let fresh = Arc::new(load(&self.config, &self.resolver, Some(&previous)));
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    /// Problems with configuration files found by the last load.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.snapshot().diagnostics.clone()
    }

    /// Every model, built-ins first.
    pub fn models(&self) -> Vec<Model> {
        self.snapshot().models.clone()
    }

    /// Every model and whether its provider has a key.
    pub fn list(&self) -> Vec<(Model, bool)> {
        let snapshot = self.snapshot();
        let mut keyed: BTreeMap<&str, bool> = BTreeMap::new();
        snapshot
            .models
            .iter()
            .map(|model| {
                let has_key = *keyed.entry(model.provider.as_str()).or_insert_with(|| {
                    self.with_sources(&snapshot, &model.provider, |sources| sources.has_key())
                });
                (model.clone(), has_key)
            })
            .collect()
    }

    /// Resolves `provider/id`, an id or a search term, with an optional `:level` suffix (see
    /// [`crate::resolve`]). The level is returned as given; clamp it with
    /// [`crate::thinking::clamp`].
    pub fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), ResolveError> {
        let snapshot = self.snapshot();
        let has_key =
            |provider: &str| self.with_sources(&snapshot, provider, |sources| sources.has_key());
        resolve_spec(&snapshot.models, &has_key, spec)
    }

    /// The model with exactly this provider and id.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.snapshot()
            .models
            .iter()
            .find(|model| model.provider == provider && model.id == id)
            .cloned()
    }

    /// The model with exactly this provider and id, or else pi's custom model id for a
    /// provider that has models (see [`crate::resolve::custom_model`]): what a session that
    /// chose an unlisted id runs with.
    pub fn find_or_custom(&self, provider: &str, id: &str) -> Option<Model> {
        self.find(provider, id).or_else(|| {
            crate::resolve::custom_model(&self.snapshot().models, &format!("{provider}/{id}"))
        })
    }

    /// Whether `model` is listed (built in or in `models.json`), not a custom model id.
    pub fn is_listed(&self, model: &Model) -> bool {
        crate::resolve::is_listed(&self.snapshot().models, model)
    }

    /// The configured default if it exists; else the default model of the first built-in
    /// provider with a key; else the first model with a key.
    pub fn default_model(&self) -> Option<Model> {
        if let Some((provider, id)) = &self.config.default_model
            && let Some(model) = self.find(provider, id)
        {
            return Some(model);
        }
        let snapshot = self.snapshot();
        let has_key =
            |provider: &str| self.with_sources(&snapshot, provider, |sources| sources.has_key());
        PROVIDERS
            .iter()
            .filter(|info| has_key(info.id))
            .find_map(|info| self.find(info.id, info.default_model))
            .or_else(|| {
                snapshot
                    .models
                    .iter()
                    .find(|model| has_key(&model.provider))
                    .cloned()
            })
    }

    /// Whether `provider` has a key configured (runs no command).
    pub fn has_key(&self, provider: &str) -> bool {
        let snapshot = self.snapshot();
        self.with_sources(&snapshot, provider, |sources| sources.has_key())
    }

    /// The key for `model`'s provider. May run a `!command` (up to 10 s the first time).
    pub fn api_key(&self, model: &Model) -> Result<ApiKey, KeyError> {
        self.resolve_key(&model.provider)
            .map(|resolved| resolved.key)
    }

    /// The key for `provider` and where it came from.
    pub fn resolve_key(&self, provider: &str) -> Result<ResolvedKey, KeyError> {
        let snapshot = self.snapshot();
        self.with_sources(&snapshot, provider, |sources| sources.resolve())
    }

    /// Sets (or with `None` clears) the runtime key for `provider`; it beats every file.
    pub fn set_explicit_key(&self, provider: &str, key: Option<ApiKey>) {
        let mut explicit = self
            .explicit
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match key {
            Some(key) => explicit.insert(provider.to_owned(), key),
            None => explicit.remove(provider),
        };
    }

    /// Saves `key` as `provider`'s `api_key` in the first `auth.json` (0600), then reloads.
    pub fn store_api_key(&self, provider: &str, key: &ApiKey) -> Result<(), AuthError> {
        let Some(path) = self.config.auth_json.first() else {
            return Err(AuthError::NotConfigured);
        };
        let mut file = AuthFile::load(path)?;
        file.set(
            provider,
            AuthCredential::ApiKey {
                key: key.expose().to_owned(),
            },
        );
        file.save()?;
        self.reload();
        Ok(())
    }

    /// What refreshes (and stores) subscription logins.
    pub fn logins(&self) -> &Arc<Logins> {
        &self.logins
    }

    /// The `auth.json` a login or key of `provider` is written to: the first file that has a
    /// credential for it (so the new one takes its place), else the last file (pi's own, so
    /// pi shares the login).
    pub fn login_file(&self, provider: &str) -> Option<PathBuf> {
        let snapshot = self.snapshot();
        snapshot
            .auth_files
            .iter()
            .find(|file| file.get(provider).is_some())
            .map(|file| file.path().to_owned())
            .or_else(|| self.config.auth_json.last().cloned())
    }

    /// Runs `kind`'s login and stores its credential (see [`ModelRegistry::login_file`]);
    /// returns the file.
    pub async fn login(
        &self,
        kind: OAuthKind,
        options: &crate::oauth::LoginOptions,
        io: &mut crate::oauth::LoginIo,
    ) -> Result<PathBuf, LoginFailure> {
        let path = self
            .login_file(kind.provider_id())
            .ok_or(LoginFailure::File(LoginError::File(
                AuthError::NotConfigured,
            )))?;
        let mut options = options.clone();
        if kind == OAuthKind::GithubCopilot && options.copilot_models.is_empty() {
            options.copilot_models = self
                .models()
                .into_iter()
                .filter(|model| model.provider == kind.provider_id())
                .map(|model| model.id)
                .collect();
        }
        let credential = crate::oauth::login(kind, self.logins.endpoints(), &options, io)
            .await
            .map_err(LoginFailure::Flow)?;
        self.logins
            .save(&path, kind.provider_id(), credential)
            .await
            .map_err(LoginFailure::File)?;
        self.reload();
        Ok(path)
    }

    /// Stores `key` as `provider`'s API key (see [`ModelRegistry::login_file`]); returns the
    /// file.
    pub async fn save_api_key(&self, provider: &str, key: &ApiKey) -> Result<PathBuf, LoginError> {
        let path = self
            .login_file(provider)
            .ok_or(LoginError::File(AuthError::NotConfigured))?;
        self.logins
            .save_api_key(&path, provider, key.expose())
            .await?;
        self.reload();
        Ok(path)
    }

    /// Removes `provider`'s credential from every `auth.json` that has one; the files.
    pub async fn logout(&self, provider: &str) -> Result<Vec<PathBuf>, LoginError> {
        let mut removed = Vec::new();
        for path in &self.config.auth_json {
            if self.logins.remove(path, provider).await? {
                removed.push(path.clone());
            }
        }
        self.reload();
        Ok(removed)
    }

    /// What `provider`'s requests would use now, without running a command: the source and,
    /// for a login, when its token expires.
    pub fn key_status(&self, provider: &str) -> Option<(crate::keys::KeySource, Option<i64>)> {
        let snapshot = self.snapshot();
        self.with_sources(&snapshot, provider, |sources| sources.status())
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Runs `use_sources` on everything that may hold `provider`'s key.
    fn with_sources<T>(
        &self,
        snapshot: &Snapshot,
        provider: &str,
        use_sources: impl FnOnce(KeySources<'_>) -> T,
    ) -> T {
        let explicit = self
            .explicit
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(provider)
            .cloned();
        use_sources(KeySources {
            provider,
            explicit: explicit.as_ref(),
            auth_files: &snapshot.auth_files,
            env_vars: catalog::provider(provider).map_or(&[], |info| info.env_vars),
            models_json: snapshot.provider_keys.get(provider),
            resolver: &self.resolver,
            now_millis: (self.config.clock)(),
            logins: Some(&self.logins),
        })
    }
}

/// Why a login did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LoginFailure {
    /// The flow failed or was cancelled.
    #[error(transparent)]
    Flow(crate::oauth::OAuthError),
    /// The credential could not be stored.
    #[error(transparent)]
    File(LoginError),
}

/// What a file that no longer loads falls back to, said at the end of its diagnostic.
const KEEPING_LAST_GOOD: &str =
    "the daemon keeps using the file's last good version until it is fixed";

fn load(
    config: &RegistryConfig,
    resolver: &ConfigValueResolver,
    previous: Option<&Snapshot>,
) -> Snapshot {
    let mut diagnostics = Vec::new();
    let mut files = Vec::new();
    let mut good_models = BTreeMap::new();
    for path in &config.models_json {
        match ModelsFile::load(path) {
            Ok(Some(file)) => {
                good_models.insert(path.clone(), file.clone());
                files.push(file);
            }
            Ok(None) => {}
            Err(error) => {
                let last_good = previous.and_then(|snapshot| snapshot.good_models.get(path));
                let message = match last_good {
                    Some(file) => {
                        tracing::warn!(path = %path.display(), %error, "models.json: keeping its last good version");
                        good_models.insert(path.clone(), file.clone());
                        files.push(file.clone());
                        format!("{error}; {KEEPING_LAST_GOOD}")
                    }
                    None => {
                        tracing::warn!(path = %path.display(), %error, "models.json skipped");
                        format!("{error}; using the built-in models without this file")
                    }
                };
                diagnostics.push(Diagnostic {
                    kind: DiagnosticKind::ModelsJson,
                    path: path.clone(),
                    message,
                });
            }
        }
    }
    let merged = merge(config.builtins.clone(), &files, resolver);
    for problem in merged.problems {
        tracing::warn!(%problem, "models.json partly applied");
        let path = match &problem {
            ModelsJsonError::Read { path, .. }
            | ModelsJsonError::Untrusted { path, .. }
            | ModelsJsonError::Parse { path, .. }
            | ModelsJsonError::Invalid { path, .. }
            | ModelsJsonError::Value { path, .. }
            | ModelsJsonError::UnknownOverride { path, .. } => path.clone(),
        };
        diagnostics.push(Diagnostic {
            kind: DiagnosticKind::ModelsJson,
            path,
            message: problem.to_string(),
        });
    }
    let mut auth_files = Vec::new();
    let mut good_auth = BTreeMap::new();
    for path in &config.auth_json {
        match AuthFile::load(path) {
            Ok(file) => {
                good_auth.insert(path.clone(), file.clone());
                if let Some(mode) = file.insecure_mode() {
                    tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "auth.json is readable by others");
                    diagnostics.push(Diagnostic {
                        kind: DiagnosticKind::AuthPermissions,
                        path: path.clone(),
                        message: format!(
                            "{} has mode {mode:o}, so other users may read your keys; run chmod 600 {}",
                            path.display(),
                            path.display()
                        ),
                    });
                }
                auth_files.push(file);
            }
            Err(error) => {
                let last_good = previous.and_then(|snapshot| snapshot.good_auth.get(path));
                let message = match last_good {
                    Some(file) => {
                        tracing::warn!(path = %path.display(), %error, "auth.json: keeping its last good version");
                        good_auth.insert(path.clone(), file.clone());
                        auth_files.push(file.clone());
                        format!("{error}; {KEEPING_LAST_GOOD}")
                    }
                    None => {
                        tracing::warn!(path = %path.display(), %error, "auth.json skipped");
                        // Keep the path so a missing-key error still says where to add a key.
                        auth_files.push(AuthFile::empty(path));
                        format!("{error}; its keys are not used until it is fixed")
                    }
                };
                diagnostics.push(Diagnostic {
                    kind: DiagnosticKind::AuthJson,
                    path: path.clone(),
                    message,
                });
            }
        }
    }
    Snapshot {
        models: merged.models,
        provider_keys: merged.provider_keys,
        auth_files,
        diagnostics,
        good_models,
        good_auth,
    }
}
