//! A new user's first hour, on the real `pid`: a WebSocket port already taken leaves the
//! daemon serving the Unix socket and saying why; broken configuration files are reported by
//! `pictl run` and `pictl models` with the file and line; `pictl daemon status` reads as
//! lines for a person; one user's two homes without `XDG_RUNTIME_DIR` get a daemon each.

use std::path::Path;
use std::time::Duration;

use pi_test_support::model_server::Turn;
use pi_test_support::workspace_binary;

use super::harness::World;

/// `pictl ARGS` with `envs`, in `dir`: (exit code, stdout, stderr).
async fn pictl(
    envs: &[(String, String)],
    dir: &Path,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(workspace_binary("pictl"))
            .args(args)
            .envs(envs.iter().cloned())
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("pictl ends")
    .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_port_in_use_leaves_the_unix_socket_serving_and_says_why() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let world = World::start_with_config(
        "anthropic-messages",
        &format!("[websocket]\nenabled = true\nport = {port}\n"),
        &[],
    )
    .await;
    world.server.push(Turn::reply().text("still here"));
    let home = world.daemon.home.path();
    let envs = world.daemon.env();
    let (code, stdout, stderr) = pictl(
        &envs,
        home,
        &["run", "--model", "scripted/scripted-model", "hello"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "still here\n");

    let (code, stdout, _) = pictl(&envs, home, &["daemon", "status", "--json"]).await;
    assert_eq!(code, Some(0));
    let status: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(status["websocketUrl"].is_null(), "{status}");
    assert!(
        status["websocketError"]
            .as_str()
            .unwrap()
            .contains(&format!(
                "cannot listen on 127.0.0.1:{port} (config `websocket.port`)"
            )),
        "{status}"
    );
    let (code, stdout, _) = pictl(&envs, home, &["daemon", "status", "--human"]).await;
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains(&format!(
            "websocket    not running: cannot listen on 127.0.0.1:{port}"
        )),
        "{stdout}"
    );
    assert!(stdout.starts_with("pi daemon "), "{stdout}");
    drop(taken);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_configuration_files_are_named_with_their_line_by_run_and_models() {
    let world = World::start("anthropic-messages").await;
    world.server.push(Turn::reply().text("fine"));
    let home = world.daemon.home.path();
    let envs = world.daemon.env();
    // It breaks while the daemon runs: a settings file a user is editing.
    let settings = home.join(".pi/agent/settings.json");
    std::fs::write(
        &settings,
        "{\n  \"defaultThinkingLevel\": \"low\",\n  oops\n}\n",
    )
    .unwrap();
    // The daemon notices (the watcher reloads); `daemon status` shows the problem once it has.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, stdout, _) = pictl(&envs, home, &["daemon", "status", "--json"]).await;
        if stdout.contains("is not valid JSON") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the daemon never reported the broken file: {stdout}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let expected = format!(
        "Warning: {}: is not valid JSON (key must be a string at line 3 column 3)",
        settings.display()
    );
    let (code, _, stderr) = pictl(
        &envs,
        home,
        &["run", "--model", "scripted/scripted-model", "hello"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains(&expected), "{stderr}");
    let (code, _, stderr) = pictl(&envs, home, &["models"]).await;
    assert_eq!(code, Some(0));
    assert!(stderr.contains(&expected), "{stderr}");

    // A project's own settings: its bad values are named too, where the command runs.
    let project = home.join("project");
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    std::fs::write(
        project.join(".pi/settings.json"),
        r#"{"transport": "pigeon"}"#,
    )
    .unwrap();
    let expected = format!(
        "Warning: {}: `transport`: expected one of sse, websocket, websocket-cached, auto, found \"pigeon\"; the value is ignored",
        project.join(".pi/settings.json").display()
    );
    world.server.push(Turn::reply().text("fine"));
    let (code, _, stderr) = pictl(
        &envs,
        &project,
        &["run", "--model", "scripted/scripted-model", "hello"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains(&expected), "{stderr}");
    let (_, _, stderr) = pictl(&envs, &project, &["models"]).await;
    assert!(stderr.contains(&expected), "{stderr}");
}

/// Stops a daemon of a home at the end, however the test ends.
struct StopOnDrop(Vec<(String, String)>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new(workspace_binary("pictl"))
            .args(["daemon", "stop"])
            .env_clear()
            .envs(self.0.iter().cloned())
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_homes_of_one_user_without_a_runtime_dir_get_a_daemon_each() {
    let homes = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut statuses = Vec::new();
    let mut stoppers = Vec::new();
    for home in &homes {
        // A user without XDG_RUNTIME_DIR (a container, `su`, macOS) and without PI_HOME.
        let envs = vec![
            ("HOME".to_owned(), home.path().display().to_string()),
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ];
        stoppers.push(StopOnDrop(envs.clone()));
        let out = tokio::process::Command::new(workspace_binary("pictl"))
            .args(["daemon", "start"])
            .env_clear()
            .envs(envs.iter().cloned())
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        statuses.push(status);
    }
    assert_ne!(statuses[0]["pid"], statuses[1]["pid"], "two daemons");
    assert_ne!(statuses[0]["socketPath"], statuses[1]["socketPath"]);
    for (status, home) in statuses.iter().zip(&homes) {
        assert!(
            status["dataDir"]
                .as_str()
                .unwrap()
                .starts_with(&home.path().display().to_string()),
            "each daemon keeps its own home's data: {status}"
        );
    }
    drop(stoppers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_run_on_a_terminal_shows_the_tools_it_runs() {
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(super::mcp_faults::caller);
    let home = world.daemon.home.path();
    // A terminal (a pty `script` makes), as a person running it has.
    let command = format!(
        "{} run --model scripted/scripted-model 'call bash {{\"command\": \"echo from-bash\"}}'",
        workspace_binary("pictl").display()
    );
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("script")
            .args(["-qefc", &command, "/dev/null"])
            .envs(world.daemon.env())
            .current_dir(home)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("pictl ends")
    .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("→ bash echo from-bash\n"), "{shown}");
    assert!(shown.contains("✓ bash\n"), "{shown}");
    assert!(shown.ends_with("Done.\n"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_watch_shows_the_tool_running_when_it_attaches() {
    use tokio::io::AsyncBufReadExt as _;
    let world = World::start("anthropic-messages").await;
    world.server.respond_with(super::mcp_faults::caller);
    let home = world.daemon.home.path();
    let fifo = home.join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (client, mut events, id) =
        super::mcp_faults::session(&world, &home.display().to_string()).await;
    let call = format!("call bash {{\"command\": \"cat {}\"}}", fifo.display());
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&id, &call))
        .await
        .unwrap();
    pi_test_support::events::events_until(&mut events, &id, |event| {
        matches!(
            event.event,
            pi_protocol::v1::SessionEvent::ToolExecutionStart { .. }
        )
    })
    .await;

    // Attached while the tool runs: the tool is the first thing it prints.
    let mut watch = tokio::process::Command::new(workspace_binary("pictl"))
        .args(["watch", &id])
        .envs(world.daemon.env())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(watch.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("watch prints")
        .unwrap()
        .unwrap();
    assert!(first.starts_with("-> bash "), "{first}");
    assert!(first.contains("gate"), "{first}");
    // The tool ends; watch shows that too.
    std::fs::write(&fifo, "opened\n").unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("watch prints the end")
        .unwrap()
        .unwrap();
    assert!(ended.starts_with("<- bash"), "{ended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_shell_counts_when_models_are_listed() {
    let world = World::start("anthropic-messages").await;
    let home = world.daemon.home.path();
    let mut envs = world.daemon.env();
    let (_, without, _) = pictl(&envs, home, &["--list-models", "claude-sonnet-4-5"]).await;
    assert!(!without.contains("anthropic"), "{without}");
    // The daemon never saw this key: the shell that lists has it, and its sessions will.
    envs.push((
        "ANTHROPIC_API_KEY".to_owned(),
        "sk-ant-from-the-shell".to_owned(),
    ));
    let (code, with, _) = pictl(&envs, home, &["--list-models", "claude-sonnet-4-5"]).await;
    assert_eq!(code, Some(0));
    assert!(with.contains("anthropic  claude-sonnet-4-5"), "{with}");
    // Scoped to the provider: other providers (amazon-bedrock) sort first and have no key.
    let (_, models, _) = pictl(
        &envs,
        home,
        &["models", "--json", "anthropic/claude-sonnet-4-5"],
    )
    .await;
    let first: serde_json::Value = serde_json::from_str(models.lines().next().unwrap()).unwrap();
    assert_eq!(first["hasKey"], true, "{models}");
}
