mod fixtures;
mod locks;
mod module_cycles;
mod unused_dependencies;

use std::path::{Path, PathBuf};

/// The workspace this crate is a member of.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists because this crate is in it")
}
