//! The process and kernel pools on the real `pid`, several sessions at once: background jobs
//! (a server queried in a later call, an interactive program under a terminal, per-session
//! limits, kill on abort, lost after a daemon restart, nothing left behind by `kill -9`) and
//! Python kernels from a real `ipykernel` (state across cells, images, interrupt on abort,
//! timeout, a killed kernel restarted with a clear message, eviction at the cap, the missing
//! ipykernel message).

use std::path::Path;
use std::time::Duration;

use pi_client::{Client, Notifications};
use pi_protocol::v1::{
    DaemonStatus, JobList, JobListParams, KernelList, KernelListParams, SessionAbort,
    SessionAttach, SessionAttachParams, SessionCreate, SessionCreateParams, SessionEvent,
    SessionIdParams, SessionPrompt,
};
use pi_test_support::events::{events_until, run_events};
use serde_json::{Value, json};

use super::harness::{MODEL, World, prompt};
use super::mcp_faults::{caller, run, tool_results};

/// Creates a session in `cwd` with `tools`, attached.
async fn session(client: &Client, cwd: &Path, tools: &[&str]) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd.display().to_string(),
            model: Some(MODEL.to_owned()),
            tools: Some(tools.iter().map(|tool| (*tool).to_owned()).collect()),
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

/// The model calls `tool` with `args`: the result's text, whether it failed, and its content.
async fn call(
    client: &Client,
    events: &mut Notifications,
    session_id: &str,
    tool: &str,
    args: Value,
) -> (String, bool, Value) {
    let seen = run(client, events, session_id, &format!("call {tool} {args}")).await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    let content: Value = serde_json::from_str(&content).unwrap();
    let text = content
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, is_error, content)
}

/// The job id in a `bash` background start's text.
fn job_id(text: &str) -> String {
    let start = text
        .find("job-")
        .unwrap_or_else(|| panic!("no job id in {text:?}"));
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// Waits (with a deadline) until process `pid` is gone.
async fn gone(pid: u32) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

async fn jobs_of(client: &Client, session_id: &str) -> Vec<pi_protocol::v1::JobInfo> {
    client
        .call::<JobList>(&JobListParams {
            session_id: Some(session_id.to_owned()),
        })
        .await
        .unwrap()
        .jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_run_in_the_background_across_calls_and_sessions_and_never_outlive_the_daemon() {
    let mut world = World::start_with_config(
        "anthropic-messages",
        "[limits]\njobs_per_session = 2\n",
        &[
            ("web/index.html", "<p>served by a job</p>\n".to_owned()),
            ("repl/.keep", String::new()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let (web_client, mut web_events) = world.client().await;
    let (repl_client, mut repl_events) = world.client().await;
    let web = session(&web_client, &home.join("web"), &["bash", "job"]).await;
    let repl = session(&repl_client, &home.join("repl"), &["bash", "job"]).await;

    // Two sessions at once: a server queried in a later call; an interactive program under a
    // terminal.
    let serve = async {
        let (text, failed, _) = call(
            &web_client,
            &mut web_events,
            &web,
            "bash",
            json!({"command": "exec python3 -u -m http.server 0 --bind 127.0.0.1", "background": true}),
        )
        .await;
        assert!(!failed && text.starts_with("Started job job-"), "{text}");
        let id = job_id(&text);
        let (text, failed, _) = call(
            &web_client,
            &mut web_events,
            &web,
            "job",
            json!({"action": "output", "id": id, "waitFor": "Serving HTTP", "timeout": 30}),
        )
        .await;
        assert!(
            !failed && text.contains("Serving HTTP on 127.0.0.1 port "),
            "{text}"
        );
        assert!(text.ends_with(&format!("[job {id} is running]")), "{text}");
        let port: String = text
            .split("port ")
            .nth(1)
            .unwrap()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let (text, failed, _) = call(
            &web_client,
            &mut web_events,
            &web,
            "bash",
            json!({"command": format!("curl -s http://127.0.0.1:{port}/index.html")}),
        )
        .await;
        assert!(!failed && text.contains("<p>served by a job</p>"), "{text}");
        id
    };
    let interact = async {
        let (text, failed, _) = call(
            &repl_client,
            &mut repl_events,
            &repl,
            "bash",
            json!({"command": "python3 -i -q", "background": true, "tty": true}),
        )
        .await;
        assert!(!failed && text.contains("under a terminal"), "{text}");
        let id = job_id(&text);
        let (text, failed, _) = call(
            &repl_client,
            &mut repl_events,
            &repl,
            "job",
            json!({"action": "write", "id": id, "input": "x = 6 * 7\nprint('answer', x)\n"}),
        )
        .await;
        assert!(
            !failed && text.starts_with("Wrote 29 bytes to job"),
            "{text}"
        );
        let (text, failed, _) = call(
            &repl_client,
            &mut repl_events,
            &repl,
            "job",
            json!({"action": "output", "id": id, "waitFor": "answer 42", "timeout": 30}),
        )
        .await;
        assert!(!failed && text.contains("answer 42"), "{text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
        id
    };
    let (server_job, repl_job) = tokio::join!(serve, interact);

    // The per-session limit.
    let (text, failed, _) = call(
        &web_client,
        &mut web_events,
        &web,
        "bash",
        json!({"command": "sleep 1000", "background": true}),
    )
    .await;
    assert!(!failed, "{text}");
    let (text, failed, _) = call(
        &web_client,
        &mut web_events,
        &web,
        "bash",
        json!({"command": "sleep 1001", "background": true}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        text,
        "This session already runs 2 background jobs, its limit (`jobs_per_session` in \
         config.toml's [limits]). Wait for one or kill one with the job tool first."
    );
    let status = web_client
        .call::<DaemonStatus>(&Default::default())
        .await
        .unwrap();
    assert_eq!(status.pools.jobs_running, 3);
    assert_eq!(status.pools.jobs_per_session_limit, 2);

    // Abort: the session's jobs die, whole groups; the other session's job runs on.
    let web_jobs = jobs_of(&web_client, &web).await;
    assert_eq!(web_jobs.len(), 2);
    assert!(web_jobs.iter().all(|job| job.state == "running"));
    let pids: Vec<u32> = web_jobs.iter().filter_map(|job| job.pid).collect();
    assert_eq!(pids.len(), 2);
    web_client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: web.clone(),
        })
        .await
        .unwrap();
    for pid in pids {
        assert!(gone(pid).await, "job process {pid} survived the abort");
    }
    let web_jobs = jobs_of(&web_client, &web).await;
    assert!(
        web_jobs.iter().all(|job| job.state == "killed"),
        "{web_jobs:?}"
    );
    assert!(web_jobs.iter().any(|job| job.id == server_job));
    let repl_jobs = jobs_of(&repl_client, &repl).await;
    assert_eq!(repl_jobs[0].state, "running");
    let repl_pid = repl_jobs[0].pid.unwrap();

    // A job outlives its clients detaching.
    drop((web_client, repl_client));
    let (watcher, _watcher_events) = world.client().await;
    let repl_jobs = jobs_of(&watcher, &repl).await;
    assert_eq!(repl_jobs[0].state, "running");
    assert!(Path::new(&format!("/proc/{repl_pid}")).exists());
    drop(watcher);

    // kill -9 of the daemon takes the job with it; the restarted daemon says it was lost.
    world.daemon.kill9().await;
    assert!(gone(repl_pid).await, "the job outlived the daemon");
    world.daemon.restart().await;
    let (client, mut events) = world.client().await;
    let repl_jobs = jobs_of(&client, &repl).await;
    assert_eq!(repl_jobs[0].id, repl_job);
    assert_eq!(repl_jobs[0].state, "lost");
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: repl.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let (text, failed, _) = call(
        &client,
        &mut events,
        &repl,
        "job",
        json!({"action": "list"}),
    )
    .await;
    assert!(!failed);
    assert!(
        text.starts_with(&format!(
            "{repl_job}  lost (the daemon restarted while it ran)"
        )),
        "{text}"
    );
    let (text, failed, _) = call(
        &client,
        &mut events,
        &repl,
        "job",
        json!({"action": "write", "id": "job-nope", "input": "1\n"}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        text,
        "No job job-nope in this session. The job tool's `list` shows the session's jobs."
    );
    // Calls the tool cannot make sense of say what is missing.
    for (args, expected) in [
        (json!({"action": "output"}), "`output` needs the job's `id`"),
        (
            json!({"action": "write", "id": "job-nope"}),
            "`write` needs the `input` to send",
        ),
    ] {
        let (text, failed, _) = call(&client, &mut events, &repl, "job", args).await;
        assert!(failed, "{text}");
        assert_eq!(text, expected);
    }
}

/// A job under a terminal blocks a thread for its output and one for its exit, for its whole
/// life. Sixteen of them (two sessions at their limit of eight) must leave a third session's
/// file tools working: those threads are the jobs' own, not the runtime's bounded pool of
/// blocking threads (16), which the file tools use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_jobs_leave_the_other_sessions_file_tools_working() {
    let world = World::start_with_config(
        "anthropic-messages",
        "[limits]\njobs_per_session = 8\n",
        &[
            ("one/.keep", String::new()),
            ("two/.keep", String::new()),
            ("three/notes.txt", "still readable\n".to_owned()),
        ],
    )
    .await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let start_jobs = |dir: &'static str| {
        let world = &world;
        let home = home.clone();
        async move {
            let (client, mut events) = world.client().await;
            let id = session(&client, &home.join(dir), &["bash", "job"]).await;
            for _ in 0..8 {
                let (text, failed, _) = call(
                    &client,
                    &mut events,
                    &id,
                    "bash",
                    json!({"command": "sleep 600", "background": true, "tty": true}),
                )
                .await;
                assert!(!failed && text.contains("under a terminal"), "{text}");
            }
            let running = jobs_of(&client, &id)
                .await
                .iter()
                .filter(|job| job.state == "running" && job.tty)
                .count();
            assert_eq!(running, 8);
            (client, id)
        }
    };
    let (one, two) = tokio::time::timeout(Duration::from_secs(120), async {
        tokio::join!(start_jobs("one"), start_jobs("two"))
    })
    .await
    .expect("sixteen terminal jobs started within 2 minutes");

    let (reader, mut reader_events) = world.client().await;
    let third = session(&reader, &home.join("three"), &["read"]).await;
    let read = tokio::time::timeout(
        Duration::from_secs(60),
        call(
            &reader,
            &mut reader_events,
            &third,
            "read",
            json!({"path": "notes.txt"}),
        ),
    )
    .await;
    let (text, failed, _) = read.expect("the read tool answered while 16 terminal jobs ran");
    assert!(!failed && text.contains("still readable"), "{text}");

    // The jobs are still there, each session's eight.
    for (client, id) in [&one, &two] {
        assert_eq!(jobs_of(client, id).await.len(), 8);
    }
}

/// A session whose project's `.venv` is `venv`.
async fn python_session(client: &Client, dir: &Path, venv: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::symlink(venv, dir.join(".venv")).unwrap();
    session(client, dir, &["python"]).await
}

async fn kernels(client: &Client) -> Vec<pi_protocol::v1::KernelInfo> {
    client
        .call::<KernelList>(&KernelListParams {})
        .await
        .unwrap()
        .kernels
}

/// A 1×1 PNG built by the standard library, displayed by IPython.
const PNG_CELL: &str = r#"import struct, zlib
from IPython.display import Image, display
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(b'\x00\xff\x00\x00')) + chunk(b'IEND', b'')
display(Image(data=png))"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_kernels_keep_state_show_images_stop_on_abort_and_share_a_capped_pool() {
    let world =
        World::start_with_config("anthropic-messages", "[limits]\nkernels = 1\n", &[]).await;
    world.server.respond_with(caller);
    let home = world.daemon.home.path().to_path_buf();
    let venv = pi_test_support::peers::kernel_venv();
    let (client, mut events) = world.client().await;
    let (other_client, mut other_events) = world.client().await;
    let first = python_session(&client, &home.join("first"), &venv).await;
    let second = python_session(&other_client, &home.join("second"), &venv).await;

    // State across cells.
    let (text, failed, _) = call(
        &client,
        &mut events,
        &first,
        "python",
        json!({"code": "x = 41\nprint('set')"}),
    )
    .await;
    assert!(!failed && text.trim_end() == "set", "{text:?}");
    let (text, failed, _) = call(
        &client,
        &mut events,
        &first,
        "python",
        json!({"code": "x + 1"}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(text.trim_end(), "42");
    assert_eq!(kernels(&client).await.len(), 1);

    // The other session needs a kernel: the cap (1) evicts the first session's.
    let (text, failed, content) = call(
        &other_client,
        &mut other_events,
        &second,
        "python",
        json!({"code": PNG_CELL}),
    )
    .await;
    assert!(!failed, "{text} {content}");
    let image = content
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "image")
        .unwrap_or_else(|| panic!("no image in {content}"));
    assert_eq!(image["mimeType"], "image/png");
    assert!(
        image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"),
        "{image}"
    );
    let live = kernels(&client).await;
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].session_id, second);

    let (text, failed, _) =
        call(&client, &mut events, &first, "python", json!({"code": "x"})).await;
    assert!(failed);
    assert!(
        text.starts_with(
            "[New kernel: the kernel was stopped to make room for another session's (the \
             pool's limit), so variables and imports from earlier cells are gone.]"
        ),
        "{text}"
    );
    assert!(text.contains("NameError"), "{text}");
    assert_eq!(kernels(&client).await.len(), 1);

    // A timeout interrupts the cell; the kernel keeps its state.
    let (text, failed, _) = call(
        &client,
        &mut events,
        &first,
        "python",
        json!({"code": "y = 'kept'\nimport time\ntime.sleep(60)", "timeout": 1}),
    )
    .await;
    assert!(failed);
    assert!(text.contains("KeyboardInterrupt"), "{text}");
    assert!(
        text.ends_with("[The cell stopped: timed out after 1 s and was interrupted.]"),
        "{text}"
    );
    let (text, _, _) = call(&client, &mut events, &first, "python", json!({"code": "y"})).await;
    assert_eq!(text.trim_end(), "'kept'");

    // An endless loop stops on abort, and the kernel keeps its state.
    client
        .call::<SessionPrompt>(&prompt(
            &first,
            &format!(
                "call python {}",
                json!({"code": "print('looping', flush=True)\nwhile True: pass"})
            ),
        ))
        .await
        .unwrap();
    events_until(&mut events, &first, |event| {
        matches!(&event.event, SessionEvent::ToolExecutionUpdate { partial_result, .. }
            if serde_json::to_string(&partial_result.content).unwrap().contains("looping"))
    })
    .await;
    client
        .call::<SessionAbort>(&SessionIdParams {
            session_id: first.clone(),
        })
        .await
        .unwrap();
    let seen = run_events(&mut events, &first).await;
    let (_, content, failed, _) = tool_results(&seen).remove(0);
    assert!(failed);
    assert!(content.contains("KeyboardInterrupt"), "{content}");
    assert!(
        content.contains("[The cell stopped: interrupted (the run was aborted).]"),
        "{content}"
    );
    let (text, _, _) = call(&client, &mut events, &first, "python", json!({"code": "y"})).await;
    assert_eq!(text.trim_end(), "'kept'");

    // `reset` starts afresh, and says so.
    let (text, failed, _) = call(
        &client,
        &mut events,
        &first,
        "python",
        json!({"code": "'y' in globals()", "reset": true}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(
        text,
        "[New kernel: the kernel was reset as asked, so variables and imports from earlier \
         cells are gone.]\nFalse\n"
    );
    let (text, _, _) = call(
        &client,
        &mut events,
        &first,
        "python",
        json!({"code": "y = 'again'"}),
    )
    .await;
    assert_eq!(text, "(no output)");

    // A kernel killed from outside: the next cell gets a new one and says so.
    let pid = kernels(&client).await[0].pid.unwrap();
    rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    assert!(gone(pid).await);
    let (text, failed, _) =
        call(&client, &mut events, &first, "python", json!({"code": "y"})).await;
    assert!(failed);
    assert!(
        text.starts_with(
            "[New kernel: the kernel was killed, so variables and imports from earlier cells \
             are gone.]"
        ),
        "{text}"
    );

    // A project whose Python lacks ipykernel: the exact install command.
    let bare = python_session(
        &client,
        &home.join("bare"),
        &pi_test_support::peers::venv_without_ipykernel(),
    )
    .await;
    let (text, failed, _) = call(&client, &mut events, &bare, "python", json!({"code": "1"})).await;
    assert!(failed);
    let python = home.join("bare/.venv/bin/python");
    assert_eq!(
        text,
        format!(
            "ipykernel is not installed for {python}, so the python tool cannot start a \
             kernel. Install it with:\n  {python} -m pip install ipykernel",
            python = python.display()
        )
    );
    assert!(kernels(&client).await.len() <= 1);
}
