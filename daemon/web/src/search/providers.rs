//! The four providers' wire formats: the request each takes (endpoint, method, auth header,
//! parameters, recency) and the answer each gives, parsed into `SearchHit`s.
//!
//! - Brave: `GET {base}/res/v1/web/search?q=&count=&freshness=pd|pw|pm|py`, key in
//!   `X-Subscription-Token`; hits under `web.results` (`title`, `url`, `description` with
//!   `<strong>` marks, `page_age`/`age`).
//! - Exa: `POST {base}/search` `{query, numResults, type, contents, startPublishedDate}`,
//!   key in `x-api-key`; hits under `results` (`title`, `url`, `highlights`, `text`,
//!   `publishedDate`).
//! - Tavily: `POST {base}/search` `{query, max_results, topic, time_range}`, key as a bearer
//!   token; hits under `results` (`title`, `url`, `content`, `published_date`).
//! - SearXNG: `GET {base}/search?q=&format=json&time_range=`; hits under `results`
//!   (`title`, `url`, `content`, `publishedDate`).

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::{ApiKey, ProviderName, Recency, SearchHit, SearchProvider};
use crate::WebError;
use crate::convert::{clip, one_line};

/// A request ready to send, and the endpoint errors name (without the query string).
pub(super) struct Prepared {
    pub(super) endpoint: Url,
    pub(super) request: reqwest::RequestBuilder,
}

/// The request `provider` takes for `query`.
pub(super) fn prepare(
    http: &reqwest::Client,
    provider: &SearchProvider,
    query: &str,
    recency: Option<Recency>,
    limit: u32,
) -> Result<Prepared, WebError> {
    let variable = provider.provider_name().variable();
    match provider {
        SearchProvider::Brave { api_key, base_url } => {
            let endpoint = endpoint(base_url, "res/v1/web/search")?;
            let mut url = endpoint.clone();
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &limit.to_string());
            if let Some(recency) = recency {
                let freshness = match recency {
                    Recency::Day => "pd",
                    Recency::Week => "pw",
                    Recency::Month => "pm",
                    Recency::Year => "py",
                };
                url.query_pairs_mut().append_pair("freshness", freshness);
            }
            let request = http
                .get(url)
                .header(ACCEPT, "application/json")
                .header("X-Subscription-Token", secret(api_key, variable, "")?);
            Ok(Prepared { endpoint, request })
        }
        SearchProvider::Exa { api_key, base_url } => {
            let endpoint = endpoint(base_url, "search")?;
            let mut body = json!({
                "query": query,
                "numResults": limit,
                "type": "auto",
                "contents": {
                    "highlights": {"numSentences": 3, "highlightsPerUrl": 2},
                    "text": {"maxCharacters": SNIPPET_CHARS},
                },
            });
            if let Some(recency) = recency {
                let since = pi_util::time::now_millis() - recency.days() * MILLIS_PER_DAY;
                body["startPublishedDate"] = json!(pi_util::time::iso_from_millis(since));
            }
            let request = http
                .post(endpoint.clone())
                .header(ACCEPT, "application/json")
                .header(CONTENT_TYPE, "application/json")
                .header("x-api-key", secret(api_key, variable, "")?)
                .body(body.to_string());
            Ok(Prepared { endpoint, request })
        }
        SearchProvider::Tavily { api_key, base_url } => {
            let endpoint = endpoint(base_url, "search")?;
            let mut body = json!({
                "query": query,
                "max_results": limit,
                "topic": "general",
                "search_depth": "basic",
            });
            if let Some(recency) = recency {
                body["time_range"] = json!(recency.name());
            }
            let request = http
                .post(endpoint.clone())
                .header(ACCEPT, "application/json")
                .header(CONTENT_TYPE, "application/json")
                .header(AUTHORIZATION, secret(api_key, variable, "Bearer ")?)
                .body(body.to_string());
            Ok(Prepared { endpoint, request })
        }
        SearchProvider::Searxng { base_url } => {
            let endpoint = endpoint(base_url, "search")?;
            let mut url = endpoint.clone();
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            if let Some(recency) = recency {
                url.query_pairs_mut()
                    .append_pair("time_range", recency.name());
            }
            let request = http.get(url).header(ACCEPT, "application/json");
            Ok(Prepared { endpoint, request })
        }
    }
}

/// The hits in `provider`'s answer.
pub(super) fn parse(provider: &SearchProvider, body: &[u8]) -> Result<Vec<SearchHit>, WebError> {
    let name = provider.provider_name();
    let malformed = |error: serde_json::Error| WebError::SearchResponse {
        provider: name.label(),
        detail: error.to_string(),
    };
    let hits = match name {
        ProviderName::Brave => {
            let answer: BraveAnswer = serde_json::from_slice(body).map_err(malformed)?;
            answer
                .web
                .map(|web| web.results)
                .unwrap_or_default()
                .into_iter()
                .map(|result| SearchHit {
                    title: plain_text(&result.title),
                    url: result.url,
                    snippet: clip(&plain_text(&result.description), SNIPPET_CHARS),
                    published: result.page_age.or(result.age),
                })
                .collect()
        }
        ProviderName::Exa => {
            let answer: ExaAnswer = serde_json::from_slice(body).map_err(malformed)?;
            answer
                .results
                .into_iter()
                .map(|result| {
                    let highlights = result.highlights.unwrap_or_default().join(" … ");
                    let snippet = [Some(highlights), result.text, result.summary]
                        .into_iter()
                        .flatten()
                        .map(|text| one_line(&text))
                        .find(|text| !text.is_empty())
                        .unwrap_or_default();
                    SearchHit {
                        title: one_line(&result.title.unwrap_or_default()),
                        url: result.url,
                        snippet: clip(&snippet, SNIPPET_CHARS),
                        published: result.published_date,
                    }
                })
                .collect()
        }
        ProviderName::Tavily => {
            let answer: TavilyAnswer = serde_json::from_slice(body).map_err(malformed)?;
            answer
                .results
                .into_iter()
                .map(|result| SearchHit {
                    title: one_line(&result.title),
                    url: result.url,
                    snippet: clip(&one_line(&result.content), SNIPPET_CHARS),
                    published: result.published_date,
                })
                .collect()
        }
        ProviderName::Searxng => {
            let answer: SearxngAnswer = serde_json::from_slice(body).map_err(malformed)?;
            answer
                .results
                .into_iter()
                .map(|result| SearchHit {
                    title: one_line(&result.title),
                    url: result.url,
                    snippet: clip(
                        &one_line(&result.content.unwrap_or_default()),
                        SNIPPET_CHARS,
                    ),
                    published: result.published_date,
                })
                .collect()
        }
    };
    Ok(hits)
}

/// The longest snippet kept, in characters.
const SNIPPET_CHARS: usize = 400;

const MILLIS_PER_DAY: i64 = 24 * 60 * 60 * 1000;

/// `prefix` and the key as a header value marked sensitive (hyper keeps it out of its logs
/// and `Debug`).
fn secret(api_key: &ApiKey, variable: &'static str, prefix: &str) -> Result<HeaderValue, WebError> {
    let mut value = HeaderValue::from_str(&format!("{prefix}{}", api_key.expose()))
        .map_err(|_| WebError::InvalidSearchKey { variable })?;
    value.set_sensitive(true);
    Ok(value)
}

/// `{base}/{path}`, the base's own path kept (`https://host/searx` → `…/searx/search`).
fn endpoint(base_url: &str, path: &str) -> Result<Url, WebError> {
    let joined = format!("{}/{path}", base_url.trim().trim_end_matches('/'));
    crate::client::parse_http_url(&joined).map_err(|error| match error {
        WebError::InvalidUrl { reason, .. } => WebError::InvalidUrl {
            input: base_url.to_owned(),
            reason: format!("the search provider's base URL: {reason}"),
        },
        other => other,
    })
}

/// Brave's snippet text: tags (`<strong>`) removed, common entities decoded, on one line.
fn plain_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for character in html.chars() {
        match character {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(character),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    one_line(&text)
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    page_age: Option<String>,
    #[serde(default)]
    age: Option<String>,
}

#[derive(Deserialize)]
struct ExaAnswer {
    results: Vec<ExaResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExaResult {
    #[serde(default)]
    title: Option<String>,
    url: String,
    #[serde(default)]
    published_date: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    highlights: Option<Vec<String>>,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Deserialize)]
struct TavilyAnswer {
    results: Vec<TavilyResult>,
}

#[derive(Deserialize)]
struct TavilyResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    published_date: Option<String>,
}

#[derive(Deserialize)]
struct SearxngAnswer {
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearxngResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    published_date: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brave_markup_becomes_plain_text() {
        assert_eq!(
            plain_text("The <strong>Rust</strong> &amp; <em>Go</em>\n&lt;book&gt; it&#39;s"),
            "The Rust & Go <book> it's"
        );
    }

    #[test]
    fn base_urls_keep_their_path() {
        assert_eq!(
            endpoint("https://host.example/searx/", "search")
                .unwrap()
                .as_str(),
            "https://host.example/searx/search"
        );
        let error = endpoint("api.exa.ai", "search").unwrap_err();
        assert_eq!(
            error.to_string(),
            "\"api.exa.ai\" is not a valid URL (the search provider's base URL: relative URL without a base); give a full URL such as https://example.com/page"
        );
    }

    #[test]
    fn a_malformed_answer_is_named() {
        let provider = SearchProvider::Searxng {
            base_url: "http://127.0.0.1:1".to_owned(),
        };
        let error = parse(&provider, b"<html>").unwrap_err();
        assert_eq!(
            error.to_string(),
            "SearXNG sent a response that is not a search result (expected value at line 1 column 1)"
        );
    }
}
