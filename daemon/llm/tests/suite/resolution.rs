//! Model resolution by pi's rules: exact ids, `provider/id`, substrings, `:level` suffixes, ids
//! with colons, aliases over dated ids, key preference and near-miss errors.

use pi_llm::ModelRegistry;

use super::world::World;

/// Resolves `spec` and renders `provider/id` plus ` @level`, or `error: …`.
fn render(registry: &ModelRegistry, spec: &str) -> String {
    match registry.resolve(spec) {
        Ok((model, Some(level))) => format!("{}/{} @{level}", model.provider, model.id),
        Ok((model, None)) => format!("{}/{}", model.provider, model.id),
        Err(error) => format!("error: {error}"),
    }
}

fn check(registry: &ModelRegistry, spec: &str, expect: &str) {
    assert_eq!(render(registry, spec), expect, "spec {spec:?}");
}

#[test]
fn specs_resolve_like_pi() {
    let registry = World::new().registry();
    let cases = [
        // Exact ids and provider/id, case-insensitive.
        ("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        (
            "claude-sonnet-4-5-20250929",
            "anthropic/claude-sonnet-4-5-20250929",
        ),
        ("anthropic/claude-opus-4-6", "anthropic/claude-opus-4-6"),
        ("Anthropic/Claude-Opus-4-6", "anthropic/claude-opus-4-6"),
        ("GPT-5.4", "openai/gpt-5.4"),
        ("  gpt-5.4  ", "openai/gpt-5.4"),
        // Substrings prefer aliases, then the highest id.
        // (Across all 31 of pi's providers: Bedrock's `us.anthropic.…` and OpenRouter's
        // `~anthropic/…` ids sort highest.)
        (
            "sonnet-4-5",
            "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ),
        (
            "haiku-4-5-2025",
            "amazon-bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
        ),
        ("sonnet", "openrouter/~anthropic/claude-sonnet-latest"),
        (
            "Claude Opus 4.5",
            "amazon-bedrock/us.anthropic.claude-opus-4-5-20251101-v1:0",
        ),
        ("anthropic/sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        (
            "groq/llama",
            "groq/meta-llama/llama-4-scout-17b-16e-instruct",
        ),
        // Thinking suffixes.
        (
            "sonnet:high",
            "openrouter/~anthropic/claude-sonnet-latest @high",
        ),
        (
            "anthropic/claude-opus-4-6:xhigh",
            "anthropic/claude-opus-4-6 @xhigh",
        ),
        ("gpt-5.4:off", "openai/gpt-5.4 @off"),
        // Ids with colons match whole before a suffix is split off.
        (
            "openrouter/openai/gpt-oss-120b:free",
            "openrouter/openai/gpt-oss-120b:free",
        ),
        ("gpt-oss-120b:free", "openrouter/openai/gpt-oss-120b:free"),
        (
            "gpt-oss-120b:free:low",
            "openrouter/openai/gpt-oss-120b:free @low",
        ),
        (
            "qwen/qwen-plus-2025-07-28:thinking",
            "openrouter/qwen/qwen-plus-2025-07-28:thinking",
        ),
        (
            "qwen/qwen-plus-2025-07-28:high",
            "openrouter/qwen/qwen-plus-2025-07-28 @high",
        ),
        // A provider-scoped miss retries the whole text as an id; ties go by catalog order.
        ("openai/gpt-oss-120b", "openrouter/openai/gpt-oss-120b"),
        ("groq/openai/gpt-oss-120b", "groq/openai/gpt-oss-120b"),
        // Errors.
        (
            "claude-sonnet-4-5:turbo",
            "error: unknown thinking level \"turbo\" in \"claude-sonnet-4-5:turbo\"; use off, minimal, low, medium, high or xhigh",
        ),
        (
            "openai/gpt-4o:extended",
            "error: unknown thinking level \"extended\" in \"openai/gpt-4o:extended\"; use off, minimal, low, medium, high or xhigh",
        ),
        (
            "sonnet:HIGH",
            "error: unknown thinking level \"HIGH\" in \"sonnet:HIGH\"; use off, minimal, low, medium, high or xhigh",
        ),
        (
            "",
            "error: no model given; name one as provider/id, an id, or part of a name",
        ),
    ];
    for (spec, expect) in cases {
        check(&registry, spec, expect);
    }
}

#[test]
fn providers_with_keys_win_ties_and_substrings() {
    let only_openrouter = World::new().env("OPENROUTER_API_KEY", "or-key").registry();
    // A substring prefers models whose provider has a key.
    check(
        &only_openrouter,
        "sonnet",
        "openrouter/~anthropic/claude-sonnet-latest",
    );
    // An exact id is exact, key or not.
    check(
        &only_openrouter,
        "claude-sonnet-4-5",
        "anthropic/claude-sonnet-4-5",
    );

    let only_groq = World::new().env("GROQ_API_KEY", "gq-key").registry();
    // The same id on two providers: the one with a key.
    check(
        &only_groq,
        "openai/gpt-oss-120b",
        "groq/openai/gpt-oss-120b",
    );
    check(&only_groq, "gpt-oss-120b", "cerebras/gpt-oss-120b");
}

#[test]
fn unknown_specs_list_the_closest_models() {
    let registry = World::new().registry();
    insta::assert_snapshot!(render(&registry, "claude-opsu-4-6"));
    // An unknown provider is not a custom model id.
    assert!(
        render(&registry, "nonesuch/claude-opus-9").starts_with("error: no model matches"),
        "{}",
        render(&registry, "nonesuch/claude-opus-9")
    );
}

/// pi's custom model id: an unlisted id under a known provider runs with the provider's
/// default model's settings, under its own id and name; it is not listed, and finding it by
/// provider and id (as a reloaded session does) gives the same model.
#[test]
fn an_unlisted_id_of_a_known_provider_is_a_custom_model() {
    let registry = World::new().registry();
    let (model, level) = registry.resolve("anthropic/claude-opus-9").unwrap();
    assert_eq!(level, None);
    // anthropic's default model.
    let base = registry.find("anthropic", "claude-opus-4-7").unwrap();
    assert_eq!(
        (model.id.as_str(), model.name.as_str()),
        ("claude-opus-9", "claude-opus-9")
    );
    assert_eq!(model.provider, "anthropic");
    assert_eq!(model.api, base.api);
    assert_eq!(model.base_url, base.base_url);
    assert_eq!(model.context_window, base.context_window);
    assert!(!registry.is_listed(&model));
    assert!(registry.is_listed(&base));
    assert_eq!(registry.find("anthropic", "claude-opus-9"), None);
    assert_eq!(
        registry.find_or_custom("anthropic", "claude-opus-9"),
        Some(model)
    );
}

#[test]
fn custom_models_with_colons_resolve() {
    let world = World::new().models_json(
        r#"{"providers": {"ollama": {
            "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
            "models": [{"id": "llama3.1:8b"}, {"id": "qwen3:32b", "reasoning": true}]
        }}}"#,
    );
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");
    check(&registry, "llama3.1:8b", "ollama/llama3.1:8b");
    check(
        &registry,
        "ollama/qwen3:32b:medium",
        "ollama/qwen3:32b @medium",
    );
    check(&registry, "qwen3:32b:high", "ollama/qwen3:32b @high");
}

#[test]
fn the_registry_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<ModelRegistry>();
}

#[test]
fn find_is_exact() {
    let registry = World::new().registry();
    assert!(registry.find("anthropic", "claude-sonnet-4-5").is_some());
    assert!(registry.find("anthropic", "Claude-Sonnet-4-5").is_none());
    assert!(registry.find("openai", "claude-sonnet-4-5").is_none());
}

#[test]
fn default_model_prefers_configuration_then_providers_with_keys() {
    let check_default = |world: World, expect: Option<&str>| {
        let registry = world.registry();
        let got = registry
            .default_model()
            .map(|model| format!("{}/{}", model.provider, model.id));
        assert_eq!(got.as_deref(), expect);
    };
    check_default(World::new(), None);
    check_default(
        World::new().default_model("google", "gemini-2.5-flash"),
        Some("google/gemini-2.5-flash"),
    );
    check_default(
        World::new()
            .default_model("google", "no-such-model")
            .env("OPENAI_API_KEY", "sk-x"),
        Some("openai/gpt-5.4"),
    );
    check_default(
        World::new()
            .env("OPENAI_API_KEY", "sk-x")
            .env("ANTHROPIC_API_KEY", "sk-y"),
        Some("anthropic/claude-opus-4-7"),
    );
    check_default(
        World::new().env("DEEPSEEK_API_KEY", "sk-z"),
        Some("deepseek/deepseek-v4-pro"),
    );
    check_default(
        World::new().models_json(
            r#"{"providers": {"local": {"baseUrl": "http://localhost:8080/v1",
                "api": "openai-completions", "apiKey": "none", "models": [{"id": "m1"}]}}}"#,
        ),
        Some("local/m1"),
    );
    // Custom providers in the file's order, as pi lists and picks them (not by name).
    check_default(
        World::new().models_json(
            r#"{"providers": {
                "zlocal": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",
                    "apiKey": "none", "models": [{"id": "m1"}, {"id": "m2"}]},
                "dead": {"baseUrl": "http://localhost:9/v1", "api": "openai-completions",
                    "apiKey": "none", "models": [{"id": "d1"}]}}}"#,
        ),
        Some("zlocal/m1"),
    );
}

#[test]
fn list_reports_which_providers_have_keys() {
    let registry = World::new().env("GEMINI_API_KEY", "g-key").registry();
    let listed = registry.list();
    assert_eq!(listed.len(), pi_llm::builtin_models().len());
    for (model, has_key) in listed {
        assert_eq!(
            has_key,
            model.provider == "google",
            "{}/{}",
            model.provider,
            model.id
        );
    }
}
