//! pi-tools: the built-in coding tools with pi's semantics — `read`, `write`, `edit`, `bash`,
//! `grep`, `find`, `ls` — plus what they share with the daemon: the process-spawn helper
//! ([`spawn`], under the [`guard`]), the shell executor ([`exec`]), the daemon-wide per-path mutation lock
//! ([`PathLocks`]) and session artifacts ([`Artifacts`]).
//!
//! A session's tools are built by [`create_tools`] from one [`ToolContext`]: the session's
//! working directory, environment, shell, artifacts and the daemon's shared locks. Tools never
//! use the daemon's own working directory or environment.
//!
//! Architecture invariant: failures are results (`is_error`) with the text the model reads,
//! never panics; `write` and `edit` hold the target's [`PathLocks`] lock for their whole
//! read-modify-write.

pub mod artifacts;
mod bash;
mod edit;
pub mod exec;
mod find;
mod grep;
pub mod guard;
pub mod locks;
mod ls;
pub mod output;
pub mod paths;
pub mod private_dir;
mod read;
pub mod sandbox;
pub mod spawn;
mod support;
pub mod truncate;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent::Tool;

pub use artifacts::{ARTIFACT_SCHEME, ArtifactChunk, ArtifactError, Artifacts, SessionArtifacts};
pub use bash::{BashTool, render as render_tail};
pub use edit::EditTool;
pub use exec::{ExecEnd, ExecError, ExecPlace, ExecRequest, ExecResult, OutputStyle, ShellConfig};
pub use find::FindTool;
pub use grep::GrepTool;
pub use locks::{PathGuard, PathLocks};
pub use ls::LsTool;
pub use read::ReadTool;
pub use write::{PREVIOUS_TEXT_LIMIT, WriteTool, write_atomically};

/// pi's default tool set.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];
/// Every built-in tool.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// Everything a session's tools need. Shared by all tools of one session.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The session (for logs).
    pub session_id: String,
    /// Absolute working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// The session's environment; commands get exactly this, and `~` is its `HOME`. Shared:
    /// sessions with the same environment (the daemon's own) hold one copy.
    pub env: Arc<BTreeMap<String, String>>,
    /// Which shell runs `bash`.
    pub shell: ShellConfig,
    /// Where large outputs are stored.
    pub artifacts: SessionArtifacts,
    /// The daemon-wide mutation locks.
    pub locks: PathLocks,
    /// What `read` reaches by URI beyond files and artifacts (the daemon's MCP resources).
    pub uris: Option<Arc<dyn UriReader>>,
    /// Places the file tools reach by URL (oh-my-pi's `local://`, `skill://`), when the
    /// session has them.
    pub places: Option<Arc<dyn UrlPlaces>>,
    /// Told about files `write` and `edit` changed (the daemon's language servers); what it
    /// answers is appended to the tool's result.
    pub files: Option<Arc<dyn FileObserver>>,
    /// Confines `bash`, and where `write` and `edit` may write, when set (the `sandbox`
    /// setting).
    pub sandbox: Option<sandbox::Sandbox>,
    /// Starts `bash`'s commands (under the daemon's guard).
    pub spawner: spawn::Spawner,
    /// `read` fits images to what models accept (pi's `images.autoResize`, on by default);
    /// off, it returns them as they are.
    pub resize_images: bool,
}

/// Which tool changed a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangedBy {
    /// `write`.
    Write,
    /// `edit`.
    Edit,
}

/// Hears about files the tools changed (after the change is on disk and its lock released).
pub trait FileObserver: Send + Sync + std::fmt::Debug {
    /// `path` changed; text to append to the tool's result (new diagnostics), if any.
    fn changed<'a>(
        &'a self,
        path: &'a Path,
        by: ChangedBy,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + 'a>>;
}

/// Appends `note` to `output`'s text (a new text block when it has none).
pub fn append_note(output: &mut pi_agent::ToolOutput, note: &str) {
    for block in output.content.iter_mut() {
        if let pi_llm::UserContent::Text(text) = block {
            text.text.push_str("\n\n");
            text.text.push_str(note);
            return;
        }
    }
    output
        .content
        .push(pi_llm::UserContent::text(note.to_owned()));
}

/// Places a session's file tools reach by URL (oh-my-pi's `local://` scratch directory,
/// `skill://` files): the daemon implements it. `read`, `write`, `edit`, `grep`, `find` and
/// `ls` take such a URL wherever they take a path; `bash` gets the paths in its command.
pub trait UrlPlaces: Send + Sync + std::fmt::Debug {
    /// The file or directory `url` names; `None` when it is not such a URL, `Err` (what the
    /// model reads) when it is one that names nothing allowed.
    fn place(&self, url: &str) -> Option<Result<PathBuf, String>>;
    /// `command` with the URLs in it replaced by their paths (for `bash`).
    fn expand(&self, command: &str) -> String;
}

/// What a [`UriReader`] read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UriContent {
    /// Text.
    Text(String),
    /// Text shown before the lines `read` selects and not counted among them (a web page's
    /// URL and notes), so offsets are the content's own lines.
    Preface(String),
    /// Binary data, base64.
    Blob {
        /// The data, base64.
        base64: String,
        /// Its media type.
        mime_type: String,
    },
}

/// A reading in progress.
pub type UriFuture<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Vec<UriContent>, String>> + Send + 'a>,
>;

/// Resources `read` reaches by URI (`mcp://<server>/<uri>`): the daemon implements it.
pub trait UriReader: Send + Sync + std::fmt::Debug {
    /// The prefix of the URIs it reads (`mcp://`).
    fn scheme(&self) -> &str;
    /// Whether it reads `uri` (by default: `uri` starts with [`UriReader::scheme`]).
    fn handles(&self, uri: &str) -> bool {
        uri.starts_with(self.scheme())
    }
    /// A sentence for `read`'s description.
    fn describe(&self) -> String;
    /// The form of its URIs, for `read`'s `path` description.
    fn path_hint(&self) -> String;
    /// Reads `uri`; the error is what the model reads.
    fn read<'a>(&'a self, uri: &'a str) -> UriFuture<'a>;
}

impl ToolContext {
    /// The session's home directory (`HOME` of its environment).
    pub fn home(&self) -> Option<&Path> {
        self.env
            .get("HOME")
            .filter(|home| !home.is_empty())
            .map(Path::new)
    }

    /// Resolves a path argument (see [`paths::resolve`]).
    pub fn resolve(&self, input: &str) -> PathBuf {
        paths::resolve(input, &self.cwd, self.home())
    }

    /// Resolves a path argument, or a URL of the session's [`UrlPlaces`]; the error is the
    /// text the model reads.
    pub fn place(&self, input: &str) -> Result<PathBuf, String> {
        match self.places.as_ref().and_then(|places| places.place(input)) {
            Some(place) => place,
            None => Ok(self.resolve(input)),
        }
    }

    /// Whether the session's file tools may write `path` (absolute): always, unless its
    /// sandbox refuses; the error is the text the model reads.
    pub fn check_write(&self, path: &Path) -> Result<(), String> {
        check_write(self.sandbox.as_ref(), path, &self.cwd, &self.env)
    }

    /// What decides where this session's edits may go, for writers outside this crate (the
    /// language servers' edits).
    pub fn write_gate(&self) -> WriteGate {
        WriteGate {
            sandbox: self.sandbox.clone(),
            cwd: self.cwd.clone(),
            env: (*self.env).clone(),
        }
    }
}

/// Where one session's edits may go: anywhere, unless its sandbox says otherwise.
#[derive(Clone, Debug, Default)]
pub struct WriteGate {
    sandbox: Option<sandbox::Sandbox>,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
}

impl WriteGate {
    /// Whether `path` (absolute) may be written; the error is the text the model reads.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        check_write(self.sandbox.as_ref(), path, &self.cwd, &self.env)
    }
}

fn check_write(
    sandbox: Option<&sandbox::Sandbox>,
    path: &Path,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Result<(), String> {
    match sandbox {
        Some(sandbox) if !sandbox.allows_write(path, cwd, env) => {
            Err(sandbox.refuse_write(path, cwd))
        }
        _ => Ok(()),
    }
}

/// A tool name that is not built in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool {0:?}; the built-in tools are read, bash, edit, write, grep, find and ls")]
pub struct UnknownTool(pub String);

/// The tool named `name` for the session of `context`.
pub fn create_tool(name: &str, context: &Arc<ToolContext>) -> Result<Arc<dyn Tool>, UnknownTool> {
    let context = context.clone();
    Ok(match name {
        "read" => Arc::new(ReadTool::new(context)),
        "bash" => Arc::new(BashTool::new(context)),
        "edit" => Arc::new(EditTool::new(context)),
        "write" => Arc::new(WriteTool::new(context)),
        "grep" => Arc::new(GrepTool::new(context)),
        "find" => Arc::new(FindTool::new(context)),
        "ls" => Arc::new(LsTool::new(context)),
        other => return Err(UnknownTool(other.to_owned())),
    })
}

/// The tools named `names`, in that order.
pub fn create_tools(
    names: &[String],
    context: &Arc<ToolContext>,
) -> Result<Vec<Arc<dyn Tool>>, UnknownTool> {
    names
        .iter()
        .map(|name| create_tool(name, context))
        .collect()
}
