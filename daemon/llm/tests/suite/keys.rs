//! Key precedence (explicit > auth.json key > auth.json OAuth > environment > models.json),
//! `!command` and variable-name values, and the text of a missing-key error.

use pi_llm::{ApiKey, KeySource, ModelRegistry};

use super::world::{NOW, World};

/// `source: value` of the key for `provider`, or `error: …`.
fn render(world: &World, registry: &ModelRegistry, provider: &str) -> String {
    match registry.resolve_key(provider) {
        Ok(resolved) => {
            let source = match &resolved.source {
                KeySource::Explicit => "explicit".to_owned(),
                KeySource::AuthFile(path) => {
                    format!("auth {}", world.redact(&path.display().to_string()))
                }
                KeySource::OAuth(path) => {
                    format!("oauth {}", world.redact(&path.display().to_string()))
                }
                KeySource::Environment(name) => format!("env {name}"),
                KeySource::ModelsJson(path) => {
                    format!("models {}", world.redact(&path.display().to_string()))
                }
            };
            format!("{source}: {}", resolved.key.expose())
        }
        Err(error) => format!("error: {}", world.redact(&error.to_string())),
    }
}

fn oauth(expires: i64) -> String {
    format!(
        r#"{{"anthropic": {{"type": "oauth", "access": "sk-ant-oat-token", "refresh": "r", "expires": {expires}}}}}"#
    )
}

const MODELS_KEY: &str = r#"{"providers": {"anthropic": {"apiKey": "from-models-json", "baseUrl": "https://api.anthropic.com"}}}"#;
const AUTH_KEY: &str = r#"{"anthropic": {"type": "api_key", "key": "from-auth"}}"#;

#[test]
fn precedence_follows_pi() {
    let every_source = World::new()
        .env("ANTHROPIC_API_KEY", "from-env")
        .auth_json(AUTH_KEY)
        .models_json(MODELS_KEY);
    let cases: Vec<(&str, World, Option<&str>, &str)> = vec![
        (
            "explicit beats all",
            every_source,
            Some("from-flag"),
            "explicit: from-flag",
        ),
        (
            "auth.json key beats environment",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .auth_json(AUTH_KEY)
                .models_json(MODELS_KEY),
            None,
            "auth [DIR]/auth.json: from-auth",
        ),
        (
            "unexpired OAuth beats environment",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .auth_json(&oauth(NOW + 60_000)),
            None,
            "oauth [DIR]/auth.json: sk-ant-oat-token",
        ),
        (
            "expired OAuth is still the key: the login is refreshed when a request goes out",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .auth_json(&oauth(NOW)),
            None,
            "oauth [DIR]/auth.json: sk-ant-oat-token",
        ),
        (
            "expired OAuth with no refresh token falls through",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .auth_json(&oauth(NOW).replace(r#""refresh": "r""#, r#""refresh": """#)),
            None,
            "env ANTHROPIC_API_KEY: from-env",
        ),
        (
            "OAuth token variable beats API key variable",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .env("ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat-env"),
            None,
            "env ANTHROPIC_OAUTH_TOKEN: sk-ant-oat-env",
        ),
        (
            "empty variables do not count",
            World::new()
                .env("ANTHROPIC_OAUTH_TOKEN", "")
                .env("ANTHROPIC_API_KEY", "from-env"),
            None,
            "env ANTHROPIC_API_KEY: from-env",
        ),
        (
            "environment beats models.json",
            World::new()
                .env("ANTHROPIC_API_KEY", "from-env")
                .models_json(MODELS_KEY),
            None,
            "env ANTHROPIC_API_KEY: from-env",
        ),
        (
            "models.json last",
            World::new().models_json(MODELS_KEY),
            None,
            "models [DIR]/models.json: from-models-json",
        ),
        (
            "the first auth.json wins",
            World::new().auth_json(AUTH_KEY).file(
                "pi/auth.json",
                r#"{"anthropic": {"type": "api_key", "key": "from-pi"}}"#,
            ),
            None,
            "auth [DIR]/auth.json: from-auth",
        ),
        (
            "pi's auth.json is read",
            World::new().file(
                "pi/auth.json",
                r#"{"anthropic": {"type": "api_key", "key": "from-pi"}}"#,
            ),
            None,
            "auth [DIR]/pi/auth.json: from-pi",
        ),
    ];
    for (name, world, explicit, expect) in cases {
        let registry = world.registry();
        registry.set_explicit_key("anthropic", explicit.map(ApiKey::new));
        assert_eq!(render(&world, &registry, "anthropic"), expect, "{name}");
        assert!(registry.has_key("anthropic"), "{name}");
        // Only a login's token carries the login (to be refreshed).
        let resolved = registry.resolve_key("anthropic").unwrap();
        assert_eq!(
            resolved.key.login().is_some(),
            matches!(resolved.source, KeySource::OAuth(_)),
            "{name}"
        );
    }
}

#[test]
fn values_may_be_commands_or_variable_names() {
    let cases = [
        (
            r#"{"groq": {"type": "api_key", "key": "!echo gq-from-command"}}"#,
            "auth [DIR]/auth.json: gq-from-command",
        ),
        (
            r#"{"groq": {"type": "api_key", "key": "MY_GROQ_KEY"}}"#,
            "auth [DIR]/auth.json: gq-from-variable",
        ),
        (
            r#"{"groq": {"type": "api_key", "key": "!printf '  spaced \n'"}}"#,
            "auth [DIR]/auth.json: spaced",
        ),
        (
            r#"{"groq": {"type": "api_key", "key": "!exit 1"}}"#,
            "env GROQ_API_KEY: gq-env",
        ),
    ];
    for (auth, expect) in cases {
        let world = World::new()
            .env("MY_GROQ_KEY", "gq-from-variable")
            .env("GROQ_API_KEY", "gq-env")
            .auth_json(auth);
        assert_eq!(render(&world, &world.registry(), "groq"), expect, "{auth}");
    }
    let world = World::new()
        .env("LOCAL_KEY", "local-secret")
        .models_json(
            r#"{"providers": {"local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",
                "apiKey": "LOCAL_KEY", "models": [{"id": "m"}]}}}"#,
        );
    assert_eq!(
        render(&world, &world.registry(), "local"),
        "models [DIR]/models.json: local-secret"
    );
}

#[test]
fn missing_keys_say_what_to_set() {
    let world = World::new();
    let registry = world.registry();
    let report = [
        render(&world, &registry, "anthropic"),
        render(&world, &registry, "openai"),
        render(&world, &registry, "custom"),
    ];
    insta::assert_snapshot!(report.join("\n"));

    let failing = World::new()
        .auth_json(r#"{"openai": {"type": "api_key", "key": "!exit 7"}}"#)
        .file(
            "pi/auth.json",
            &oauth(NOW - 1).replace("anthropic", "google"),
        );
    let registry = failing.registry();
    insta::assert_snapshot!(
        "missing_keys_explain_failed_sources",
        [
            render(&failing, &registry, "openai"),
            render(&failing, &registry, "google"),
        ]
        .join("\n")
    );
    assert!(!registry.has_key("google"), "an expired token is no key");
}
