//! `--models` patterns (pi's model scope): comma-separated globs (`*`, `?`) matched
//! case-insensitively against `provider/id` and `id`, each with an optional `:thinking` suffix.
//!
//! The scope (from `--models`, else pi's `enabledModels` setting) picks the model of a new
//! session when `--model` is absent (the default model when it is in scope, else the first
//! in scope), and is the cycle of `cycle_model` in `pictl rpc` and the TUI's Ctrl+P.

use pi_protocol::v1::ModelInfo;
use pi_util::wildcard::{Case, Wildcard};

const LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// A model in scope, with the thinking level its pattern asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Scoped {
    /// The model.
    pub model: ModelInfo,
    /// The `:level` of the pattern that matched.
    pub thinking: Option<String>,
}

/// The models matching `patterns`, in pattern order then list order, without repeats.
pub fn scoped_models(patterns: &[String], models: &[ModelInfo]) -> Vec<Scoped> {
    let mut scoped: Vec<Scoped> = Vec::new();
    for pattern in patterns {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            continue;
        }
        let (glob, thinking) = match pattern.rsplit_once(':') {
            Some((glob, level)) if LEVELS.contains(&level) => (glob, Some(level.to_owned())),
            _ => (pattern, None),
        };
        let glob = Wildcard::new(&glob.to_lowercase(), Case::Sensitive);
        for model in models {
            let full = format!("{}/{}", model.provider, model.id).to_lowercase();
            let id = model.id.to_lowercase();
            let matched = glob.is_match(&full) || glob.is_match(&id);
            let seen = scoped
                .iter()
                .any(|s| s.model.provider == model.provider && s.model.id == model.id);
            if matched && !seen {
                scoped.push(Scoped {
                    model: model.clone(),
                    thinking: thinking.clone(),
                });
            }
        }
    }
    scoped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> ModelInfo {
        ModelInfo {
            provider: provider.to_owned(),
            id: id.to_owned(),
            name: id.to_owned(),
            api: "anthropic-messages".to_owned(),
            context_window: 1,
            max_tokens: 1,
            reasoning: true,
            images: false,
            input_cost: 0.0,
            output_cost: 0.0,
            has_key: true,
            base_url: None,
            cache_read_cost: None,
            cache_write_cost: None,
        }
    }

    #[test]
    fn globs_match_ids_and_full_names_with_levels() {
        let models = [
            model("anthropic", "claude-sonnet-4-5"),
            model("anthropic", "claude-opus-4-6"),
            model("openai", "gpt-5.4"),
        ];
        let names = |patterns: &[&str]| {
            let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
            scoped_models(&patterns, &models)
                .into_iter()
                .map(|s| format!("{}:{}", s.model.id, s.thinking.unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&["openai/*"]), ["gpt-5.4:"]);
        assert_eq!(
            names(&["*OPUS*:high", "claude-*"]),
            ["claude-opus-4-6:high", "claude-sonnet-4-5:"]
        );
        assert_eq!(names(&["gpt-5.?"]), ["gpt-5.4:"]);
        assert!(names(&["gemini*"]).is_empty());
    }
}
