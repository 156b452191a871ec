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

#[tokio::test]
async fn a_sandbox_keeps_write_and_edit_inside_its_roots_and_says_why() {
    let mut session = Session::new();
    // Outside the project and the temp directories the sandbox lets the agent write.
    let elsewhere = tempfile::tempdir_in("/var/tmp").unwrap();
    let outside = elsewhere.path().canonicalize().unwrap();
    std::fs::write(outside.join("old.txt"), "old\n").unwrap();
    // A link inside the project that leads out of it.
    std::os::unix::fs::symlink(&outside, session.cwd().join("escape")).unwrap();
    session.file("inside.txt", "old\n");
    let sandbox = pi_tools::sandbox::Sandbox {
        mode: pi_tools::sandbox::SandboxMode::WorkspaceWrite,
        helper: "/unused".into(),
        writable_roots: Vec::new(),
        network: false,
    };
    session.context = std::sync::Arc::new(pi_tools::ToolContext {
        sandbox: Some(sandbox),
        ..(*session.context).clone()
    });
    let allowed = session
        .call(
            "write",
            json!({"path": "new/inside.txt", "content": "fine\n"}),
        )
        .await;
    assert!(!allowed.is_error, "{}", super::text(&allowed));
    let edited = session
        .call(
            "edit",
            json!({"path": "inside.txt", "oldText": "old", "newText": "new"}),
        )
        .await;
    assert!(!edited.is_error, "{}", super::text(&edited));
    assert_eq!(session.read("inside.txt"), b"new\n");

    let cwd = session.cwd().display().to_string();
    for (tool, args, target) in [
        (
            "write",
            json!({"path": outside.join("new.txt"), "content": "x"}),
            outside.join("new.txt"),
        ),
        (
            "write",
            json!({"path": "escape/new.txt", "content": "x"}),
            session.cwd().join("escape/new.txt"),
        ),
        (
            "write",
            json!({"path": "escape/../escape/new.txt", "content": "x"}),
            session.cwd().join("escape/new.txt"),
        ),
        (
            "edit",
            json!({"path": outside.join("old.txt"), "oldText": "old", "newText": "new"}),
            outside.join("old.txt"),
        ),
    ] {
        let refused = session.call(tool, args).await;
        assert!(refused.is_error);
        assert_eq!(
            super::text(&refused),
            format!(
                "Cannot write {}: the sandbox does not let the agent write there.\n\n[Blocked by \
                 the sandbox: the sandbox (workspace-write) lets commands write only beneath \
                 {cwd}, /tmp; the network is off. If the file must change, ask the user to \
                 change the `sandbox` setting.]",
                target.display()
            )
        );
    }
    assert!(!outside.join("new.txt").exists());
    assert_eq!(std::fs::read(outside.join("old.txt")).unwrap(), b"old\n");
}

#[tokio::test]
async fn new_files_and_directories_get_the_users_mask_not_the_daemons() {
    let mut session = Session::new();
    // The daemon runs with umask 077; the user's is 027 here.
    session.context = std::sync::Arc::new(pi_tools::ToolContext {
        spawner: pi_tools::spawn::Spawner::guarded("/unused".into(), Some(0o027)),
        resize_images: true,
        ..(*session.context).clone()
    });
    let previous = rustix::process::umask(rustix::fs::Mode::from_bits_truncate(0o077));
    let written = session
        .call(
            "write",
            json!({"path": "fresh/dir/file.txt", "content": "x"}),
        )
        .await;
    rustix::process::umask(previous);
    assert!(!written.is_error, "{}", super::text(&written));
    let mode = |relative: &str| {
        std::fs::metadata(session.cwd().join(relative))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("fresh"), 0o750);
    assert_eq!(mode("fresh/dir"), 0o750);
    assert_eq!(mode("fresh/dir/file.txt"), 0o640);
}
