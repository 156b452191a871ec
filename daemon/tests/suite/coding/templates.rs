//! Prompt template discovery: sources in precedence order, descriptions from frontmatter or
//! the first line, source suffixes, collisions.

use pi_daemon::coding::settings::PathEntry;
use pi_daemon::coding::templates::{self, TemplateSources, load_templates};

use super::Tree;

#[test]
fn discovery_descriptions_and_collisions() {
    let long_line = format!("{}tail", "x".repeat(60));
    let tree = Tree::new(&[
        (
            "project/.pi/prompts/review.md",
            "---\ndescription: Review the diff\n---\nReview $1",
        ),
        ("project/.pi/prompts/notes.txt", "not a template"),
        (
            "project/.pi/prompts/sub/deep.md",
            "directories are not recursed",
        ),
        ("ours/prompts/review.md", "Ours loses to the project"),
        ("ours/prompts/fix.md", "\n\n  Fix the failing test\nmore"),
        ("pi/prompts/fix.md", "pi's loses to ours"),
        ("pi/prompts/long.md", &long_line),
        ("pi/prompts/empty.md", ""),
        ("pi/prompts/broken.md", "---\ndescription: 'open\n---\nx"),
        ("extra/one.md", "---\ndescription: From settings\n---\nbody"),
        ("extra/hidden.md", "excluded"),
    ]);
    let sources = TemplateSources {
        entries: vec![
            PathEntry {
                path: tree.path("extra"),
                exclude: false,
            },
            PathEntry {
                path: tree.path("extra/hidden.md"),
                exclude: true,
            },
            PathEntry {
                path: tree.path("missing.md"),
                exclude: false,
            },
        ],
        project_dir: Some(tree.path("project/.pi/prompts")),
        user_dirs: vec![tree.path("ours/prompts"), tree.path("pi/prompts")],
        explicit: Vec::new(),
    };
    let mut diagnostics = Vec::new();
    let found = load_templates(&sources, &mut diagnostics);
    let mut out = String::new();
    for template in &found {
        out.push_str(&format!(
            "/{} — {} <- {}\n",
            template.name,
            template.description,
            tree.redact(&template.file_path.display().to_string())
        ));
    }
    for diagnostic in &diagnostics {
        out.push_str(&format!("{}\n", tree.redact(&diagnostic.to_string())));
    }
    insta::assert_snapshot!(out);

    assert_eq!(
        templates::expand("/review src/main.rs", &found).as_deref(),
        Some("Review src/main.rs")
    );
}
