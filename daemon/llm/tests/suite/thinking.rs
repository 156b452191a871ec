//! Thinking levels each model offers and how requests are clamped to them.

use pi_llm::ThinkingLevel::{self, High, Low, Medium, Minimal, Off, Xhigh};
use pi_llm::builtin_models;
use pi_llm::thinking::{available_levels, clamp, supports_xhigh};

fn model(provider: &str, id: &str) -> pi_llm::Model {
    builtin_models()
        .into_iter()
        .find(|model| model.provider == provider && model.id == id)
        .unwrap()
}

#[test]
fn clamping_follows_pi() {
    let check = |provider: &str, id: &str, requested: ThinkingLevel, expect: ThinkingLevel| {
        assert_eq!(
            clamp(&model(provider, id), requested),
            expect,
            "{provider}/{id} {requested}"
        );
    };
    // Models without reasoning only think `off`.
    check("openai", "gpt-4.1", High, Off);
    check("openai", "gpt-4.1", Off, Off);
    // Reasoning models keep off..high.
    check("anthropic", "claude-sonnet-4-5", Minimal, Minimal);
    check("anthropic", "claude-sonnet-4-5", Medium, Medium);
    check("anthropic", "claude-sonnet-4-5", Off, Off);
    // `xhigh` only where supported, else the nearest lower level.
    check("anthropic", "claude-sonnet-4-5", Xhigh, High);
    check("anthropic", "claude-opus-4-6", Xhigh, Xhigh);
    check("openrouter", "anthropic/claude-opus-4.6", Xhigh, Xhigh);
    check("openai", "gpt-5.4", Xhigh, Xhigh);
    check("openai", "gpt-5.1", Xhigh, High);
    check("openai", "gpt-5.2-codex", Xhigh, Xhigh);
    check("google", "gemini-2.5-pro", Low, Low);
}

#[test]
fn available_levels_per_model() {
    assert_eq!(available_levels(&model("openai", "gpt-4o")), [Off]);
    assert_eq!(
        available_levels(&model("anthropic", "claude-haiku-4-5")),
        [Off, Minimal, Low, Medium, High]
    );
    assert_eq!(
        available_levels(&model("openai", "gpt-5.5")),
        [Off, Minimal, Low, Medium, High, Xhigh]
    );
    assert!(supports_xhigh(&model("anthropic", "claude-opus-4-7")));
    assert!(!supports_xhigh(&model("anthropic", "claude-opus-4-5")));
}
