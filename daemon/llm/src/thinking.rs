//! Which thinking levels a model offers and how a requested level is clamped to them (pi's
//! session rules, spec §6.3 and §6.6): a model without reasoning offers only `off`; reasoning
//! models offer `off` to `high`, plus `xhigh` where [`supports_xhigh`]. A level the model does
//! not offer becomes the nearest offered level above it, else the nearest below.

use crate::model::{Model, ThinkingLevel};

/// Id fragments of models that accept `xhigh`: pi's list (GPT-5.2–5.4, Opus 4.6) plus the later
/// GPT-5.5 and Opus 4.7, which accept it too.
const XHIGH_MODELS: &[&str] = &[
    "gpt-5.2", "gpt-5.3", "gpt-5.4", "gpt-5.5", "opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7",
];

/// Whether `model` accepts the `xhigh` level.
pub fn supports_xhigh(model: &Model) -> bool {
    XHIGH_MODELS
        .iter()
        .any(|fragment| model.id.contains(fragment))
}

/// The levels `model` offers, in increasing order.
pub fn available_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|level| *level != ThinkingLevel::Xhigh || supports_xhigh(model))
        .collect()
}

/// `level` if `model` offers it, else the nearest offered level above, else the nearest below.
pub fn clamp(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let available = available_levels(model);
    if available.contains(&level) {
        return level;
    }
    available
        .iter()
        .copied()
        .find(|candidate| *candidate > level)
        .or_else(|| {
            available
                .iter()
                .copied()
                .rev()
                .find(|candidate| *candidate < level)
        })
        .unwrap_or(ThinkingLevel::Off)
}
