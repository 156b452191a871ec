//! Each check on small workspaces written to a temporary directory: it fails on what it
//! exists to catch (a cycle, an unused dependency) and stays quiet on look-alikes.

use std::path::Path;

use insta::assert_snapshot;
use pi_tidy::{Allowlist, Workspace, check_cycles, module_graph, unused_dependencies};

use super::workspace_root;

const WORKSPACE: &str = "[workspace]\nmembers = [\"demo\"]\n";
const MANIFEST: &str = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n";

/// Writes `files` (path, text) under a new temporary directory.
fn write(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// The cycle report of a one-crate workspace `demo` made of `files` under `demo/src/`.
fn cycles(files: &[(&str, &str)], allowlist: &str) -> String {
    let mut all = vec![("Cargo.toml", WORKSPACE), ("demo/Cargo.toml", MANIFEST)];
    let paths: Vec<String> = files
        .iter()
        .map(|(path, _)| format!("demo/src/{path}"))
        .collect();
    all.extend(
        paths
            .iter()
            .map(String::as_str)
            .zip(files.iter().map(|(_, text)| *text)),
    );
    let dir = write(&all);
    let workspace = Workspace::load(dir.path()).unwrap();
    let mut graphs = Vec::new();
    for member in &workspace.members {
        for target in &member.targets {
            graphs.push((
                target.name.clone(),
                module_graph(&target.root, dir.path()).unwrap(),
            ));
        }
    }
    let report = check_cycles(&graphs, &Allowlist::parse(allowlist).unwrap());
    if report.is_clean() {
        "clean".to_string()
    } else {
        report.to_string()
    }
}

/// The unused dependencies of a workspace made of `files`.
fn unused(files: &[(&str, &str)]) -> String {
    let mut all = vec![("Cargo.toml", WORKSPACE)];
    all.extend_from_slice(files);
    let dir = write(&all);
    let workspace = Workspace::load(dir.path()).unwrap();
    let unused = unused_dependencies(&workspace).unwrap();
    let lines: Vec<String> = unused.iter().map(ToString::to_string).collect();
    if lines.is_empty() {
        "none".to_string()
    } else {
        lines.join("\n")
    }
}

const THREE: &[(&str, &str)] = &[
    ("lib.rs", "mod a;\nmod b;\npub mod c;\n"),
    ("a.rs", "use crate::b::B;\npub struct X;\n"),
    (
        "b.rs",
        "pub struct B;\npub fn f() {\n    crate::c::g()\n}\n",
    ),
    ("c.rs", "use crate::{a::X, b};\npub fn g() {}\n"),
];

#[test]
fn a_cycle_through_a_third_module_is_reported_with_its_sites() {
    assert_snapshot!(cycles(THREE, ""), @r"
    demo: the modules {a, b, c} import each other; break one of the new edges:
      a -> b (new)
        demo/src/a.rs:1
      b -> c (new)
        demo/src/b.rs:3
      c -> a (new)
        demo/src/c.rs:1
      c -> b (new)
        demo/src/c.rs:1
    ");
}

#[test]
fn the_allowlist_lets_listed_edges_pass_and_only_shrinks() {
    let listed = "# today's edges\ndemo: a -> b\ndemo: b -> c\ndemo: c -> a\ndemo: c -> b\n";
    assert_snapshot!(cycles(THREE, listed), @"clean");

    // One new edge in a listed cycle fails, naming the new edge among the listed ones.
    let partly = "demo: a -> b\ndemo: b -> c\ndemo: c -> a\n";
    assert_snapshot!(cycles(THREE, partly), @r"
    demo: the modules {a, b, c} import each other; break one of the new edges:
      a -> b (allowed)
        demo/src/a.rs:1
      b -> c (allowed)
        demo/src/b.rs:3
      c -> a (allowed)
        demo/src/c.rs:1
      c -> b (new)
        demo/src/c.rs:1
    ");

    // With `c` no longer using `a` nor `b`, the listed edges are stale.
    let broken = &[THREE[0], THREE[1], THREE[2], ("c.rs", "pub fn g() {}\n")];
    assert_snapshot!(cycles(broken, listed), @r"
    demo: a -> b no longer closes a cycle; remove it from allowed-cycles.txt
    demo: b -> c no longer closes a cycle; remove it from allowed-cycles.txt
    demo: c -> a no longer closes a cycle; remove it from allowed-cycles.txt
    demo: c -> b no longer closes a cycle; remove it from allowed-cycles.txt
    ");
}

#[test]
fn mentions_in_comments_strings_tests_and_macros_are_not_edges() {
    let files = &[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\n"),
        (
            "b.rs",
            concat!(
                "// crate::a::X\n",
                "/* use crate::a; */\n",
                "const S: &str = \"crate::a::X\";\n",
                "const R: &str = r#\"super::a\"#;\n",
                "pub(crate) struct B;\n",
                "macro_rules! m { () => { $crate::a::X } }\n",
                "#[cfg(test)]\nmod tests {\n    use crate::a::X;\n}\n",
                "#[cfg(test)]\nmod more;\n",
            ),
        ),
    ];
    assert_snapshot!(cycles(files, ""), @"clean");
}

#[test]
fn super_chains_that_reach_the_root_are_edges() {
    let files = &[
        ("lib.rs", "mod a;\nmod x;\n"),
        ("a/mod.rs", "mod b;\nmod deep;\n"),
        // From a::b, two steps reach the root; one step stays inside `a`.
        ("a/b.rs", "use super::deep;\nuse super::super::x::X;\n"),
        ("a/deep/mod.rs", "pub fn f() { super::super::x::g() }\n"),
        // An inline module is one more step.
        (
            "x.rs",
            "pub struct X;\npub fn g() {}\nmod inner {\n    use super::super::a;\n}\n",
        ),
    ];
    assert_snapshot!(cycles(files, ""), @r"
    demo: the modules {a, x} import each other; break one of the new edges:
      a -> x (new)
        demo/src/a/b.rs:2
        demo/src/a/deep/mod.rs:1
      x -> a (new)
        demo/src/x.rs:4
    ");
}

#[test]
fn a_root_reexport_counts_as_the_module_it_comes_from() {
    let files = &[
        (
            "lib.rs",
            "mod a;\nmod b;\npub use b::{Thing as Renamed, Other};\n",
        ),
        ("a.rs", "pub struct A;\npub fn f(_: crate::Renamed) {}\n"),
        (
            "b.rs",
            "use crate::a::A;\npub struct Thing;\npub struct Other;\n",
        ),
    ];
    assert_snapshot!(cycles(files, ""), @r"
    demo: the modules {a, b} import each other; break one of the new edges:
      a -> b (new)
        demo/src/a.rs:2
      b -> a (new)
        demo/src/b.rs:1
    ");
}

#[test]
fn an_edge_added_to_this_workspace_that_closes_a_cycle_fails() {
    // `state` uses `config`; make `config` use `state` as a careless change would.
    let root = workspace_root();
    let workspace = Workspace::load(&root).unwrap();
    let daemon = workspace
        .members
        .iter()
        .find(|m| m.name == "pi-daemon")
        .unwrap();
    let library = daemon
        .targets
        .iter()
        .find(|t| t.name == "pi-daemon")
        .unwrap();
    let mut graph = module_graph(&library.root, &root).unwrap();
    assert!(
        graph
            .edges
            .contains_key(&("state".to_string(), "config".to_string()))
    );
    let site = pi_tidy::Site {
        file: Path::new("daemon/src/config.rs").to_path_buf(),
        line: 1,
    };
    graph
        .edges
        .insert(("config".to_string(), "state".to_string()), vec![site]);
    let report = check_cycles(&[("pi-daemon".into(), graph)], &Allowlist::default());
    let text = report.to_string();
    assert!(
        text.contains("  config -> state (new)\n    daemon/src/config.rs:1\n"),
        "{text}"
    );
}

#[test]
fn a_dependency_its_code_never_names_is_reported() {
    let manifest = concat!(
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        "[package.metadata.tidy]\nfeature-only = { rustls = \"turns on ring\", gone = \"stale\" }\n",
        "[dependencies]\n",
        "serde = \"1\"\n",
        "json = { package = \"serde_json\", version = \"1\" }\n",
        "tokio = \"1\"\n",
        "regex = \"1\"\n",
        "rustls = \"0.23\"\n",
        "only-in-tests = \"1\"\n",
        "[target.'cfg(unix)'.dependencies]\nrustix = \"1\"\n",
        "[dev-dependencies]\ntempfile = \"3\"\ninsta = \"1\"\n",
        "[build-dependencies]\ncc = \"1\"\n",
    );
    let files = &[
        ("demo/Cargo.toml", manifest),
        (
            "demo/src/lib.rs",
            concat!(
                "use serde::Serialize;\n",
                "pub fn f() -> json::Value { json::Value::Null }\n",
                "#[tokio::main]\nasync fn g() {}\n",
                "// regex::Regex is only in a comment\n",
                "const S: &str = \"rustix::process\";\n",
                "#[cfg(test)]\nmod tests {\n    use only_in_tests::X;\n}\n",
            ),
        ),
        (
            "demo/tests/all.rs",
            "fn t() { let _ = tempfile::tempdir(); }\n",
        ),
        ("demo/build.rs", "fn main() {}\n"),
    ];
    assert_snapshot!(unused(files), @r"
    demo: [dependencies] only-in-tests is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    demo: [dependencies] regex is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    demo: [dev-dependencies] insta is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    demo: [build-dependencies] cc is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    demo: [dependencies] rustix is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    demo: [dependencies] gone is never used; remove it, or list it under [package.metadata.tidy] feature-only with the reason
    ");
}
