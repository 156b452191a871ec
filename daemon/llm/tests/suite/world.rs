//! A temp directory with optional `models.json` / `auth.json`, a fake environment and a fixed
//! clock, turned into a [`ModelRegistry`]. Paths in messages are redacted to `[DIR]` for
//! snapshots.

use std::path::PathBuf;
use std::sync::Arc;

use pi_llm::{MapEnvironment, ModelRegistry, RegistryConfig};

/// The fixed "now" of every test registry, Unix milliseconds.
pub const NOW: i64 = 1_800_000_000_000;

pub struct World {
    pub dir: tempfile::TempDir,
    env: MapEnvironment,
    default_model: Option<(String, String)>,
    real_clock: bool,
}

impl World {
    pub fn new() -> Self {
        World {
            dir: tempfile::tempdir().unwrap(),
            env: MapEnvironment::new().with("PATH", "/usr/bin:/bin"),
            default_model: None,
            real_clock: false,
        }
    }

    /// The registry reads the system clock instead of [`NOW`] (tokens that logins and
    /// refreshes issue expire by the system clock).
    pub fn real_clock(mut self) -> Self {
        self.real_clock = true;
        self
    }

    /// Sets an environment variable of the registry.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env = self.env.with(name, value);
        self
    }

    /// Writes `file` (relative to the temp dir) with `text`.
    pub fn file(self, file: &str, text: &str) -> Self {
        let path = self.path(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// Writes the primary `models.json`.
    pub fn models_json(self, text: &str) -> Self {
        self.file("models.json", text)
    }

    /// Writes the primary `auth.json`.
    pub fn auth_json(self, text: &str) -> Self {
        self.file("auth.json", text)
    }

    pub fn default_model(mut self, provider: &str, id: &str) -> Self {
        self.default_model = Some((provider.into(), id.into()));
        self
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    /// A registry reading `models.json` then `pi/models.json`, and `auth.json` then
    /// `pi/auth.json`.
    pub fn registry(&self) -> ModelRegistry {
        let mut config = RegistryConfig::new(Arc::new(self.env.clone()));
        config.models_json = vec![self.path("models.json"), self.path("pi/models.json")];
        config.auth_json = vec![self.path("auth.json"), self.path("pi/auth.json")];
        config.default_model = self.default_model.clone();
        if !self.real_clock {
            config.clock = Arc::new(|| NOW);
        }
        ModelRegistry::new(config)
    }

    /// `text` with the temp dir replaced by `[DIR]`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.dir.path().display().to_string(), "[DIR]")
    }

    /// Every diagnostic of `registry`, one per line, redacted.
    pub fn diagnostics(&self, registry: &ModelRegistry) -> String {
        registry
            .diagnostics()
            .iter()
            .map(|diagnostic| self.redact(&diagnostic.message))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
