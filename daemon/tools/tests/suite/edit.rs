//! `edit`: multi-edit, legacy single edit, every error text, fuzzy matching that rewrites only
//! the matched range, CRLF and BOM preservation, diffs.

use serde_json::{Value, json};

use super::Session;

/// Runs each case on a fresh `file.txt` holding its initial content; renders the result and
/// the file afterwards (escaped, so `\r` and the BOM show).
async fn check(cases: &[(&str, &str, Value)]) -> String {
    let mut out = String::new();
    for (name, initial, arguments) in cases {
        let session = Session::new();
        session.file("file.txt", initial);
        let output = session.call("edit", arguments.clone()).await;
        let after = String::from_utf8(session.read("file.txt")).unwrap();
        let file = if after == *initial {
            "(unchanged)".to_owned()
        } else {
            format!("{after:?}")
        };
        out.push_str(&format!(
            "## {name}\n{arguments}\n{}\n--- file\n{file}\n\n",
            session.render(&output)
        ));
    }
    out
}

const CODE: &str = "fn one() {\n    1\n}\n\nfn two() {\n    2\n}\n\nfn three() {\n    3\n}\n";

#[tokio::test]
async fn successful_edits() {
    let cases = [
        (
            "legacy single replacement",
            CODE,
            json!({"path": "file.txt", "oldText": "    2\n", "newText": "    22\n"}),
        ),
        (
            "two blocks in one call",
            CODE,
            json!({"path": "file.txt", "edits": [
                {"oldText": "fn one() {\n    1", "newText": "fn one() {\n    10"},
                {"oldText": "    3\n}", "newText": "    30\n}\n// end"},
            ]}),
        ),
        (
            "deleting lines",
            CODE,
            json!({"path": "file.txt", "edits": [{"oldText": "\nfn two() {\n    2\n}\n", "newText": ""}]}),
        ),
        (
            "adjacent edits on one line",
            "a b c\n",
            json!({"path": "file.txt", "edits": [
                {"oldText": "a", "newText": "A"}, {"oldText": "c", "newText": "C"},
            ]}),
        ),
        (
            "edits are matched against the original, not one after another",
            "x y\n",
            json!({"path": "file.txt", "edits": [
                {"oldText": "x", "newText": "y"}, {"oldText": "y", "newText": "x"},
            ]}),
        ),
    ];
    insta::assert_snapshot!(check(&cases).await);
}

#[tokio::test]
async fn refused_edits_change_nothing() {
    let repeated = "item\nitem\nother\nitem\n";
    let cases = [
        (
            "not found (single)",
            CODE,
            json!({"path": "file.txt", "oldText": "fn four", "newText": "x"}),
        ),
        (
            "not found (multi)",
            CODE,
            json!({"path": "file.txt", "edits": [
                {"oldText": "fn one", "newText": "fn uno"}, {"oldText": "fn four", "newText": "x"},
            ]}),
        ),
        (
            "ambiguous (single) names the lines",
            repeated,
            json!({"path": "file.txt", "oldText": "item", "newText": "x"}),
        ),
        (
            "ambiguous (multi)",
            repeated,
            json!({"path": "file.txt", "edits": [
                {"oldText": "other", "newText": "x"}, {"oldText": "item\n", "newText": "y\n"},
            ]}),
        ),
        (
            "overlapping edits",
            CODE,
            json!({"path": "file.txt", "edits": [
                {"oldText": "fn two() {\n    2", "newText": "a"}, {"oldText": "    2\n}", "newText": "b"},
            ]}),
        ),
        (
            "empty oldText (single)",
            CODE,
            json!({"path": "file.txt", "oldText": "", "newText": "x"}),
        ),
        (
            "empty oldText (multi)",
            CODE,
            json!({"path": "file.txt", "edits": [
                {"oldText": "fn one", "newText": "x"}, {"oldText": "", "newText": "y"},
            ]}),
        ),
        ("no edits", CODE, json!({"path": "file.txt", "edits": []})),
        (
            "identical replacement",
            CODE,
            json!({"path": "file.txt", "oldText": "fn one", "newText": "fn one"}),
        ),
        (
            "missing file",
            CODE,
            json!({"path": "missing.txt", "oldText": "a", "newText": "b"}),
        ),
        (
            "one bad edit stops all",
            CODE,
            json!({"path": "file.txt", "edits": [
                {"oldText": "fn one", "newText": "fn uno"}, {"oldText": "}", "newText": "]"},
            ]}),
        ),
    ];
    insta::assert_snapshot!(check(&cases).await);
}

#[tokio::test]
async fn fuzzy_matches_rewrite_only_the_matched_range() {
    let initial = "say(“hello”);   \nlet x = a — b;\t\nkeep\u{00A0}this “as is”  \r\n";
    let cases = [(
        "smart quotes, dashes and trailing whitespace",
        initial,
        json!({"path": "file.txt", "edits": [
            {"oldText": "say(\"hello\");\nlet x = a - b;", "newText": "say(\"bye\");\nlet x = a + b;"},
        ]}),
    )];
    let rendered = check(&cases).await;
    insta::assert_snapshot!(rendered);
    // Everything after the matched range — NBSP, curly quotes, trailing spaces, the CRLF —
    // is byte-identical.
    assert!(
        rendered.contains("\\tkeep\\u{a0}this “as is”  \\r\\n\"")
            || rendered.contains("\\t\\nkeep\\u{a0}this “as is”  \\r\\n\""),
        "{rendered}"
    );
}

#[tokio::test]
async fn line_endings_and_bom_are_preserved() {
    let crlf = "first\r\nsecond\r\nthird\r\n";
    let bom = "\u{feff}alpha\nbeta\n";
    let mixed = "unix\nwindows\r\nunix again\n";
    let cases = [
        (
            "CRLF file, LF oldText and multi-line newText",
            crlf,
            json!({"path": "file.txt", "edits": [
                {"oldText": "second\nthird", "newText": "2nd\n3rd\n3.5th"},
            ]}),
        ),
        (
            "CRLF file, CRLF oldText",
            crlf,
            json!({"path": "file.txt", "oldText": "first\r\nsecond", "newText": "1st\r\n2nd"}),
        ),
        (
            "BOM kept",
            bom,
            json!({"path": "file.txt", "oldText": "beta", "newText": "gamma"}),
        ),
        (
            "BOM not part of the match",
            bom,
            json!({"path": "file.txt", "oldText": "alpha", "newText": "ALPHA"}),
        ),
        (
            "mixed endings outside the range stay as they are",
            mixed,
            json!({"path": "file.txt", "oldText": "unix again", "newText": "still unix"}),
        ),
    ];
    insta::assert_snapshot!(check(&cases).await);
}

#[tokio::test]
async fn diffs_show_context_and_elide_long_runs() {
    let long: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let session = Session::new();
    session.file("file.txt", &long);
    let output = session
        .call(
            "edit",
            json!({"path": "file.txt", "edits": [
                {"oldText": "line 5\n", "newText": "line five\n"},
                {"oldText": "line 30\nline 31\n", "newText": "line thirty\n"},
            ]}),
        )
        .await;
    assert!(!output.is_error, "{output:?}");
    assert_eq!(output.details["firstChangedLine"], 5);
    assert_eq!(
        output
            .details
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["diff", "firstChangedLine"],
        "pi's keys, in pi's order"
    );
    insta::assert_snapshot!(output.details["diff"].as_str().unwrap());
}
