//! A sentinel key placed in every source never shows up in errors, diagnostics or `Debug`.

use pi_llm::ModelRegistry;

use super::world::World;

const SENTINEL: &str = "sk-SENTINEL-123";

fn everything_printable(world: &World, registry: &ModelRegistry) -> String {
    let mut text = format!("{registry:?}\n{}\n", world.diagnostics(registry));
    for provider in [
        "anthropic",
        "openai",
        "groq",
        "local",
        "literal",
        "nothing-here",
    ] {
        text.push_str(&format!("{:?}\n", registry.resolve_key(provider)));
        if let Err(error) = registry.resolve_key(provider) {
            text.push_str(&format!("{error}\n"));
        }
    }
    for spec in ["sk-SENTINEL", "local/m:turbo", ""] {
        text.push_str(&format!(
            "{:?}\n",
            registry.resolve(spec).map(|(model, _)| model.id)
        ));
    }
    text
}

#[test]
fn a_sentinel_key_never_leaks() {
    let world = World::new()
        .env("ANTHROPIC_API_KEY", SENTINEL)
        .env("SENTINEL_VAR", SENTINEL)
        .auth_json(&format!(
            r#"{{"openai": {{"type": "api_key", "key": "{SENTINEL}"}},
                "groq": {{"type": "oauth", "access": "{SENTINEL}", "refresh": "{SENTINEL}", "expires": 1}}}}"#
        ))
        .models_json(&format!(
            r#"{{"providers": {{"local": {{"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",
                "apiKey": "SENTINEL_VAR", "headers": {{"X-Fail": "!exit 3"}},
                "models": [{{"id": "m"}}]}},
              "literal": {{"baseUrl": "http://localhost:9/v1", "api": "openai-completions",
                "apiKey": "{SENTINEL}", "authHeader": true, "models": [{{"id": "n", "contextWindow": 5}}]}}}}}}"#
        ))
        .file(
            "pi/models.json",
            &format!(r#"{{"providers": {{"bad": {{"apiKey": {{"nested": "{SENTINEL}"}}}}}}}}"#),
        )
        .file(
            "pi/auth.json",
            &format!(r#"{{"mistral": {{"type": "{SENTINEL}", "key": "{SENTINEL}"}}}}"#),
        );
    let registry = world.registry();
    let printable = everything_printable(&world, &registry);
    assert!(registry.has_key("anthropic") && registry.has_key("openai"));
    assert!(!printable.contains("SENTINEL-123"), "{printable}");
    assert!(printable.contains("ApiKey(***)"), "{printable}");
    assert!(registry.diagnostics().len() >= 3, "{printable}");
}
