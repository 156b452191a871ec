//! No process outlives the daemon: on the real `pid`, two sessions run a foreground `bash`
//! call (the shell and the program it runs), a user `!` command, and what earlier calls left
//! running on purpose (`cmd &`, and a `setsid` one that left the group); `kill -9` of the
//! daemon takes every one of them down. Until then, what a finished call left running keeps
//! running, as in pi.

use std::path::Path;
use std::time::Duration;

use pi_protocol::v1::{SessionBash, SessionBashParams};
use serde_json::json;

use super::harness::World;
use super::mcp_faults::{caller, run, session, tool_results};

/// The pid written to `file`, once it is there.
async fn pid_in(file: &Path) -> i32 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never appeared",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether process `pid` runs (a zombie waiting for init counts as gone).
fn running(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty()
        && !stat
            .rsplit(") ")
            .next()
            .is_some_and(|rest| rest.starts_with('Z'))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_process_the_daemon_started_dies_with_it() {
    let mut world = World::start_with(
        "anthropic-messages",
        &[
            ("one/README", "one\n".to_owned()),
            ("two/README", "two\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let (one_dir, two_dir) = (home.join("one"), home.join("two"));
    let (one, mut one_events, one_id) = session(&world, &one_dir.display().to_string()).await;
    let (two, two_events, two_id) = session(&world, &two_dir.display().to_string()).await;

    // Finished calls that leave processes running: they keep running while the daemon lives.
    let left_behind = "sleep 600 >/dev/null 2>&1 & echo $! > left.pid; \
                       setsid sleep 600 >/dev/null 2>&1 & echo $! > escaped.pid; echo started";
    let seen = run(
        &one,
        &mut one_events,
        &one_id,
        &format!("call bash {}", json!({"command": left_behind})),
    )
    .await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    assert!(!is_error, "{content}");
    assert!(content.contains("started"), "{content}");
    let left = pid_in(&one_dir.join("left.pid")).await;
    let escaped = pid_in(&one_dir.join("escaped.pid")).await;
    assert!(running(left) && running(escaped));

    // Foreground calls in both sessions and a user command, all still running.
    let foreground =
        "echo $$ > shell.pid; sh -c 'echo $$ > program.pid; exec sleep 600'; echo done";
    for (client, id) in [(&one, &one_id), (&two, &two_id)] {
        client
            .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(
                id,
                &format!("call bash {}", json!({"command": foreground})),
            ))
            .await
            .unwrap();
    }
    let user_command = tokio::spawn({
        let (two, two_id) = (two.clone(), two_id.clone());
        async move {
            two.call::<SessionBash>(&SessionBashParams {
                session_id: two_id,
                command: "echo $$ > user.pid; sleep 600".to_owned(),
                exclude_from_context: false,
            })
            .await
        }
    });
    let mut pids = vec![left, escaped];
    for dir in [&one_dir, &two_dir] {
        pids.push(pid_in(&dir.join("shell.pid")).await);
        pids.push(pid_in(&dir.join("program.pid")).await);
    }
    pids.push(pid_in(&two_dir.join("user.pid")).await);
    for &pid in &pids {
        assert!(running(pid), "process {pid} is not running yet");
    }

    world.daemon.kill9().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&pid| running(pid)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes outlived the daemon: {:?}",
            pids.iter()
                .filter(|&&pid| running(pid))
                .map(
                    |pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                        .unwrap_or_default()
                        .replace('\0', " ")
                )
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(user_command.await.unwrap().is_err());
    drop((one, two, one_events, two_events));
}
