//! What every HTTP request to the WebSocket listener must pass before anything else happens,
//! and the token it is compared with.
//!
//! In order: the `Host` header names loopback (`127.0.0.1`, `localhost` or `[::1]`, with or
//! without a port), which keeps out web pages that reach the port through DNS rebinding; an
//! `Origin` header, when present (every browser page sends one), is allow-listed in
//! `config.toml`; the token is presented (`Authorization: Bearer TOKEN` or `?token=TOKEN`),
//! compared in constant time; then the request is a WebSocket upgrade. Each refusal says what
//! to do.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use pi_protocol::error::echo;

/// Why a request is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No `Host` header.
    MissingHost,
    /// More than one `Host` header (RFC 9112 §3.2 answers 400).
    SeveralHosts,
    /// A `Host` that is not loopback (the value, as sent).
    Host(String),
    /// An `Origin` that is not allow-listed (the value, as sent).
    Origin(String),
    /// No token, or the wrong one.
    Token,
    /// Not a WebSocket upgrade (`Connection: Upgrade`, `Upgrade: websocket`).
    NotUpgrade,
    /// A WebSocket version other than 13.
    Version,
    /// No `Sec-WebSocket-Key`.
    MissingKey,
}

/// The checks of one listener: its token and allow-listed origins.
#[derive(Debug)]
pub struct Checks {
    token: Arc<str>,
    allowed_origins: Vec<String>,
}

impl Refusal {
    /// The status the refusal is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::MissingHost | Refusal::Host(_) | Refusal::Origin(_) => StatusCode::FORBIDDEN,
            Refusal::SeveralHosts => StatusCode::BAD_REQUEST,
            Refusal::Token => StatusCode::UNAUTHORIZED,
            Refusal::NotUpgrade | Refusal::Version => StatusCode::UPGRADE_REQUIRED,
            Refusal::MissingKey => StatusCode::BAD_REQUEST,
        }
    }

    /// The response body: what was wrong and what to do.
    pub fn message(&self) -> String {
        match self {
            Refusal::MissingHost => "a `Host` header is required; the daemon answers only \
                                     requests for 127.0.0.1, localhost or [::1]\n"
                .to_owned(),
            Refusal::SeveralHosts => {
                "send one `Host` header; this request had several\n".to_owned()
            }
            Refusal::Host(host) => format!(
                "the Host {:?} is not loopback; the daemon answers only requests for 127.0.0.1, \
                 localhost or [::1], which keeps out web pages that reach it through DNS \
                 rebinding\n",
                echo(host)
            ),
            Refusal::Origin(origin) => format!(
                "origin {:?} is not allowed; add it to `websocket.allowed_origins` in config.toml \
                 to let it connect\n",
                echo(origin)
            ),
            Refusal::Token => "a valid token is required: send `Authorization: Bearer TOKEN` or \
                               `?token=TOKEN`; the token is in the file `ws.token` in the \
                               daemon's runtime directory\n"
                .to_owned(),
            Refusal::NotUpgrade => "this endpoint speaks WebSocket only: send a GET with \
                                    `Connection: Upgrade` and `Upgrade: websocket`\n"
                .to_owned(),
            Refusal::Version => "this daemon speaks WebSocket version 13; send \
                                 `Sec-WebSocket-Version: 13`\n"
                .to_owned(),
            Refusal::MissingKey => {
                "a WebSocket upgrade needs a `Sec-WebSocket-Key` header\n".to_owned()
            }
        }
    }

    /// Headers the response carries besides the body's.
    pub fn headers(&self) -> &'static [(header::HeaderName, &'static str)] {
        match self {
            Refusal::Token => &[(header::WWW_AUTHENTICATE, "Bearer")],
            Refusal::NotUpgrade => &[(header::UPGRADE, "websocket")],
            Refusal::Version => &[(header::SEC_WEBSOCKET_VERSION, "13")],
            Refusal::MissingHost
            | Refusal::SeveralHosts
            | Refusal::Host(_)
            | Refusal::Origin(_)
            | Refusal::MissingKey => &[],
        }
    }

    /// Whether the refusal keeps someone out (logged, once per interval) rather than
    /// answering a client that speaks the wrong protocol.
    pub fn is_denial(&self) -> bool {
        match self {
            Refusal::MissingHost
            | Refusal::SeveralHosts
            | Refusal::Host(_)
            | Refusal::Origin(_)
            | Refusal::Token => true,
            Refusal::NotUpgrade | Refusal::Version | Refusal::MissingKey => false,
        }
    }

    /// The refused value, cut for logs (a `Host` or an `Origin`).
    pub fn value(&self) -> Option<String> {
        match self {
            Refusal::Host(value) | Refusal::Origin(value) => Some(echo(value).into_owned()),
            Refusal::MissingHost
            | Refusal::SeveralHosts
            | Refusal::Token
            | Refusal::NotUpgrade
            | Refusal::Version
            | Refusal::MissingKey => None,
        }
    }

    /// A short name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Refusal::MissingHost => "missing_host",
            Refusal::SeveralHosts => "several_hosts",
            Refusal::Host(_) => "host",
            Refusal::Origin(_) => "origin",
            Refusal::Token => "token",
            Refusal::NotUpgrade => "not_upgrade",
            Refusal::Version => "version",
            Refusal::MissingKey => "missing_key",
        }
    }
}

/// Checks the `Host` header (exactly one) and, for a request to an absolute URI, the URI's
/// authority (which takes the place of `Host`); every request, whatever its path, must pass.
pub fn host(headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let Some(value) = hosts.next() else {
        return Err(Refusal::MissingHost);
    };
    if hosts.next().is_some() {
        return Err(Refusal::SeveralHosts);
    }
    let text = String::from_utf8_lossy(value.as_bytes());
    if !is_loopback_host(&text) {
        return Err(Refusal::Host(text.into_owned()));
    }
    match uri.authority() {
        Some(authority) if !is_loopback_host(authority.as_str()) => {
            Err(Refusal::Host(authority.as_str().to_owned()))
        }
        _ => Ok(()),
    }
}

/// `127.0.0.1`, `localhost` or `[::1]` (any case), optionally followed by `:PORT`.
fn is_loopback_host(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    ["127.0.0.1", "localhost", "[::1]"].iter().any(|name| {
        lower.strip_prefix(name).is_some_and(|rest| {
            rest.is_empty()
                || rest.strip_prefix(':').is_some_and(|port| {
                    !port.is_empty()
                        && port.len() <= 5
                        && port.bytes().all(|byte| byte.is_ascii_digit())
                })
        })
    })
}

impl Checks {
    /// The checks against `token` and `allowed_origins`.
    pub fn new(token: Arc<str>, allowed_origins: Vec<String>) -> Checks {
        Checks {
            token,
            allowed_origins,
        }
    }

    /// Checks the `Origin` and the credentials of an upgrade request: the token, or, from a
    /// page of this origin (the web UI), the web UI's session cookie, which `cookie_valid`
    /// verifies.
    pub fn authorize(
        &self,
        headers: &HeaderMap,
        uri: &Uri,
        cookie_valid: impl FnOnce(&str) -> bool,
    ) -> Result<(), Refusal> {
        let host = host_of(headers);
        let mut same_origin = false;
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = String::from_utf8_lossy(origin.as_bytes());
            same_origin = origin.eq_ignore_ascii_case(&format!("http://{host}"));
            if !same_origin
                && !self
                    .allowed_origins
                    .iter()
                    .any(|allowed| *allowed == origin)
            {
                return Err(Refusal::Origin(origin.into_owned()));
            }
        }
        let presented = bearer_token(headers).or_else(|| query_token(uri));
        if presented.is_some_and(|token| constant_time_eq(token.as_bytes(), self.token.as_bytes()))
        {
            return Ok(());
        }
        let cookie = super::web::cookie(headers, super::web::COOKIE);
        if same_origin && cookie.is_some_and(cookie_valid) {
            Ok(())
        } else {
            Err(Refusal::Token)
        }
    }
}

/// The request's `Host` header as text (checked by [`host`] before anything else).
pub fn host_of(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default()
}

/// Checks that the request is a WebSocket (version 13) upgrade; returns the
/// `Sec-WebSocket-Accept` value to answer with.
pub fn accept_key(headers: &HeaderMap) -> Result<HeaderValue, Refusal> {
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|value| {
                value
                    .split(',')
                    .any(|part| part.trim().eq_ignore_ascii_case(token))
            })
        })
    };
    if !has_token(header::CONNECTION, "upgrade") || !has_token(header::UPGRADE, "websocket") {
        return Err(Refusal::NotUpgrade);
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|version| version.as_bytes() != b"13")
    {
        return Err(Refusal::Version);
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or(Refusal::MissingKey)?;
    HeaderValue::from_str(&tungstenite::handshake::derive_accept_key(key.as_bytes()))
        .map_err(|_| Refusal::MissingKey)
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(str::trim)
}

fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

use crate::web_auth::constant_time_eq;

/// Reads the token file, or creates it (0600) with 32 random bytes as hex.
pub fn load_or_create_token(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => std::fs::remove_file(path)
            .with_context(|| format!("cannot replace the empty {}", path.display()))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| anyhow::anyhow!("cannot generate a token: {error}"))?;
    let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "s3cret";

    /// Runs every check on a request to `/` (query `query`) with `headers`.
    fn check(query: &str, headers: &[(&str, &str)]) -> Result<HeaderValue, Refusal> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        let uri: Uri = format!("/{query}").parse().unwrap();
        let checks = Checks::new(TOKEN.into(), vec!["vscode-webview://pi".to_owned()]);
        host(&map, &uri)?;
        checks.authorize(&map, &uri, |_| false)?;
        accept_key(&map)
    }

    const UPGRADE: [(&str, &str); 4] = [
        ("connection", "keep-alive, Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut headers = UPGRADE.to_vec();
        headers.extend_from_slice(extra);
        headers
    }

    #[test]
    fn a_loopback_upgrade_with_the_token_passes() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:4242",
            "localhost",
            "LocalHost:1",
            "[::1]",
            "[::1]:65535",
        ] {
            let accept = check(
                "",
                &with(&[("host", host), ("authorization", "Bearer s3cret")]),
            );
            // RFC 6455's example key and answer.
            assert_eq!(
                accept,
                Ok(HeaderValue::from_static("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")),
                "{host}"
            );
        }
        assert!(check("?x=1&token=s3cret", &with(&[("host", "localhost")])).is_ok());
        assert!(
            check(
                "",
                &with(&[
                    ("host", "localhost"),
                    ("origin", "vscode-webview://pi"),
                    ("authorization", "Bearer s3cret")
                ])
            )
            .is_ok()
        );
    }

    #[test]
    fn several_hosts_or_a_foreign_absolute_uri_are_refused() {
        let refusal = check(
            "",
            &with(&[
                ("host", "127.0.0.1"),
                ("host", "evil.example"),
                ("authorization", "Bearer s3cret"),
            ]),
        )
        .unwrap_err();
        assert_eq!(refusal, Refusal::SeveralHosts);
        assert_eq!(refusal.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            refusal.message(),
            "send one `Host` header; this request had several\n"
        );
        let headers: HeaderMap = [(header::HOST, HeaderValue::from_static("localhost"))]
            .into_iter()
            .collect();
        let absolute: Uri = "http://evil.example/".parse().unwrap();
        assert_eq!(
            host(&headers, &absolute),
            Err(Refusal::Host("evil.example".to_owned()))
        );
        let loopback: Uri = "http://127.0.0.1:4242/".parse().unwrap();
        assert_eq!(host(&headers, &loopback), Ok(()));
    }

    #[test]
    fn other_hosts_are_refused_even_with_the_token() {
        for host in [
            "evil.example",
            "evil.example:4242",
            "127.0.0.1.evil.example",
            "localhost.",
            "localhost:",
            "localhost:80x",
            "127.0.0.2",
            "[::2]",
            "0.0.0.0",
        ] {
            let refusal = check(
                "",
                &with(&[("host", host), ("authorization", "Bearer s3cret")]),
            )
            .unwrap_err();
            assert_eq!(refusal, Refusal::Host(host.to_owned()));
            assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        }
        let refusal = Refusal::Host("evil.example".to_owned());
        assert_eq!(
            refusal.message(),
            "the Host \"evil.example\" is not loopback; the daemon answers only requests for \
             127.0.0.1, localhost or [::1], which keeps out web pages that reach it through DNS \
             rebinding\n"
        );
        let refusal = check("", &with(&[("authorization", "Bearer s3cret")])).unwrap_err();
        assert_eq!(refusal, Refusal::MissingHost);
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            refusal.message(),
            "a `Host` header is required; the daemon answers only requests for 127.0.0.1, \
             localhost or [::1]\n"
        );
    }

    #[test]
    fn origins_and_tokens_are_checked_in_that_order() {
        let refusal = check(
            "",
            &with(&[("host", "localhost"), ("origin", "https://evil.example")]),
        )
        .unwrap_err();
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            refusal.message(),
            "origin \"https://evil.example\" is not allowed; add it to \
             `websocket.allowed_origins` in config.toml to let it connect\n"
        );
        for (query, authorization) in [
            ("", None),
            ("", Some("Bearer wrong")),
            ("", Some("s3cret")),
            ("?token=s3cre", None),
        ] {
            let mut headers = with(&[("host", "localhost")]);
            headers.extend(authorization.map(|value| ("authorization", value)));
            let refusal = check(query, &headers).unwrap_err();
            assert_eq!(refusal, Refusal::Token, "{query} {authorization:?}");
        }
        let refusal = Refusal::Token;
        assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            refusal.message(),
            "a valid token is required: send `Authorization: Bearer TOKEN` or `?token=TOKEN`; \
             the token is in the file `ws.token` in the daemon's runtime directory\n"
        );
        assert!(refusal.is_denial());
    }

    #[test]
    fn requests_that_are_not_websocket_upgrades_are_refused() {
        let authorized = [("host", "localhost"), ("authorization", "Bearer s3cret")];
        let refusal = check("", &authorized).unwrap_err();
        assert_eq!(refusal, Refusal::NotUpgrade);
        assert_eq!(refusal.status(), StatusCode::UPGRADE_REQUIRED);
        assert_eq!(
            refusal.message(),
            "this endpoint speaks WebSocket only: send a GET with `Connection: Upgrade` and \
             `Upgrade: websocket`\n"
        );
        assert!(!refusal.is_denial());

        let mut headers = authorized.to_vec();
        headers.extend_from_slice(&UPGRADE[..2]);
        headers.push(("sec-websocket-version", "8"));
        let refusal = check("", &headers).unwrap_err();
        assert_eq!(refusal, Refusal::Version);
        assert_eq!(
            refusal.message(),
            "this daemon speaks WebSocket version 13; send `Sec-WebSocket-Version: 13`\n"
        );

        let mut headers = authorized.to_vec();
        headers.extend_from_slice(&UPGRADE[..3]);
        let refusal = check("", &headers).unwrap_err();
        assert_eq!(refusal, Refusal::MissingKey);
        assert_eq!(refusal.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            refusal.message(),
            "a WebSocket upgrade needs a `Sec-WebSocket-Key` header\n"
        );
    }

    #[test]
    fn echoed_headers_are_cut() {
        let long = "h".repeat(100_000);
        assert!(Refusal::Host(long.clone()).message().len() < 400);
        assert!(Refusal::Origin(long).message().len() < 400);
    }

    #[test]
    fn token_is_created_private_and_reused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ws.token");
        let first = load_or_create_token(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(load_or_create_token(&path).unwrap(), first);
    }
}
