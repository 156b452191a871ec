//! `WebError`, every way fetching a page or searching the web fails, and the classification
//! of transport failures (reqwest's errors and what they wrap) into those variants.
//!
//! Every message says what went wrong and what to do about it, names the URL (without a
//! password it may carry) or the host, and never carries an API key: search keys travel in
//! headers, and a provider's error body is cleaned of the key before it is quoted.

use std::error::Error as StdError;
use std::time::Duration;

use url::Url;

/// Why a fetch or a search failed. Each variant's doc says what the caller should do; the
/// message (`Display`) is written for the model and the user and can be shown as it is.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The text is not a URL. Show the message: the caller should give a full URL.
    #[error(
        "\"{input}\" is not a valid URL ({reason}); give a full URL such as https://example.com/page"
    )]
    InvalidUrl {
        /// The text given, as it was.
        input: String,
        /// What the URL parser found wrong.
        reason: String,
    },
    /// The URL is not http or https. Show the message; nothing else can be fetched.
    #[error("{url} uses the {scheme}: scheme; only http:// and https:// URLs can be fetched")]
    UnsupportedScheme {
        /// The URL.
        url: String,
        /// Its scheme, without the colon.
        scheme: String,
    },
    /// The host name did not resolve. Show the message: the URL is probably misspelt.
    #[error(
        "could not resolve the host {host}; check the spelling of the URL (or this machine's network)"
    )]
    Dns {
        /// The host name that did not resolve.
        host: String,
        /// The resolver's words (for logs; they vary between systems).
        detail: String,
    },
    /// Nothing listens at the address. Show the message: the URL or its port is wrong, or
    /// the server is down.
    #[error(
        "{host}:{port} refused the connection; nothing is listening there, check the URL and its port"
    )]
    ConnectionRefused {
        /// The host, as the URL names it.
        host: String,
        /// The port connected to.
        port: u16,
    },
    /// The connection failed another way (unreachable network, reset). Show the message;
    /// retrying later may help.
    #[error("could not connect to {url}: {detail}")]
    Connect {
        /// The URL.
        url: String,
        /// What failed, from the innermost cause.
        detail: String,
    },
    /// The TLS handshake failed, usually on the server's certificate. Show the message: the
    /// site cannot be read securely.
    #[error("the secure connection to {host} failed: {problem}; the site cannot be read securely")]
    Tls {
        /// The host.
        host: String,
        /// The problem, in words (`the certificate has expired`, …).
        problem: String,
    },
    /// No complete answer within the configured time. Show the message; retrying later may
    /// help.
    #[error("{url} did not answer within {}; the site is slow or unreachable, try again later", seconds(*.after))]
    Timeout {
        /// The URL.
        url: String,
        /// The time allowed.
        after: Duration,
    },
    /// The server answered with an error status. Show the message; a 404 means the page is
    /// not there.
    #[error("{url} answered HTTP {status} {reason}{}", quoted_body(.body_start))]
    HttpStatus {
        /// The URL that answered (after redirects).
        url: String,
        /// The status code.
        status: u16,
        /// Its reason phrase (`Not Found`).
        reason: String,
        /// The start of the body, as text, on one line (may be empty).
        body_start: String,
    },
    /// More redirects than allowed. Show the message.
    #[error(
        "{url} redirected more than {limit} times; the chain of redirects does not end, fetch its last URL directly if it is right"
    )]
    TooManyRedirects {
        /// The URL first asked for.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// A redirect led back to a URL already visited. Show the message: the page cannot be
    /// reached this way (it may need cookies or a browser).
    #[error(
        "{url} redirects in a loop (back to {again}); the page cannot be fetched without a browser"
    )]
    RedirectLoop {
        /// The URL first asked for.
        url: String,
        /// The URL the chain came back to.
        again: String,
    },
    /// The body is larger than the configured limit; nothing of it is returned. Show the
    /// message: a smaller page (or a raised limit) is needed.
    #[error("{url} is larger than the {} limit{}; nothing was kept, fetch a smaller page", size_text(*.limit), declared_size(*.declared))]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit in bytes.
        limit: u64,
        /// The size the server declared (`Content-Length`), when it did.
        declared: Option<u64>,
    },
    /// The content is binary of a kind that cannot be shown as text. Show the message.
    #[error("{url} is {content_type}, which cannot be read as text")]
    Unreadable {
        /// The URL.
        url: String,
        /// Its content type.
        content_type: String,
    },
    /// The content could not be converted (a broken PDF, say). Show the message.
    #[error("could not read {url} as {format}: {detail}")]
    Conversion {
        /// The URL.
        url: String,
        /// The format it was read as (`PDF`, `HTML`).
        format: &'static str,
        /// What went wrong.
        detail: String,
    },
    /// The caller cancelled. Nothing to show beyond the fact.
    #[error("the request to {url} was cancelled")]
    Cancelled {
        /// The URL or the provider's endpoint.
        url: String,
    },
    /// The request failed another way. Show the message.
    #[error("the request to {url} failed: {detail}")]
    Request {
        /// The URL.
        url: String,
        /// The chain of causes.
        detail: String,
    },
    /// The HTTP client could not be built (no TLS roots, say). The daemon cannot fetch;
    /// report it.
    #[error("could not set up the HTTP client for web tools: {detail}")]
    Setup {
        /// What failed.
        detail: String,
    },
    /// No search provider is configured. Show the message: the user sets one of the keys.
    #[error(
        "web search needs a provider: set BRAVE_API_KEY, EXA_API_KEY or TAVILY_API_KEY, or SEARXNG_URL to a SearXNG instance, in the session's environment (the shell you run pictl from), or use a model whose provider searches itself (Anthropic's Messages API, OpenAI's Responses API)"
    )]
    NoSearchProvider,
    /// A provider name that is not known. Show the message.
    #[error(
        "unknown search provider \"{name}\"; use one of brave, exa, tavily, searxng, anthropic, openai"
    )]
    UnknownSearchProvider {
        /// The name given.
        name: String,
    },
    /// The chosen provider's key (or URL) is not set. Show the message.
    #[error(
        "web search with {provider} needs {variable}; set it in the session's environment (the shell you run pictl from)"
    )]
    MissingSearchKey {
        /// The provider's name (`Brave Search`).
        provider: &'static str,
        /// The environment variable to set.
        variable: &'static str,
    },
    /// The query is empty. Show the message.
    #[error("the search query is empty; give words to search for")]
    EmptyQuery,
    /// The key holds characters no HTTP header can carry. Show the message: the user fixes
    /// the variable.
    #[error(
        "{variable} holds characters an HTTP header cannot carry (a line break?); set it to the key alone"
    )]
    InvalidSearchKey {
        /// The environment variable the key comes from.
        variable: &'static str,
    },
    /// The provider refused the key (401 or 403). Show the message: the user replaces it.
    #[error("{provider} refused the API key (HTTP {status}); check {variable}")]
    SearchKeyRefused {
        /// The provider's name.
        provider: &'static str,
        /// 401 or 403.
        status: u16,
        /// The environment variable the key comes from.
        variable: &'static str,
    },
    /// The SearXNG instance refused the request (403 usually means its JSON output is off).
    /// Show the message.
    #[error(
        "the SearXNG instance at {url} refused the search (HTTP {status}); enable the json format under search.formats in its settings.yml, or check SEARXNG_URL"
    )]
    SearxngRefused {
        /// The instance's search endpoint.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The provider is rate-limiting (429). Wait as long as it says, then retry.
    #[error("{provider} is rate-limiting searches (HTTP 429); {}", retry_text(*.retry_after))]
    SearchRateLimited {
        /// The provider's name.
        provider: &'static str,
        /// How long it asked to wait (`Retry-After`), when it said.
        retry_after: Option<Duration>,
    },
    /// The provider answered with another error status. Show the message.
    #[error("{provider} answered HTTP {status} {reason}{}", quoted_body(.body_start))]
    SearchFailed {
        /// The provider's name.
        provider: &'static str,
        /// The status code.
        status: u16,
        /// Its reason phrase.
        reason: String,
        /// The start of the body, on one line, without the key (may be empty).
        body_start: String,
    },
    /// The provider's answer was not the JSON expected. Show the message; the provider's
    /// API may have changed.
    #[error("{provider} sent a response that is not a search result ({detail})")]
    SearchResponse {
        /// The provider's name.
        provider: &'static str,
        /// What did not parse.
        detail: String,
    },
}

/// `30 s`, `0.2 s`.
fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{} s", duration.as_secs_f64())
    }
}

/// `: "the body"` after a status line, or nothing for an empty body.
fn quoted_body(body_start: &str) -> String {
    if body_start.is_empty() {
        String::new()
    } else {
        format!(": \"{body_start}\"")
    }
}

/// `10 MiB`, `1.5 KiB`, `512 bytes`.
pub(crate) fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let whole = bytes / unit;
            let tenths = (bytes % unit) * 10 / unit;
            return if tenths == 0 {
                format!("{whole} {name}")
            } else {
                format!("{whole}.{tenths} {name}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// ` (it declares 12 MiB)` for a declared size.
fn declared_size(declared: Option<u64>) -> String {
    declared.map_or_else(String::new, |bytes| {
        format!(" (it declares {})", size_text(bytes))
    })
}

/// What to do about a rate limit.
fn retry_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(after) => format!("retry in {}", seconds(after)),
        None => "wait a minute and retry".to_owned(),
    }
}

/// A URL as messages show it: without a password (`https://user@host/…`).
pub(crate) fn shown_url(url: &Url) -> String {
    if url.password().is_none() {
        return url.to_string();
    }
    let mut shown = url.clone();
    // Setting a password on an http(s) URL that already has one cannot fail.
    let _ = shown.set_password(None);
    shown.to_string()
}

/// A resolver failure, made by the client's own resolver so that it can be told from other
/// connection failures in a reqwest error's chain of causes.
#[derive(Debug, thiserror::Error)]
#[error("{detail}")]
pub(crate) struct DnsFailure {
    /// The name that did not resolve.
    pub(crate) host: String,
    /// The resolver's words.
    pub(crate) detail: String,
}

/// Classifies a reqwest error met while talking to `url`.
pub(crate) fn classify(error: &reqwest::Error, url: &Url, timeout: Duration) -> WebError {
    if error.is_timeout() {
        return WebError::Timeout {
            url: shown_url(url),
            after: timeout,
        };
    }
    classify_chain(error, error.is_connect(), url, timeout)
}

/// Classifies an error by the causes it wraps: a `DnsFailure`, a rustls error, an I/O error
/// of a telling kind. `connect` says the error happened while connecting.
pub(crate) fn classify_chain(
    error: &(dyn StdError + 'static),
    connect: bool,
    url: &Url,
    timeout: Duration,
) -> WebError {
    let host = url.host_str().unwrap_or_default().to_owned();
    let causes = causes(error);
    for cause in &causes {
        if let Some(dns) = cause.downcast_ref::<DnsFailure>() {
            return WebError::Dns {
                host: dns.host.clone(),
                detail: dns.detail.clone(),
            };
        }
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return WebError::Tls {
                problem: tls_problem(tls, &host),
                host,
            };
        }
    }
    for cause in &causes {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return WebError::ConnectionRefused {
                        port: url.port_or_known_default().unwrap_or_default(),
                        host,
                    };
                }
                std::io::ErrorKind::TimedOut => {
                    return WebError::Timeout {
                        url: shown_url(url),
                        after: timeout,
                    };
                }
                _ => {}
            }
        }
    }
    let detail = chain_text(&causes);
    if connect {
        let innermost = causes
            .last()
            .map_or_else(|| detail.clone(), ToString::to_string);
        WebError::Connect {
            url: shown_url(url),
            detail: innermost,
        }
    } else {
        WebError::Request {
            url: shown_url(url),
            detail,
        }
    }
}

/// The error and its causes, outermost first. An I/O error hides the error it wraps from
/// `source()` (it returns the wrapped error's source), so the wrapped one is added by hand.
fn causes<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut causes = Vec::new();
    let mut next = Some(error);
    // A chain is short; the bound only guards against a cyclic `source()`.
    while let Some(cause) = next
        && causes.len() < 32
    {
        causes.push(cause);
        next = match cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => cause.source(),
        };
    }
    causes
}

/// The causes' messages joined with `: `, each once (reqwest and hyper repeat their causes).
fn chain_text(causes: &[&(dyn StdError + 'static)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in causes {
        let text = cause.to_string();
        if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// A rustls error in words, naming the certificate problem.
fn tls_problem(error: &rustls::Error, host: &str) -> String {
    use rustls::CertificateError;
    match error {
        rustls::Error::InvalidCertificate(certificate) => match certificate {
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the certificate has expired".to_owned()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the certificate is not valid yet (or this machine's clock is wrong)".to_owned()
            }
            CertificateError::UnknownIssuer => {
                "the certificate is issued by an unknown authority (self-signed, or a missing intermediate certificate)".to_owned()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!("the certificate is not valid for {host}")
            }
            CertificateError::Revoked => "the certificate has been revoked".to_owned(),
            CertificateError::BadSignature | CertificateError::BadEncoding => {
                "the certificate is malformed or badly signed".to_owned()
            }
            // webpki's own errors (shown by their names) come through `Other`.
            CertificateError::Other(other) => match other.to_string().as_str() {
                "CaUsedAsEndEntity" => {
                    "the certificate is self-signed (an authority's certificate used by the site itself)".to_owned()
                }
                text => format!("the certificate was rejected ({text})"),
            },
            other => format!("the certificate was rejected ({other})"),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.test:8443/page").unwrap()
    }

    /// An outer error whose source is `inner`, as reqwest and hyper wrap their causes.
    #[derive(Debug, thiserror::Error)]
    #[error("error sending request")]
    struct Outer(#[source] Box<dyn StdError + Send + Sync>);

    fn classify_io(inner: std::io::Error) -> WebError {
        let error = Outer(Box::new(inner));
        classify_chain(&error, true, &url(), Duration::from_secs(30))
    }

    #[test]
    fn tls_problems_are_named_through_an_io_error() {
        let cases = [
            (
                rustls::CertificateError::Expired,
                "the secure connection to example.test failed: the certificate has expired; the site cannot be read securely",
            ),
            (
                rustls::CertificateError::UnknownIssuer,
                "the secure connection to example.test failed: the certificate is issued by an unknown authority (self-signed, or a missing intermediate certificate); the site cannot be read securely",
            ),
            (
                rustls::CertificateError::NotValidForName,
                "the secure connection to example.test failed: the certificate is not valid for example.test; the site cannot be read securely",
            ),
        ];
        for (certificate, expected) in cases {
            let io = std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                rustls::Error::InvalidCertificate(certificate),
            );
            assert_eq!(classify_io(io).to_string(), expected);
        }
    }

    #[test]
    fn io_kinds_are_classified() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            classify_io(refused).to_string(),
            "example.test:8443 refused the connection; nothing is listening there, check the URL and its port"
        );
        let timed_out = std::io::Error::from(std::io::ErrorKind::TimedOut);
        assert_eq!(
            classify_io(timed_out).to_string(),
            "https://example.test:8443/page did not answer within 30 s; the site is slow or unreachable, try again later"
        );
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset");
        assert_eq!(
            classify_io(reset).to_string(),
            "could not connect to https://example.test:8443/page: connection reset"
        );
    }

    #[test]
    fn a_dns_failure_names_the_host() {
        let error = Outer(Box::new(DnsFailure {
            host: "nowhere.invalid".to_owned(),
            detail: "no such host".to_owned(),
        }));
        let classified = classify_chain(&error, true, &url(), Duration::from_secs(1));
        assert_eq!(
            classified.to_string(),
            "could not resolve the host nowhere.invalid; check the spelling of the URL (or this machine's network)"
        );
    }

    #[test]
    fn other_failures_keep_their_chain_once() {
        let error = Outer(Box::new(std::io::Error::other("broken pipe")));
        let classified = classify_chain(&error, false, &url(), Duration::from_secs(1));
        assert_eq!(
            classified.to_string(),
            "the request to https://example.test:8443/page failed: error sending request: broken pipe"
        );
    }

    #[test]
    fn sizes_and_durations_read_well() {
        assert_eq!(size_text(10 * 1024 * 1024), "10 MiB");
        assert_eq!(size_text(1536), "1.5 KiB");
        assert_eq!(size_text(512), "512 bytes");
        assert_eq!(seconds(Duration::from_millis(200)), "0.2 s");
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
    }

    #[test]
    fn passwords_are_not_shown() {
        let url = Url::parse("https://user:secret@search.example/searx").unwrap();
        assert_eq!(shown_url(&url), "https://user@search.example/searx");
    }
}
