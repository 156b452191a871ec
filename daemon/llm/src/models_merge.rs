//! Applies validated `models.json` files to the built-in catalog (pi's `ModelRegistry` merge).
//!
//! Per provider of each file: its `baseUrl`, `headers` and `compat` apply to every model the
//! provider already has; `modelOverrides` patch built-in models field by field (cost and
//! compat merge, headers merge); custom `models` are upserted by id (same id replaces), with
//! pi's defaults (`name` = id, no reasoning, text input, zero cost, 128 000-token context,
//! 16 384 output tokens), provider headers under model headers and provider `compat` under
//! model `compat`. Files are given highest precedence first and applied lowest first, so the
//! first file wins. Header values (and the key for `authHeader: true`) are resolved like keys.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config_value::ConfigValueResolver;
use crate::keys::ConfiguredKey;
use crate::model::{InputKind, Model, ModelCost};
use crate::models_json::{ModelDefinition, ModelOverride, ModelsFile, ModelsJsonError};

/// Context window of a custom model that does not say.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Output cap of a custom model that does not say.
pub const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// The catalog after applying `models.json` files.
#[derive(Debug, Default)]
pub struct MergedModels {
    /// Built-in and custom models, built-ins first in catalog order, then custom ones in file
    /// order.
    pub models: Vec<Model>,
    /// Providers' `apiKey`s, the lowest-precedence key source.
    pub provider_keys: BTreeMap<String, ConfiguredKey>,
    /// Values that could not be resolved and overrides of unknown models. The rest applied.
    pub problems: Vec<ModelsJsonError>,
}

/// Applies `files` (highest precedence first) to `builtins`.
pub fn merge(
    builtins: Vec<Model>,
    files: &[ModelsFile],
    resolver: &ConfigValueResolver,
) -> MergedModels {
    let mut merged = MergedModels {
        models: builtins,
        ..MergedModels::default()
    };
    for file in files.iter().rev() {
        for (name, provider) in file.in_order() {
            let field = |rest: &str| format!("providers.{name}.{rest}");
            let provider_headers = resolve_headers(
                provider.headers.as_ref(),
                &field("headers"),
                &file.path,
                resolver,
                &mut merged.problems,
            );
            if let Some(value) = &provider.api_key {
                merged.provider_keys.insert(
                    name.clone(),
                    ConfiguredKey {
                        path: file.path.clone(),
                        value: value.clone(),
                    },
                );
            }

            for model in merged
                .models
                .iter_mut()
                .filter(|model| &model.provider == name)
            {
                if let Some(base_url) = &provider.base_url {
                    model.base_url.clone_from(base_url);
                }
                model.headers.extend(provider_headers.clone());
                if let Some(compat) = &provider.compat {
                    model.compat =
                        Some(compat.merged_over(&model.compat.clone().unwrap_or_default()));
                }
            }

            for (id, patch) in provider.model_overrides.iter().flatten() {
                let mut found = false;
                for model in merged
                    .models
                    .iter_mut()
                    .filter(|model| &model.provider == name && &model.id == id)
                {
                    found = true;
                    let headers = resolve_headers(
                        patch.headers.as_ref(),
                        &field(&format!("modelOverrides.{id}.headers")),
                        &file.path,
                        resolver,
                        &mut merged.problems,
                    );
                    apply_override(model, patch, headers);
                }
                if !found {
                    merged.problems.push(ModelsJsonError::UnknownOverride {
                        path: file.path.clone(),
                        provider: name.clone(),
                        id: id.clone(),
                    });
                }
            }

            let mut auth_header = BTreeMap::new();
            if provider.auth_header == Some(true)
                && let Some(raw) = &provider.api_key
            {
                match resolver.resolve(raw) {
                    Ok(Some(key)) => {
                        auth_header.insert("Authorization".to_owned(), format!("Bearer {key}"));
                    }
                    Ok(None) => {}
                    Err(error) => merged.problems.push(ModelsJsonError::Value {
                        path: file.path.clone(),
                        field: field("apiKey"),
                        problem: format!("{error}; the Authorization header is left out"),
                    }),
                }
            }
            for (index, definition) in provider.models.iter().flatten().enumerate() {
                let mut headers = provider_headers.clone();
                headers.extend(resolve_headers(
                    definition.headers.as_ref(),
                    &field(&format!("models[{index}].headers")),
                    &file.path,
                    resolver,
                    &mut merged.problems,
                ));
                headers.extend(auth_header.clone());
                let model = custom_model(name, provider, definition, headers);
                match merged
                    .models
                    .iter_mut()
                    .find(|existing| existing.provider == model.provider && existing.id == model.id)
                {
                    Some(existing) => *existing = model,
                    None => merged.models.push(model),
                }
            }
        }
    }
    merged
}

fn custom_model(
    provider_name: &str,
    provider: &crate::models_json::ProviderConfig,
    definition: &ModelDefinition,
    headers: BTreeMap<String, String>,
) -> Model {
    let compat = match (&definition.compat, &provider.compat) {
        (Some(model), Some(provider)) => Some(model.merged_over(provider)),
        (Some(only), None) | (None, Some(only)) => Some(only.clone()),
        (None, None) => None,
    };
    Model {
        id: definition.id.clone(),
        name: definition
            .name
            .clone()
            .unwrap_or_else(|| definition.id.clone()),
        // Validation guarantees one of the two.
        api: definition
            .api
            .clone()
            .or_else(|| provider.api.clone())
            .unwrap_or_default(),
        provider: provider_name.to_owned(),
        // Validation guarantees the provider's `baseUrl` when it defines models.
        base_url: definition
            .base_url
            .clone()
            .or_else(|| provider.base_url.clone())
            .unwrap_or_default(),
        reasoning: definition.reasoning.unwrap_or(false),
        input: definition
            .input
            .clone()
            .unwrap_or_else(|| vec![InputKind::Text]),
        cost: definition
            .cost
            .map(|cost| ModelCost {
                input: cost.input,
                output: cost.output,
                cache_read: cost.cache_read,
                cache_write: cost.cache_write,
            })
            .unwrap_or_default(),
        context_window: positive(definition.context_window).unwrap_or(DEFAULT_CONTEXT_WINDOW),
        max_tokens: positive(definition.max_tokens).unwrap_or(DEFAULT_MAX_TOKENS),
        headers,
        compat,
    }
}

fn apply_override(model: &mut Model, patch: &ModelOverride, headers: BTreeMap<String, String>) {
    if let Some(name) = &patch.name {
        model.name.clone_from(name);
    }
    if let Some(reasoning) = patch.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(input) = &patch.input {
        model.input.clone_from(input);
    }
    if let Some(tokens) = positive(patch.context_window) {
        model.context_window = tokens;
    }
    if let Some(tokens) = positive(patch.max_tokens) {
        model.max_tokens = tokens;
    }
    if let Some(cost) = patch.cost {
        model.cost = ModelCost {
            input: cost.input.unwrap_or(model.cost.input),
            output: cost.output.unwrap_or(model.cost.output),
            cache_read: cost.cache_read.unwrap_or(model.cost.cache_read),
            cache_write: cost.cache_write.unwrap_or(model.cost.cache_write),
        };
    }
    model.headers.extend(headers);
    if let Some(compat) = &patch.compat {
        model.compat = Some(compat.merged_over(&model.compat.clone().unwrap_or_default()));
    }
}

fn positive(tokens: Option<i64>) -> Option<u64> {
    tokens
        .and_then(|tokens| u64::try_from(tokens).ok())
        .filter(|tokens| *tokens > 0)
}

fn resolve_headers(
    headers: Option<&BTreeMap<String, String>>,
    field: &str,
    path: &Path,
    resolver: &ConfigValueResolver,
    problems: &mut Vec<ModelsJsonError>,
) -> BTreeMap<String, String> {
    let mut resolved = BTreeMap::new();
    for (name, raw) in headers.into_iter().flatten() {
        match resolver.resolve(raw) {
            Ok(Some(value)) => {
                resolved.insert(name.clone(), value);
            }
            Ok(None) => {}
            Err(error) => problems.push(ModelsJsonError::Value {
                path: path.to_owned(),
                field: format!("{field}.{name}"),
                problem: format!("{error}; the header is left out"),
            }),
        }
    }
    resolved
}
