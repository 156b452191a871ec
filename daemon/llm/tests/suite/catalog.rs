//! The built-in catalog: providers, their key variables and the models users ask for by name.

use pi_llm::{InputKind, PROVIDERS, builtin_models};

#[test]
fn providers_and_their_keys() {
    let report: Vec<String> = PROVIDERS
        .iter()
        .map(|info| {
            let count = builtin_models()
                .iter()
                .filter(|model| model.provider == info.id)
                .count();
            format!(
                "{} {} {} [{}] default {} ({count} models)",
                info.id,
                info.api,
                info.base_url,
                info.env_vars.join(", "),
                info.default_model
            )
        })
        .collect();
    insta::assert_snapshot!(report.join("\n"));
}

#[test]
fn well_known_models_have_their_published_facts() {
    let models = builtin_models();
    let find = |provider: &str, id: &str| {
        models
            .iter()
            .find(|model| model.provider == provider && model.id == id)
            .unwrap_or_else(|| panic!("{provider}/{id} missing"))
    };
    let sonnet = find("anthropic", "claude-sonnet-4-5");
    assert_eq!(
        (
            sonnet.context_window,
            sonnet.max_tokens,
            sonnet.cost.input,
            sonnet.cost.output
        ),
        (200_000, 64_000, 3.0, 15.0)
    );
    assert_eq!(sonnet.base_url, "https://api.anthropic.com");
    assert!(sonnet.reasoning && sonnet.input == [InputKind::Text, InputKind::Image]);
    find("anthropic", "claude-sonnet-4-5-20250929");
    find("anthropic", "claude-haiku-4-5-20251001");
    find("anthropic", "claude-opus-4-6");
    find("openai", "gpt-4.1");
    find("openai", "o4-mini");
    find("google", "gemini-3-pro-preview");
    find("xai", "grok-code-fast-1");
    find("mistral", "codestral-latest");
    find("deepseek", "deepseek-v4-flash");
    find("cerebras", "gpt-oss-120b");
    find("groq", "llama-3.3-70b-versatile");
    let mistral = find("mistral", "devstral-medium-latest");
    assert_eq!(
        (mistral.api.as_str(), mistral.base_url.as_str()),
        ("mistral-conversations", "https://api.mistral.ai")
    );
    assert!(models.len() >= 100, "{} models", models.len());
}
