//! The built-in model table: one row per model, grouped by provider. Wire format and base URL
//! come from the provider's row in [`crate::catalog::PROVIDERS`].
//!
//! Facts (context windows, output caps, USD prices per million tokens: input, output, cache
//! read, cache write) follow the providers' published figures as collected by pi's generated
//! catalog in 2026; aliases (`claude-sonnet-4-5`) sit next to their dated ids. One cohesive
//! table, so longer than the usual file.

use crate::model::InputKind;

/// One built-in model.
pub(crate) struct Row {
    pub provider: &'static str,
    pub id: &'static str,
    pub name: &'static str,
    pub reasoning: bool,
    pub input: &'static [InputKind],
    pub context_window: u64,
    pub max_tokens: u64,
    /// Input, output, cache read, cache write; USD per million tokens.
    pub cost: [f64; 4],
}

const TEXT: &[InputKind] = &[InputKind::Text];
const IMAGES: &[InputKind] = &[InputKind::Text, InputKind::Image];
const THINKS: bool = true;
const PLAIN: bool = false;

#[allow(clippy::too_many_arguments, reason = "one table row")]
const fn row(
    provider: &'static str,
    id: &'static str,
    name: &'static str,
    reasoning: bool,
    input: &'static [InputKind],
    context_window: u64,
    max_tokens: u64,
    cost: [f64; 4],
) -> Row {
    Row {
        provider,
        id,
        name,
        reasoning,
        input,
        context_window,
        max_tokens,
        cost,
    }
}

const A: &str = "anthropic";
const O: &str = "openai";
const G: &str = "google";
const OR: &str = "openrouter";
const GQ: &str = "groq";
const X: &str = "xai";
const M: &str = "mistral";
const DS: &str = "deepseek";
const CB: &str = "cerebras";

/// Every built-in model. Within a provider, newest families first.
#[rustfmt::skip]
pub(crate) const MODELS: &[Row] = &[
    // provider, id, name, reasoning, input, context, max output, [in, out, cache read, cache write]
    row(A, "claude-opus-4-7", "Claude Opus 4.7", THINKS, IMAGES, 1_000_000, 128_000, [5.0, 25.0, 0.5, 6.25]),
    row(A, "claude-opus-4-6", "Claude Opus 4.6", THINKS, IMAGES, 1_000_000, 128_000, [5.0, 25.0, 0.5, 6.25]),
    row(A, "claude-sonnet-4-6", "Claude Sonnet 4.6", THINKS, IMAGES, 1_000_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-opus-4-5", "Claude Opus 4.5", THINKS, IMAGES, 200_000, 64_000, [5.0, 25.0, 0.5, 6.25]),
    row(A, "claude-opus-4-5-20251101", "Claude Opus 4.5 (20251101)", THINKS, IMAGES, 200_000, 64_000, [5.0, 25.0, 0.5, 6.25]),
    row(A, "claude-sonnet-4-5", "Claude Sonnet 4.5", THINKS, IMAGES, 200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 (20250929)", THINKS, IMAGES, 200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-haiku-4-5", "Claude Haiku 4.5", THINKS, IMAGES, 200_000, 64_000, [1.0, 5.0, 0.1, 1.25]),
    row(A, "claude-haiku-4-5-20251001", "Claude Haiku 4.5 (20251001)", THINKS, IMAGES, 200_000, 64_000, [1.0, 5.0, 0.1, 1.25]),
    row(A, "claude-opus-4-1", "Claude Opus 4.1", THINKS, IMAGES, 200_000, 32_000, [15.0, 75.0, 1.5, 18.75]),
    row(A, "claude-opus-4-1-20250805", "Claude Opus 4.1 (20250805)", THINKS, IMAGES, 200_000, 32_000, [15.0, 75.0, 1.5, 18.75]),
    row(A, "claude-opus-4-0", "Claude Opus 4", THINKS, IMAGES, 200_000, 32_000, [15.0, 75.0, 1.5, 18.75]),
    row(A, "claude-opus-4-20250514", "Claude Opus 4 (20250514)", THINKS, IMAGES, 200_000, 32_000, [15.0, 75.0, 1.5, 18.75]),
    row(A, "claude-sonnet-4-0", "Claude Sonnet 4", THINKS, IMAGES, 200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-sonnet-4-20250514", "Claude Sonnet 4 (20250514)", THINKS, IMAGES, 200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-3-7-sonnet-20250219", "Claude Sonnet 3.7 (20250219)", THINKS, IMAGES, 200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(A, "claude-3-5-haiku-latest", "Claude Haiku 3.5", PLAIN, IMAGES, 200_000, 8_192, [0.8, 4.0, 0.08, 1.0]),
    row(A, "claude-3-5-haiku-20241022", "Claude Haiku 3.5 (20241022)", PLAIN, IMAGES, 200_000, 8_192, [0.8, 4.0, 0.08, 1.0]),

    row(O, "gpt-5.5", "GPT-5.5", THINKS, IMAGES, 272_000, 128_000, [5.0, 30.0, 0.5, 0.0]),
    row(O, "gpt-5.4", "GPT-5.4", THINKS, IMAGES, 272_000, 128_000, [2.5, 15.0, 0.25, 0.0]),
    row(O, "gpt-5.4-pro", "GPT-5.4 Pro", THINKS, IMAGES, 1_050_000, 128_000, [30.0, 180.0, 0.0, 0.0]),
    row(O, "gpt-5.4-mini", "GPT-5.4 mini", THINKS, IMAGES, 400_000, 128_000, [0.75, 4.5, 0.075, 0.0]),
    row(O, "gpt-5.4-nano", "GPT-5.4 nano", THINKS, IMAGES, 400_000, 128_000, [0.2, 1.25, 0.02, 0.0]),
    row(O, "gpt-5.3-codex", "GPT-5.3 Codex", THINKS, IMAGES, 400_000, 128_000, [1.75, 14.0, 0.175, 0.0]),
    row(O, "gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", THINKS, IMAGES, 128_000, 32_000, [1.75, 14.0, 0.175, 0.0]),
    row(O, "gpt-5.3-chat-latest", "GPT-5.3 Chat", PLAIN, IMAGES, 128_000, 16_384, [1.75, 14.0, 0.175, 0.0]),
    row(O, "gpt-5.2", "GPT-5.2", THINKS, IMAGES, 400_000, 128_000, [1.75, 14.0, 0.175, 0.0]),
    row(O, "gpt-5.2-pro", "GPT-5.2 Pro", THINKS, IMAGES, 400_000, 128_000, [21.0, 168.0, 0.0, 0.0]),
    row(O, "gpt-5.2-codex", "GPT-5.2 Codex", THINKS, IMAGES, 400_000, 128_000, [1.75, 14.0, 0.175, 0.0]),
    row(O, "gpt-5.1", "GPT-5.1", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(O, "gpt-5.1-codex", "GPT-5.1 Codex", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(O, "gpt-5.1-codex-max", "GPT-5.1 Codex Max", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(O, "gpt-5.1-codex-mini", "GPT-5.1 Codex mini", THINKS, IMAGES, 400_000, 128_000, [0.25, 2.0, 0.025, 0.0]),
    row(O, "gpt-5", "GPT-5", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(O, "gpt-5-codex", "GPT-5 Codex", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(O, "gpt-5-mini", "GPT-5 mini", THINKS, IMAGES, 400_000, 128_000, [0.25, 2.0, 0.025, 0.0]),
    row(O, "gpt-5-nano", "GPT-5 nano", THINKS, IMAGES, 400_000, 128_000, [0.05, 0.4, 0.005, 0.0]),
    row(O, "gpt-5-pro", "GPT-5 Pro", THINKS, IMAGES, 400_000, 272_000, [15.0, 120.0, 0.0, 0.0]),
    row(O, "gpt-4.1", "GPT-4.1", PLAIN, IMAGES, 1_047_576, 32_768, [2.0, 8.0, 0.5, 0.0]),
    row(O, "gpt-4.1-mini", "GPT-4.1 mini", PLAIN, IMAGES, 1_047_576, 32_768, [0.4, 1.6, 0.1, 0.0]),
    row(O, "gpt-4.1-nano", "GPT-4.1 nano", PLAIN, IMAGES, 1_047_576, 32_768, [0.1, 0.4, 0.03, 0.0]),
    row(O, "gpt-4o", "GPT-4o", PLAIN, IMAGES, 128_000, 16_384, [2.5, 10.0, 1.25, 0.0]),
    row(O, "gpt-4o-mini", "GPT-4o mini", PLAIN, IMAGES, 128_000, 16_384, [0.15, 0.6, 0.08, 0.0]),
    row(O, "o3", "o3", THINKS, IMAGES, 200_000, 100_000, [2.0, 8.0, 0.5, 0.0]),
    row(O, "o3-pro", "o3-pro", THINKS, IMAGES, 200_000, 100_000, [20.0, 80.0, 0.0, 0.0]),
    row(O, "o3-mini", "o3-mini", THINKS, TEXT, 200_000, 100_000, [1.1, 4.4, 0.55, 0.0]),
    row(O, "o4-mini", "o4-mini", THINKS, IMAGES, 200_000, 100_000, [1.1, 4.4, 0.28, 0.0]),
    row(O, "o1", "o1", THINKS, IMAGES, 200_000, 100_000, [15.0, 60.0, 7.5, 0.0]),

    row(G, "gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", THINKS, IMAGES, 1_048_576, 65_536, [2.0, 12.0, 0.2, 0.0]),
    row(G, "gemini-3.1-flash-lite-preview", "Gemini 3.1 Flash Lite Preview", THINKS, IMAGES, 1_048_576, 65_536, [0.25, 1.5, 0.025, 1.0]),
    row(G, "gemini-3-pro-preview", "Gemini 3 Pro Preview", THINKS, IMAGES, 1_000_000, 64_000, [2.0, 12.0, 0.2, 0.0]),
    row(G, "gemini-3-flash-preview", "Gemini 3 Flash Preview", THINKS, IMAGES, 1_048_576, 65_536, [0.5, 3.0, 0.05, 0.0]),
    row(G, "gemini-2.5-pro", "Gemini 2.5 Pro", THINKS, IMAGES, 1_048_576, 65_536, [1.25, 10.0, 0.125, 0.0]),
    row(G, "gemini-2.5-flash", "Gemini 2.5 Flash", THINKS, IMAGES, 1_048_576, 65_536, [0.3, 2.5, 0.03, 0.0]),
    row(G, "gemini-2.5-flash-lite", "Gemini 2.5 Flash Lite", THINKS, IMAGES, 1_048_576, 65_536, [0.1, 0.4, 0.025, 0.0]),
    row(G, "gemini-flash-latest", "Gemini Flash (latest)", THINKS, IMAGES, 1_048_576, 65_536, [0.3, 2.5, 0.075, 0.0]),
    row(G, "gemini-flash-lite-latest", "Gemini Flash Lite (latest)", THINKS, IMAGES, 1_048_576, 65_536, [0.1, 0.4, 0.025, 0.0]),
    row(G, "gemini-2.0-flash", "Gemini 2.0 Flash", PLAIN, IMAGES, 1_048_576, 8_192, [0.1, 0.4, 0.025, 0.0]),

    row(OR, "anthropic/claude-opus-4.6", "Anthropic: Claude Opus 4.6", THINKS, IMAGES, 1_000_000, 128_000, [5.0, 25.0, 0.5, 6.25]),
    row(OR, "anthropic/claude-sonnet-4.6", "Anthropic: Claude Sonnet 4.6", THINKS, IMAGES, 1_000_000, 128_000, [3.0, 15.0, 0.3, 3.75]),
    row(OR, "anthropic/claude-opus-4.5", "Anthropic: Claude Opus 4.5", THINKS, IMAGES, 200_000, 64_000, [5.0, 25.0, 0.5, 6.25]),
    row(OR, "anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", THINKS, IMAGES, 1_000_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    row(OR, "openai/gpt-5.4", "OpenAI: GPT-5.4", THINKS, IMAGES, 1_050_000, 128_000, [2.5, 15.0, 0.25, 0.0]),
    row(OR, "openai/gpt-5.2", "OpenAI: GPT-5.2", THINKS, IMAGES, 400_000, 128_000, [1.75, 14.0, 0.175, 0.0]),
    row(OR, "openai/gpt-5.1-codex", "OpenAI: GPT-5.1-Codex", THINKS, IMAGES, 400_000, 128_000, [1.25, 10.0, 0.125, 0.0]),
    row(OR, "openai/gpt-5-mini", "OpenAI: GPT-5 Mini", THINKS, IMAGES, 400_000, 128_000, [0.25, 2.0, 0.025, 0.0]),
    row(OR, "openai/gpt-oss-120b", "OpenAI: gpt-oss-120b", THINKS, TEXT, 131_072, 131_072, [0.039, 0.19, 0.0, 0.0]),
    row(OR, "openai/gpt-oss-120b:free", "OpenAI: gpt-oss-120b (free)", THINKS, TEXT, 131_072, 131_072, [0.0, 0.0, 0.0, 0.0]),
    row(OR, "openai/gpt-oss-20b:free", "OpenAI: gpt-oss-20b (free)", THINKS, TEXT, 131_072, 8_192, [0.0, 0.0, 0.0, 0.0]),
    row(OR, "google/gemini-3.1-pro-preview", "Google: Gemini 3.1 Pro Preview", THINKS, IMAGES, 1_048_576, 65_536, [2.0, 12.0, 0.2, 0.375]),
    row(OR, "google/gemini-3-flash-preview", "Google: Gemini 3 Flash Preview", THINKS, IMAGES, 1_048_576, 65_536, [0.5, 3.0, 0.05, 0.0833]),
    row(OR, "google/gemini-2.5-pro", "Google: Gemini 2.5 Pro", THINKS, IMAGES, 1_048_576, 65_536, [1.25, 10.0, 0.125, 0.375]),
    row(OR, "google/gemini-2.5-flash", "Google: Gemini 2.5 Flash", THINKS, IMAGES, 1_048_576, 65_535, [0.3, 2.5, 0.03, 0.0833]),
    row(OR, "deepseek/deepseek-v3.2", "DeepSeek: DeepSeek V3.2", THINKS, TEXT, 131_072, 65_536, [0.252, 0.378, 0.0252, 0.0]),
    row(OR, "deepseek/deepseek-r1-0528", "DeepSeek: R1 0528", THINKS, TEXT, 163_840, 32_768, [0.5, 2.15, 0.35, 0.0]),
    row(OR, "qwen/qwen3-coder", "Qwen: Qwen3 Coder 480B A35B", PLAIN, TEXT, 262_144, 65_536, [0.22, 1.0, 0.022, 0.0]),
    row(OR, "qwen/qwen3-235b-a22b-2507", "Qwen: Qwen3 235B A22B Instruct 2507", PLAIN, TEXT, 262_144, 16_384, [0.071, 0.1, 0.0, 0.0]),
    row(OR, "qwen/qwen-plus-2025-07-28", "Qwen: Qwen Plus 0728", PLAIN, TEXT, 1_000_000, 32_768, [0.26, 0.78, 0.0, 0.325]),
    row(OR, "qwen/qwen-plus-2025-07-28:thinking", "Qwen: Qwen Plus 0728 (thinking)", THINKS, TEXT, 1_000_000, 32_768, [0.26, 0.78, 0.0, 0.325]),
    row(OR, "z-ai/glm-4.7", "Z.ai: GLM 4.7", THINKS, TEXT, 202_752, 4_096, [0.38, 1.74, 0.0, 0.0]),
    row(OR, "z-ai/glm-4.6", "Z.ai: GLM 4.6", THINKS, TEXT, 204_800, 204_800, [0.39, 1.9, 0.0, 0.0]),
    row(OR, "z-ai/glm-4.5-air:free", "Z.ai: GLM 4.5 Air (free)", THINKS, TEXT, 131_072, 96_000, [0.0, 0.0, 0.0, 0.0]),
    row(OR, "meta-llama/llama-3.3-70b-instruct", "Meta: Llama 3.3 70B Instruct", PLAIN, TEXT, 131_072, 16_384, [0.1, 0.32, 0.0, 0.0]),
    row(OR, "meta-llama/llama-3.3-70b-instruct:free", "Meta: Llama 3.3 70B Instruct (free)", PLAIN, TEXT, 65_536, 4_096, [0.0, 0.0, 0.0, 0.0]),
    row(OR, "mistralai/devstral-2512", "Mistral: Devstral 2 2512", PLAIN, TEXT, 262_144, 4_096, [0.4, 2.0, 0.04, 0.0]),
    row(OR, "minimax/minimax-m2.5", "MiniMax: MiniMax M2.5", THINKS, TEXT, 196_608, 131_072, [0.15, 1.15, 0.03, 0.0]),

    row(GQ, "openai/gpt-oss-120b", "GPT OSS 120B", THINKS, TEXT, 131_072, 65_536, [0.15, 0.6, 0.0, 0.0]),
    row(GQ, "openai/gpt-oss-20b", "GPT OSS 20B", THINKS, TEXT, 131_072, 65_536, [0.075, 0.3, 0.0, 0.0]),
    row(GQ, "llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", PLAIN, TEXT, 131_072, 32_768, [0.59, 0.79, 0.0, 0.0]),
    row(GQ, "llama-3.1-8b-instant", "Llama 3.1 8B Instant", PLAIN, TEXT, 131_072, 131_072, [0.05, 0.08, 0.0, 0.0]),
    row(GQ, "meta-llama/llama-4-maverick-17b-128e-instruct", "Llama 4 Maverick 17B", PLAIN, IMAGES, 131_072, 8_192, [0.2, 0.6, 0.0, 0.0]),
    row(GQ, "meta-llama/llama-4-scout-17b-16e-instruct", "Llama 4 Scout 17B", PLAIN, IMAGES, 131_072, 8_192, [0.11, 0.34, 0.0, 0.0]),
    row(GQ, "qwen/qwen3-32b", "Qwen3 32B", THINKS, TEXT, 131_072, 40_960, [0.29, 0.59, 0.0, 0.0]),
    row(GQ, "moonshotai/kimi-k2-instruct-0905", "Kimi K2 Instruct 0905", PLAIN, TEXT, 262_144, 16_384, [1.0, 3.0, 0.0, 0.0]),

    row(X, "grok-4.20-0309-reasoning", "Grok 4.20 (Reasoning)", THINKS, IMAGES, 2_000_000, 30_000, [2.0, 6.0, 0.2, 0.0]),
    row(X, "grok-4.20-0309-non-reasoning", "Grok 4.20 (Non-Reasoning)", PLAIN, IMAGES, 2_000_000, 30_000, [2.0, 6.0, 0.2, 0.0]),
    row(X, "grok-4-1-fast", "Grok 4.1 Fast", THINKS, IMAGES, 2_000_000, 30_000, [0.2, 0.5, 0.05, 0.0]),
    row(X, "grok-4-1-fast-non-reasoning", "Grok 4.1 Fast (Non-Reasoning)", PLAIN, IMAGES, 2_000_000, 30_000, [0.2, 0.5, 0.05, 0.0]),
    row(X, "grok-4-fast", "Grok 4 Fast", THINKS, IMAGES, 2_000_000, 30_000, [0.2, 0.5, 0.05, 0.0]),
    row(X, "grok-4-fast-non-reasoning", "Grok 4 Fast (Non-Reasoning)", PLAIN, IMAGES, 2_000_000, 30_000, [0.2, 0.5, 0.05, 0.0]),
    row(X, "grok-4", "Grok 4", THINKS, TEXT, 256_000, 64_000, [3.0, 15.0, 0.75, 0.0]),
    row(X, "grok-code-fast-1", "Grok Code Fast 1", THINKS, TEXT, 256_000, 10_000, [0.2, 1.5, 0.02, 0.0]),
    row(X, "grok-3", "Grok 3", PLAIN, TEXT, 131_072, 8_192, [3.0, 15.0, 0.75, 0.0]),
    row(X, "grok-3-mini", "Grok 3 Mini", THINKS, TEXT, 131_072, 8_192, [0.3, 0.5, 0.075, 0.0]),

    row(M, "devstral-medium-latest", "Devstral 2", PLAIN, TEXT, 262_144, 262_144, [0.4, 2.0, 0.0, 0.0]),
    row(M, "devstral-2512", "Devstral 2 (2512)", PLAIN, TEXT, 262_144, 262_144, [0.4, 2.0, 0.0, 0.0]),
    row(M, "devstral-small-2507", "Devstral Small (2507)", PLAIN, TEXT, 128_000, 128_000, [0.1, 0.3, 0.0, 0.0]),
    row(M, "codestral-latest", "Codestral", PLAIN, TEXT, 256_000, 4_096, [0.3, 0.9, 0.0, 0.0]),
    row(M, "mistral-large-latest", "Mistral Large 3", PLAIN, IMAGES, 262_144, 262_144, [0.5, 1.5, 0.0, 0.0]),
    row(M, "mistral-large-2512", "Mistral Large 3 (2512)", PLAIN, IMAGES, 262_144, 262_144, [0.5, 1.5, 0.0, 0.0]),
    row(M, "mistral-medium-latest", "Mistral Medium", PLAIN, IMAGES, 128_000, 16_384, [0.4, 2.0, 0.0, 0.0]),
    row(M, "mistral-medium-2508", "Mistral Medium 3.1 (2508)", PLAIN, IMAGES, 262_144, 262_144, [0.4, 2.0, 0.0, 0.0]),
    row(M, "mistral-small-latest", "Mistral Small 4", THINKS, IMAGES, 256_000, 256_000, [0.15, 0.6, 0.0, 0.0]),
    row(M, "magistral-medium-latest", "Magistral Medium", THINKS, TEXT, 128_000, 16_384, [2.0, 5.0, 0.0, 0.0]),
    row(M, "magistral-small", "Magistral Small", THINKS, TEXT, 128_000, 128_000, [0.5, 1.5, 0.0, 0.0]),
    row(M, "ministral-8b-latest", "Ministral 8B", PLAIN, TEXT, 128_000, 128_000, [0.1, 0.1, 0.0, 0.0]),

    row(DS, "deepseek-chat", "DeepSeek Chat", PLAIN, TEXT, 128_000, 8_192, [0.28, 0.42, 0.028, 0.0]),
    row(DS, "deepseek-reasoner", "DeepSeek Reasoner", THINKS, TEXT, 128_000, 65_536, [0.28, 0.42, 0.028, 0.0]),
    row(DS, "deepseek-v4-pro", "DeepSeek V4 Pro", THINKS, TEXT, 1_000_000, 384_000, [1.74, 3.48, 0.145, 0.0]),
    row(DS, "deepseek-v4-flash", "DeepSeek V4 Flash", THINKS, TEXT, 1_000_000, 384_000, [0.14, 0.28, 0.028, 0.0]),

    row(CB, "zai-glm-4.7", "Z.ai GLM-4.7", PLAIN, TEXT, 131_072, 40_000, [2.25, 2.75, 0.0, 0.0]),
    row(CB, "gpt-oss-120b", "GPT OSS 120B", THINKS, TEXT, 131_072, 32_768, [0.25, 0.69, 0.0, 0.0]),
    row(CB, "qwen-3-235b-a22b-instruct-2507", "Qwen 3 235B Instruct", PLAIN, TEXT, 131_000, 32_000, [0.6, 1.2, 0.0, 0.0]),
    row(CB, "llama3.1-8b", "Llama 3.1 8B", PLAIN, TEXT, 32_000, 8_000, [0.1, 0.1, 0.0, 0.0]),
];
