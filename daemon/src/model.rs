//! The daemon's models: pi-llm's [`ModelRegistry`] (built-in catalog, `models.json` and
//! `auth.json` from our config dir and from pi's `~/.pi/agent`, provider environment
//! variables) behind the session layer's [`ModelService`], streaming through the
//! [`ProviderRouter`].
//!
//! Files are looked up highest precedence first: ours, then pi's, so a pi user's setup works
//! with no configuration and ours can override it. Problems with those files are logged as
//! warnings naming file and field at start; the built-ins keep working.

use std::sync::Arc;

use pi_llm::{
    ApiKey, Model, ModelRegistry, ProcessEnvironment, Provider, ProviderRouter, RegistryConfig,
    ThinkingLevel,
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

    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), String> {
        self.registry
            .resolve(spec)
            .map_err(|error| error.to_string())
    }

    fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.registry.find(provider, id)
    }

    fn default_model(&self) -> Option<Model> {
        self.registry.default_model()
    }

    fn api_key(&self, model: &Model) -> Result<Option<ApiKey>, String> {
        // A `!command` key runs a process (up to 10 s, once): keep other tasks running.
        let lookup = || self.registry.api_key(model);
        let result = match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(lookup),
            _ => lookup(),
        };
        match result {
            Ok(key) => Ok(Some(key)),
            // Local servers declared in models.json need no key.
            Err(_) if is_keyless(model) => Ok(None),
            Err(error) => Err(error.to_string()),
        }
    }

    fn list(&self) -> Vec<(Model, bool)> {
        self.registry.list()
    }
}

/// A model served from this machine (Ollama, llama.cpp, vLLM, LM Studio, a test server)
/// with no key configured: requests go out without one.
fn is_keyless(model: &Model) -> bool {
    let url = model.base_url.to_ascii_lowercase();
    let authority = url.split("://").nth(1).unwrap_or(&url);
    let authority = authority.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next(),
        None => authority.split(':').next(),
    };
    matches!(host, Some("localhost" | "127.0.0.1" | "::1" | "0.0.0.0"))
}
