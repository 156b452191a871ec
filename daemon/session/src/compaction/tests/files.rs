//! File-operation tracking: which calls count, how lists combine, how they are formatted.

use serde_json::json;

use super::{assistant, tool_call, user};
use crate::compaction::{FileLists, FileOperations};

#[test]
fn tool_calls_become_read_and_modified_lists() {
    let mut operations = FileOperations::default();
    operations.add_message(&assistant(vec![
        tool_call("1", "read", json!({"path": "b.rs"})),
        tool_call("2", "read", json!({"path": "a.rs"})),
        tool_call(
            "3",
            "edit",
            json!({"path": "b.rs", "oldText": "x", "newText": "y"}),
        ),
        tool_call("4", "write", json!({"path": "c.rs", "content": ""})),
        tool_call("5", "bash", json!({"path": "ignored.rs"})),
        tool_call("6", "read", json!({"path": ""})),
        tool_call("7", "read", json!({"path": 7})),
        tool_call("8", "grep", json!({"pattern": "x", "path": "src"})),
    ]));
    // User messages never contribute, whatever they say.
    operations.add_message(&user("read z.rs"));
    operations.add_lists(&FileLists {
        read_files: vec!["Z.md".into()],
        modified_files: vec!["d.rs".into()],
    });
    let lists = operations.lists();
    assert_eq!(
        lists,
        FileLists {
            read_files: vec!["Z.md".into(), "a.rs".into()],
            modified_files: vec!["b.rs".into(), "c.rs".into(), "d.rs".into()],
        }
    );
    assert_eq!(
        lists.format(),
        "\n\n<read-files>\nZ.md\na.rs\n</read-files>\n\n<modified-files>\nb.rs\nc.rs\nd.rs\n</modified-files>"
    );
    assert_eq!(
        lists.to_details(),
        json!({"readFiles": ["Z.md", "a.rs"], "modifiedFiles": ["b.rs", "c.rs", "d.rs"]})
    );
}

#[test]
fn formatting_and_details_round_trip() {
    let cases = [
        (FileLists::default(), ""),
        (
            FileLists {
                read_files: vec!["a".into()],
                modified_files: vec![],
            },
            "\n\n<read-files>\na\n</read-files>",
        ),
        (
            FileLists {
                read_files: vec![],
                modified_files: vec!["m".into()],
            },
            "\n\n<modified-files>\nm\n</modified-files>",
        ),
    ];
    for (lists, formatted) in cases {
        assert_eq!(lists.format(), formatted);
        assert_eq!(FileLists::from_details(&lists.to_details()), lists);
    }
    assert_eq!(
        FileLists::from_details(&json!({"readFiles": ["a", 1, null], "modifiedFiles": "x"})),
        FileLists {
            read_files: vec!["a".into()],
            modified_files: vec![],
        },
        "lenient like pi: non-arrays and non-strings are skipped"
    );
}
