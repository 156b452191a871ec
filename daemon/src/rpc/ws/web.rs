//! The web UI on the WebSocket listener: its page and assets (embedded in the binary, from
//! `clients/web/dist`) under `/s/LOGIN/`, the one-time login (`/login?code=…` from
//! `web/login`) that sets the session cookie for that path, and `/s/LOGIN/logout`.
//!
//! Every answer carries a strict Content-Security-Policy (scripts and styles from this origin
//! only, no inline code, connections to this origin's WebSocket only, no framing), `nosniff`,
//! no referrer. The page and assets are served only to a browser with a valid cookie
//! ([`crate::web_auth`]); others get a page that says how to log in. The `Host` check of
//! [`super::checks`] has already passed (DNS rebinding), and the WebSocket upgrade accepts the
//! cookie only from this origin's pages ([`super::checks::Checks::authorize`]).

use std::io::Write as _;
use std::sync::OnceLock;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use http_body_util::Full;
use sha2::{Digest as _, Sha256};

use crate::web_auth::{COOKIE_TTL_MS, WebAuth};

/// One embedded file, by its path below `/s/LOGIN/`.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const ASSETS: [Asset; 4] = [
    Asset {
        path: "",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../../../../clients/web/dist/index.html"),
    },
    Asset {
        path: "assets/app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../clients/web/dist/app.js"),
    },
    // Markdown, highlighting and diffs: loaded by app.js once the session list is shown.
    Asset {
        path: "assets/render.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../clients/web/dist/render.js"),
    },
    Asset {
        path: "assets/app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../../../clients/web/dist/app.css"),
    },
];

/// The name of the session cookie; its path is `/s/LOGIN/`.
pub const COOKIE: &str = "pi_web";

/// Each asset gzipped and its ETag, made once.
struct Prepared {
    gzipped: Vec<u8>,
    etag: HeaderValue,
}

fn prepared() -> &'static [Prepared] {
    static PREPARED: OnceLock<Vec<Prepared>> = OnceLock::new();
    PREPARED.get_or_init(|| {
        ASSETS
            .iter()
            .map(|asset| {
                let mut encoder =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
                // Writing to a Vec cannot fail; an empty body is served plain then.
                let gzipped = encoder
                    .write_all(asset.bytes)
                    .and_then(|()| encoder.finish())
                    .unwrap_or_default();
                let digest = Sha256::digest(asset.bytes);
                let tag: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                Prepared {
                    gzipped,
                    etag: HeaderValue::from_str(&format!("\"{tag}\""))
                        .unwrap_or(HeaderValue::from_static("\"0\"")),
                }
            })
            .collect()
    })
}

/// `/s/LOGIN/REST` as `(LOGIN, REST)`: a page of a login's UI.
pub fn login_of(path: &str) -> Option<(&str, &str)> {
    let (login, rest) = path.strip_prefix("/s/")?.split_once('/')?;
    (!login.is_empty() && login.len() <= 64 && login.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some((login, rest))
}

/// Whether `path` is a page of the web UI rather than the WebSocket (`/`, `/rpc`,
/// `/s/LOGIN/rpc` with an upgrade).
pub fn is_web_path(path: &str) -> bool {
    path == "/login"
        || path == "/"
        || (path.starts_with("/s/") && login_of(path).is_none_or(|(_, rest)| rest != "rpc"))
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then_some(value)
        })
}

const LOG_IN: &str = "<p>This browser is not logged in to the pi daemon.</p><p>Run \
                      <code>pictl web</code> on the daemon's machine: it opens a one-time login \
                      link (or prints it; <code>pictl --remote ssh://… web</code> from another \
                      machine).</p>";

/// Answers a GET of a web path (`is_web_path`); `host` is the checked `Host` header.
pub fn respond(
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    host: &str,
    auth: &WebAuth,
    now_ms: i64,
) -> Response<Full<Bytes>> {
    if path == "/login" {
        let code = query
            .into_iter()
            .flat_map(|query| query.split('&'))
            .find_map(|pair| pair.strip_prefix("code="))
            .unwrap_or_default();
        return match auth.redeem(code, now_ms) {
            Some(login) => {
                let home = format!("/s/{}/", login.login);
                let mut response = page(
                    StatusCode::OK,
                    host,
                    "Logged in",
                    &format!("<p>Logged in. <a href=\"{home}\">Open the sessions</a>.</p>"),
                );
                let cookie = format!(
                    "{COOKIE}={}; HttpOnly; SameSite=Strict; Path={home}; Max-Age={}",
                    login.cookie,
                    COOKIE_TTL_MS / 1000
                );
                if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                    response.headers_mut().insert(header::SET_COOKIE, cookie);
                }
                // A navigation started by this page (not a redirect of the link's) is
                // same-site, so the strict cookie goes with it wherever the link was opened.
                if let Ok(refresh) = HeaderValue::from_str(&format!("0; url={home}")) {
                    response.headers_mut().insert(header::REFRESH, refresh);
                }
                response
            }
            None => page(
                StatusCode::UNAUTHORIZED,
                host,
                "Login link not valid",
                "<p>This login link was used already or has expired: a link is good for one \
                 visit within two minutes.</p><p>Run <code>pictl web</code> for a new one.</p>",
            ),
        };
    }
    let Some((login, rest)) = login_of(path) else {
        return if path == "/" {
            page(
                StatusCode::UNAUTHORIZED,
                host,
                "Log in with pictl web",
                LOG_IN,
            )
        } else {
            page(
                StatusCode::NOT_FOUND,
                host,
                "Not found",
                "<p>Not found.</p>",
            )
        };
    };
    let value = cookie(headers, COOKIE);
    let logged_in = value.is_some_and(|value| auth.cookie_valid(value, login, now_ms));
    if rest == "logout" {
        if let Some(value) = value.filter(|_| logged_in) {
            auth.revoke(value, now_ms);
        }
        let mut response = page(
            StatusCode::OK,
            host,
            "Logged out",
            "<p>Logged out: this browser's login no longer works, here or anywhere it was \
             copied. Run <code>pictl web</code> to log in again.</p>",
        );
        if let Ok(cookie) = HeaderValue::from_str(&format!(
            "{COOKIE}=; HttpOnly; SameSite=Strict; Path=/s/{login}/; Max-Age=0"
        )) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        return response;
    }
    let Some(index) = ASSETS.iter().position(|asset| asset.path == rest) else {
        return page(
            StatusCode::NOT_FOUND,
            host,
            "Not found",
            "<p>Not found.</p>",
        );
    };
    if !logged_in {
        return page(
            StatusCode::UNAUTHORIZED,
            host,
            "Log in with pictl web",
            LOG_IN,
        );
    }
    asset(index, headers, host)
}

fn asset(index: usize, headers: &HeaderMap, host: &str) -> Response<Full<Bytes>> {
    let asset = &ASSETS[index];
    let prepared = &prepared()[index];
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tag| tag == prepared.etag);
    let gzip = !prepared.gzipped.is_empty()
        && headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(|value| value.split(',').any(|part| part.trim().starts_with("gzip")));
    let body = if not_modified {
        Bytes::new()
    } else if gzip {
        Bytes::from_static(prepared.gzipped.as_slice())
    } else {
        Bytes::from_static(asset.bytes)
    };
    let mut response = Response::new(Full::new(body));
    secure(&mut response, host);
    let headers = response.headers_mut();
    headers.insert(header::ETAG, prepared.etag.clone());
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if not_modified {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    if gzip {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// A small page without scripts (login, logout, refusals).
fn page(status: StatusCode, host: &str, title: &str, body: &str) -> Response<Full<Bytes>> {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} — pi \
         daemon</title><meta name=\"viewport\" content=\"width=device-width\"><link \
         rel=\"icon\" href=\"data:,\"></head><body>\
         <h1>{title}</h1>{body}</body></html>\n"
    );
    let mut response = Response::new(Full::new(Bytes::from(html)));
    *response.status_mut() = status;
    secure(&mut response, host);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The headers every web answer carries.
fn secure(response: &mut Response<Full<Bytes>>, host: &str) {
    let headers = response.headers_mut();
    let csp = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
         connect-src 'self' ws://{host}; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    );
    if let Ok(csp) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_read_from_their_paths_and_cookies_found_among_others() {
        assert_eq!(login_of("/s/ab12/"), Some(("ab12", "")));
        assert_eq!(
            login_of("/s/ab12/assets/app.js"),
            Some(("ab12", "assets/app.js"))
        );
        assert_eq!(login_of("/s/ab12"), None);
        assert_eq!(login_of("/s//x"), None);
        assert_eq!(login_of("/s/not-hex/"), None);
        assert!(is_web_path("/s/ab12/"));
        assert!(!is_web_path("/s/ab12/rpc"));
        assert!(is_web_path("/login") && is_web_path("/"));
        assert!(!is_web_path("/rpc") && !is_web_path("/healthz"));
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; pi_web=x.y"));
        headers.append(header::COOKIE, HeaderValue::from_static("b=z"));
        assert_eq!(cookie(&headers, "pi_web"), Some("x.y"));
        assert_eq!(cookie(&headers, "b"), Some("z"));
        assert_eq!(cookie(&headers, "pi_we"), None);
    }

    #[test]
    fn the_embedded_page_loads_no_inline_script_or_style() {
        let page = std::str::from_utf8(ASSETS[0].bytes).unwrap();
        assert!(page.contains("src=\"assets/app.js\""), "{page}");
        assert!(page.contains("href=\"assets/app.css\""), "{page}");
        let lower = page.to_ascii_lowercase();
        assert!(!lower.contains("<style"), "{page}");
        assert!(!lower.contains(" style="), "{page}");
        let handlers = lower.split(" on").skip(1).filter(|rest| {
            let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
            !name.is_empty() && rest[name.len()..].trim_start().starts_with('=')
        });
        assert_eq!(handlers.count(), 0, "no inline handlers: {page}");
        let scripts = lower.matches("<script").count();
        assert_eq!(
            scripts,
            lower.matches("<script type=\"module\" src=").count(),
            "{page}"
        );
        assert!(
            !lower.contains("http://") && !lower.contains("https://"),
            "{page}"
        );
    }
}
