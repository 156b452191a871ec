//! Structural code search and rewrite, the engine of the `ast_grep` and `ast_edit` tools: a
//! pattern is code with meta-variables (`$A.unwrap()`, `console.log($$$ARGS)`), matched against
//! syntax trees rather than text, by ast-grep's matcher (`ast-grep-core`) over tree-sitter
//! grammars for Rust, TypeScript, TSX, JavaScript, Python and Go ([`Lang`]).
//!
//! [`search`] reports the matches; [`rewrite`] previews replacing them (an [`EditPlan`] with
//! diffs, nothing written); [`apply`] writes a plan, only over the texts it was made from. Each
//! has a `to_text` for the tool's result.
//!
//! Everything is synchronous and does file I/O: callers run it on a blocking thread. The work is
//! bounded by [`Limits`]. Directories are walked as the `find` and `grep` tools walk them
//! (`.gitignore` respected, see `files.rs`). Library code: no printing, no logging.

mod apply;
mod error;
mod files;
mod lang;
mod pattern;
mod rewrite;
mod search;

pub use apply::{Applied, AppliedFile, apply};
pub use error::AstError;
pub use files::{SkipReason, SkippedFile};
pub use lang::Lang;
pub use rewrite::{EditPlan, FileEdit, rewrite};
pub use search::{AstMatch, SearchReport, search};

/// How much one search or rewrite may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most matches a search reports, and the replacements after which a rewrite takes no
    /// further file.
    pub max_matches: usize,
    /// The largest file read, in bytes: larger ones are skipped in a directory, refused when
    /// named.
    pub max_file_bytes: u64,
    /// The longest matched text or capture a search reports, in bytes (cut, the cut noted).
    pub max_text_bytes: usize,
}

/// [`Limits::max_matches`] by default.
pub const DEFAULT_MAX_MATCHES: usize = 200;
/// [`Limits::max_file_bytes`] by default: 2 MiB, past which a source file is generated or
/// minified.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// [`Limits::max_text_bytes`] by default.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 2048;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_matches: DEFAULT_MAX_MATCHES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
        }
    }
}
