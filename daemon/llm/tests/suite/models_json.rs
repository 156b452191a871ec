//! `models.json`: custom providers, overrides of built-in providers and models, validation
//! errors naming file and field, precedence between files, and built-ins surviving bad files.

use pi_llm::{Model, ModelsFile};

use super::world::World;

fn model_json(model: &Model) -> String {
    serde_json::to_string_pretty(model).unwrap()
}

#[test]
fn custom_provider_gets_pi_defaults_headers_and_compat() {
    let world = World::new().env("TEAM_HEADER", "team-42").models_json(
        r#"{"providers": {"ollama": {
            "baseUrl": "http://localhost:11434/v1",
            "api": "openai-completions",
            "apiKey": "ollama",
            "headers": {"X-Team": "TEAM_HEADER", "X-Fixed": "literal"},
            "compat": {"supportsDeveloperRole": false, "openRouterRouting": {"only": ["a"]}},
            "models": [
                {"id": "llama3.1:8b"},
                {"id": "qwen3:32b", "name": "Qwen 3 32B", "reasoning": true, "input": ["text", "image"],
                 "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0},
                 "contextWindow": 32768, "maxTokens": 8192,
                 "headers": {"X-Fixed": "model-wins"},
                 "compat": {"thinkingFormat": "qwen-chat-template", "openRouterRouting": {"order": ["b"]}}}
            ]
        }}}"#,
    );
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");
    let plain = registry.find("ollama", "llama3.1:8b").unwrap();
    let detailed = registry.find("ollama", "qwen3:32b").unwrap();
    insta::assert_snapshot!("custom_default_model", model_json(&plain));
    insta::assert_snapshot!("custom_detailed_model", model_json(&detailed));
}

#[test]
fn override_only_provider_reroutes_built_in_models() {
    let world = World::new().env("PROXY_TOKEN", "tok").models_json(
        r#"{"providers": {"anthropic": {
            "baseUrl": "https://proxy.example/anthropic",
            "headers": {"X-Proxy-Token": "PROXY_TOKEN"}
        }}}"#,
    );
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");
    let anthropic: Vec<Model> = registry
        .models()
        .into_iter()
        .filter(|model| model.provider == "anthropic")
        .collect();
    assert!(!anthropic.is_empty());
    for model in &anthropic {
        assert_eq!(
            model.base_url, "https://proxy.example/anthropic",
            "{}",
            model.id
        );
        assert_eq!(
            model.headers.get("X-Proxy-Token").map(String::as_str),
            Some("tok")
        );
    }
    let openai = registry.find("openai", "gpt-5.4").unwrap();
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert!(openai.headers.is_empty());
}

#[test]
fn model_overrides_patch_built_ins_field_by_field() {
    let world = World::new().models_json(
        r#"{"providers": {"openrouter": {
            "compat": {"openRouterRouting": {"only": ["anthropic"]}},
            "modelOverrides": {
                "anthropic/claude-sonnet-4.6": {
                    "name": "Sonnet via OR", "contextWindow": 200000,
                    "cost": {"input": 2.5},
                    "compat": {"openRouterRouting": {"order": ["anthropic", "bedrock"]}}
                },
                "no/such-model": {"name": "ghost"}
            }
        }}}"#,
    );
    let registry = world.registry();
    insta::assert_snapshot!("override_unknown_model", world.diagnostics(&registry));
    let patched = registry
        .find("openrouter", "anthropic/claude-sonnet-4.6")
        .unwrap();
    insta::assert_snapshot!("override_patched_model", model_json(&patched));
    let untouched = registry.find("openrouter", "openai/gpt-5.4").unwrap();
    assert_eq!(
        serde_json::to_value(&untouched.compat).unwrap(),
        serde_json::json!({"openRouterRouting": {"only": ["anthropic"]}})
    );
}

#[test]
fn custom_models_upsert_built_ins_and_first_file_wins() {
    let world = World::new()
        .models_json(
            r#"{"providers": {"openai": {"baseUrl": "https://mine.example/v1", "apiKey": "k",
                "models": [{"id": "gpt-5.4", "api": "openai-responses", "name": "Mine"}]}}}"#,
        )
        .file(
            "pi/models.json",
            r#"{"providers": {"openai": {"baseUrl": "https://pi.example/v1", "apiKey": "k2",
                "models": [{"id": "gpt-5.4", "api": "openai-responses", "name": "Pi's"},
                           {"id": "only-in-pi", "api": "openai-responses"}]}}}"#,
        );
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");
    let replaced = registry.find("openai", "gpt-5.4").unwrap();
    assert_eq!(replaced.name, "Mine");
    assert_eq!(replaced.base_url, "https://mine.example/v1");
    assert_eq!(replaced.context_window, 128_000);
    let count = |id: &str| {
        registry
            .models()
            .iter()
            .filter(|model| model.provider == "openai" && model.id == id)
            .count()
    };
    assert_eq!(count("gpt-5.4"), 1);
    assert_eq!(count("only-in-pi"), 1);
    // The higher-precedence file's provider settings apply to everything the provider has.
    assert_eq!(
        registry.find("openai", "only-in-pi").unwrap().base_url,
        "https://mine.example/v1"
    );
}

#[test]
fn compat_round_trips_through_models_json() {
    let compat = serde_json::json!({
        "supportsStore": false,
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": true,
        "reasoningEffortMap": {"minimal": "low", "xhigh": "max"},
        "supportsUsageInStreaming": false,
        "maxTokensField": "max_tokens",
        "requiresToolResultName": true,
        "requiresAssistantAfterToolResult": true,
        "requiresThinkingAsText": true,
        "requiresMistralToolIds": true,
        "requiresReasoningContentOnAssistantMessages": true,
        "thinkingFormat": "qwen-chat-template",
        "openRouterRouting": {"only": ["a"], "order": ["b"]},
        "vercelGatewayRouting": {"order": ["c"]},
        "supportsStrictMode": false
    });
    let text = serde_json::json!({"providers": {"vllm": {
        "baseUrl": "http://localhost:8000/v1", "api": "openai-completions", "apiKey": "none",
        "models": [{"id": "m", "compat": compat}]
    }}})
    .to_string();
    let world = World::new().models_json(&text);
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");
    let model = registry.find("vllm", "m").unwrap();
    assert_eq!(serde_json::to_value(&model.compat).unwrap(), compat);
    let reparsed: Model = serde_json::from_str(&serde_json::to_string(&model).unwrap()).unwrap();
    assert_eq!(reparsed, model);
}

#[test]
fn validation_errors_name_the_file_and_the_field() {
    let cases = [
        ("not json", "{"),
        ("no providers", "{}"),
        ("providers is not an object", r#"{"providers": []}"#),
        ("provider sets nothing", r#"{"providers": {"x": {}}}"#),
        (
            "models without baseUrl",
            r#"{"providers": {"x": {"apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}}"#,
        ),
        (
            "models without apiKey",
            r#"{"providers": {"x": {"baseUrl": "http://h", "api": "openai-completions", "models": [{"id": "m"}]}}}"#,
        ),
        (
            "model without api",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "models": [{"id": "m"}]}}}"#,
        ),
        (
            "zero context window",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"id": "m", "contextWindow": 0}]}}}"#,
        ),
        (
            "negative maxTokens override",
            r#"{"providers": {"openai": {"modelOverrides": {"gpt-5.4": {"maxTokens": -5}}}}}"#,
        ),
        (
            "wrong type",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"id": "m", "reasoning": "yes"}]}}}"#,
        ),
        (
            "empty id",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"id": ""}]}}}"#,
        ),
        (
            "missing id",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"name": "m"}]}}}"#,
        ),
        (
            "unknown input kind",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"id": "m", "input": ["text", "video"]}]}}}"#,
        ),
        (
            "bad compat value",
            r#"{"providers": {"x": {"baseUrl": "http://h", "compat": {"maxTokensField": "tokens"}}}}"#,
        ),
        ("empty baseUrl", r#"{"providers": {"x": {"baseUrl": ""}}}"#),
        (
            "partial custom cost",
            r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a", "models": [{"id": "m", "cost": {"input": 1}}]}}}"#,
        ),
    ];
    let world = World::new();
    let path = world.path("models.json");
    let report: Vec<String> = cases
        .iter()
        .map(|(name, text)| match ModelsFile::parse(&path, text) {
            Ok(_) => format!("{name}: accepted"),
            Err(error) => format!("{name}: {}", world.redact(&error.to_string())),
        })
        .collect();
    insta::assert_snapshot!(report.join("\n"));
}

#[test]
fn a_bad_file_leaves_the_built_ins_and_the_other_files_working() {
    let world = World::new()
        .models_json(r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "models": [{"id": "m"}]}}}"#)
        .file(
            "pi/models.json",
            r#"{"providers": {"lmstudio": {"baseUrl": "http://localhost:1234/v1", "api": "openai-completions",
                "apiKey": "lm", "models": [{"id": "local-model"}]}}}"#,
        );
    let registry = world.registry();
    insta::assert_snapshot!(world.diagnostics(&registry));
    assert_eq!(registry.models().len(), pi_llm::builtin_models().len() + 1);
    assert!(registry.find("lmstudio", "local-model").is_some());
    assert!(registry.resolve("claude-sonnet-4-5").is_ok());
}

#[test]
fn reload_picks_up_changes() {
    let world = World::new().models_json(r#"{"providers": {"x": {}}}"#);
    let registry = world.registry();
    assert_eq!(registry.diagnostics().len(), 1);
    std::fs::write(
        world.path("models.json"),
        r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}}"#,
    )
    .unwrap();
    registry.reload();
    assert!(registry.diagnostics().is_empty());
    assert!(registry.find("x", "m").is_some());
}

#[test]
fn a_bad_edit_keeps_the_last_good_file_until_it_is_fixed_or_deleted() {
    let good = r#"{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}}"#;
    let world = World::new()
        .models_json(good)
        .auth_json(r#"{"x": {"type": "api_key", "key": "from-auth"}}"#);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        world.path("auth.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let registry = world.registry();
    assert_eq!(world.diagnostics(&registry), "");

    // Half-written JSON and an invalid provider: the models and key loaded before stay.
    for (models, auth) in [
        (r#"{"providers": {"x": {"baseUrl": "#, r#"{"x": {"type": "#),
        (r#"{"providers": {"x": {"models": [{"id": "m"}]}}}"#, "[]"),
    ] {
        std::fs::write(world.path("models.json"), models).unwrap();
        std::fs::write(world.path("auth.json"), auth).unwrap();
        registry.reload();
        let diagnostics = world.diagnostics(&registry);
        assert_eq!(
            diagnostics
                .matches("the daemon keeps using the file's last good version until it is fixed")
                .count(),
            2,
            "{diagnostics}"
        );
        assert!(diagnostics.contains("[DIR]/models.json"), "{diagnostics}");
        assert!(diagnostics.contains("[DIR]/auth.json"), "{diagnostics}");
        let model = registry
            .find("x", "m")
            .expect("the last good models.json applies");
        assert_eq!(model.base_url, "http://h");
        assert_eq!(registry.resolve_key("x").unwrap().key.expose(), "from-auth");
    }

    // Fixed: the new version applies and the diagnostics are gone.
    std::fs::write(
        world.path("models.json"),
        good.replace("\"m\"", "\"m2\"")
            .replace("http://h", "http://h2"),
    )
    .unwrap();
    std::fs::write(
        world.path("auth.json"),
        r#"{"x": {"type": "api_key", "key": "fixed"}}"#,
    )
    .unwrap();
    registry.reload();
    assert_eq!(world.diagnostics(&registry), "");
    assert!(registry.find("x", "m").is_none());
    assert_eq!(registry.find("x", "m2").unwrap().base_url, "http://h2");
    assert_eq!(registry.resolve_key("x").unwrap().key.expose(), "fixed");

    // Broken again, then deleted: a deleted file no longer applies.
    std::fs::write(world.path("models.json"), "{").unwrap();
    registry.reload();
    assert!(registry.find("x", "m2").is_some());
    std::fs::remove_file(world.path("models.json")).unwrap();
    registry.reload();
    assert_eq!(world.diagnostics(&registry), "");
    assert!(registry.find("x", "m2").is_none());
}

#[test]
fn a_file_that_was_never_good_is_skipped_with_the_built_ins_kept() {
    let world = World::new().models_json("{");
    let registry = world.registry();
    let diagnostics = world.diagnostics(&registry);
    assert!(
        diagnostics.contains("using the built-in models without this file"),
        "{diagnostics}"
    );
    assert!(!diagnostics.contains("last good"), "{diagnostics}");
    registry.reload();
    assert_eq!(world.diagnostics(&registry), diagnostics);
    assert!(registry.resolve("claude-sonnet-4-5").is_ok());
}
