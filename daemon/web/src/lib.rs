//! pi-web: the web as the daemon's tools read it — a page fetched as readable text (`read
//! https://…`, `fetch`) and a web search through one of four providers (`web_search`).
//!
//! [`WebClient::fetch`] gets an http(s) URL, following redirects itself (each one noted),
//! reading at most [`WebConfig::max_bytes`] (a larger body is a [`WebError::TooLarge`], not a
//! truncated page), and converts the body by its content type: HTML to Markdown, JSON
//! pretty-printed, PDF to its text, other text as it is; binary content is an error. Pages
//! are cached by URL for a few minutes, so a tool that pages through a long one does not
//! fetch it again. [`WebClient::search`] asks Brave, Exa, Tavily or a SearXNG instance
//! ([`SearchProvider`]) and returns hits in one shape.
//!
//! Every failure is a [`WebError`] whose message says what went wrong and what to do. API
//! keys never appear in errors, logs or `Debug` output. Every wait is bounded by the
//! configured timeout and by the caller's cancellation token.

mod cache;
mod client;
mod convert;
mod error;
mod search;

use std::time::Duration;

pub use client::WebClient;
pub use convert::html_to_markdown;
pub use error::WebError;
pub use search::{ApiKey, Recency, SearchHit, SearchProvider, SearchQuery};

/// How the client fetches: its limits and its name.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// The largest body read, in bytes; a larger one is `WebError::TooLarge` (default
    /// 10 MiB).
    pub max_bytes: u64,
    /// The time one fetch or search may take, redirects and body included (default 30 s).
    pub timeout: Duration,
    /// How many redirects a fetch follows (default 10).
    pub max_redirects: usize,
    /// The `User-Agent` header sent.
    pub user_agent: String,
    /// How many pages the cache keeps (default 64; 0 turns the cache off).
    pub cache_entries: usize,
    /// How much page text the cache keeps in all, in bytes (default 64 MiB).
    pub cache_bytes: usize,
    /// How long a cached page is served before it is fetched again (default 5 minutes).
    pub cache_ttl: Duration,
}

impl Default for WebConfig {
    fn default() -> WebConfig {
        WebConfig {
            max_bytes: 10 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 10,
            user_agent: concat!(
                "Mozilla/5.0 (compatible; pi-daemon/",
                env!("CARGO_PKG_VERSION"),
                "; +https://github.com/pi-daemon/pi-daemon)"
            )
            .to_owned(),
            cache_entries: 64,
            cache_bytes: 64 * 1024 * 1024,
            cache_ttl: Duration::from_secs(5 * 60),
        }
    }
}

/// A fetched page, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The URL the text came from, after redirects.
    pub url: String,
    /// The URL asked for, normalised (`HTTP://Example.com#top` is `http://example.com/`).
    pub requested_url: String,
    /// The final response's HTTP status (a 2xx; others are `WebError::HttpStatus`).
    pub status: u16,
    /// The content type the body was read as: the served one without its parameters
    /// (`text/html`), or the sniffed one when the server sent none.
    pub content_type: String,
    /// The readable text: Markdown for HTML, pretty JSON, a PDF's text, or the text served.
    pub text: String,
    /// What happened on the way, one sentence each: redirects followed, the conversion, a
    /// charset decoded, a content type guessed.
    pub notes: Vec<String>,
    /// The size of the body received, in bytes.
    pub bytes: u64,
}
