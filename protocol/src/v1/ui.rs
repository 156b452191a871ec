//! `ui/*`: questions for the people watching a session. A client (a script, an editor plugin,
//! later the daemon's own extensions) asks with `ui/ask`; the daemon broadcasts the request to
//! every client attached to the session (`ui/request`, re-sent to clients that attach while it
//! is pending); the first `ui/respond` wins, everyone hears `ui/resolved`, and the asker gets
//! the answer. pi's extension UI dialogs (`select`, `confirm`, `input`, `editor`) in daemon
//! form; `pictl rpc` maps them to pi's `extension_ui_request` / `extension_ui_response`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A dialog, tagged by `method` (pi's names).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "method",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum UiRequest {
    /// Pick one of `options`; the answer's `value` is the chosen option. With `multiple`,
    /// pick any number: the answer's `values`, in the options' order.
    Select {
        /// The question.
        title: String,
        /// The choices.
        options: Vec<String>,
        /// Several may be picked.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        multiple: bool,
    },
    /// Yes or no; the answer's `confirmed`.
    Confirm {
        /// The question.
        title: String,
        /// Details.
        message: String,
    },
    /// One line of text; the answer's `value`.
    Input {
        /// The question.
        title: String,
        /// Hint shown in the empty field.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
    },
    /// Multi-line text; the answer's `value`.
    Editor {
        /// The question.
        title: String,
        /// Text to start from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill: Option<String>,
    },
}

/// An answer: `value` (select, input, editor), `confirmed` (confirm), or `cancelled`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiAnswer {
    /// The chosen option or entered text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The chosen options of a `multiple` select.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// The confirmation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
    /// Dismissed, timed out, or the asker went away.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

/// Params of `ui/ask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiAskParams {
    /// Whose watchers to ask.
    pub session_id: String,
    /// The dialog.
    pub request: UiRequest,
    /// Give up after this many milliseconds with a cancelled answer; default: wait until
    /// answered or the asker disconnects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// Response of `ui/ask`: the first answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiAskResponse {
    /// The request's id, as broadcast.
    pub request_id: String,
    /// The answer.
    pub answer: UiAnswer,
    /// The `clientInfo.name` and connection id of the client that answered (none when the
    /// request was cancelled or timed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
}

/// Notification `ui/request` (daemon → attached clients).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiRequestParams {
    /// The session.
    pub session_id: String,
    /// Unique per daemon; clients ignore an id they already show (a request may arrive twice
    /// around an attach).
    pub request_id: String,
    /// The dialog.
    pub request: UiRequest,
}

/// Params of `ui/respond`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiRespondParams {
    /// The session.
    pub session_id: String,
    /// The request answered.
    pub request_id: String,
    /// The answer.
    pub answer: UiAnswer,
}

/// Response of `ui/respond`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiRespondResponse {
    /// This answer was the first; `false` when another client answered first or the request
    /// is gone (timed out, asker disconnected).
    pub accepted: bool,
}

/// Notification `ui/resolved` (daemon → attached clients): close the dialog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiResolvedParams {
    /// The session.
    pub session_id: String,
    /// The request.
    pub request_id: String,
    /// How it ended.
    pub answer: UiAnswer,
}
