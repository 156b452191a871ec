//! The guard (`pid __guard`) under `pi_tools::spawn::Spawner`, with the real `pid` binary:
//! a short command's exit status and output come through it, the command gets the user's
//! file-creation mask back, an abort kills the whole tree (a process that left the group with
//! `setsid` too), and what a command left running outlives the command but not the guard's
//! control socket.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use pi_tools::spawn::{SpawnSpec, Spawner};
use tokio::io::AsyncReadExt as _;

use super::pid_binary;

fn spawner() -> Spawner {
    Spawner::guarded(pid_binary().to_path_buf(), Some(0o027))
}

fn shell(cwd: &Path, script: &str) -> SpawnSpec {
    SpawnSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: cwd.to_path_buf(),
        env: BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]),
    }
}

/// Whether process `pid` is gone (or a zombie about to be reaped).
fn gone(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty()
        || stat
            .rsplit(") ")
            .next()
            .is_some_and(|rest| rest.starts_with('Z'))
}

async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[tokio::test]
async fn status_output_and_the_users_mask_come_through_the_guard() {
    let dir = tempfile::tempdir().unwrap();
    let spawner = spawner();
    let (mut child, mut output) = spawner
        .spawn_with_merged_output(&shell(dir.path(), "umask; echo out; echo err >&2; exit 7"))
        .unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(7));
    let mut text = String::new();
    output.pipe.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "0027\nout\nerr\n");

    let killed = spawner
        .output(&shell(dir.path(), "kill -TERM $$"))
        .await
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed.status),
        Some(15)
    );
    let missing = spawner
        .output(&shell(dir.path(), "exec /nonexistent/program"))
        .await
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
}

#[tokio::test]
async fn killing_a_command_kills_its_whole_tree_also_what_left_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let spawner = spawner();
    let script = "sleep 300 & echo $! > child.pid; \
                  setsid sleep 300 & echo $! > escaped.pid; wait";
    let (mut child, _output) = spawner
        .spawn_with_merged_output(&shell(dir.path(), script))
        .unwrap();
    let (mut first, mut escaped) = (None, None);
    eventually("the command started its tree", || {
        first = read_pid(&dir.path().join("child.pid"));
        escaped = read_pid(&dir.path().join("escaped.pid"));
        first.is_some() && escaped.is_some()
    })
    .await;
    child.kill_and_wait().await.unwrap();
    for pid in [first.unwrap(), escaped.unwrap()] {
        eventually(&format!("process {pid} is killed"), || gone(pid)).await;
    }
}

#[tokio::test]
async fn what_a_command_leaves_running_outlives_it_until_the_guard_is_told_to_stop() {
    let dir = tempfile::tempdir().unwrap();
    let spawner = spawner();
    // Left running, with its output elsewhere so the command's pipe closes.
    let script = "sleep 300 >/dev/null 2>&1 & echo $! > left.pid; exit 0";
    let (mut child, _output) = spawner
        .spawn_with_merged_output(&shell(dir.path(), script))
        .unwrap();
    assert_eq!(child.wait().await.unwrap().code(), Some(0));
    let left = read_pid(&dir.path().join("left.pid")).unwrap();
    assert!(!gone(left), "the left process died with its command");
    // The guard adopted it: its parent is the guard, which still runs.
    let parent = std::fs::read_to_string(format!("/proc/{left}/stat")).unwrap();
    let parent: i32 = parent
        .rsplit(") ")
        .next()
        .and_then(|rest| rest.split(' ').nth(1))
        .and_then(|ppid| ppid.parse().ok())
        .unwrap();
    let cmdline = std::fs::read(format!("/proc/{parent}/cmdline")).unwrap();
    assert!(
        String::from_utf8_lossy(&cmdline).contains("__guard"),
        "the left process's parent is not the guard: {}",
        String::from_utf8_lossy(&cmdline)
    );
    // Killing the guard's group the way the daemon's death does (its control socket closes
    // with the daemon) is covered end to end; here, its group dies with it.
    rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(parent).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    eventually("the left process dies with the guard's group", || {
        gone(left)
    })
    .await;
}
