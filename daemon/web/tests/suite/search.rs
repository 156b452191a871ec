//! Each search provider against a stub that records the request it gets and answers in the
//! provider's shape: the request's method, path, parameters and auth header are checked,
//! the hits parsed, recency mapped, and refusals turned into their errors.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use pi_web::{Recency, SearchHit, SearchProvider, SearchQuery, WebError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Server, client};

/// One request as the stub got it.
#[derive(Debug, Clone)]
struct Recorded {
    method: Method,
    path: String,
    query: BTreeMap<String, String>,
    headers: HeaderMap,
    body: Value,
}

/// A provider stub: records every request, answers with one canned response.
struct Stub {
    requests: Mutex<Vec<Recorded>>,
    status: StatusCode,
    headers: Vec<(&'static str, &'static str)>,
    body: String,
}

async fn record(
    State(stub): State<Arc<Stub>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let query = url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .into_owned()
        .collect();
    stub.requests.lock().unwrap().push(Recorded {
        method,
        path: uri.path().to_owned(),
        query,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let mut response = (stub.status, stub.body.clone()).into_response();
    for (name, value) in &stub.headers {
        response.headers_mut().insert(*name, value.parse().unwrap());
    }
    response
}

/// A stub answering `status` with `body` (JSON) and `headers`.
async fn stub(
    status: StatusCode,
    headers: Vec<(&'static str, &'static str)>,
    body: Value,
) -> (Server, Arc<Stub>) {
    let stub = Arc::new(Stub {
        requests: Mutex::new(Vec::new()),
        status,
        headers,
        body: body.to_string(),
    });
    let server = Server::start(Router::new().fallback(record).with_state(stub.clone())).await;
    (server, stub)
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn query(text: &str, recency: Option<Recency>, limit: Option<u32>) -> SearchQuery {
    SearchQuery {
        query: text.to_owned(),
        recency,
        limit,
    }
}

async fn search(
    provider: &SearchProvider,
    query: &SearchQuery,
) -> Result<Vec<SearchHit>, WebError> {
    client()
        .search(provider, query, &CancellationToken::new())
        .await
}

fn only_request(stub: &Stub) -> Recorded {
    let requests = stub.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    requests[0].clone()
}

fn header<'a>(request: &'a Recorded, name: &str) -> &'a str {
    request
        .headers
        .get(name)
        .map(|value| value.to_str().unwrap())
        .unwrap_or_default()
}

#[tokio::test]
async fn brave_sends_its_token_and_freshness() {
    let (server, stub) = stub(
        StatusCode::OK,
        vec![],
        json!({
            "type": "search",
            "query": {"original": "rust async", "more_results_available": true},
            "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
            "web": {
                "type": "search",
                "family_friendly": true,
                "results": [
                    {
                        "type": "search_result",
                        "title": "Asynchronous Programming in <strong>Rust</strong>",
                        "url": "https://rust-lang.github.io/async-book/",
                        "is_source_local": false,
                        "description": "The <strong>async</strong> book &amp; its\nexamples &lt;3",
                        "page_age": "2024-05-01T00:00:00",
                        "age": "May 1, 2024",
                        "language": "en",
                        "profile": {"name": "GitHub", "url": "https://rust-lang.github.io"}
                    },
                    {
                        "type": "search_result",
                        "title": "Tokio",
                        "url": "https://tokio.rs/",
                        "description": "An asynchronous runtime."
                    }
                ]
            }
        }),
    )
    .await;
    let provider = SearchProvider::from_env(&env(&[
        ("BRAVE_API_KEY", "brave-secret-key"),
        ("TAVILY_API_KEY", "unused"),
        ("PI_BRAVE_BASE_URL", &server.url("")),
    ]))
    .unwrap();
    let hits = search(
        &provider,
        &query("rust async", Some(Recency::Week), Some(5)),
    )
    .await
    .unwrap();
    let request = only_request(&stub);
    assert_eq!(request.method, Method::GET);
    assert_eq!(request.path, "/res/v1/web/search");
    assert_eq!(
        request.query,
        env(&[("q", "rust async"), ("count", "5"), ("freshness", "pw")])
    );
    assert_eq!(header(&request, "x-subscription-token"), "brave-secret-key");
    assert_eq!(header(&request, "accept"), "application/json");
    assert_eq!(
        hits,
        [
            SearchHit {
                title: "Asynchronous Programming in Rust".to_owned(),
                url: "https://rust-lang.github.io/async-book/".to_owned(),
                snippet: "The async book & its examples <3".to_owned(),
                published: Some("2024-05-01T00:00:00".to_owned()),
            },
            SearchHit {
                title: "Tokio".to_owned(),
                url: "https://tokio.rs/".to_owned(),
                snippet: "An asynchronous runtime.".to_owned(),
                published: None,
            },
        ]
    );
}

#[tokio::test]
async fn brave_maps_every_recency_and_the_default_count() {
    for (recency, freshness) in [
        (Some(Recency::Day), Some("pd")),
        (Some(Recency::Month), Some("pm")),
        (Some(Recency::Year), Some("py")),
        (None, None),
    ] {
        let (server, stub) = stub(StatusCode::OK, vec![], json!({"type": "search"})).await;
        let provider = SearchProvider::Brave {
            api_key: pi_web::ApiKey::new("k"),
            base_url: server.url("/"),
        };
        let hits = search(&provider, &query("q", recency, None)).await.unwrap();
        assert!(hits.is_empty());
        let request = only_request(&stub);
        assert_eq!(request.path, "/res/v1/web/search");
        assert_eq!(request.query.get("count").map(String::as_str), Some("10"));
        assert_eq!(
            request.query.get("freshness").map(String::as_str),
            freshness
        );
    }
}

#[tokio::test]
async fn exa_posts_json_with_a_start_date_and_contents() {
    let (server, stub) = stub(
        StatusCode::OK,
        vec![],
        json!({
            "requestId": "b5947044c4b78efa9552a7c89b306d95",
            "resolvedSearchType": "neural",
            "results": [
                {
                    "id": "https://example.com/post",
                    "title": "A post about\nRust",
                    "url": "https://example.com/post",
                    "publishedDate": "2024-04-01T00:00:00.000Z",
                    "author": "Someone",
                    "score": 0.91,
                    "text": "The whole text of the post, long and detailed.",
                    "highlights": ["First highlight.", "Second highlight."],
                    "highlightScores": [0.5, 0.4]
                },
                {
                    "id": "https://example.com/bare",
                    "title": null,
                    "url": "https://example.com/bare",
                    "text": "Only text here."
                }
            ],
            "costDollars": {"total": 0.005}
        }),
    )
    .await;
    let provider = SearchProvider::named(
        "exa",
        &env(&[
            ("EXA_API_KEY", "exa-secret"),
            ("PI_EXA_BASE_URL", &server.url("")),
        ]),
    )
    .unwrap();
    let before = pi_util::time::now_millis();
    let hits = search(
        &provider,
        &query("rust posts", Some(Recency::Month), Some(3)),
    )
    .await
    .unwrap();
    let after = pi_util::time::now_millis();
    let request = only_request(&stub);
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.path, "/search");
    assert_eq!(header(&request, "x-api-key"), "exa-secret");
    assert_eq!(header(&request, "content-type"), "application/json");
    assert_eq!(request.body["query"], "rust posts");
    assert_eq!(request.body["numResults"], 3);
    assert!(request.body["contents"]["highlights"].is_object());
    assert!(request.body["contents"]["text"].is_object());
    let start =
        pi_util::time::millis_from_iso(request.body["startPublishedDate"].as_str().unwrap())
            .unwrap();
    let month = 30 * 24 * 60 * 60 * 1000;
    assert!(start >= before - month && start <= after - month, "{start}");
    assert_eq!(
        hits,
        [
            SearchHit {
                title: "A post about Rust".to_owned(),
                url: "https://example.com/post".to_owned(),
                snippet: "First highlight. … Second highlight.".to_owned(),
                published: Some("2024-04-01T00:00:00.000Z".to_owned()),
            },
            SearchHit {
                title: String::new(),
                url: "https://example.com/bare".to_owned(),
                snippet: "Only text here.".to_owned(),
                published: None,
            },
        ]
    );
}

#[tokio::test]
async fn tavily_sends_a_bearer_token_and_time_range() {
    let (server, stub) = stub(
        StatusCode::OK,
        vec![],
        json!({
            "query": "pi daemon",
            "follow_up_questions": null,
            "answer": null,
            "images": [],
            "results": [
                {
                    "title": "Pi",
                    "url": "https://pi.example/",
                    "content": "A coding agent.",
                    "score": 0.8,
                    "raw_content": null
                },
                {
                    "title": "Pi news",
                    "url": "https://pi.example/news",
                    "content": "Released today.",
                    "score": 0.7,
                    "published_date": "Mon, 03 Jun 2024 10:00:00 GMT",
                    "raw_content": null
                }
            ],
            "response_time": 1.09,
            "request_id": "123e4567-e89b-12d3-a456-426614174111"
        }),
    )
    .await;
    let provider = SearchProvider::from_env(&env(&[
        ("TAVILY_API_KEY", "tvly-secret"),
        ("PI_TAVILY_BASE_URL", &server.url("")),
        ("SEARXNG_URL", "http://unused.invalid"),
    ]))
    .unwrap();
    let hits = search(&provider, &query("pi daemon", Some(Recency::Day), Some(50)))
        .await
        .unwrap();
    let request = only_request(&stub);
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.path, "/search");
    assert_eq!(header(&request, "authorization"), "Bearer tvly-secret");
    assert_eq!(
        request.body,
        json!({
            "query": "pi daemon",
            "max_results": 20,
            "topic": "general",
            "search_depth": "basic",
            "time_range": "day"
        })
    );
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].snippet, "A coding agent.");
    assert_eq!(hits[0].published, None);
    assert_eq!(
        hits[1].published.as_deref(),
        Some("Mon, 03 Jun 2024 10:00:00 GMT")
    );
}

#[tokio::test]
async fn searxng_asks_for_json_under_its_path_and_the_limit_is_kept() {
    let result = |n: u32| {
        json!({
            "url": format!("https://result.example/{n}"),
            "title": format!("Result {n}"),
            "content": format!("Content {n}"),
            "engine": "duckduckgo",
            "engines": ["duckduckgo"],
            "score": 1.0,
            "category": "general",
            "publishedDate": if n == 1 { json!("2024-01-02T00:00:00") } else { Value::Null }
        })
    };
    let (server, stub) = stub(
        StatusCode::OK,
        vec![],
        json!({
            "query": "x",
            "number_of_results": 0,
            "results": [result(1), result(2), result(3)],
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": []
        }),
    )
    .await;
    let provider =
        SearchProvider::from_env(&env(&[("SEARXNG_URL", &server.url("/searx/"))])).unwrap();
    let hits = search(&provider, &query("x", Some(Recency::Year), Some(2)))
        .await
        .unwrap();
    let request = only_request(&stub);
    assert_eq!(request.method, Method::GET);
    assert_eq!(request.path, "/searx/search");
    assert_eq!(
        request.query,
        env(&[("q", "x"), ("format", "json"), ("time_range", "year")])
    );
    assert!(request.headers.get("authorization").is_none());
    assert_eq!(
        hits,
        [
            SearchHit {
                title: "Result 1".to_owned(),
                url: "https://result.example/1".to_owned(),
                snippet: "Content 1".to_owned(),
                published: Some("2024-01-02T00:00:00".to_owned()),
            },
            SearchHit {
                title: "Result 2".to_owned(),
                url: "https://result.example/2".to_owned(),
                snippet: "Content 2".to_owned(),
                published: None,
            },
        ]
    );
}

#[tokio::test]
async fn a_refused_key_is_named_without_the_key() {
    let cases = [
        (
            StatusCode::UNAUTHORIZED,
            "brave",
            "Brave Search refused the API key (HTTP 401); check BRAVE_API_KEY",
        ),
        (
            StatusCode::FORBIDDEN,
            "exa",
            "Exa refused the API key (HTTP 403); check EXA_API_KEY",
        ),
        (
            StatusCode::UNAUTHORIZED,
            "tavily",
            "Tavily refused the API key (HTTP 401); check TAVILY_API_KEY",
        ),
    ];
    for (status, name, expected) in cases {
        let (server, _stub) =
            stub(status, vec![], json!({"error": "invalid key sk-leaky-key"})).await;
        let provider = SearchProvider::named(
            name,
            &env(&[
                ("BRAVE_API_KEY", "sk-leaky-key"),
                ("EXA_API_KEY", "sk-leaky-key"),
                ("TAVILY_API_KEY", "sk-leaky-key"),
                ("PI_BRAVE_BASE_URL", &server.url("")),
                ("PI_EXA_BASE_URL", &server.url("")),
                ("PI_TAVILY_BASE_URL", &server.url("")),
            ]),
        )
        .unwrap();
        let error = search(&provider, &query("q", None, None))
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), expected);
        assert!(!format!("{error:?}").contains("sk-leaky-key"));
        assert!(!format!("{provider:?}").contains("sk-leaky-key"));
    }
}

#[tokio::test]
async fn a_searxng_without_json_says_how_to_enable_it() {
    let (server, _stub) = stub(StatusCode::FORBIDDEN, vec![], json!("Forbidden")).await;
    let provider = SearchProvider::Searxng {
        base_url: server.url(""),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the SearXNG instance at {} refused the search (HTTP 403); enable the json format under search.formats in its settings.yml, or check SEARXNG_URL",
            server.url("/search")
        )
    );
}

#[tokio::test]
async fn a_rate_limit_says_when_to_retry() {
    let (server, _stub) = stub(
        StatusCode::TOO_MANY_REQUESTS,
        vec![("retry-after", "30")],
        json!({"detail": "slow down"}),
    )
    .await;
    let provider = SearchProvider::Tavily {
        api_key: pi_web::ApiKey::new("k"),
        base_url: server.url(""),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Tavily is rate-limiting searches (HTTP 429); retry in 30 s"
    );
    let (server, _stub) = stub(StatusCode::TOO_MANY_REQUESTS, vec![], json!({})).await;
    let provider = SearchProvider::Exa {
        api_key: pi_web::ApiKey::new("k"),
        base_url: server.url(""),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Exa is rate-limiting searches (HTTP 429); wait a minute and retry"
    );
}

#[tokio::test]
async fn other_failures_quote_the_body_without_the_key() {
    let (server, _stub) = stub(
        StatusCode::INTERNAL_SERVER_ERROR,
        vec![("content-type", "application/json")],
        json!({"error": "backend failed for token brave-secret"}),
    )
    .await;
    let provider = SearchProvider::Brave {
        api_key: pi_web::ApiKey::new("brave-secret"),
        base_url: server.url(""),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Brave Search answered HTTP 500 Internal Server Error: \"{\"error\":\"backend failed for token <redacted>\"}\""
    );
}

#[tokio::test]
async fn a_malformed_answer_and_an_empty_query_are_errors() {
    let (server, _stub) = stub(StatusCode::OK, vec![], json!({"results": "none"})).await;
    let provider = SearchProvider::Tavily {
        api_key: pi_web::ApiKey::new("k"),
        base_url: server.url(""),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Tavily sent a response that is not a search result (invalid type: string \"none\", expected a sequence at line 1 column 17)"
    );
    let error = search(&provider, &query("   ", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the search query is empty; give words to search for"
    );
}

#[tokio::test]
async fn a_key_that_cannot_be_a_header_is_named() {
    let provider = SearchProvider::Exa {
        api_key: pi_web::ApiKey::new("line\nbreak"),
        base_url: "http://127.0.0.1:9".to_owned(),
    };
    let error = search(&provider, &query("q", None, None))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "EXA_API_KEY holds characters an HTTP header cannot carry (a line break?); set it to the key alone"
    );
}
