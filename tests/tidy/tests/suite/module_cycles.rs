//! No top-level module of any crate of the workspace imports, directly or through others, a
//! module that imports it back, except the edges `allowed-cycles.txt` still lists.

use pi_tidy::{Allowlist, Workspace, check_cycles, module_graph};

use super::workspace_root;

#[test]
fn no_module_cycles_beyond_the_allowlist() {
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
    let allowlist_path = root.join("tests/tidy/allowed-cycles.txt");
    let allowlist = Allowlist::parse(&std::fs::read_to_string(allowlist_path).unwrap()).unwrap();
    let report = check_cycles(&graphs, &allowlist);
    assert!(report.is_clean(), "\n{report}");
}
