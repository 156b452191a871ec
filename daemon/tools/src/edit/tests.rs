//! Unit tests of argument folding (pi's `prepareArguments`) and edit planning.

use serde_json::json;

use super::*;

fn check_args(arguments: Value, expect: Result<Vec<(&str, &str)>, &str>) {
    let args: EditArgs = serde_json::from_value(arguments.clone()).unwrap();
    let got = collect_edits(&args)
        .map(|edits| {
            edits
                .into_iter()
                .map(|edit| (edit.old_text, edit.new_text))
                .collect::<Vec<_>>()
        })
        .map_err(|error| error.to_string());
    let expect = expect
        .map(|edits| {
            edits
                .into_iter()
                .map(|(old, new)| (old.to_owned(), new.to_owned()))
                .collect::<Vec<_>>()
        })
        .map_err(str::to_owned);
    assert_eq!(got, expect, "{arguments}");
}

#[test]
fn arguments_fold_like_pis_prepare_arguments() {
    check_args(
        json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}]}),
        Ok(vec![("a", "b")]),
    );
    check_args(
        json!({"path": "f", "edits": "[{\"oldText\": \"a\", \"newText\": \"b\"}]"}),
        Ok(vec![("a", "b")]),
    );
    check_args(
        json!({"path": "f", "edits": {"oldText": "a", "newText": "b"}}),
        Ok(vec![("a", "b")]),
    );
    check_args(
        json!({"path": "f", "oldText": "a", "newText": "b"}),
        Ok(vec![("a", "b")]),
    );
    check_args(
        json!({"path": "f"}),
        Err("Edit tool input is invalid. edits must contain at least one replacement."),
    );
    check_args(
        json!({"path": "f", "oldText": "a"}),
        Err("Edit tool input is invalid. newText is required with oldText."),
    );
    check_args(
        json!({"path": "f", "edits": [{"oldText": "a"}]}),
        Err("Edit tool input is invalid. edits[0]: missing field `newText`."),
    );
}

#[test]
fn ambiguity_lists_at_most_ten_lines() {
    let text = "x\n".repeat(12);
    let edits = [OneEdit {
        old_text: "x".into(),
        new_text: "y".into(),
    }];
    let error = plan(text.as_bytes(), &edits, "f").unwrap_err();
    assert_eq!(
        error.to_string(),
        "Found 12 occurrences of the text in f (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …). The text must be unique. Please provide more context to make it unique."
    );
}

#[test]
fn non_utf8_files_are_refused() {
    let edits = [OneEdit {
        old_text: "a".into(),
        new_text: "b".into(),
    }];
    let error = plan(b"a\xff\xfe", &edits, "f").unwrap_err();
    assert_eq!(error, EditError::NotText("f".into()));
}
