//! `WebClient`: one HTTP client for the web tools, and `fetch`, a page as text.
//!
//! The client follows redirects itself (reqwest's policy is off) so that each one is noted,
//! a loop is named as one, and a redirect to another scheme is refused. It resolves names
//! through its own resolver, so that a failed lookup is told from other connection failures
//! by type rather than by message. A fetch is bounded by the configured time as a whole
//! (connection, redirects, body) and by the caller's cancellation; the body by `max_bytes`.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::cache::PageCache;
use crate::error::{DnsFailure, classify, shown_url};
use crate::{Page, WebConfig, WebError};

/// Fetches pages and searches the web. Cheap to share behind an `Arc`; every method takes
/// `&self`.
pub struct WebClient {
    /// reqwest's client: redirects off, names resolved by `Resolver`, connections pooled.
    http: reqwest::Client,
    config: WebConfig,
    /// Pages by the URL asked for. A sync mutex: held for one lookup or one insert, never
    /// across an `.await`.
    cache: Mutex<PageCache>,
}

impl WebClient {
    /// A client with `config`'s limits. Fails only when the TLS setup fails (no root
    /// certificates on the machine, say).
    pub fn new(config: WebConfig) -> Result<WebClient, WebError> {
        // Another part of the process may have installed a provider already; either way
        // one is installed afterwards.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(config.user_agent.clone())
            .dns_resolver(Resolver)
            .connect_timeout(config.timeout)
            .pool_max_idle_per_host(IDLE_CONNECTIONS_PER_HOST)
            .pool_idle_timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|error| WebError::Setup {
                detail: error.to_string(),
            })?;
        let cache = PageCache::new(config.cache_entries, config.cache_bytes, config.cache_ttl);
        Ok(WebClient {
            http,
            config,
            cache: Mutex::new(cache),
        })
    }

    /// The page at `url` as text, from the cache when it was fetched less than
    /// `cache_ttl` ago. See the crate's documentation for what is done to it; every failure
    /// is a `WebError` whose message can be shown as it is.
    #[tracing::instrument(level = "debug", skip_all, fields(url = %url), err(level = "debug"))]
    pub async fn fetch(
        &self,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<Arc<Page>, WebError> {
        let mut requested = parse_http_url(url)?;
        // A fragment names a place in the page, not another page: `…/doc#usage` is `…/doc`.
        requested.set_fragment(None);
        if cancel.is_cancelled() {
            return Err(WebError::Cancelled {
                url: shown_url(&requested),
            });
        }
        let key = requested.to_string();
        if let Some(page) = self.cache().get(&key, Instant::now()) {
            tracing::debug!("page served from the cache");
            return Ok(page);
        }
        let download = self
            .bounded(&requested, cancel, self.download(&requested))
            .await?;
        let Download {
            url: final_url,
            status,
            content_type,
            body,
            mut notes,
        } = download;
        let converting_url = final_url.clone();
        let conversion = tokio::task::spawn_blocking(move || {
            let converted =
                crate::convert::convert(&converting_url, content_type.as_deref(), &body);
            (converted, body.len())
        });
        let (converted, bytes) = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(WebError::Cancelled { url: shown_url(&requested) });
            }
            joined = conversion => joined.map_err(|error| WebError::Conversion {
                url: shown_url(&final_url),
                format: "text",
                detail: if error.is_panic() {
                    "the converter failed on this file".to_owned()
                } else {
                    error.to_string()
                },
            })?,
        };
        let converted = converted?;
        notes.extend(converted.notes);
        let page = Arc::new(Page {
            url: shown_url(&final_url),
            requested_url: shown_url(&requested),
            status,
            content_type: converted.content_type,
            text: converted.text,
            notes,
            bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
        });
        tracing::debug!(status, bytes, "page fetched");
        self.cache().insert(key, page.clone(), Instant::now());
        Ok(page)
    }

    /// The client's configuration.
    pub fn config(&self) -> &WebConfig {
        &self.config
    }

    /// reqwest's client, for the search providers.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// `work` bounded by the configured time and by `cancel`; `url` names it in the errors.
    pub(crate) async fn bounded<T>(
        &self,
        url: &Url,
        cancel: &CancellationToken,
        work: impl Future<Output = Result<T, WebError>>,
    ) -> Result<T, WebError> {
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(WebError::Cancelled { url: shown_url(url) }),
            outcome = tokio::time::timeout(self.config.timeout, work) => {
                outcome.unwrap_or_else(|_| Err(WebError::Timeout {
                    url: shown_url(url),
                    after: self.config.timeout,
                }))
            }
        }
    }

    /// Sends `request` for `url`, classifying a failure.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<reqwest::Response, WebError> {
        request
            .send()
            .await
            .map_err(|error| classify(&error, url, self.config.timeout))
    }

    /// At most `limit` bytes of `response`'s body, and whether there was more.
    pub(crate) async fn read_body(
        &self,
        mut response: reqwest::Response,
        limit: u64,
        url: &Url,
    ) -> Result<(Vec<u8>, bool), WebError> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let expected = response
            .content_length()
            .and_then(|length| usize::try_from(length).ok())
            .unwrap_or(0);
        let mut body = Vec::with_capacity(expected.min(limit).min(INITIAL_BODY_CAPACITY));
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| classify(&error, url, self.config.timeout))?
        {
            let room = limit - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }

    /// The cache, taken over if a panic poisoned it (every critical section is one whole
    /// lookup or insert).
    fn cache(&self) -> MutexGuard<'_, PageCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The body of `requested`, after redirects.
    async fn download(&self, requested: &Url) -> Result<Download, WebError> {
        let mut current = requested.clone();
        // Invariant: at most `max_redirects + 1` URLs, the chain so far.
        let mut visited = vec![requested.clone()];
        let mut notes = Vec::new();
        loop {
            let request = self.http.get(current.clone()).header(ACCEPT, ACCEPT_VALUE);
            let response = self.send(request, &current).await?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(LOCATION)
            {
                let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
                let next = current
                    .join(&location)
                    .map_err(|error| WebError::InvalidUrl {
                        reason: format!("{} redirected to it: {error}", shown_url(&current)),
                        input: location.clone(),
                    })?;
                check_scheme(&next)?;
                if visited.contains(&next) {
                    return Err(WebError::RedirectLoop {
                        url: shown_url(requested),
                        again: shown_url(&next),
                    });
                }
                if visited.len() > self.config.max_redirects {
                    return Err(WebError::TooManyRedirects {
                        url: shown_url(requested),
                        limit: self.config.max_redirects,
                    });
                }
                notes.push(format!(
                    "Redirected ({}) from {} to {}.",
                    status.as_u16(),
                    shown_url(&current),
                    shown_url(&next)
                ));
                tracing::debug!(status = status.as_u16(), to = %shown_url(&next), "redirected");
                visited.push(next.clone());
                current = next;
                continue;
            }
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            if !status.is_success() {
                let (body, _) = self.read_body(response, ERROR_BODY_LIMIT, &current).await?;
                return Err(WebError::HttpStatus {
                    url: shown_url(&current),
                    status: status.as_u16(),
                    reason: status.canonical_reason().unwrap_or_default().to_owned(),
                    body_start: crate::convert::excerpt(content_type.as_deref(), &body),
                });
            }
            if let Some(length) = response.content_length()
                && length > self.config.max_bytes
            {
                return Err(WebError::TooLarge {
                    url: shown_url(&current),
                    limit: self.config.max_bytes,
                    declared: Some(length),
                });
            }
            let (body, more) = self
                .read_body(response, self.config.max_bytes, &current)
                .await?;
            if more {
                return Err(WebError::TooLarge {
                    url: shown_url(&current),
                    limit: self.config.max_bytes,
                    declared: None,
                });
            }
            return Ok(Download {
                url: current,
                status: status.as_u16(),
                content_type,
                body,
                notes,
            });
        }
    }
}

impl std::fmt::Debug for WebClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebClient")
            .field("config", &self.config)
            .field("cached_pages", &self.cache().len())
            .finish_non_exhaustive()
    }
}

/// `input` as an http(s) URL.
pub(crate) fn parse_http_url(input: &str) -> Result<Url, WebError> {
    let url = Url::parse(input.trim()).map_err(|error| WebError::InvalidUrl {
        input: input.to_owned(),
        reason: error.to_string(),
    })?;
    check_scheme(&url)?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(WebError::InvalidUrl {
            input: input.to_owned(),
            reason: "it has no host".to_owned(),
        });
    }
    Ok(url)
}

/// The `Accept` header of a fetch: Markdown first (some sites serve it to agents), then
/// HTML, then anything.
const ACCEPT_VALUE: &str = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, */*;q=0.8";

/// How much of an error response's body is read for its excerpt.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;

/// The most a body's buffer reserves before its bytes arrive.
const INITIAL_BODY_CAPACITY: usize = 1024 * 1024;

/// Idle connections kept per host for reuse.
const IDLE_CONNECTIONS_PER_HOST: usize = 4;

/// A response's body and what led to it.
struct Download {
    url: Url,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
    notes: Vec<String>,
}

/// Only http and https.
fn check_scheme(url: &Url) -> Result<(), WebError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        scheme => Err(WebError::UnsupportedScheme {
            url: shown_url(url),
            scheme: scheme.to_owned(),
        }),
    }
}

/// The system's resolver (getaddrinfo on the blocking pool, as reqwest's own), failing with
/// a `DnsFailure` that `classify` finds by type.
struct Resolver;

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let failure = |detail: String| -> Box<dyn std::error::Error + Send + Sync> {
                Box::new(DnsFailure {
                    host: host.clone(),
                    detail,
                })
            };
            match tokio::net::lookup_host((host.as_str(), 0)).await {
                Ok(addresses) => {
                    let addresses: Vec<SocketAddr> = addresses.collect();
                    if addresses.is_empty() {
                        return Err(failure("it has no addresses".to_owned()));
                    }
                    let addresses: reqwest::dns::Addrs = Box::new(addresses.into_iter());
                    Ok(addresses)
                }
                Err(error) => Err(failure(error.to_string())),
            }
        })
    }
}
