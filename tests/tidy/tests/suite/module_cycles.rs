//! No top-level module of any crate of the workspace imports, directly or through others, a
//! module that imports it back. Strict: the allowlist issue 28 started with is empty and gone.

use pi_tidy::{Allowlist, Workspace, check_cycles, module_graph};

use super::workspace_root;

#[test]
fn no_module_cycles_in_any_crate() {
    let root = workspace_root();
    let workspace = Workspace::load(&root).unwrap();
    let mut graphs = Vec::new();
    for member in &workspace.members {
        for target in &member.targets {
            graphs.push((
                target.name.clone(),
                module_graph(&target.root, &root).unwrap(),
            ));
        }
    }
    let report = check_cycles(&graphs, &Allowlist::default());
    assert!(report.is_clean(), "\n{report}");
}
