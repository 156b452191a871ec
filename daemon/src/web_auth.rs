//! Logins of the web UI: one-time codes that `web/login` hands out (`pictl web`, over the
//! owner-only Unix socket) and the session cookies a browser gets in exchange.
//!
//! A code is 32 random bytes, good for one visit within [`CODE_TTL_MS`]; at most
//! [`MAX_CODES`] wait at once (the oldest goes). A cookie is `v1.EXPIRY.LOGIN.MAC`: `LOGIN`
//! is 16 random bytes that also name the cookie's path, `/s/LOGIN/`, where the UI is served —
//! browsers send cookies to every port of a host, so a server of another local user on
//! another port would get a cookie scoped to `/`; scoped to a path nobody else knows, it
//! stays with this daemon. The MAC is an HMAC-SHA256 under the web key (`web.key` in the
//! runtime directory, 0600), so cookies outlive daemon restarts and nothing is stored per
//! login; `/s/LOGIN/logout` revokes one (kept in `web.revoked` until it would have expired)
//! and `web/revoke` replaces the key, which logs every browser out. Neither the daemon's
//! token nor the web key ever reaches a browser.
//!
//! Architecture invariant: a code, a cookie or the key never appears in a log, an error or
//! an event.

use std::collections::HashMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, RwLock};

use sha2::{Digest as _, Sha256};

/// How long a login code is good for.
pub const CODE_TTL_MS: i64 = 120_000;
/// How long a browser stays logged in.
pub const COOKIE_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// The most codes waiting at once.
pub const MAX_CODES: usize = 32;

/// Why a login cannot be made or revoked.
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
    /// The key file could not be written.
    #[error("cannot write the web UI's key {path}: {message}")]
    KeyFile {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
}

/// The web UI's logins.
#[derive(Debug, Default)]
pub struct WebAuth {
    listener: RwLock<Option<Listener>>,
    codes: Mutex<Vec<(String, i64)>>,
    // Revoked logins and when their cookies would have expired.
    revoked: Mutex<HashMap<String, i64>>,
    // Woken when a login is revoked or the key replaced: open connections check their cookie.
    changed: tokio::sync::Notify,
}

#[derive(Debug)]
struct Listener {
    key: Vec<u8>,
    port: u16,
    key_path: PathBuf,
    revoked_path: PathBuf,
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

/// What a redeemed code gives: the cookie's value and the login that names its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// The cookie's value.
    pub cookie: String,
    /// The login's id: the UI lives at `/s/LOGIN/`.
    pub login: String,
}

impl WebAuth {
    /// Called once the listener is bound: cookies are signed with the key in `key_path`
    /// (made when missing), revocations kept in `revoked_path`.
    pub fn set_listener(
        &self,
        key: &str,
        key_path: &Path,
        revoked_path: &Path,
        port: u16,
        now_ms: i64,
    ) {
        let mut revoked = self.revoked.lock().unwrap_or_else(PoisonError::into_inner);
        revoked.clear();
        if let Ok(text) = std::fs::read_to_string(revoked_path) {
            for line in text.lines() {
                if let Some((login, expiry)) = line.split_once(' ')
                    && let Ok(expiry) = expiry.parse::<i64>()
                    && expiry > now_ms
                {
                    revoked.insert(login.to_owned(), expiry);
                }
            }
        }
        *self
            .listener
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(Listener {
            key: key.as_bytes().to_vec(),
            port,
            key_path: key_path.to_owned(),
            revoked_path: revoked_path.to_owned(),
        });
    }

    /// A new one-time code.
    pub fn new_code(&self, now_ms: i64) -> Result<LoginCode, WebAuthError> {
        let port = self
            .listener
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|listener| listener.port)
            .ok_or(WebAuthError::NotListening)?;
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
            port,
            expires_at,
        })
    }

    /// Takes `code` (once) and returns the login it is exchanged for; `None` when the code
    /// is unknown, used or expired.
    pub fn redeem(&self, code: &str, now_ms: i64) -> Option<Login> {
        {
            let mut codes = self.codes.lock().unwrap_or_else(PoisonError::into_inner);
            codes.retain(|(_, expires)| *expires > now_ms);
            let index = codes
                .iter()
                .position(|(known, _)| constant_time_eq(known.as_bytes(), code.as_bytes()))?;
            codes.remove(index);
        }
        let listener = self.listener.read().unwrap_or_else(PoisonError::into_inner);
        let key = &listener.as_ref()?.key;
        let expiry = now_ms + COOKIE_TTL_MS;
        let login = random_hex(16).ok()?;
        let payload = format!("v1.{expiry}.{login}");
        let mac = hex(&hmac_sha256(key, payload.as_bytes()));
        Some(Login {
            cookie: format!("{payload}.{mac}"),
            login,
        })
    }

    /// Whether `value` is a cookie of login `login` that this daemon's key signed, that has
    /// not expired and was not revoked.
    pub fn cookie_valid(&self, value: &str, login: &str, now_ms: i64) -> bool {
        let Some((cookie_login, expiry)) = self.verify(value) else {
            return false;
        };
        expiry > now_ms
            && constant_time_eq(cookie_login.as_bytes(), login.as_bytes())
            && !self
                .revoked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains_key(&cookie_login)
    }

    /// Returns once cookie `value` of login `login` stops being valid: its login revoked,
    /// the key replaced, or its expiry passed. The UI's WebSocket connection ends then, so a
    /// tab logged out elsewhere (or by `pictl web --revoke`) is shut out at once rather than
    /// at its next reconnection.
    pub async fn until_invalid(&self, value: &str, login: &str) {
        loop {
            // Registered before the check, so a change between the two is not missed.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let now = pi_util::time::now_millis();
            if !self.cookie_valid(value, login, now) {
                return;
            }
            let expiry = self.verify(value).map_or(now, |(_, expiry)| expiry);
            let left = std::time::Duration::from_millis(u64::try_from(expiry - now).unwrap_or(0));
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep(left) => {}
            }
        }
    }

    /// Revokes the login of cookie `value` (when it is one of ours): `/s/LOGIN/logout`.
    pub fn revoke(&self, value: &str, now_ms: i64) {
        let Some((login, expiry)) = self.verify(value) else {
            return;
        };
        let mut revoked = self.revoked.lock().unwrap_or_else(PoisonError::into_inner);
        revoked.retain(|_, until| *until > now_ms);
        revoked.insert(login, expiry);
        self.changed.notify_waiters();
        let text: String = revoked
            .iter()
            .map(|(login, until)| format!("{login} {until}\n"))
            .collect();
        if let Some(listener) = self
            .listener
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            && let Err(error) = write_private(&listener.revoked_path, &text)
        {
            tracing::warn!(%error, "cannot record a web UI logout; it lasts until the daemon restarts");
        }
    }

    /// Replaces the key: every browser's cookie stops working (`web/revoke`).
    pub fn rotate(&self) -> Result<(), WebAuthError> {
        let key = random_hex(32)?;
        let mut listener = self
            .listener
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let listener = listener.as_mut().ok_or(WebAuthError::NotListening)?;
        write_private(&listener.key_path, &format!("{key}\n")).map_err(|error| {
            WebAuthError::KeyFile {
                path: listener.key_path.display().to_string(),
                message: error.to_string(),
            }
        })?;
        listener.key = key.into_bytes();
        self.codes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.changed.notify_waiters();
        Ok(())
    }

    /// The login and expiry of a cookie this daemon's key signed.
    fn verify(&self, value: &str) -> Option<(String, i64)> {
        let listener = self.listener.read().unwrap_or_else(PoisonError::into_inner);
        let key = &listener.as_ref()?.key;
        let (payload, mac) = value.rsplit_once('.')?;
        let mut parts = payload.split('.');
        let (Some("v1"), Some(expiry), Some(login), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let expiry = expiry.parse::<i64>().ok()?;
        let expected = hex(&hmac_sha256(key, payload.as_bytes()));
        constant_time_eq(expected.as_bytes(), mac.as_bytes()).then(|| (login.to_owned(), expiry))
    }
}

/// Replaces `path` with `text`, readable by its owner only.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let temporary = path.with_extension("tmp");
    let _ = std::fs::remove_file(&temporary);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
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

    fn listening(dir: &Path) -> WebAuth {
        let auth = WebAuth::default();
        auth.set_listener(
            "key",
            &dir.join("web.key"),
            &dir.join("web.revoked"),
            4242,
            0,
        );
        auth
    }

    #[tokio::test]
    async fn an_open_connection_hears_when_its_cookie_stops_being_valid() {
        let dir = tempfile::tempdir().unwrap();
        let auth = std::sync::Arc::new(listening(dir.path()));
        let now = pi_util::time::now_millis();
        // A cookie that expires 300 ms from now: the wait ends then.
        let old = now - COOKIE_TTL_MS + 300;
        let code = auth.new_code(old).unwrap();
        let expiring = auth.redeem(&code.code, old).unwrap();
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            auth.until_invalid(&expiring.cookie, &expiring.login),
        )
        .await
        .expect("the expiry ends the wait");
        // A fresh one: waiting until another login is revoked does not end it; its own
        // revocation does, and so does replacing the key.
        let mut logins = Vec::new();
        for _ in 0..3 {
            let code = auth.new_code(now).unwrap();
            logins.push(auth.redeem(&code.code, now).unwrap());
        }
        let watch = |login: &Login| {
            let (auth, login) = (auth.clone(), login.clone());
            tokio::spawn(async move { auth.until_invalid(&login.cookie, &login.login).await })
        };
        let (first, second) = (watch(&logins[0]), watch(&logins[1]));
        auth.revoke(&logins[2].cookie, now);
        tokio::task::yield_now().await;
        assert!(!first.is_finished() && !second.is_finished());
        auth.revoke(&logins[0].cookie, now);
        tokio::time::timeout(std::time::Duration::from_secs(10), first)
            .await
            .expect("its own revocation ends the wait")
            .unwrap();
        assert!(!second.is_finished());
        auth.rotate().unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), second)
            .await
            .expect("a new key ends every wait")
            .unwrap();
    }

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
        let dir = tempfile::tempdir().unwrap();
        let auth = WebAuth::default();
        assert_eq!(auth.new_code(0), Err(WebAuthError::NotListening));
        let auth = listening(dir.path());
        let code = auth.new_code(1_000).unwrap();
        assert_eq!(code.port, 4242);
        assert_eq!(code.expires_at, 1_000 + CODE_TTL_MS);
        let login = auth.redeem(&code.code, 2_000).unwrap();
        assert!(auth.cookie_valid(&login.cookie, &login.login, 3_000));
        assert!(login.cookie.contains(&login.login));
        assert_eq!(auth.redeem(&code.code, 2_000), None, "a code is good once");
        let late = auth.new_code(1_000).unwrap();
        assert_eq!(auth.redeem(&late.code, 1_000 + CODE_TTL_MS), None);
        assert_eq!(auth.redeem("", 1_000), None);
    }

    #[test]
    fn a_cookie_is_refused_when_forged_expired_for_another_login_or_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let auth = listening(dir.path());
        let code = auth.new_code(0).unwrap();
        let Login { cookie, login } = auth.redeem(&code.code, 0).unwrap();
        assert!(auth.cookie_valid(&cookie, &login, COOKIE_TTL_MS - 1));
        assert!(!auth.cookie_valid(&cookie, &login, COOKIE_TTL_MS));
        assert!(!auth.cookie_valid(&cookie, "0123456789abcdef0123456789abcdef", 0));
        let (payload, mac) = cookie.rsplit_once('.').unwrap();
        let later = payload.replace("v1.", "v1.9");
        assert!(!auth.cookie_valid(&format!("{later}.{mac}"), &login, 0));
        assert!(!auth.cookie_valid("v1.1.2", &login, 0));
        assert!(!auth.cookie_valid("", "", 0));
        let other = WebAuth::default();
        other.set_listener(
            "another key",
            &dir.path().join("k"),
            &dir.path().join("r"),
            1,
            0,
        );
        assert!(!other.cookie_valid(&cookie, &login, 0));
    }

    #[test]
    fn a_logout_lasts_across_restarts_and_a_rotation_logs_everyone_out() {
        let dir = tempfile::tempdir().unwrap();
        let auth = listening(dir.path());
        let first = auth.redeem(&auth.new_code(0).unwrap().code, 0).unwrap();
        let second = auth.redeem(&auth.new_code(0).unwrap().code, 0).unwrap();
        auth.revoke(&first.cookie, 1);
        assert!(!auth.cookie_valid(&first.cookie, &first.login, 2));
        assert!(auth.cookie_valid(&second.cookie, &second.login, 2));
        let revoked = dir.path().join("web.revoked");
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&revoked).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // A new daemon with the same key still refuses the revoked login.
        let again = listening(dir.path());
        assert!(!again.cookie_valid(&first.cookie, &first.login, 3));
        assert!(again.cookie_valid(&second.cookie, &second.login, 3));
        again.rotate().unwrap();
        assert!(!again.cookie_valid(&second.cookie, &second.login, 4));
        let key = std::fs::read_to_string(dir.path().join("web.key")).unwrap();
        assert_eq!(key.trim().len(), 64);
    }

    #[test]
    fn old_codes_make_room_for_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let auth = listening(dir.path());
        let first = auth.new_code(0).unwrap();
        for _ in 0..MAX_CODES {
            auth.new_code(0).unwrap();
        }
        assert_eq!(auth.redeem(&first.code, 0), None);
        assert_eq!(auth.codes.lock().unwrap().len(), MAX_CODES);
    }
}
