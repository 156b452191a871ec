//! `ls`: sorting, directory suffixes, dotfiles, limits and errors.

use serde_json::json;

use super::{Session, table};

#[tokio::test]
async fn listings_follow_pi() {
    let session = Session::new();
    for name in [
        "b.txt",
        "A.txt",
        ".hidden",
        "c/inner.txt",
        "_under.rs",
        "Zed.md",
    ] {
        session.file(&format!("list/{name}"), "x");
    }
    std::fs::create_dir_all(session.cwd().join("empty")).unwrap();
    std::os::unix::fs::symlink(
        session.cwd().join("list/c"),
        session.cwd().join("list/link-to-dir"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", session.cwd().join("list/dangling")).unwrap();
    session.file("file.txt", "x");
    for index in 0..30 {
        session.file(&format!("many/f{index:02}"), "x");
    }
    let cases = [
        (
            "sorted case-insensitively, dirs with a slash, dotfiles, broken links skipped",
            json!({"path": "list"}),
        ),
        ("limit reached", json!({"path": "many", "limit": 3})),
        (
            "limit exactly the count",
            json!({"path": "list", "limit": 7}),
        ),
        ("empty directory", json!({"path": "empty"})),
        ("missing", json!({"path": "missing"})),
        ("not a directory", json!({"path": "file.txt"})),
    ];
    insta::assert_snapshot!(table(&session, "ls", &cases).await);
    let output = session.call("ls", json!({})).await;
    assert_eq!(super::text(&output), "empty/\nfile.txt\nlist/\nmany/");
}
