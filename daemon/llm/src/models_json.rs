//! pi's `models.json`: custom providers and models, and overrides of built-in ones (spec §6.4).
//! This module parses and validates one file; `models_merge.rs` applies valid files to the
//! built-in catalog.
//!
//! Guarantees: parsing never panics; every problem is a [`ModelsJsonError`] naming the file,
//! the JSON path of the field and what to do, with values left out (an `apiKey` may be a
//! secret). Validation follows pi exactly: a provider without `models` must set `baseUrl`,
//! `compat` or `modelOverrides`; a provider with `models` needs `baseUrl` and `apiKey`; each
//! model needs an `api` at model or provider level; `contextWindow` and `maxTokens` are
//! positive; strings are non-empty. Unknown fields are ignored, as pi does, so files written
//! for newer pi versions still load.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compat::OpenAiCompletionsCompat;
use crate::config_value::{json_path, redact_serde_values};
use crate::model::InputKind;

/// Why a `models.json` was not used. While a file has an error, none of it applies.
#[derive(Debug, thiserror::Error)]
pub enum ModelsJsonError {
    /// Another user could have written the file (its commands and addresses would be used
    /// with our keys); the message says how to fix its owner or mode.
    #[error("{path} is refused: {source}", path = .path.display())]
    Untrusted {
        /// The file.
        path: PathBuf,
        /// Who could have written it.
        source: pi_paths::UntrustedFile,
    },
    /// The file exists but cannot be read; fix its permissions.
    #[error("cannot read {path}: {source}", path = .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is not JSON of the right shape; fix the named field.
    #[error("{path}: {field}: {message}", path = .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// JSON path of the field (`providers.ollama.models[0].contextWindow`), or `(root)`.
        field: String,
        /// What is wrong, with values redacted.
        message: String,
    },
    /// The file parses but breaks a rule; the message says how to fix it.
    #[error("{path}: {field}: {problem}", path = .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// JSON path of the field.
        field: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A value (a header or `apiKey` with `authHeader`) could not be resolved; the header is
    /// left out. Fix the command or set the variable.
    #[error("{path}: {field}: {problem}", path = .path.display())]
    Value {
        /// The file.
        path: PathBuf,
        /// JSON path of the field.
        field: String,
        /// What went wrong (never the value).
        problem: String,
    },
    /// `modelOverrides` names a model the provider does not have; check the id.
    #[error(
        "{path}: providers.{provider}.modelOverrides.{id}: provider \"{provider}\" has no model \"{id}\"; use the id of a built-in model",
        path = .path.display()
    )]
    UnknownOverride {
        /// The file.
        path: PathBuf,
        /// The provider.
        provider: String,
        /// The model id.
        id: String,
    },
}

/// A parsed and validated `models.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelsFile {
    pub(crate) path: PathBuf,
    pub(crate) providers: BTreeMap<String, ProviderConfig>,
    // The providers in the file's order (pi lists, and picks a default model, in it).
    pub(crate) order: Vec<String>,
}

/// `providers.<name>`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProviderConfig {
    pub base_url: Option<String>,
    pub api: Option<String>,
    pub api_key: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub auth_header: Option<bool>,
    pub compat: Option<OpenAiCompletionsCompat>,
    pub models: Option<Vec<ModelDefinition>>,
    pub model_overrides: Option<BTreeMap<String, ModelOverride>>,
}

/// `providers.<name>.models[i]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelDefinition {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<FullCost>,
    pub context_window: Option<i64>,
    pub max_tokens: Option<i64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<OpenAiCompletionsCompat>,
}

/// A custom model's `cost`: all four prices, as pi's schema requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FullCost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// `providers.<name>.modelOverrides.<id>`: fields patched onto a built-in model.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<PartialCost>,
    pub context_window: Option<i64>,
    pub max_tokens: Option<i64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<OpenAiCompletionsCompat>,
}

/// An override's `cost`: any of the four prices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PartialCost {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

#[derive(Deserialize)]
struct RawFile {
    providers: BTreeMap<String, ProviderConfig>,
}

impl ModelsFile {
    /// Reads and validates `path`; `Ok(None)` when the file does not exist. A file another
    /// user could have written is refused.
    pub fn load(path: &Path) -> Result<Option<ModelsFile>, ModelsJsonError> {
        pi_paths::check_trusted(path).map_err(|source| ModelsJsonError::Untrusted {
            path: path.to_owned(),
            source,
        })?;
        match fs::read_to_string(path) {
            Ok(text) => ModelsFile::parse(path, &text).map(Some),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ModelsJsonError::Read {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Parses and validates `text` as the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ModelsFile, ModelsJsonError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let raw: RawFile =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                ModelsJsonError::Parse {
                    path: path.to_owned(),
                    field: json_path(error.path()),
                    message: redact_serde_values(&error.into_inner().to_string()),
                }
            })?;
        let order = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|value| {
                value["providers"]
                    .as_object()
                    .map(|providers| providers.keys().cloned().collect::<Vec<_>>())
            })
            .unwrap_or_default();
        let file = ModelsFile {
            path: path.to_owned(),
            providers: raw.providers,
            order,
        };
        file.validate()?;
        Ok(file)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Provider names the file configures, in the file's order.
    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.in_order().map(|(name, _)| name.as_str())
    }

    /// The providers in the file's order.
    pub(crate) fn in_order(&self) -> impl Iterator<Item = (&String, &ProviderConfig)> {
        self.order
            .iter()
            .filter_map(|name| self.providers.get_key_value(name))
    }

    fn validate(&self) -> Result<(), ModelsJsonError> {
        let invalid = |field: String, problem: &str| ModelsJsonError::Invalid {
            path: self.path.clone(),
            field,
            problem: problem.to_owned(),
        };
        for (name, provider) in &self.providers {
            let at = |field: &str| format!("providers.{name}.{field}");
            if name.is_empty() {
                return Err(invalid(
                    "providers".to_owned(),
                    "a provider name is empty; name it (e.g. \"ollama\")",
                ));
            }
            let non_empty = [
                ("baseUrl", &provider.base_url),
                ("api", &provider.api),
                ("apiKey", &provider.api_key),
            ];
            for (field, value) in non_empty {
                if value.as_deref() == Some("") {
                    return Err(invalid(
                        at(field),
                        "must not be empty; remove it or fill it in",
                    ));
                }
            }
            let models = provider.models.as_deref().unwrap_or_default();
            let has_overrides = provider
                .model_overrides
                .as_ref()
                .is_some_and(|overrides| !overrides.is_empty());
            if models.is_empty() {
                if provider.base_url.is_none() && provider.compat.is_none() && !has_overrides {
                    return Err(invalid(
                        format!("providers.{name}"),
                        "set \"baseUrl\", \"compat\" or \"modelOverrides\" to change a built-in provider, or \"models\" to define models",
                    ));
                }
            } else {
                if provider.base_url.is_none() {
                    return Err(invalid(
                        at("baseUrl"),
                        "required when the provider defines \"models\"; set it to the server's URL (e.g. \"http://localhost:11434/v1\")",
                    ));
                }
                if provider.api_key.is_none() {
                    return Err(invalid(
                        at("apiKey"),
                        "required when the provider defines \"models\"; set a key, an environment variable name or \"!command\" (any placeholder for servers without auth)",
                    ));
                }
            }
            for (index, model) in models.iter().enumerate() {
                let field = |field: &str| format!("providers.{name}.models[{index}].{field}");
                if model.id.is_empty() {
                    return Err(invalid(field("id"), "must not be empty; set the model id"));
                }
                for (key, value) in [
                    ("name", &model.name),
                    ("api", &model.api),
                    ("baseUrl", &model.base_url),
                ] {
                    if value.as_deref() == Some("") {
                        return Err(invalid(
                            field(key),
                            "must not be empty; remove it or fill it in",
                        ));
                    }
                }
                if model.api.is_none() && provider.api.is_none() {
                    return Err(invalid(
                        field("api"),
                        "no \"api\" for this model; set it on the model or the provider (e.g. \"openai-completions\")",
                    ));
                }
                check_positive(model.context_window, || field("contextWindow"), &invalid)?;
                check_positive(model.max_tokens, || field("maxTokens"), &invalid)?;
            }
            for (id, model) in provider.model_overrides.iter().flatten() {
                let field = |field: &str| format!("providers.{name}.modelOverrides.{id}.{field}");
                if model.name.as_deref() == Some("") {
                    return Err(invalid(
                        field("name"),
                        "must not be empty; remove it or fill it in",
                    ));
                }
                check_positive(model.context_window, || field("contextWindow"), &invalid)?;
                check_positive(model.max_tokens, || field("maxTokens"), &invalid)?;
            }
        }
        Ok(())
    }
}

fn check_positive(
    value: Option<i64>,
    field: impl FnOnce() -> String,
    invalid: &impl Fn(String, &str) -> ModelsJsonError,
) -> Result<(), ModelsJsonError> {
    match value {
        Some(tokens) if tokens <= 0 => Err(invalid(
            field(),
            "must be a positive number of tokens; remove it for the default",
        )),
        Some(_) | None => Ok(()),
    }
}
