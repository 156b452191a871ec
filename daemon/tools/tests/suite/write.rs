//! `write`: creation with parents, UTF-8 byte counts, what the file was before (details),
//! atomic replacement keeping permissions, symlinks written through, errors.

use std::os::unix::fs::PermissionsExt as _;

use serde_json::json;

use super::{Session, table};

#[tokio::test]
async fn writes_create_replace_and_report_bytes() {
    let session = Session::new();
    session.file("existing.txt", "old content that is longer\n");
    // Past the bound of the previous text in the details, and not UTF-8: sizes only.
    session.file(
        "big.txt",
        "x".repeat(pi_tools::PREVIOUS_TEXT_LIMIT as usize + 1),
    );
    std::fs::write(session.cwd().join("binary.bin"), [0xff, 0xfe, 0x00]).unwrap();
    std::fs::create_dir_all(session.cwd().join("a-directory")).unwrap();
    let cases = [
        (
            "new file in new directories",
            json!({"path": "deep/er/new.txt", "content": "hello\n"}),
        ),
        (
            "UTF-8 bytes, not characters",
            json!({"path": "unicode.txt", "content": "héllo wörld ✓"}),
        ),
        (
            "overwrite",
            json!({"path": "existing.txt", "content": "new\n"}),
        ),
        ("empty content", json!({"path": "empty.txt", "content": ""})),
        (
            "overwrite past the previous text's bound",
            json!({"path": "big.txt", "content": "small\n"}),
        ),
        (
            "overwrite a file that is not UTF-8",
            json!({"path": "binary.bin", "content": "text\n"}),
        ),
        (
            "a directory in the way",
            json!({"path": "a-directory", "content": "x"}),
        ),
    ];
    insta::assert_snapshot!(table(&session, "write", &cases).await);
    assert_eq!(session.read("deep/er/new.txt"), b"hello\n");
    assert_eq!(session.read("unicode.txt"), "héllo wörld ✓".as_bytes());
    assert_eq!(session.read("existing.txt"), b"new\n");
    assert_eq!(session.read("empty.txt"), b"");
    let leftovers: Vec<_> = std::fs::read_dir(session.cwd())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

#[tokio::test]
async fn replacing_keeps_permissions_and_writes_through_symlinks() {
    let session = Session::new();
    let script = session.file("script.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let output = session
        .call(
            "write",
            json!({"path": "script.sh", "content": "#!/bin/sh\necho new\n"}),
        )
        .await;
    assert!(!output.is_error, "{output:?}");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);

    let target = session.file("target.txt", "target\n");
    std::os::unix::fs::symlink(&target, session.cwd().join("link.txt")).unwrap();
    let output = session
        .call(
            "write",
            json!({"path": "link.txt", "content": "through the link\n"}),
        )
        .await;
    assert!(!output.is_error, "{output:?}");
    assert!(
        std::fs::symlink_metadata(session.cwd().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(session.read("target.txt"), b"through the link\n");
}
