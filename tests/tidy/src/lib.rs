//! pi-tidy: checks of the workspace's shape that the compiler does not make, run as ordinary
//! tests (`tests/suite/`) so `tests/run` runs them.
//!
//! - Module cycles: within every target of every member (a library, a binary), the top-level
//!   modules must not import each other in a circle. An edge is a `crate::x` path (in a `use`
//!   tree or inline) or a `super::` chain that climbs to the crate root, in code that is not
//!   `#[cfg(test)]`. An allowlist (`allowed-cycles.txt` format) may list edges that still form
//!   cycles, as a ratchet while a workspace adopts the check: an edge not listed fails, and so
//!   does a listed edge that no longer closes a cycle. This workspace's list is empty.
//! - Unused dependencies: every declared dependency is named in the code of its kind (normal:
//!   the targets' non-test code and `build.rs`; dev: also `tests/`, `benches/`, `examples/` and
//!   test code; build: `build.rs`), unless `[package.metadata.tidy] feature-only` says why it is
//!   declared without being named.
//! - The poisoned-lock policy: a standard lock's result is taken over, never unwrapped nor
//!   skipped (`locks`).
//!
//! The analysis reads source text, not the compiler's view: comments, string and char literals
//! and `#[cfg(test)]` items are blanked first (`lexer`), and paths are recognised by their
//! shape. It never writes anything.

mod cycles;
mod deps;
mod graph;
mod lexer;
mod locks;
mod manifest;
mod modules;

use std::path::PathBuf;

pub use cycles::{AllowedEdge, Allowlist, CycleReport, check_cycles};
pub use deps::{UnusedDependency, unused_dependencies};
pub use graph::cyclic_components;
pub use lexer::{blank, drop_cfg_test};
pub use locks::{LockSite, lock_sites};
pub use manifest::{Dependency, DependencyKind, Member, Target, Workspace};
pub use modules::{ModuleGraph, Site, module_graph};

/// What can stop a check before it has an answer.
#[derive(Debug, thiserror::Error)]
pub enum TidyError {
    /// A file could not be read. Check that the path exists and is readable.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A `Cargo.toml` is not valid TOML. Fix the manifest; cargo would refuse it too.
    #[error("{} is not valid TOML: {source}", path.display())]
    Toml {
        path: PathBuf,
        source: toml::de::Error,
    },
    /// A manifest or a source tree has a shape this check does not understand (a members
    /// glob, a `mod` whose file is missing). Fix the tree, or teach the check the new shape.
    #[error("{}: {message}", path.display())]
    Shape { path: PathBuf, message: String },
    /// A line of `allowed-cycles.txt` is not `crate: from -> to`. Fix that line.
    #[error("allowed-cycles.txt:{line}: {message}")]
    Allowlist { line: usize, message: String },
}
