//! A 100 MB file: `read` deep into it and `edit` near its end, correctly.

use serde_json::json;

use super::{Session, text};

const LINES: usize = 1_600_000;

fn line(n: usize) -> String {
    format!("line {n:08} of the large file, padded with filler text ......\n")
}

#[tokio::test]
async fn a_100_mb_file_reads_and_edits_correctly() {
    let session = Session::new();
    let mut content = String::with_capacity(LINES * 64);
    for n in 1..=LINES {
        content.push_str(&line(n));
    }
    assert!(content.len() >= 100_000_000, "{}", content.len());
    session.file("large.txt", &content);

    let output = session
        .call(
            "read",
            json!({"path": "large.txt", "offset": 1_500_000, "limit": 2}),
        )
        .await;
    assert_eq!(
        text(&output),
        format!(
            "{}{}\n\n[100000 more lines in file. Use offset=1500002 to continue.]",
            line(1_500_000),
            line(1_500_001).trim_end()
        )
    );

    let output = session
        .call(
            "edit",
            json!({"path": "large.txt", "edits": [
                {"oldText": line(1_599_999), "newText": "replaced\n"},
                {"oldText": line(3), "newText": ""},
            ]}),
        )
        .await;
    assert!(!output.is_error, "{output:?}");
    assert_eq!(output.details["firstChangedLine"], 3);
    let expected = content
        .replacen(&line(1_599_999), "replaced\n", 1)
        .replacen(&line(3), "", 1);
    assert!(
        session.read("large.txt") == expected.as_bytes(),
        "the edited file differs"
    );
}
