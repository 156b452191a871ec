//! `extensions/*`: pi's TypeScript extensions, run by the daemon's one extension host for
//! every session (decision 0017).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `extensions/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsListParams {
    /// Only this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// Response of `extensions/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsListResponse {
    /// The host process.
    pub host: ExtensionHostStatus,
    /// The sessions whose extensions the host loaded (or tried to), by id.
    pub sessions: Vec<SessionExtensions>,
}

/// The extension host process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHostStatus {
    /// `starting`, `ready`, `stopped` (never started, or stopped) or `failed`.
    pub state: String,
    /// Its process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its last failure, and what happens next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// How often it was started.
    pub starts: u32,
    /// Its log: what extensions print.
    pub log_path: String,
    /// The pinned pi package's version, once the host ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi_version: Option<String>,
    /// Node's version, once the host ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_version: Option<String>,
}

/// One session's extensions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionExtensions {
    /// The session.
    pub session_id: String,
    /// What loaded, in load order.
    pub extensions: Vec<ExtensionInfo>,
    /// Problems: an extension that did not load or threw, naming its file.
    pub diagnostics: Vec<ExtensionDiagnostic>,
    /// Project extensions left out until approved.
    pub skipped: Vec<ExtensionDiagnostic>,
    /// The models of the providers they registered (pi's `registerProvider`), as
    /// `provider/id`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
}

/// One loaded extension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionInfo {
    /// Its file.
    pub path: String,
    /// The events it handles.
    pub handlers: Vec<String>,
    /// The tools it registered.
    pub tools: Vec<String>,
    /// The commands it registered.
    pub commands: Vec<String>,
}

/// A problem with one extension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionDiagnostic {
    /// The extension's file (or the source it came from).
    pub path: String,
    /// What went wrong.
    pub error: String,
}

/// Params of `extensions/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsRestartParams {}

/// Response of `extensions/restart`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsRestartResponse {
    /// Whether a host was running (it is ended; the next use starts it again).
    pub restarted: bool,
}

/// Params of `extensions/shortcut`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsShortcutParams {
    /// The session.
    pub session_id: String,
    /// pi's key id, as `session/get` lists it in `shortcuts`.
    pub key: String,
}

/// Response of `extensions/shortcut`: once the handler ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsShortcutResponse {}

/// Params of `extensions/trust`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsTrustParams {
    /// The absolute project directory that brings the extensions.
    pub cwd: String,
    /// Which of its extensions (files or directories, absolute or relative to `cwd`);
    /// empty: all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The answer (default `approve`).
    #[serde(default)]
    pub decision: super::TrustDecision,
}

/// Response of `extensions/trust`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionsTrustResponse {
    /// The project's extensions the answer was about, with where each stands now.
    pub extensions: Vec<ExtensionApproval>,
}

/// Where one project extension stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionApproval {
    /// The extension's file.
    pub path: String,
    /// `approved`, `refused` or `not asked yet`.
    pub approval: String,
}

/// Notification `extension/ui` (daemon → attached clients): what a session's extensions show
/// outside dialogs (pi's `ctx.ui.notify`, `setStatus`, `setWidget`, `setTitle`,
/// `setWorkingMessage`, `setEditorText`). Texts may carry the ANSI colours of pi's theme.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionUiParams {
    /// The session.
    pub session_id: String,
    /// What to show.
    #[serde(flatten)]
    pub ui: ExtensionUi,
}

/// What an extension shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ExtensionUi {
    /// A passing message (`ctx.ui.notify`).
    Notify {
        /// The text.
        message: String,
        /// `info`, `warning` or `error`.
        level: NotifyLevel,
    },
    /// A status text kept in the footer under `key` until replaced or cleared
    /// (`ctx.ui.setStatus`; `setWorkingMessage` is the key `working`).
    Status {
        /// Whose status.
        key: String,
        /// The text; `None` clears it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// Lines kept above or below the editor under `key` (`ctx.ui.setWidget`).
    Widget {
        /// Whose widget.
        key: String,
        /// The lines; `None` removes the widget.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lines: Option<Vec<String>>,
        /// Where.
        placement: WidgetPlacement,
    },
    /// The terminal's title (`ctx.ui.setTitle`).
    Title {
        /// The title.
        title: String,
    },
    /// Text for the client's editor (`ctx.ui.setEditorText`, `pasteToEditor`).
    EditorText {
        /// The text.
        text: String,
        /// Inserted at the cursor (`true`) or replacing the editor's text.
        paste: bool,
    },
}

/// How much a notice matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NotifyLevel {
    /// For information.
    Info,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
}

/// Where a widget goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WidgetPlacement {
    /// Above the editor.
    AboveEditor,
    /// Below the editor.
    BelowEditor,
}
