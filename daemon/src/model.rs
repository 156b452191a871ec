//! The daemon's models: pi-llm's [`ModelRegistry`] (built-in catalog, `models.json` and
//! `auth.json` from our config dir and from pi's `~/.pi/agent`, provider environment
//! variables) behind the session layer's [`ModelService`], streaming through the
//! [`ProviderRouter`].
//!
//! Files are looked up highest precedence first: ours, then pi's, so a pi user's setup works
//! with no configuration and ours can override it. Problems with those files are logged as
//! warnings naming file and field at start; the built-ins keep working.

use std::collections::BTreeMap;
use std::sync::Arc;

use pi_llm::{
    ApiKey, KeyError, KeySource, Model, ModelRegistry, ProcessEnvironment, Provider,
    ProviderRouter, RegistryConfig, ResolveError, ThinkingLevel,
};
use pi_paths::Paths;

use crate::session::ModelService;

/// Models from the registry, streamed by the built-in wire formats.
pub struct RegistryModels {
    registry: ModelRegistry,
    router: Arc<dyn Provider>,
}

impl RegistryModels {
    /// The registry for the daemon's directories and process environment.
    pub fn load(paths: &Paths) -> Self {
        let mut config = RegistryConfig::new(Arc::new(ProcessEnvironment));
        config.models_json = vec![
            paths.config_dir.join("models.json"),
            paths.pi_agent_dir.join("models.json"),
        ];
        config.auth_json = vec![
            paths.config_dir.join("auth.json"),
            paths.pi_agent_dir.join("auth.json"),
        ];
        let registry = ModelRegistry::new(config);
        for diagnostic in registry.diagnostics() {
            tracing::warn!(
                path = %diagnostic.path.display(),
                problem = %diagnostic.message,
                "model configuration problem"
            );
        }
        RegistryModels {
            registry,
            router: Arc::new(ProviderRouter::new()),
        }
    }

    /// The registry itself (for reloads and key management).
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }
}

impl ModelService for RegistryModels {
    fn provider(&self) -> Arc<dyn Provider> {
        self.router.clone()
    }

    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), ResolveError> {
        self.registry.resolve(spec)
    }

    fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.registry.find(provider, id)
    }

    fn find_or_custom(&self, provider: &str, id: &str) -> Option<Model> {
        self.registry.find_or_custom(provider, id)
    }

    fn unlisted_warning(&self, model: &Model) -> Option<String> {
        (!self.registry.is_listed(model)).then(|| pi_llm::resolve::unlisted_warning(model))
    }

    fn default_model(&self) -> Option<Model> {
        self.registry.default_model()
    }

    fn default_model_in(&self, env: &BTreeMap<String, String>) -> Option<Model> {
        self.registry.default_model().or_else(|| {
            // No key the daemon can see: the first provider, in pi's preference order, whose
            // variable the client set.
            pi_llm::PROVIDERS
                .iter()
                .filter(|info| {
                    info.env_vars
                        .iter()
                        .any(|name| env.get(*name).is_some_and(|value| !value.is_empty()))
                })
                .find_map(|info| self.registry.find(info.id, info.default_model))
        })
    }

    fn api_key(&self, model: &Model) -> Result<Option<ApiKey>, KeyError> {
        self.api_key_in(model, &BTreeMap::new())
    }

    fn api_key_in(
        &self,
        model: &Model,
        env: &BTreeMap<String, String>,
    ) -> Result<Option<ApiKey>, KeyError> {
        // A `!command` key runs a process (up to 10 s, once): keep other tasks running.
        let lookup = || self.registry.resolve_key(&model.provider);
        let result = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(lookup),
            _ => lookup(),
        };
        let session_variable = || {
            let info = pi_llm::catalog::provider(&model.provider)?;
            info.env_vars
                .iter()
                .find_map(|name| env.get(*name).filter(|value| !value.is_empty()))
                .map(ApiKey::new)
        };
        match result {
            // Files and runtime keys win over any environment.
            Ok(resolved)
                if !matches!(
                    resolved.source,
                    KeySource::Environment(_) | KeySource::ModelsJson(_)
                ) =>
            {
                Ok(Some(resolved.key))
            }
            Ok(resolved) => Ok(Some(session_variable().unwrap_or(resolved.key))),
            Err(error) => match session_variable() {
                Some(key) => Ok(Some(key)),
                // A wire format the daemon does not speak: its own error says so, not a key's.
                None if !pi_llm::providers::speaks(&model.api) => Ok(None),
                // Bedrock finds its AWS credentials itself (and says which to set).
                None if model.api == pi_llm::providers::BEDROCK_CONVERSE_STREAM => Ok(None),
                // Local servers of custom providers need no key; nor does Vertex AI on
                // Application Default Credentials (the provider fetches a token).
                None if is_keyless(model) => Ok(None),
                None if model.provider == "google-vertex"
                    && pi_llm::oauth::adc::configured(|name| {
                        env.get(name)
                            .filter(|value| !value.is_empty())
                            .cloned()
                            .or_else(|| std::env::var(name).ok())
                    }) =>
                {
                    Ok(None)
                }
                None => Err(error),
            },
        }
    }

    fn list(&self) -> Vec<(Model, bool)> {
        self.registry.list()
    }

    fn reload(&self) {
        self.registry.reload();
    }

    fn diagnostics(&self) -> Vec<(std::path::PathBuf, String)> {
        self.registry
            .diagnostics()
            .into_iter()
            .map(|diagnostic| (diagnostic.path, diagnostic.message))
            .collect()
    }
}

/// A custom provider's model served from this machine (Ollama, llama.cpp, vLLM, LM Studio)
/// with no key configured: requests go out without one. Built-in providers rerouted to a
/// local proxy still need their key.
fn is_keyless(model: &Model) -> bool {
    if pi_llm::catalog::provider(&model.provider).is_some() {
        return false;
    }
    let url = model.base_url.to_ascii_lowercase();
    let authority = url.split("://").nth(1).unwrap_or(&url);
    let authority = authority.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next(),
        None => authority.split(':').next(),
    };
    matches!(host, Some("localhost" | "127.0.0.1" | "::1" | "0.0.0.0"))
}
