//! Web search: the providers (`SearchProvider`), chosen from the environment or by name, a
//! query and its hits in one shape, and `WebClient::search`, which asks a provider and
//! turns its answer (or its refusal) into those.
//!
//! Keys are `ApiKey`s, which never print: `Debug` shows `<redacted>`, there is no `Display`,
//! and a provider's error body is cleaned of the key before an error quotes it.

mod providers;

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use url::Url;

use crate::error::shown_url;
use crate::{WebClient, WebError};

/// An API key: compared and sent, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the request header.
    fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// How recent the hits must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recency {
    /// The last 24 hours.
    Day,
    /// The last 7 days.
    Week,
    /// The last 30 days.
    Month,
    /// The last 365 days.
    Year,
}

impl Recency {
    /// `day`, `week`, `month` or `year` (any case).
    pub fn from_name(name: &str) -> Option<Recency> {
        match name.trim().to_ascii_lowercase().as_str() {
            "day" => Some(Recency::Day),
            "week" => Some(Recency::Week),
            "month" => Some(Recency::Month),
            "year" => Some(Recency::Year),
            _ => None,
        }
    }

    /// `day`, `week`, `month` or `year`: the name Tavily and SearXNG take.
    pub fn name(self) -> &'static str {
        match self {
            Recency::Day => "day",
            Recency::Week => "week",
            Recency::Month => "month",
            Recency::Year => "year",
        }
    }

    /// The period, in days.
    fn days(self) -> i64 {
        match self {
            Recency::Day => 1,
            Recency::Week => 7,
            Recency::Month => 30,
            Recency::Year => 365,
        }
    }
}

/// A search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// The words searched for.
    pub query: String,
    /// Only hits this recent, when set.
    pub recency: Option<Recency>,
    /// How many hits (default 10, at most 20).
    pub limit: Option<u32>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The page's title (may be empty when the provider has none).
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// A few sentences from the page, on one line, plain text.
    pub snippet: String,
    /// When the page was published, as the provider says it (an ISO date, or words such as
    /// `2 days ago`), when it says.
    pub published: Option<String>,
}

/// A search provider and how to reach it. `Debug` hides the keys (and a password in a
/// SearXNG URL).
#[derive(Clone)]
pub enum SearchProvider {
    /// Brave Search's web search API (`BRAVE_API_KEY`).
    Brave {
        /// The subscription token.
        api_key: ApiKey,
        /// `https://api.search.brave.com`, or a proxy's.
        base_url: String,
    },
    /// Exa's search API (`EXA_API_KEY`).
    Exa {
        /// The key.
        api_key: ApiKey,
        /// `https://api.exa.ai`, or a proxy's.
        base_url: String,
    },
    /// Tavily's search API (`TAVILY_API_KEY`).
    Tavily {
        /// The key.
        api_key: ApiKey,
        /// `https://api.tavily.com`, or a proxy's.
        base_url: String,
    },
    /// A SearXNG instance with its JSON output enabled (`SEARXNG_URL`).
    Searxng {
        /// The instance's URL (`https://searx.example.org`, or with a path).
        base_url: String,
    },
}

impl SearchProvider {
    /// The provider the environment configures: the first of `BRAVE_API_KEY`,
    /// `EXA_API_KEY`, `TAVILY_API_KEY` and `SEARXNG_URL` that is set and not blank, with
    /// `PI_BRAVE_BASE_URL`, `PI_EXA_BASE_URL` and `PI_TAVILY_BASE_URL` replacing the public
    /// endpoints (proxies, tests). `None` when none is set (`WebError::NoSearchProvider`
    /// says what to set).
    pub fn from_env(env: &BTreeMap<String, String>) -> Option<SearchProvider> {
        ProviderName::ALL
            .into_iter()
            .find_map(|name| name.configured(env))
    }

    /// The provider called `name` (`brave`, `exa`, `tavily`, `searxng`, any case),
    /// configured from `env` as `from_env` does; an error names the variable to set when
    /// its key (or URL) is missing.
    pub fn named(name: &str, env: &BTreeMap<String, String>) -> Result<SearchProvider, WebError> {
        let provider = ProviderName::ALL
            .into_iter()
            .find(|known| known.id().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| WebError::UnknownSearchProvider {
                name: name.to_owned(),
            })?;
        provider.configured(env).ok_or(WebError::MissingSearchKey {
            provider: provider.label(),
            variable: provider.variable(),
        })
    }

    /// `brave`, `exa`, `tavily` or `searxng`.
    pub fn name(&self) -> &'static str {
        self.provider_name().id()
    }

    fn provider_name(&self) -> ProviderName {
        match self {
            SearchProvider::Brave { .. } => ProviderName::Brave,
            SearchProvider::Exa { .. } => ProviderName::Exa,
            SearchProvider::Tavily { .. } => ProviderName::Tavily,
            SearchProvider::Searxng { .. } => ProviderName::Searxng,
        }
    }

    fn base_url(&self) -> &str {
        match self {
            SearchProvider::Brave { base_url, .. }
            | SearchProvider::Exa { base_url, .. }
            | SearchProvider::Tavily { base_url, .. }
            | SearchProvider::Searxng { base_url } => base_url,
        }
    }

    fn api_key(&self) -> Option<&ApiKey> {
        match self {
            SearchProvider::Brave { api_key, .. }
            | SearchProvider::Exa { api_key, .. }
            | SearchProvider::Tavily { api_key, .. } => Some(api_key),
            SearchProvider::Searxng { .. } => None,
        }
    }
}

impl std::fmt::Debug for SearchProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let base_url = match Url::parse(self.base_url()) {
            Ok(url) => shown_url(&url),
            Err(_) => "<not a URL>".to_owned(),
        };
        let mut debug = f.debug_struct(self.provider_name().variant());
        if let Some(api_key) = self.api_key() {
            debug.field("api_key", api_key);
        }
        debug.field("base_url", &base_url).finish()
    }
}

impl WebClient {
    /// Searches the web with `provider`: at most `query.limit` hits (10 when unset, never
    /// more than 20), as recent as `query.recency` asks, within the configured time and
    /// until `cancel`. A refused key, a rate limit and a malformed answer are their own
    /// `WebError`s.
    #[tracing::instrument(level = "debug", skip_all, fields(provider = provider.name()), err(level = "debug"))]
    pub async fn search(
        &self,
        provider: &SearchProvider,
        query: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<Vec<SearchHit>, WebError> {
        let words = query.query.trim();
        if words.is_empty() {
            return Err(WebError::EmptyQuery);
        }
        let limit = query.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let prepared = providers::prepare(self.http(), provider, words, query.recency, limit)?;
        let endpoint = prepared.endpoint;
        let request = prepared.request;
        let (status, retry_after, content_type, body) = self
            .bounded(&endpoint, cancel, async {
                let response = self.send(request, &endpoint).await?;
                let status = response.status();
                let headers = response.headers();
                let retry_after = headers
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(parse_retry_after);
                let content_type = headers
                    .get(reqwest::header::CONTENT_TYPE)
                    .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
                let (body, more) = self
                    .read_body(response, SEARCH_BODY_LIMIT, &endpoint)
                    .await?;
                if more {
                    return Err(WebError::TooLarge {
                        url: shown_url(&endpoint),
                        limit: SEARCH_BODY_LIMIT,
                        declared: None,
                    });
                }
                Ok((status, retry_after, content_type, body))
            })
            .await?;
        let name = provider.provider_name();
        match status.as_u16() {
            401 | 403 => {
                return Err(match provider {
                    SearchProvider::Searxng { .. } => WebError::SearxngRefused {
                        url: shown_url(&endpoint),
                        status: status.as_u16(),
                    },
                    SearchProvider::Brave { .. }
                    | SearchProvider::Exa { .. }
                    | SearchProvider::Tavily { .. } => WebError::SearchKeyRefused {
                        provider: name.label(),
                        status: status.as_u16(),
                        variable: name.variable(),
                    },
                });
            }
            429 => {
                return Err(WebError::SearchRateLimited {
                    provider: name.label(),
                    retry_after,
                });
            }
            _ => {}
        }
        if !status.is_success() {
            let mut body_start = crate::convert::excerpt(content_type.as_deref(), &body);
            if let Some(key) = provider.api_key()
                && !key.expose().is_empty()
            {
                body_start = body_start.replace(key.expose(), "<redacted>");
            }
            return Err(WebError::SearchFailed {
                provider: name.label(),
                status: status.as_u16(),
                reason: status.canonical_reason().unwrap_or_default().to_owned(),
                body_start,
            });
        }
        let mut hits = providers::parse(provider, &body)?;
        hits.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        tracing::debug!(hits = hits.len(), "searched");
        Ok(hits)
    }
}

/// Hits asked for when the query does not say.
const DEFAULT_LIMIT: u32 = 10;

/// The most hits asked for (Brave's and Tavily's own maximum).
const MAX_LIMIT: u32 = 20;

/// The largest search answer read.
const SEARCH_BODY_LIMIT: u64 = 4 * 1024 * 1024;

/// The providers by name, in the order the environment is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProviderName {
    Brave,
    Exa,
    Tavily,
    Searxng,
}

impl ProviderName {
    const ALL: [ProviderName; 4] = [
        ProviderName::Brave,
        ProviderName::Exa,
        ProviderName::Tavily,
        ProviderName::Searxng,
    ];

    fn id(self) -> &'static str {
        match self {
            ProviderName::Brave => "brave",
            ProviderName::Exa => "exa",
            ProviderName::Tavily => "tavily",
            ProviderName::Searxng => "searxng",
        }
    }

    /// The name messages use.
    fn label(self) -> &'static str {
        match self {
            ProviderName::Brave => "Brave Search",
            ProviderName::Exa => "Exa",
            ProviderName::Tavily => "Tavily",
            ProviderName::Searxng => "SearXNG",
        }
    }

    /// The `SearchProvider` variant's name, for `Debug`.
    fn variant(self) -> &'static str {
        match self {
            ProviderName::Brave => "Brave",
            ProviderName::Exa => "Exa",
            ProviderName::Tavily => "Tavily",
            ProviderName::Searxng => "Searxng",
        }
    }

    /// The variable holding the key (or, for SearXNG, the URL).
    fn variable(self) -> &'static str {
        match self {
            ProviderName::Brave => "BRAVE_API_KEY",
            ProviderName::Exa => "EXA_API_KEY",
            ProviderName::Tavily => "TAVILY_API_KEY",
            ProviderName::Searxng => "SEARXNG_URL",
        }
    }

    /// The variable replacing the public endpoint, and that endpoint.
    fn base_override(self) -> Option<(&'static str, &'static str)> {
        match self {
            ProviderName::Brave => Some(("PI_BRAVE_BASE_URL", "https://api.search.brave.com")),
            ProviderName::Exa => Some(("PI_EXA_BASE_URL", "https://api.exa.ai")),
            ProviderName::Tavily => Some(("PI_TAVILY_BASE_URL", "https://api.tavily.com")),
            ProviderName::Searxng => None,
        }
    }

    /// This provider as `env` configures it, when its variable is set.
    fn configured(self, env: &BTreeMap<String, String>) -> Option<SearchProvider> {
        let value = |name: &str| {
            env.get(name)
                .map(|value| value.trim())
                .filter(|value| !value.is_empty())
        };
        let setting = value(self.variable())?.to_owned();
        let base_url = match self.base_override() {
            Some((variable, default)) => value(variable).unwrap_or(default).to_owned(),
            None => setting.clone(),
        };
        Some(match self {
            ProviderName::Brave => SearchProvider::Brave {
                api_key: ApiKey::new(setting),
                base_url,
            },
            ProviderName::Exa => SearchProvider::Exa {
                api_key: ApiKey::new(setting),
                base_url,
            },
            ProviderName::Tavily => SearchProvider::Tavily {
                api_key: ApiKey::new(setting),
                base_url,
            },
            ProviderName::Searxng => SearchProvider::Searxng { base_url },
        })
    }
}

/// `Retry-After` as seconds or as an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn the_environment_picks_in_order() {
        let all = env(&[
            ("SEARXNG_URL", "http://searx.local"),
            ("TAVILY_API_KEY", "tv"),
            ("EXA_API_KEY", "ex"),
            ("BRAVE_API_KEY", " "),
        ]);
        let provider = SearchProvider::from_env(&all).unwrap();
        assert_eq!(provider.name(), "exa");
        assert_eq!(provider.base_url(), "https://api.exa.ai");
        assert!(SearchProvider::from_env(&env(&[])).is_none());
        let overridden = env(&[
            ("BRAVE_API_KEY", "b"),
            ("PI_BRAVE_BASE_URL", "http://127.0.0.1:9"),
        ]);
        assert_eq!(
            SearchProvider::from_env(&overridden).unwrap().base_url(),
            "http://127.0.0.1:9"
        );
    }

    #[test]
    fn named_providers_need_their_variable() {
        let tavily = SearchProvider::named("Tavily", &env(&[("TAVILY_API_KEY", "k")])).unwrap();
        assert_eq!(tavily.name(), "tavily");
        assert_eq!(tavily.base_url(), "https://api.tavily.com");
        let missing = SearchProvider::named("brave", &env(&[("EXA_API_KEY", "k")])).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "web search with Brave Search needs BRAVE_API_KEY; set it in the session's environment (the shell you run pictl from)"
        );
        let missing = SearchProvider::named("searxng", &env(&[])).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "web search with SearXNG needs SEARXNG_URL; set it in the session's environment (the shell you run pictl from)"
        );
        let unknown = SearchProvider::named("bing", &env(&[])).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown search provider \"bing\"; use one of brave, exa, tavily, searxng, anthropic, openai"
        );
        assert_eq!(
            WebError::NoSearchProvider.to_string(),
            "web search needs a provider: set BRAVE_API_KEY, EXA_API_KEY or TAVILY_API_KEY, or SEARXNG_URL to a SearXNG instance, in the session's environment (the shell you run pictl from), or use a model whose provider searches itself (Anthropic's Messages API, OpenAI's Responses API)"
        );
    }

    #[test]
    fn debug_hides_keys_and_passwords() {
        let brave = SearchProvider::Brave {
            api_key: ApiKey::new("sk-very-secret"),
            base_url: "https://api.search.brave.com".to_owned(),
        };
        assert_eq!(
            format!("{brave:?}"),
            "Brave { api_key: ApiKey(<redacted>), base_url: \"https://api.search.brave.com/\" }"
        );
        let searxng = SearchProvider::Searxng {
            base_url: "https://me:hunter2@searx.example/searx".to_owned(),
        };
        assert_eq!(
            format!("{searxng:?}"),
            "Searxng { base_url: \"https://me@searx.example/searx\" }"
        );
    }

    #[test]
    fn recency_names_round_trip() {
        for recency in [Recency::Day, Recency::Week, Recency::Month, Recency::Year] {
            assert_eq!(Recency::from_name(recency.name()), Some(recency));
        }
        assert_eq!(Recency::from_name(" WEEK "), Some(Recency::Week));
        assert_eq!(Recency::from_name("decade"), None);
    }

    #[test]
    fn retry_after_takes_seconds() {
        assert_eq!(parse_retry_after("30"), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
