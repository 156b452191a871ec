//! `bash` and the shell executor: output shapes, exit codes, the session's cwd and
//! environment, progress, truncation with the full output as an artifact, and timeouts and
//! aborts that leave no process of the command's tree alive.

use std::path::Path;
use std::time::Duration;

use pi_agent::ProgressSink;
use pi_tools::exec::{ExecEnd, ExecPlace, ExecRequest, OutputStyle};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Session, eventually, table, text};

#[tokio::test]
async fn commands_report_output_and_exit_codes_like_pi() {
    let session = Session::new();
    let cases = [
        ("stdout", json!({"command": "echo hello"})),
        (
            "stdout and stderr merged in order",
            json!({"command": "echo a; echo b >&2; echo c"}),
        ),
        ("no output", json!({"command": "true"})),
        (
            "non-zero exit",
            json!({"command": "echo out; echo err >&2; exit 3"}),
        ),
        ("non-zero exit without output", json!({"command": "exit 1"})),
        (
            "killed by a signal nobody here sent counts as success",
            json!({"command": "echo before; kill -9 $$"}),
        ),
        (
            "runs in the session's cwd with the session's environment",
            json!({"command": "pwd; echo $HOME; echo $PI_TEST_VAR"}),
        ),
        (
            "a timeout that is not reached",
            json!({"command": "echo quick", "timeout": 30}),
        ),
        ("timeout", json!({"command": "sleep 30", "timeout": 0.5})),
    ];
    insta::assert_snapshot!(table(&session, "bash", &cases).await);
}

#[tokio::test]
async fn a_missing_working_directory_is_reported() {
    let session = Session::new();
    std::fs::remove_dir(session.cwd()).unwrap();
    let output = session.call("bash", json!({"command": "echo hi"})).await;
    assert!(output.is_error);
    assert_eq!(
        super::redact(&text(&output), &session.root()),
        "Working directory does not exist: <tmp>/work\nCannot execute bash commands."
    );
}

#[tokio::test]
async fn progress_streams_while_the_command_runs() {
    let session = Session::new();
    let (progress, mut updates) = ProgressSink::new();
    let command = "echo first; while [ ! -f go ]; do sleep 0.01; done; echo second";
    let call = session.call_with(
        "bash",
        json!({"command": command}),
        CancellationToken::new(),
        progress,
    );
    let watch = async {
        // pi's sequence: an empty update when the command starts, then the output so far.
        let first = updates.recv().await.unwrap();
        assert!(
            first.content.is_empty() && first.details.is_null(),
            "{first:?}"
        );
        loop {
            let partial = updates.recv().await.unwrap();
            if text(&partial) == "first\n" {
                assert_eq!(partial.details, json!({}));
                std::fs::write(session.cwd().join("go"), "").unwrap();
                return;
            }
        }
    };
    let (output, ()) = tokio::join!(call, async {
        tokio::time::timeout(Duration::from_secs(20), watch)
            .await
            .expect("no progress update with the first line");
    });
    assert_eq!(text(&output), "first\nsecond\n");
}

#[tokio::test]
async fn long_output_is_tail_truncated_and_kept_whole_as_an_artifact() {
    let session = Session::new();
    let output = session
        .call("bash", json!({"command": "seq 1 100000"}))
        .await;
    assert!(!output.is_error);
    let shown = text(&output);
    let notice = super::redact(shown.rsplit("\n\n").next().unwrap(), &session.root());
    assert_eq!(
        notice,
        "[Showing lines 98002-100001 of 100001. Full output: artifact://bash-<id>]"
    );
    assert!(shown.starts_with("98002\n98003\n"), "{}", &shown[..40]);
    let reference = output.details["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(output.details["truncation"]["totalLines"], 100001);
    assert_eq!(output.details["truncation"]["outputLines"], 2000);

    // The artifact holds the whole output, byte for byte, and `read` opens it.
    let expected: String = (1..=100000).map(|n| format!("{n}\n")).collect();
    let id = reference.strip_prefix("artifact://").unwrap();
    let stored = std::fs::read(session.context.artifacts.path(id).unwrap()).unwrap();
    assert_eq!(stored, expected.as_bytes());
    let read = session
        .call(
            "read",
            json!({"path": reference, "offset": 99999, "limit": 2}),
        )
        .await;
    assert_eq!(
        text(&read),
        "99999\n100000\n\n[1 more lines in file. Use offset=100001 to continue.]"
    );

    // Deleting the session's artifacts removes the file.
    session.artifacts.delete_session("session-1").unwrap();
    let read = session.call("read", json!({"path": reference})).await;
    assert!(read.is_error);
}

#[tokio::test]
async fn output_over_50_kb_is_cut_by_bytes() {
    let session = Session::new();
    let output = session
        .call(
            "bash",
            json!({"command": "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done"}),
        )
        .await;
    let shown = text(&output);
    let notice = super::redact(shown.rsplit("\n\n").next().unwrap(), &session.root());
    // 507 lines of 101 bytes (the last one empty) fit in 51,200 bytes.
    assert_eq!(
        notice,
        "[Showing lines 495-1001 of 1001 (50.0KB limit). Full output: artifact://bash-<id>]"
    );
    assert_eq!(output.details["truncation"]["truncatedBy"], "bytes");
    assert!(shown.starts_with(&format!("{:0100}\n", 495)));
}

#[tokio::test]
async fn a_huge_last_line_keeps_its_end() {
    let session = Session::new();
    let output = session
        .call(
            "bash",
            json!({"command": "head -c 120000 /dev/zero | tr '\\0' x; echo -n END"}),
        )
        .await;
    let shown = text(&output);
    let notice = super::redact(shown.rsplit("\n\n").next().unwrap(), &session.root());
    assert_eq!(
        notice,
        "[Showing last 50.0KB of line 1 (line is 117.2KB). Full output: artifact://bash-<id>]"
    );
    assert!(shown.starts_with("xxxx") && shown.contains("xEND\n\n["));
    assert_eq!(output.details["truncation"]["lastLinePartial"], true);
}

/// A command that prints, then starts a child and a grandchild that record their pids and
/// wait. Output written before the kill is always in the result: the pipe is drained after it.
const TREE: &str =
    "echo started; sh -c 'sleep 300 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait";

async fn recorded_pids(cwd: &Path) -> Vec<i32> {
    let read = |name: &str| {
        std::fs::read_to_string(cwd.join(name))
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
    };
    assert!(
        eventually(Duration::from_secs(20), || read("child.pid").is_some()
            && read("grandchild.pid").is_some())
        .await,
        "the command did not start its tree"
    );
    vec![read("child.pid").unwrap(), read("grandchild.pid").unwrap()]
}

/// Asserts no process in `pids` runs; they must also disappear (be reaped) soon.
async fn assert_all_dead(pids: &[i32]) {
    for &pid in pids {
        let raw = rustix::process::Pid::from_raw(pid).unwrap();
        let stat = || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let not_running = || {
            let stat = stat();
            // The state follows the parenthesised command name: gone, or a zombie.
            stat.is_empty()
                || stat
                    .rsplit(") ")
                    .next()
                    .is_some_and(|rest| rest.starts_with('Z'))
        };
        assert!(
            eventually(Duration::from_secs(5), not_running).await,
            "process {pid} still runs: {}",
            stat()
        );
        // A zombie is reaped by its new parent (init) shortly after.
        assert!(
            eventually(Duration::from_secs(20), || {
                rustix::process::test_kill_process(raw).is_err()
            })
            .await,
            "process {pid} survived: {}",
            stat()
        );
    }
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_tree() {
    let session = Session::new();
    let call = session.call("bash", json!({"command": TREE, "timeout": 3}));
    let (output, pids) = tokio::join!(call, recorded_pids(session.cwd()));
    assert!(output.is_error);
    assert_eq!(
        text(&output),
        "started\n\n\nCommand timed out after 3 seconds"
    );
    assert_all_dead(&pids).await;
}

#[tokio::test]
async fn an_abort_kills_the_whole_process_tree() {
    let session = Session::new();
    let cancel = CancellationToken::new();
    let call = session.call_with(
        "bash",
        json!({"command": TREE}),
        cancel.clone(),
        ProgressSink::discard(),
    );
    let abort = async {
        let pids = recorded_pids(session.cwd()).await;
        cancel.cancel();
        pids
    };
    let (output, pids) = tokio::join!(call, abort);
    assert!(output.is_error);
    assert_eq!(text(&output), "started\n\n\nCommand aborted");
    assert_all_dead(&pids).await;
}

#[tokio::test]
async fn user_shell_commands_get_sanitized_output() {
    let session = Session::new();
    let context = &session.context;
    let place = ExecPlace {
        cwd: &context.cwd,
        env: &context.env,
        shell: &context.shell,
        artifacts: &context.artifacts,
        sandbox: None,
        spawner: &context.spawner,
    };
    let request = ExecRequest {
        command: "printf '\\033[31mred\\033[0m\\r\\nplain\\n'; exit 4".to_owned(),
        timeout: None,
        style: OutputStyle::Sanitized,
    };
    let result = pi_tools::exec::run(place, &request, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(result.end, ExecEnd::Exited(4));
    assert_eq!(result.output.truncation.content, "red\nplain\n");
}
