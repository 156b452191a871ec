//! Logins of the web UI: one-time codes that `web/login` hands out (`pictl web`) and the
//! session cookies a browser gets in exchange.
//!
//! A code is 32 random bytes, good for one visit within [`CODE_TTL_MS`]; at most
//! [`MAX_CODES`] wait at once (the oldest goes). A cookie is `v1.EXPIRY.NONCE.MAC`, the MAC an
//! HMAC-SHA256 under the WebSocket token, so it stays valid across daemon restarts (the token
//! file outlives them) and nothing is stored; it expires after [`COOKIE_TTL_MS`]. The token
//! itself never reaches the browser.
//!
//! Architecture invariant: a code and a cookie never appear in a log, an error or an event.

use std::sync::{Mutex, OnceLock, PoisonError};

use sha2::{Digest as _, Sha256};

/// How long a login code is good for.
pub const CODE_TTL_MS: i64 = 120_000;
/// How long a browser stays logged in.
pub const COOKIE_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// The most codes waiting at once.
pub const MAX_CODES: usize = 32;

/// Why a login link cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebAuthError {
    /// The WebSocket listener (which serves the UI) is not running.
    #[error(
        "the web UI is served on the WebSocket listener, which is not running; set \
         `websocket.enabled = true` in config.toml (or free its port) and restart the daemon"
    )]
    NotListening,
    /// The system gave no randomness.
    #[error("cannot generate a login code: {0}")]
    Random(String),
}

/// The web UI's logins.
#[derive(Debug, Default)]
pub struct WebAuth {
    // The MAC key (the WebSocket token) and the port, set once when the listener binds.
    listener: OnceLock<(Vec<u8>, u16)>,
    codes: Mutex<Vec<(String, i64)>>,
}

/// A code made by [`WebAuth::new_code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginCode {
    /// The code (hex).
    pub code: String,
    /// The listener's port.
    pub port: u16,
    /// Unix milliseconds after which it is refused.
    pub expires_at: i64,
}

impl WebAuth {
    /// Called once the listener is bound: cookies are signed with `token`.
    pub fn set_listener(&self, token: &str, port: u16) {
        let _ = self.listener.set((token.as_bytes().to_vec(), port));
    }

    /// A new one-time code.
    pub fn new_code(&self, now_ms: i64) -> Result<LoginCode, WebAuthError> {
        let (_, port) = self.listener.get().ok_or(WebAuthError::NotListening)?;
        let code = random_hex(32)?;
        let expires_at = now_ms + CODE_TTL_MS;
        let mut codes = self.codes.lock().unwrap_or_else(PoisonError::into_inner);
        codes.retain(|(_, expires)| *expires > now_ms);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push((code.clone(), expires_at));
        Ok(LoginCode {
            code,
            port: *port,
            expires_at,
        })
    }

    /// Takes `code` (once) and returns the cookie value it is exchanged for; `None` when the
    /// code is unknown, used or expired.
    pub fn redeem(&self, code: &str, now_ms: i64) -> Option<String> {
        let (key, _) = self.listener.get()?;
        {
            let mut codes = self.codes.lock().unwrap_or_else(PoisonError::into_inner);
            codes.retain(|(_, expires)| *expires > now_ms);
            let index = codes
                .iter()
                .position(|(known, _)| constant_time_eq(known.as_bytes(), code.as_bytes()))?;
            codes.remove(index);
        }
        let expiry = now_ms + COOKIE_TTL_MS;
        let nonce = random_hex(16).ok()?;
        let payload = format!("v1.{expiry}.{nonce}");
        let mac = hex(&hmac_sha256(key, payload.as_bytes()));
        Some(format!("{payload}.{mac}"))
    }

    /// Whether `value` is a cookie this daemon's token signed that has not expired.
    pub fn cookie_valid(&self, value: &str, now_ms: i64) -> bool {
        let Some((key, _)) = self.listener.get() else {
            return false;
        };
        let Some((payload, mac)) = value.rsplit_once('.') else {
            return false;
        };
        let mut parts = payload.split('.');
        let (Some("v1"), Some(expiry), Some(_nonce), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let Ok(expiry) = expiry.parse::<i64>() else {
            return false;
        };
        let expected = hex(&hmac_sha256(key, payload.as_bytes()));
        constant_time_eq(expected.as_bytes(), mac.as_bytes()) && expiry > now_ms
    }
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn random_hex(bytes: usize) -> Result<String, WebAuthError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|error| WebAuthError::Random(error.to_string()))?;
    Ok(hex(&buffer))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// Compares without leaking where the first difference is.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        let mac = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex(&mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_code_is_good_once_and_before_it_expires() {
        let auth = WebAuth::default();
        assert_eq!(auth.new_code(0), Err(WebAuthError::NotListening));
        auth.set_listener("token", 4242);
        let code = auth.new_code(1_000).unwrap();
        assert_eq!(code.port, 4242);
        assert_eq!(code.expires_at, 1_000 + CODE_TTL_MS);
        let cookie = auth.redeem(&code.code, 2_000).unwrap();
        assert!(auth.cookie_valid(&cookie, 3_000));
        assert_eq!(auth.redeem(&code.code, 2_000), None, "a code is good once");
        let late = auth.new_code(1_000).unwrap();
        assert_eq!(auth.redeem(&late.code, 1_000 + CODE_TTL_MS), None);
        assert_eq!(auth.redeem("", 1_000), None);
    }

    #[test]
    fn a_cookie_is_refused_when_forged_expired_or_signed_by_another_token() {
        let auth = WebAuth::default();
        auth.set_listener("token", 1);
        let code = auth.new_code(0).unwrap();
        let cookie = auth.redeem(&code.code, 0).unwrap();
        assert!(auth.cookie_valid(&cookie, COOKIE_TTL_MS - 1));
        assert!(!auth.cookie_valid(&cookie, COOKIE_TTL_MS));
        let (payload, mac) = cookie.rsplit_once('.').unwrap();
        let later = payload.replace("v1.", "v1.9");
        assert!(!auth.cookie_valid(&format!("{later}.{mac}"), 0));
        assert!(!auth.cookie_valid("v1.1.2", 0));
        assert!(!auth.cookie_valid("", 0));
        let other = WebAuth::default();
        other.set_listener("another token", 1);
        assert!(!other.cookie_valid(&cookie, 0));
    }

    #[test]
    fn old_codes_make_room_for_new_ones() {
        let auth = WebAuth::default();
        auth.set_listener("token", 1);
        let first = auth.new_code(0).unwrap();
        for _ in 0..MAX_CODES {
            auth.new_code(0).unwrap();
        }
        assert_eq!(auth.redeem(&first.code, 0), None);
        assert_eq!(auth.codes.lock().unwrap().len(), MAX_CODES);
    }
}
