//! OpenAI-completions compatibility: detection per provider and base URL, explicit overrides,
//! and the wire values of reasoning effort.

use pi_llm::{
    MaxTokensField, Model, OpenAiCompletionsCompat, ResolvedCompat, ThinkingFormat, ThinkingLevel,
};

/// A compact rendering of the flags that differ between servers.
fn render(compat: &ResolvedCompat) -> String {
    let flag = |on: bool, name: &str| {
        if on {
            name.to_owned()
        } else {
            format!("!{name}")
        }
    };
    let mut parts = vec![
        flag(compat.supports_store, "store"),
        flag(compat.supports_developer_role, "developer"),
        flag(compat.supports_reasoning_effort, "effort"),
        flag(compat.supports_usage_in_streaming, "usage"),
        flag(compat.supports_strict_mode, "strict"),
        match compat.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens".to_owned(),
            MaxTokensField::MaxTokens => "max_tokens".to_owned(),
        },
        format!("{:?}", compat.thinking_format),
    ];
    for (on, name) in [
        (compat.requires_tool_result_name, "tool-name"),
        (
            compat.requires_assistant_after_tool_result,
            "assistant-after-tool",
        ),
        (compat.requires_thinking_as_text, "thinking-as-text"),
        (compat.requires_mistral_tool_ids, "mistral-ids"),
        (
            compat.requires_reasoning_content_on_assistant_messages,
            "reasoning-content",
        ),
    ] {
        if on {
            parts.push(name.to_owned());
        }
    }
    if !compat.reasoning_effort_map.is_empty() {
        let map: Vec<String> = compat
            .reasoning_effort_map
            .iter()
            .map(|(level, wire)| format!("{level}={wire}"))
            .collect();
        parts.push(format!("map[{}]", map.join(",")));
    }
    parts.join(" ")
}

#[test]
fn detection_per_server() {
    let cases = [
        ("openai", "https://api.openai.com/v1", "gpt-5.4"),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            "anthropic/claude-sonnet-4.6",
        ),
        (
            "groq",
            "https://api.groq.com/openai/v1",
            "openai/gpt-oss-120b",
        ),
        ("groq", "https://api.groq.com/openai/v1", "qwen/qwen3-32b"),
        ("cerebras", "https://api.cerebras.ai/v1", "gpt-oss-120b"),
        ("xai", "https://api.x.ai/v1", "grok-4"),
        (
            "mistral",
            "https://api.mistral.ai/v1",
            "devstral-medium-latest",
        ),
        ("deepseek", "https://api.deepseek.com", "deepseek-reasoner"),
        ("my-proxy", "https://api.deepseek.com/v1", "deepseek-chat"),
        ("zai", "https://api.z.ai/api/coding/paas/v4", "glm-4.6"),
        ("ollama", "http://localhost:11434/v1", "llama3.1:8b"),
        ("box", "http://192.168.1.9:11434/v1", "qwen3"),
        ("llama.cpp", "http://127.0.0.1:8080/v1", "gguf"),
        ("vllm", "http://localhost:8000/v1", "Qwen/Qwen3-32B"),
        ("lmstudio", "http://localhost:1234/v1", "local"),
        ("corp", "https://llm.corp.example/v1", "house-model"),
    ];
    let report: Vec<String> = cases
        .iter()
        .map(|(provider, base_url, id)| {
            format!(
                "{provider} {base_url} {id}: {}",
                render(&ResolvedCompat::detect(provider, base_url, id))
            )
        })
        .collect();
    insta::assert_snapshot!(report.join("\n"));
}

#[test]
fn configured_fields_win_over_detection() {
    let mut model: Model = pi_llm::builtin_models()
        .into_iter()
        .find(|model| model.provider == "xai" && model.id == "grok-4")
        .unwrap();
    assert!(!model.resolved_compat().supports_reasoning_effort);
    model.compat = Some(OpenAiCompletionsCompat {
        supports_reasoning_effort: Some(true),
        thinking_format: Some(ThinkingFormat::Qwen),
        ..OpenAiCompletionsCompat::default()
    });
    let resolved = model.resolved_compat();
    assert!(resolved.supports_reasoning_effort);
    assert_eq!(resolved.thinking_format, ThinkingFormat::Qwen);
    assert!(!resolved.supports_store, "unset fields stay detected");
}

#[test]
fn reasoning_effort_uses_the_map() {
    let deepseek =
        ResolvedCompat::detect("deepseek", "https://api.deepseek.com", "deepseek-v4-pro");
    assert_eq!(deepseek.reasoning_effort(ThinkingLevel::Off), None);
    assert_eq!(
        deepseek.reasoning_effort(ThinkingLevel::Low).as_deref(),
        Some("high")
    );
    assert_eq!(
        deepseek.reasoning_effort(ThinkingLevel::Xhigh).as_deref(),
        Some("max")
    );
    let openai = ResolvedCompat::detect("openai", "https://api.openai.com/v1", "gpt-5.4");
    assert_eq!(
        openai.reasoning_effort(ThinkingLevel::Minimal).as_deref(),
        Some("minimal")
    );
}

#[test]
fn models_without_compat_keep_their_json_shape() {
    let json = serde_json::json!({
        "id": "m", "name": "M", "api": "openai-completions", "provider": "p",
        "baseUrl": "http://h", "reasoning": false, "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 1000, "maxTokens": 100
    });
    let model: Model = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(model.compat, None);
    assert_eq!(serde_json::to_value(&model).unwrap(), json);
}
