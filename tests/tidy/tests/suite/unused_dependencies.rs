//! Every dependency a member declares is used by code of its kind.

use pi_tidy::{Workspace, unused_dependencies};

use super::workspace_root;

#[test]
fn every_declared_dependency_is_used() {
    let workspace = Workspace::load(&workspace_root()).unwrap();
    let unused = unused_dependencies(&workspace).unwrap();
    let lines: Vec<String> = unused.iter().map(ToString::to_string).collect();
    assert!(unused.is_empty(), "\n{}", lines.join("\n"));
}
