//! `web/login` and `web/revoke`: one-time login links for the web UI the daemon serves on
//! its WebSocket listener (`pictl web`), and logging every browser out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `web/login` (none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebLoginParams {}

/// Response of `web/login`: a link that logs one browser in, once, before `expiresAt`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebLoginResponse {
    /// The whole link: `http://127.0.0.1:PORT/login?code=CODE`. The code is good for one
    /// visit; the browser gets a session cookie in exchange (HttpOnly, SameSite=Strict), never
    /// the daemon's token.
    pub url: String,
    /// The loopback port of the listener (a forwarded port replaces it in `url`).
    pub port: u16,
    /// The link's path and query: `/login?code=CODE`.
    pub path: String,
    /// Unix milliseconds after which the code is refused.
    pub expires_at: i64,
}

/// Params of `web/revoke` (none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebRevokeParams {}
