//! Model resolution and request building over pi 0.73.1's whole catalog: for every built-in
//! model, resolving `provider/id` (as `session/setModel` and `--model` do) and building its
//! request for a typical turn (a 2 KB system prompt, a short conversation, pi's seven tools),
//! the whole path before the bytes go out. Target (issue 31): under 50 µs per model.
//!
//! Run: `cargo bench -p pi-llm --bench catalog`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_llm::providers::{
    anthropic, azure_openai, bedrock, google, google_vertex, mistral, openai_codex,
    openai_completions, openai_responses,
};
use pi_llm::{
    ApiKey, Context, MapEnvironment, Message, ModelRegistry, RegistryConfig, StreamOptions,
    ToolDefinition,
};
use serde_json::json;

fn context() -> Context {
    let tool = |name: &str| ToolDefinition {
        name: name.to_owned(),
        description: format!("The {name} tool: what it does, in a paragraph of text. ").repeat(4),
        parameters: json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "offset": {"type": "number", "description": "Line to start at"},
            "limit": {"type": "number", "description": "Lines to read"}},
            "required": ["path"]}),
    };
    let message = |value: serde_json::Value| serde_json::from_value::<Message>(value).unwrap();
    Context {
        system_prompt: Some("You are an expert coding assistant. ".repeat(60)),
        messages: vec![
            message(
                json!({"role": "user", "content": "Fix the failing test in src/lib.rs", "timestamp": 1}),
            ),
            message(
                json!({"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/lib.rs"}}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "toolUse", "timestamp": 2}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                "content": [{"type": "text", "text": "fn main() {}\n".repeat(50)}], "isError": false, "timestamp": 3}),
            ),
        ],
        tools: ["read", "bash", "edit", "write", "grep", "find", "ls"]
            .into_iter()
            .map(tool)
            .collect(),
    }
}

fn main() {
    let environment = MapEnvironment::new().with("ANTHROPIC_API_KEY", "sk-ant-bench");
    // Azure's models name their resource through the environment.
    let azure = std::sync::Arc::new(
        [("AZURE_OPENAI_RESOURCE_NAME".to_owned(), "bench".to_owned())]
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    );
    let registry = ModelRegistry::new(RegistryConfig::new(Arc::new(environment)));
    let models = registry.models();
    let context = context();
    // A ChatGPT token names its account; every API builds with some key.
    let options = StreamOptions {
        api_key: Some(ApiKey::new(
            "eyJhbGciOiJub25lIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYSJ9fQ.s",
        )),
        session_id: Some("session-bench".into()),
        env: Some(azure),
        ..StreamOptions::default()
    };
    let mut samples = Vec::new();
    let mut built = 0;
    let mut resolved_only = 0;
    for round in 0..20 {
        for model in &models {
            let spec = format!("{}/{}", model.provider, model.id);
            let start = Instant::now();
            let (found, _) = registry.resolve(&spec).unwrap();
            let request = match found.api.as_str() {
                "anthropic-messages" => Some(anthropic::build_request(&found, &context, &options)),
                "openai-completions" => Some(openai_completions::build_request(
                    &found, &context, &options,
                )),
                "openai-responses" => {
                    Some(openai_responses::build_request(&found, &context, &options))
                }
                "openai-codex-responses" => {
                    Some(openai_codex::build_request(&found, &context, &options))
                }
                "google-generative-ai" => Some(google::build_request(&found, &context, &options)),
                "azure-openai-responses" => {
                    Some(azure_openai::build_request(&found, &context, &options))
                }
                "google-vertex" => Some(google_vertex::build_request(
                    &found, &context, &options, None,
                )),
                "mistral-conversations" => Some(mistral::build_request(&found, &context, &options)),
                "bedrock-converse-stream" => Some(bedrock::build_request(
                    &found,
                    bedrock::build_body(&found, &context, &options),
                    &options,
                    pi_llm::aws::BedrockAuth::Bearer("bench".into()),
                )),
                _ => None,
            };
            let bytes = request.map(|request| request.unwrap().encode_body().unwrap().len());
            samples.push(start.elapsed());
            if round == 0 {
                match bytes {
                    Some(_) => built += 1,
                    None => resolved_only += 1,
                }
            }
            std::hint::black_box(bytes);
        }
    }
    samples.sort();
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction) as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "catalog: {} models ({built} resolved and built, {resolved_only} resolved only)",
        models.len()
    );
    println!(
        "resolve provider/id + build request: mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs (target < 50 µs)",
        mean.as_secs_f64() * 1e6,
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        at(1.0).as_secs_f64() * 1e6
    );
    let start = Instant::now();
    for model in &models {
        std::hint::black_box(
            registry
                .resolve(&format!("{}/{}", model.provider, model.id))
                .ok(),
        );
    }
    println!(
        "resolve provider/id alone: {:.1} µs each",
        start.elapsed().as_secs_f64() * 1e6 / models.len() as f64
    );
    let start = Instant::now();
    let searches = ["sonnet", "gpt-5.4", "gemini-2.5-pro", "opus:high", "kimi"];
    for _ in 0..20 {
        for search in searches {
            std::hint::black_box(registry.resolve(search).ok());
        }
    }
    println!(
        "resolve a search term (fuzzy over all models): {:.1} µs each",
        start.elapsed().as_secs_f64() * 1e6 / (20 * searches.len()) as f64
    );
}
