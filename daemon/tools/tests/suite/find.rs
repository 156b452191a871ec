//! `find`: glob semantics, .gitignore, hidden files, limits and errors.

use serde_json::json;

use super::{Session, table};

#[tokio::test]
async fn finds_follow_pi() {
    let session = Session::new();
    for name in [
        "src/main.rs",
        "src/lib.rs",
        "src/deep/mod.rs",
        "src/deep/notes.md",
        ".config/settings.rs",
        "target/debug/build.rs",
        "ignored.log",
        "docs/readme.md",
        ".git/HEAD",
    ] {
        session.file(name, "x");
    }
    session.file(".gitignore", "target/\n*.log\n");
    for index in 0..20 {
        session.file(&format!("many/file{index:02}.txt"), "x");
    }
    let cases = [
        (
            "basename glob anywhere, gitignore respected, hidden included",
            json!({"pattern": "*.rs"}),
        ),
        ("path glob", json!({"pattern": "src/**/*.rs"})),
        ("double star prefix", json!({"pattern": "**/*.md"})),
        ("directories end in a slash", json!({"pattern": "deep"})),
        ("search path", json!({"pattern": "*.rs", "path": "src"})),
        ("limit reached", json!({"pattern": "*.txt", "limit": 5})),
        ("nothing found", json!({"pattern": "*.zig"})),
        ("missing path", json!({"pattern": "*", "path": "nowhere"})),
    ];
    insta::assert_snapshot!(table(&session, "find", &cases).await);
}
