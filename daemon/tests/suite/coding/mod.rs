//! The coding layer's resources: settings layers, skills, prompt templates, the system prompt,
//! and pi migration through a `PI_HOME` holding pi's `.pi/agent`.

mod pi_home;
mod resources;
mod settings;
mod skills;
mod system_prompt;
mod templates;

use std::path::{Path, PathBuf};

/// A temporary directory tree for resource files.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    /// A tree with `(relative path, content)` files.
    pub fn new(files: &[(&str, &str)]) -> Tree {
        let tree = Tree {
            dir: tempfile::Builder::new()
                .prefix("pi-coding-test-")
                .tempdir()
                .unwrap(),
        };
        for (path, content) in files {
            tree.write(path, content);
        }
        tree
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn write(&self, relative: &str, content: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn mkdir(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    /// `text` with the tree's root shown as `<root>`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.root().display().to_string(), "<root>")
    }
}
