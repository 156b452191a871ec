//! The `bash` sandbox on the real `pid`, two sessions at once: in a project whose settings say
//! `sandbox: workspace-write`, a command writes inside the project but not outside it, cannot
//! open a TCP connection, and the model reads why (background jobs alike); a session
//! elsewhere, without the setting, runs the same commands unconfined at the same time. Linux only: where the kernel has no
//! Landlock the daemon says so on the command's output, and this test stops there, printing
//! that reason.

use std::path::Path;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, SessionAttach, SessionAttachParams, SessionCreate,
    SessionCreateParams, SettingsGet, SettingsGetParams,
};
use serde_json::json;

use super::harness::{MODEL, World};
use super::mcp_faults::{caller, run, tool_results};

/// Creates a session in `cwd`, attached.
async fn session_in(client: &Client, cwd: &Path) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            model: Some(MODEL.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    session.id
}

/// Runs `command` through the model's `bash` call: the result's text and whether it failed.
async fn bash(
    client: &Client,
    events: &mut Notifications,
    session_id: &str,
    command: &str,
) -> (String, bool) {
    let seen = run(
        client,
        events,
        session_id,
        &format!("call bash {}", json!({"command": command})),
    )
    .await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    let content: serde_json::Value = serde_json::from_str(&content).unwrap();
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        is_error,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_write_sandbox_confines_bash_while_another_session_runs_free() {
    let world = World::start_with(
        "anthropic-messages",
        &[
            (
                "boxed/.pi/settings.json",
                json!({"sandbox": "workspace-write"}).to_string(),
            ),
            ("free/README", "not sandboxed\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path();
    let (boxed_dir, free_dir) = (home.join("boxed"), home.join("free"));
    // Outside both projects and outside the temp directories the sandbox lets commands
    // write (/tmp, where the test's home is, and $TMPDIR): /var/tmp, else the user's home.
    let base = [
        "/var/tmp".to_owned(),
        std::env::var("HOME").unwrap_or_default(),
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|dir| {
        dir.is_dir()
            && !dir.starts_with("/tmp")
            && std::env::var_os("TMPDIR").is_none_or(|tmp| !dir.starts_with(tmp))
    })
    .expect("a directory outside /tmp and $TMPDIR (/var/tmp or $HOME) for the test to write");
    let outside = tempfile::tempdir_in(base).unwrap();
    let server = world.server.url();
    let host_port = server
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .replace(':', "/");
    let write_both = format!(
        "echo in > inside.txt; echo out > {}/$(basename $PWD).txt",
        outside.path().display()
    );
    let connect = format!("exec 3<>/dev/tcp/{host_port} && echo connected");

    let (boxed_client, mut boxed_events) = world.client().await;
    let (free_client, mut free_events) = world.client().await;
    let boxed = session_in(&boxed_client, &boxed_dir).await;
    let free = session_in(&free_client, &free_dir).await;

    let ((boxed_text, boxed_failed), (free_text, free_failed)) = tokio::join!(
        bash(&boxed_client, &mut boxed_events, &boxed, &write_both),
        bash(&free_client, &mut free_events, &free, &write_both),
    );
    if boxed_text.contains("this kernel has no Landlock") {
        #[allow(clippy::print_stderr, reason = "the stated reason for stopping here")]
        {
            eprintln!(
                "SKIPPED the sandbox assertions: the kernel has no Landlock ({boxed_text:?})"
            );
        }
        return;
    }
    // Inside: written. Outside: refused, and the model reads what the sandbox allows.
    assert!(boxed_failed, "{boxed_text}");
    assert_eq!(
        std::fs::read_to_string(boxed_dir.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.path().join("boxed.txt").exists());
    assert!(boxed_text.contains("Permission denied"), "{boxed_text}");
    // Beneath its directory, the temp directory and its scratch directory (`local://`).
    assert!(
        boxed_text.contains(&format!(
            "[Blocked by the sandbox? the sandbox (workspace-write) lets commands write only \
             beneath {}, /tmp, {}; the network is off. If the command needs more, ask the user \
             to change the `sandbox` setting.]",
            boxed_dir.display(),
            world
                .daemon
                .paths
                .artifacts_dir()
                .join(&boxed)
                .join("local")
                .display()
        )),
        "{boxed_text}"
    );
    // The other session, at the same time, was not confined.
    assert!(!free_failed, "{free_text}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("free.txt")).unwrap(),
        "out\n"
    );

    // No network in the sandbox; the free session reaches the same server.
    let ((boxed_text, boxed_failed), (free_text, free_failed)) = tokio::join!(
        bash(&boxed_client, &mut boxed_events, &boxed, &connect),
        bash(&free_client, &mut free_events, &free, &connect),
    );
    assert!(boxed_failed, "{boxed_text}");
    assert!(
        boxed_text.contains("Operation not permitted") && !boxed_text.contains("connected\n"),
        "{boxed_text}"
    );
    assert!(
        !free_failed && free_text.contains("connected"),
        "{free_text}"
    );

    // Children stay confined, and reading outside the project is allowed.
    let (text, failed) = bash(
        &boxed_client,
        &mut boxed_events,
        &boxed,
        &format!(
            "cat ../free/README && sh -c 'touch {}/child.txt'",
            outside.path().display()
        ),
    )
    .await;
    assert!(failed && text.starts_with("not sandboxed\n"), "{text}");
    assert!(!outside.path().join("child.txt").exists());

    // Background jobs are confined too.
    let jobs_session = boxed_client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: boxed_dir.display().to_string(),
            model: Some(MODEL.to_owned()),
            tools: Some(vec!["bash".to_owned(), "job".to_owned()]),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .id;
    boxed_client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: jobs_session.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let seen = run(
        &boxed_client,
        &mut boxed_events,
        &jobs_session,
        &format!(
            "call bash {}",
            json!({"command": format!("touch {}/job.txt", outside.path().display()), "background": true})
        ),
    )
    .await;
    let (_, content, _, details) = tool_results(&seen).remove(0);
    let job = details["jobId"]
        .as_str()
        .unwrap_or_else(|| panic!("{content}"))
        .to_owned();
    let seen = run(
        &boxed_client,
        &mut boxed_events,
        &jobs_session,
        &format!(
            "call job {}",
            json!({"action": "wait", "id": job, "timeout": 30})
        ),
    )
    .await;
    let (_, content, _, _) = tool_results(&seen).remove(0);
    assert!(
        content.contains("Permission denied") && content.contains("exited with code 1"),
        "{content}"
    );
    assert!(!outside.path().join("job.txt").exists());

    // The file tools keep to the same roots, with the same note; the free session writes
    // the same file at the same time.
    let target = outside.path().join("by-write.txt");
    let write = format!(
        "call write {}",
        json!({"path": target.display().to_string(), "content": "x"})
    );
    let (boxed_seen, free_seen) = tokio::join!(
        run(&boxed_client, &mut boxed_events, &boxed, &write),
        run(&free_client, &mut free_events, &free, &write),
    );
    let (_, content, is_error, _) = tool_results(&boxed_seen).remove(0);
    assert!(is_error, "{content}");
    let content: serde_json::Value = serde_json::from_str(&content).unwrap();
    assert_eq!(
        content[0]["text"],
        format!(
            "Cannot write {}: the sandbox does not let the agent write there.\n\n[Blocked by \
             the sandbox: the sandbox (workspace-write) lets commands write only beneath {}, \
             /tmp, {}; the network is off. If the file must change, ask the user to change the \
             `sandbox` setting.]",
            target.canonicalize().unwrap_or(target.clone()).display(),
            boxed_dir.display(),
            world
                .daemon
                .paths
                .artifacts_dir()
                .join(&boxed)
                .join("local")
                .display()
        )
    );
    let (_, content, is_error, _) = tool_results(&free_seen).remove(0);
    assert!(!is_error, "{content}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");

    // The sandbox in force, as clients see it.
    let boxed_settings = boxed_client
        .call::<SettingsGet>(&SettingsGetParams {
            cwd: Some(boxed_dir.display().to_string()),
        })
        .await
        .unwrap();
    assert_eq!(boxed_settings.sandbox.mode, "workspace-write");
    assert!(!boxed_settings.sandbox.network);
    assert_eq!(
        boxed_settings.sandbox.writable_roots[..2],
        [boxed_dir.display().to_string(), "/tmp".to_owned()]
    );
    let enforcement = boxed_settings.sandbox.enforcement.unwrap_or_default();
    assert!(enforcement.starts_with("landlock (ABI "), "{enforcement}");
    let free_settings = free_client
        .call::<SettingsGet>(&SettingsGetParams {
            cwd: Some(free_dir.display().to_string()),
        })
        .await
        .unwrap();
    assert_eq!(
        (
            free_settings.sandbox.mode.as_str(),
            free_settings.sandbox.enforcement
        ),
        ("off", None)
    );
    // The user's settings give no sandbox; the project tightened it.
    let status = free_client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    assert_eq!(status.sandbox.mode, "off");
}
