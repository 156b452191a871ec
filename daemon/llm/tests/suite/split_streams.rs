//! Decoding is independent of how the bytes arrive: any split of the same SSE body (inside
//! lines, inside `\r\n`, inside multi-byte characters) yields identical events, for every wire
//! format. Also pins what each format's body decodes to.

use bytes::Bytes;
use pi_llm::StreamEvent;
use pi_llm::http::replay;
use pi_llm::model::{InputKind, Model, ModelCost};
use pi_llm::providers::{anthropic, google, openai_completions, openai_responses};
use proptest::prelude::*;

use super::bodies;

const FORMATS: [(&str, &str); 4] = [
    ("anthropic-messages", bodies::ANTHROPIC),
    ("openai-completions", bodies::OPENAI_COMPLETIONS),
    ("openai-responses", bodies::OPENAI_RESPONSES),
    ("google-generative-ai", bodies::GOOGLE),
];

pub fn test_model(api: &str) -> Model {
    Model {
        id: "test-model".into(),
        name: "Test".into(),
        api: api.into(),
        provider: "test".into(),
        base_url: "http://127.0.0.1:9".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
    }
}

async fn decode(api: &str, chunks: Vec<Bytes>) -> Vec<StreamEvent> {
    let model = test_model(api);
    let mut stream = match api {
        "anthropic-messages" => replay(&model, chunks, 7, anthropic::AnthropicDecoder::default()),
        "openai-completions" => replay(
            &model,
            chunks,
            7,
            openai_completions::CompletionsDecoder::default(),
        ),
        "openai-responses" => replay(
            &model,
            chunks,
            7,
            openai_responses::ResponsesDecoder::default(),
        ),
        "google-generative-ai" => replay(&model, chunks, 7, google::GoogleDecoder::default()),
        other => panic!("no decoder for {other}"),
    };
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    events
}

fn split(body: &str, mut points: Vec<usize>) -> Vec<Bytes> {
    let bytes = body.as_bytes();
    points.iter_mut().for_each(|p| *p %= bytes.len() + 1);
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for point in points {
        chunks.push(Bytes::copy_from_slice(&bytes[start..point]));
        start = point;
    }
    chunks.push(Bytes::copy_from_slice(&bytes[start..]));
    chunks
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn each_format_decodes_to_the_expected_message() {
    let rt = runtime();
    for (api, body) in FORMATS {
        let events = rt.block_on(decode(api, split(body, vec![])));
        let Some(StreamEvent::Done { message, .. }) = events.last() else {
            panic!("{api}: expected done, got {:?}", events.last());
        };
        insta::assert_json_snapshot!(api, message);
    }
}

#[test]
fn byte_at_a_time_equals_whole() {
    let rt = runtime();
    for (api, body) in FORMATS {
        let whole = rt.block_on(decode(api, split(body, vec![])));
        let bytewise = rt.block_on(decode(api, split(body, (0..body.len()).collect())));
        assert_eq!(whole, bytewise, "{api}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_split_yields_identical_events(points in prop::collection::vec(any::<usize>(), 0..40)) {
        let rt = runtime();
        for (api, body) in FORMATS {
            let whole = rt.block_on(decode(api, split(body, vec![])));
            let pieces = rt.block_on(decode(api, split(body, points.clone())));
            prop_assert_eq!(&whole, &pieces, "{}", api);
        }
    }
}

/// `body` decoded through each decoder's general path: without the `event:` lines the hot
/// path keys on (Anthropic, Responses), or with a field in every chunk that the hot path leaves
/// to the general one (an empty `usage` / `usageMetadata`, which the final chunk overrides).
fn general_path_body(api: &str, body: &str) -> String {
    body.split_inclusive('\n')
        .filter(|line| !line.starts_with("event:"))
        .map(|line| {
            let Some(data) = line.strip_prefix("data: ") else {
                return line.to_owned();
            };
            let (json, end) = data.split_at(data.trim_end().len());
            let Ok(mut chunk) = serde_json::from_str::<serde_json::Value>(json) else {
                return line.to_owned();
            };
            let field = match api {
                "openai-completions" => "usage",
                "google-generative-ai" => "usageMetadata",
                _ => return line.to_owned(),
            };
            if chunk.get(field).is_none_or(serde_json::Value::is_null) {
                chunk[field] = serde_json::json!({});
            }
            format!("data: {chunk}{end}")
        })
        .collect()
}

#[test]
fn the_hot_path_and_the_general_path_agree() {
    let rt = runtime();
    for (api, body) in FORMATS {
        let general = general_path_body(api, body);
        assert_ne!(general, body, "{api}: the body was changed");
        let hot = rt.block_on(decode(api, split(body, vec![])));
        let general = rt.block_on(decode(api, split(&general, vec![])));
        assert_eq!(hot, general, "{api}");
    }
}
