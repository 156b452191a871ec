//! `auth/*`: who pays for the models — subscription logins (pi's `/login`: Claude Pro/Max,
//! ChatGPT Plus/Pro, GitHub Copilot) run by the daemon and stored in pi's `auth.json`, API
//! keys, and what each provider's requests use.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `auth/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthListParams {}

/// Response of `auth/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthListResponse {
    /// Every provider with a subscription login, then every other provider the daemon knows.
    pub providers: Vec<AuthProviderStatus>,
}

/// One provider: how it can be paid for and what its requests use now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthProviderStatus {
    /// Provider id (`anthropic`, `github-copilot`).
    pub provider: String,
    /// For people: pi's name of its login, else the id.
    pub name: String,
    /// `auth/login` can log in to it with a subscription.
    pub subscription: bool,
    /// Where its key comes from now; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<AuthSource>,
    /// The key given as an API key is a subscription's token all the same (Claude's
    /// `sk-ant-oat…`), so requests are billed as the subscription's. Not looked at for keys
    /// `models.json` computes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subscription_token: bool,
}

/// Where a provider's key comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AuthSource {
    /// A subscription login in this `auth.json`, refreshed by the daemon.
    #[serde(rename_all = "camelCase")]
    Login {
        /// The file.
        path: String,
        /// When the current token expires, Unix milliseconds (0: unknown).
        expires: i64,
    },
    /// An API key in this `auth.json`.
    ApiKey {
        /// The file.
        path: String,
    },
    /// This environment variable of the daemon.
    Environment {
        /// The variable.
        variable: String,
    },
    /// `apiKey` in this `models.json`.
    ModelsJson {
        /// The file.
        path: String,
    },
    /// A key given at runtime.
    Explicit,
}

/// Params of `auth/login`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLoginParams {
    /// `anthropic`, `openai-codex` or `github-copilot`.
    pub provider: String,
    /// GitHub Copilot only: the Enterprise domain (`""` for github.com); absent: the login
    /// asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enterprise_domain: Option<String>,
}

/// Response of `auth/login`, once the login completed and was stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLoginResponse {
    /// The provider.
    pub provider: String,
    /// The `auth.json` it was stored in (pi's, unless the daemon's own already had one).
    pub path: String,
}

/// Params of `auth/loginEvent`: a step of a login, sent to the client that started it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLoginEventParams {
    /// The login, for `auth/loginInput` and `auth/loginCancel`.
    pub login_id: String,
    /// The step.
    pub step: LoginStep,
}

/// What a login shows or asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LoginStep {
    /// Open this URL in a browser and follow `instructions` (Copilot: the code to enter).
    OpenUrl {
        /// The URL.
        url: String,
        /// What to do there.
        instructions: String,
    },
    /// Answer with `auth/loginInput`. Authorization-code logins ask for a pasted code or
    /// redirect URL while also waiting for the browser: the first of the two wins.
    #[serde(rename_all = "camelCase")]
    Prompt {
        /// The question.
        message: String,
        /// An example answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
        /// Whether an empty answer is fine.
        #[serde(default)]
        allow_empty: bool,
    },
    /// A step, for people.
    Progress {
        /// What happens.
        message: String,
    },
}

/// Params of `auth/loginInput`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLoginInputParams {
    /// The login.
    pub login_id: String,
    /// The answer to its prompt.
    pub text: String,
}

/// Params of `auth/loginCancel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLoginCancelParams {
    /// The login.
    pub login_id: String,
}

/// Params of `auth/logout`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLogoutParams {
    /// The provider.
    pub provider: String,
}

/// Response of `auth/logout`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthLogoutResponse {
    /// The `auth.json` files its credential was removed from (empty: there was none).
    pub removed: Vec<String>,
}

/// Params of `auth/setApiKey`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthSetApiKeyParams {
    /// The provider.
    pub provider: String,
    /// The key (or pi's `!command` or variable name), stored as written.
    pub key: String,
}

/// Response of `auth/setApiKey`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthSetApiKeyResponse {
    /// The `auth.json` it was stored in.
    pub path: String,
}
