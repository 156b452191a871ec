//! `auth.json`: parsing, errors naming file and field (never values), permission warnings, and
//! atomic 0600 writes that keep unknown OAuth fields.

use std::os::unix::fs::PermissionsExt;

use pi_llm::{ApiKey, AuthCredential, AuthFile};

use super::world::World;

#[test]
fn parses_api_keys_and_oauth_logins() {
    let world = World::new();
    let file = AuthFile::parse(
        &world.path("auth.json"),
        r#"{
            "anthropic": {"type": "api_key", "key": "sk-ant-1"},
            "openai-codex": {"type": "oauth", "access": "acc", "refresh": "ref",
                             "expires": 1800000000000, "accountId": "acct-1"}
        }"#,
    )
    .unwrap();
    assert_eq!(
        file.get("anthropic"),
        Some(&AuthCredential::ApiKey {
            key: "sk-ant-1".into()
        })
    );
    let Some(AuthCredential::Oauth(oauth)) = file.get("openai-codex") else {
        panic!("expected an OAuth login");
    };
    assert_eq!(oauth.access, "acc");
    assert_eq!(oauth.expires, 1_800_000_000_000);
    assert_eq!(
        oauth.extra.get("accountId"),
        Some(&serde_json::json!("acct-1"))
    );
    assert_eq!(
        file.providers().collect::<Vec<_>>(),
        ["anthropic", "openai-codex"]
    );
    assert!(AuthFile::parse(&world.path("auth.json"), "  \n").is_ok());
}

#[test]
fn bad_files_name_the_file_and_field_without_values() {
    let cases = [
        ("not json", r#"{"anthropic": "#),
        ("not an object", r#"["sk-SENTINEL-123"]"#),
        (
            "unknown type",
            r#"{"anthropic": {"type": "apikey", "key": "sk-SENTINEL-123"}}"#,
        ),
        ("missing key", r#"{"anthropic": {"type": "api_key"}}"#),
        (
            "key not a string",
            r#"{"anthropic": {"type": "api_key", "key": 123456}}"#,
        ),
        ("entry not an object", r#"{"anthropic": "sk-SENTINEL-123"}"#),
        (
            "oauth without access",
            r#"{"x": {"type": "oauth", "refresh": "r"}}"#,
        ),
    ];
    let world = World::new();
    let report: Vec<String> = cases
        .iter()
        .map(
            |(name, text)| match AuthFile::parse(&world.path("auth.json"), text) {
                Ok(_) => format!("{name}: accepted"),
                Err(error) => format!("{name}: {}", world.redact(&error.to_string())),
            },
        )
        .collect();
    let report = report.join("\n");
    assert!(!report.contains("SENTINEL"), "{report}");
    assert!(!report.contains("123456"), "{report}");
    insta::assert_snapshot!(report);
}

#[test]
fn save_is_atomic_private_and_keeps_extras() {
    let world = World::new();
    let path = world.path("nested/dir/auth.json");
    let original = r#"{"x": {"type": "oauth", "access": "a", "refresh": "r", "expires": 5, "projectId": "p"}}"#;
    let mut file = AuthFile::parse(&path, original).unwrap();
    file.set(
        "anthropic",
        AuthCredential::ApiKey {
            key: "sk-new".into(),
        },
    );
    file.save().unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    let reread = AuthFile::load(&path).unwrap();
    assert_eq!(reread.get("anthropic"), file.get("anthropic"));
    assert_eq!(reread.get("x"), file.get("x"));
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["auth.json"]);
}

#[test]
fn insecure_files_are_reported_and_still_used() {
    let world = World::new().auth_json(r#"{"groq": {"type": "api_key", "key": "gq"}}"#);
    std::fs::set_permissions(
        world.path("auth.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let registry = world.registry();
    insta::assert_snapshot!(world.diagnostics(&registry));
    assert!(registry.has_key("groq"));
}

#[test]
fn unreadable_auth_json_is_a_diagnostic_and_other_keys_still_work() {
    let world = World::new()
        .env("OPENAI_API_KEY", "sk-env")
        .auth_json(r#"{"openai": {"type": "api_key", "key": 5}}"#);
    let registry = world.registry();
    insta::assert_snapshot!(world.diagnostics(&registry));
    let model = registry.find("openai", "gpt-5.4").unwrap();
    assert_eq!(registry.api_key(&model).unwrap().expose(), "sk-env");
}

#[test]
fn store_api_key_writes_the_first_auth_file() {
    let world = World::new();
    let registry = world.registry();
    assert!(!registry.has_key("mistral"));
    registry
        .store_api_key("mistral", &ApiKey::new("ms-key"))
        .unwrap();
    assert!(registry.has_key("mistral"));
    let mode = std::fs::metadata(world.path("auth.json"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let model = registry.find("mistral", "devstral-medium-latest").unwrap();
    assert_eq!(registry.api_key(&model).unwrap().expose(), "ms-key");
}
