//! `grep`: pi's output format, options, .gitignore, limits, notices and errors.

use serde_json::json;

use super::{Session, table};

#[tokio::test]
async fn searches_follow_pi() {
    let session = Session::new();
    session.file(
        "src/a.rs",
        "fn main() {\n    let needle = 1;\n    other();\n}\n",
    );
    session.file(
        "src/b.rs",
        "// Needle in a comment\nfn b() {}\r\nlet needle = 2;\r\n",
    );
    session.file(".hidden/c.txt", "needle hidden\n");
    session.file("build/out.txt", "needle ignored\n");
    session.file(".gitignore", "build/\n");
    session.file(".git/config", "needle in git\n");
    session.file("bin.dat", b"needle\x00binary");
    session.file("long.txt", format!("needle {}\n", "y".repeat(600)));
    session.file("ctx.txt", "1\n2\nneedle 3\n4\nneedle 5\n6\n7\n");
    session.file("many.txt", "needle\n".repeat(30));
    session.file("regex.txt", "a.c\nabc\n");
    let cases = [
        (
            "regex across files, sorted, gitignore respected, hidden included",
            json!({"pattern": "needle", "path": "src"}),
        ),
        (
            "ignore case",
            json!({"pattern": "NEEDLE", "path": "src", "ignoreCase": true}),
        ),
        (
            "literal",
            json!({"pattern": "a.c", "path": "regex.txt", "literal": true}),
        ),
        ("regex", json!({"pattern": "a.c", "path": "regex.txt"})),
        ("glob filter", json!({"pattern": "needle", "glob": "*.rs"})),
        (
            "context blocks per match",
            json!({"pattern": "needle", "path": "ctx.txt", "context": 1}),
        ),
        (
            "limit reached",
            json!({"pattern": "needle", "path": "many.txt", "limit": 2}),
        ),
        (
            "long lines truncated",
            json!({"pattern": "needle", "path": "long.txt"}),
        ),
        (
            "whole tree",
            json!({"pattern": "needle hidden|needle ignored|needle in git|needle$"}),
        ),
        ("no matches", json!({"pattern": "haystack"})),
        ("missing path", json!({"pattern": "x", "path": "nowhere"})),
        ("invalid regex", json!({"pattern": "a(b"})),
    ];
    insta::assert_snapshot!(table(&session, "grep", &cases).await);
}

#[tokio::test]
async fn output_is_capped_at_50_kb() {
    let session = Session::new();
    session.file(
        "big.txt",
        format!("needle {}\n", "z".repeat(400)).repeat(200),
    );
    let output = session
        .call("grep", json!({"pattern": "needle", "limit": 1000}))
        .await;
    let text = super::text(&output);
    assert!(text.len() <= 51_200 + 200, "{}", text.len());
    assert!(
        text.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &text[text.len() - 100..]
    );
    assert_eq!(output.details["truncation"]["truncatedBy"], "bytes");
}
