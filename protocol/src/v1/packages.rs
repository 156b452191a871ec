//! `packages/*`: pi packages (npm, git and local sources of extensions, skills, prompt
//! templates and themes), installed, removed, updated and listed by pi's own package manager
//! in the daemon's extension host, as `pi install|remove|update|list` do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `packages/install`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesInstallParams {
    /// pi's source: `npm:NAME[@VERSION]`, `git:HOST/PATH[@REF]`, a git URL, or a local path
    /// (relative to `cwd`).
    pub source: String,
    /// The project's settings (`.pi/settings.json`) instead of the user's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local: bool,
    /// The absolute directory the command runs in (the project, for `local`).
    pub cwd: String,
}

/// Response of `packages/install`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesInstallResponse {
    /// The source as given.
    pub source: String,
    /// Where it was installed (absent for a local path, used where it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_path: Option<String>,
}

/// Params of `packages/remove`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesRemoveParams {
    /// The source, as settings name it.
    pub source: String,
    /// From the project's settings instead of the user's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local: bool,
    /// The absolute directory the command runs in.
    pub cwd: String,
}

/// Response of `packages/remove`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesRemoveResponse {
    /// Whether settings named it (it is uninstalled and gone from them).
    pub removed: bool,
}

/// Params of `packages/update`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesUpdateParams {
    /// One package; absent: every package not pinned to a version or ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The absolute directory the command runs in.
    pub cwd: String,
}

/// Response of `packages/update`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesUpdateResponse {}

/// Params of `packages/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesListParams {
    /// The absolute directory whose project settings count too.
    pub cwd: String,
}

/// Response of `packages/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesListResponse {
    /// The packages the user's and the project's settings name.
    pub packages: Vec<ConfiguredPackage>,
}

/// A package settings name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfiguredPackage {
    /// Its source.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// Settings load only some of its resources.
    pub filtered: bool,
    /// Where it is installed (absent: not installed, or a local path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_path: Option<String>,
}

/// Notification `packages/progress` (daemon → the client that asked): a step of an
/// install, removal or update, as pi's package manager reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackagesProgressParams {
    /// `start`, `progress`, `complete` or `error`.
    pub kind: String,
    /// `install`, `remove`, `update`, `clone` or `pull`.
    pub action: String,
    /// The package (empty when the step is about no one package).
    #[serde(default)]
    pub source: String,
    /// What happens, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
