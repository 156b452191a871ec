//! The resource side of the coding agent (pi's `resource-loader`, `settings-manager`,
//! `skills`, `prompt-templates` and `system-prompt`): settings layers, context files
//! (`AGENTS.md` / `CLAUDE.md`), skills, prompt templates and the system prompt built from them.
//!
//! Pure parts (frontmatter, settings layers, template and skill expansion, the system prompt)
//! take values and return values; the filesystem is read only by the discovery functions and
//! [`resources::load`], and written only by [`settings_write`].
//!
//! Architecture invariant: nothing a user puts in these files stops the daemon or a session. A
//! bad file, key, skill or template becomes a [`Diagnostic`] naming the file (and the key) and
//! the rest loads.
//! Architecture invariant: loading never writes; per-session choices never reach a settings
//! file. Only `settings/setDefault` writes, and only our config dir's `settings.json`.

pub mod approvals;
pub mod context_files;
pub mod frontmatter;
pub mod resources;
pub mod rules;
pub mod settings;
pub mod settings_parse;
pub mod settings_write;
pub mod skills;
pub mod system_prompt;
pub mod templates;
pub mod ttsr;

use std::path::PathBuf;

pub use resources::{ResourceRoots, Resources};
pub use settings::Settings;

/// A problem found while loading resources. Never fatal: the offending item is skipped or
/// loaded anyway, as the message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of problem.
    pub kind: DiagnosticKind,
    /// The file (or directory) it is about.
    pub path: PathBuf,
    /// The settings key (dotted, `compaction.reserveTokens`) or frontmatter field, if any.
    pub key: Option<String>,
    /// A sentence fragment saying what is wrong and what happened, e.g.
    /// `description is required; the skill is skipped`.
    pub message: String,
}

/// Kinds of [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// Something is wrong with a file or value.
    Warning,
    /// Two resources share a name; the first one found wins.
    Collision,
    /// A pi setting the daemon does not apply, and why.
    NotApplied,
}

impl Diagnostic {
    /// A warning about `path`.
    pub fn warning(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Warning,
            path: path.into(),
            key: None,
            message: message.into(),
        }
    }

    /// A warning about `key` in `path`.
    pub fn key_warning(
        path: impl Into<PathBuf>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Warning,
            path: path.into(),
            key: Some(key.into()),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            DiagnosticKind::Warning => "warning",
            DiagnosticKind::Collision => "collision",
            DiagnosticKind::NotApplied => "not applied",
        };
        write!(f, "{kind}: {}", self.path.display())?;
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// `~` and `~/rest` against `home`; other text unchanged.
pub(crate) fn expand_home(text: &str, home: Option<&std::path::Path>) -> PathBuf {
    match home {
        Some(home) if text == "~" => home.to_path_buf(),
        Some(home) if text.starts_with("~/") => home.join(&text[2..]),
        _ => PathBuf::from(text),
    }
}
