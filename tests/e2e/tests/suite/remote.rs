//! `pictl --remote ssh://…` against a real `sshd` on a loopback port (a throwaway host key and
//! client key, started by the test): `pictl run` and `pictl sessions` through `--remote` and
//! `PI_REMOTE`, the shared link the first command leaves (later commands run no ssh; a wedged
//! link is given up; `PI_REMOTE_LINK`), the TUI through the bridge and an editor's `pictl acp`
//! through the link, and a far `pictl` that is not there. The
//! local side has a home of its own with no daemon and no model: only the far daemon (the
//! test's, named to the far side through sshd's `SetEnv`) can answer.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use pi_test_support::model_server::Turn;
use pi_test_support::sshd::{Sshd, user, wait_for_link};
use pi_test_support::workspace_binary;

use super::harness::{MODEL, World};
use super::tui::Tmux;

/// The environment of a `pictl` on the near side: a home of its own (no model; a daemon
/// started there would be seen),
/// ssh with the throwaway key, and `PI_REMOTE` when given.
fn near_env(near_home: &Path, sshd: &Sshd, remote: Option<&str>) -> Vec<(String, String)> {
    // ssh through a script that counts its runs (in `ssh.runs`).
    let counting = near_home.join("counting-ssh");
    std::fs::write(
        &counting,
        format!(
            "#!/bin/sh\necho run >> {}\nexec ssh \"$@\"\n",
            near_home.join("ssh.runs").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&counting, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ssh = sshd
        .ssh_command("")
        .replacen("ssh", &counting.display().to_string(), 1);
    let mut env = vec![
        ("PI_HOME".to_owned(), near_home.display().to_string()),
        ("HOME".to_owned(), near_home.display().to_string()),
        ("PI_REMOTE_SSH".to_owned(), ssh),
    ];
    if let Some(remote) = remote {
        env.push(("PI_REMOTE".to_owned(), remote.to_owned()));
    }
    env
}

/// How many times the near side ran ssh (see `near_env`).
fn ssh_runs(near_home: &Path) -> usize {
    std::fs::read_to_string(near_home.join("ssh.runs"))
        .unwrap_or_default()
        .lines()
        .count()
}

fn pictl(env: &[(String, String)], dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(workspace_binary("pictl"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().cloned())
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictl_and_the_tui_reach_the_far_daemon_through_ssh() {
    let mut world = World::start("anthropic-messages").await;
    let far_home = world.daemon.home.path().to_path_buf();
    let far_project = far_home.join("project");
    std::fs::create_dir_all(&far_project).unwrap();
    let near = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(near.path(), &world.daemon.env());
    let pictl_path = workspace_binary("pictl");
    let remote = sshd.remote(&pictl_path);

    let env = near_env(near.path(), &sshd, None);
    // `--remote`: a run on the far daemon, in a directory of the far host.
    world
        .server
        .push(Turn::reply().text("hello from the far side"));
    let cwd = far_project.display().to_string();
    let (code, stdout, stderr) = pictl(
        &env,
        near.path(),
        &[
            "--remote",
            &remote,
            "run",
            "--model",
            MODEL,
            "--cwd",
            &cwd,
            "say hello",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "hello from the far side\n");
    assert!(
        world.server.requests()[0].body_text.contains("say hello"),
        "the far daemon's model got the prompt"
    );

    // That command left a shared link: ssh forwarding a socket here to the far daemon's,
    // in the near runtime directory, private. Once it is up, commands to that remote go
    // through it and run no ssh of their own.
    let link = wait_for_link(&near.path().join("run/remote"));
    let mode = std::fs::metadata(&link).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o077, 0, "the link socket is {mode:o}");
    let runs = ssh_runs(near.path());
    let env = near_env(near.path(), &sshd, Some(&remote));
    let (code, stdout, stderr) = pictl(&env, near.path(), &["sessions", "--all", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&cwd), "{stdout}");
    assert_eq!(ssh_runs(near.path()), runs, "no ssh ran for that command");
    // `PI_REMOTE_LINK` that is neither off nor a time is refused with what it means.
    let mut bad_link = near_env(near.path(), &sshd, Some(&remote));
    bad_link.push(("PI_REMOTE_LINK".to_owned(), "soon".to_owned()));
    let (code, _, stderr) = pictl(&bad_link, near.path(), &["sessions"]);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("PI_REMOTE_LINK=\"soon\" is neither `off` nor an idle time such as 10m"),
        "{stderr}"
    );

    // `PI_REMOTE`: the session is listed there, in its far directory.
    let env = near_env(near.path(), &sshd, Some(&remote));
    let (code, stdout, stderr) = pictl(&env, near.path(), &["sessions", "--all", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let sessions: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let session = sessions
        .iter()
        .find(|session| session["cwd"] == cwd.as_str())
        .unwrap_or_else(|| panic!("{stdout}"));
    let id = session["id"].as_str().unwrap().to_owned();

    // The TUI on that session, through the bridge (no link: `PI_REMOTE_LINK=off`).
    let tmux = Tmux::new(near.path());
    let mut tui_env = env.clone();
    tui_env.push(("TERM".to_owned(), "xterm-256color".to_owned()));
    tui_env.push(("PI_REMOTE_LINK".to_owned(), "off".to_owned()));
    tmux.start(
        "remote",
        near.path(),
        &tui_env,
        &[
            pictl_path.display().to_string(),
            "attach".to_owned(),
            id.clone(),
        ],
    );
    tmux.wait_for_text("remote", "hello from the far side");
    world
        .server
        .push(Turn::reply().text("second answer, far away"));
    tmux.type_text("remote", "and again");
    tmux.send("remote", &["Enter"]);
    tmux.wait_for_text("remote", "second answer, far away");
    assert!(
        world.server.requests()[1].body_text.contains("and again"),
        "typed in the near TUI, sent by the far daemon"
    );

    // A far pictl that is not there: ssh's failure, then what to check.
    let missing = format!("ssh://{}@127.0.0.1:{}:/nowhere/pictl", user(), sshd.port);
    let (code, _, stderr) = pictl(&env, near.path(), &["--remote", &missing, "sessions"]);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains(&format!(
            "cannot reach the daemon on {}@127.0.0.1:{} through `{}",
            user(),
            sshd.port,
            near.path().join("counting-ssh").display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("give its path: ssh://HOST:/path/to/pictl"),
        "{stderr}"
    );
    assert!(
        stderr.contains("it said: ") && stderr.contains("/nowhere/pictl"),
        "what the far shell said comes with the error: {stderr}"
    );

    // Starting and stopping belong to the far host.
    let (code, _, stderr) = pictl(&env, near.path(), &["daemon", "stop"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "`pictl daemon start|stop|restart` manages this machine's daemon; run it on the far host instead: {} -p {} {}@127.0.0.1 {} daemon stop\n",
            env.iter()
                .find(|(key, _)| key == "PI_REMOTE_SSH")
                .map(|(_, ssh)| ssh.trim())
                .unwrap(),
            sshd.port,
            user(),
            pictl_path.display()
        )),
        "{stderr}"
    );
    let (code, stdout, stderr) = pictl(&env, near.path(), &["daemon", "status", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("\"pid\":{}", world.daemon.pid())),
        "the far daemon's: {stdout}"
    );

    // An editor's ACP agent through the shared link: a session there, a prompt answered.
    world
        .server
        .push(Turn::reply().text("answered for the editor"));
    let lines = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": cwd, "mcpServers": []}}),
    ];
    let mut acp = std::process::Command::new(&pictl_path)
        .args(["acp", "--model", MODEL])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::{BufRead as _, Write as _};
        let mut stdin = acp.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(acp.stdout.take().unwrap());
        for line in &lines {
            writeln!(stdin, "{line}").unwrap();
        }
        // The session's id, then a prompt in it.
        let mut session_id = None;
        let mut line = String::new();
        while session_id.is_none() {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "pictl acp ended early"
            );
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                session_id = message["result"]["sessionId"].as_str().map(str::to_owned);
                assert!(session_id.is_some(), "{message}");
            }
        }
        let prompt = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "from the editor"}]}});
        writeln!(stdin, "{prompt}").unwrap();
        let mut said = String::new();
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "pictl acp ended early"
            );
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "session/update" {
                if let Some(text) = message["params"]["update"]["content"]["text"].as_str() {
                    said.push_str(text);
                }
            } else if message["id"] == 3 {
                assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
                break;
            }
        }
        assert_eq!(said, "answered for the editor");
    }
    let _ = acp.wait();

    // Ctrl+C at the terminal (SIGINT to pictl's process group) aborts the far run, through
    // the link here (whose ssh has a group of its own, as the bridge's has).
    let gate = pi_test_support::model_server::Gate::new();
    world.server.push(
        Turn::reply()
            .text("a long answer that is never finished")
            .hold_after(1, &gate),
    );
    let interrupted = {
        use std::os::unix::process::CommandExt as _;
        let cwd = cwd.clone();
        let mut command = Command::new(&pictl_path);
        command
            .args(["run", "--model", MODEL, "--cwd", &cwd, "take your time"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env.iter().cloned())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0);
        command.spawn().unwrap()
    };
    gate.reached().await;
    let group = rustix::process::Pid::from_raw(interrupted.id() as i32).unwrap();
    rustix::process::kill_process_group(group, rustix::process::Signal::INT).unwrap();
    let output = interrupted.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted; the run was aborted"),
        "{stderr}"
    );
    gate.release();
    let (code, stdout, stderr) = pictl(&env, near.path(), &["sessions", "--all", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .all(|session| session["status"] != "running"),
        "the far run was aborted: {stdout}"
    );

    // No daemon ever ran on the near side.
    assert!(!near.path().join("state/pid.log").exists());

    // A link that takes connections and never answers (a wedged connection) is given up
    // after 5 s for the bridge, and its socket removed.
    let control = link.with_extension("ctl");
    let status = Command::new("ssh")
        .args(sshd.ssh_command("").split_whitespace().skip(1))
        .args([
            "-o",
            &format!("ControlPath={}", control.display()),
            "-O",
            "exit",
        ])
        .args([
            "-p",
            &sshd.port.to_string(),
            &format!("{}@127.0.0.1", user()),
        ])
        .status()
        .unwrap();
    assert!(status.success(), "the link's ssh ends on -O exit");
    let _ = std::fs::remove_file(&link);
    let wedged = std::os::unix::net::UnixListener::bind(&link).unwrap();
    wedged.set_nonblocking(true).unwrap();
    // Takes the command's connection and holds it unanswered (30 s at most).
    let held = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            match wedged.accept() {
                Ok((stream, _)) => return Some(stream),
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        }
    });
    let (code, stdout, stderr) = pictl(&env, near.path(), &["sessions", "--all", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&cwd), "{stdout}");
    assert!(
        held.join().unwrap().is_some(),
        "the command tried the link first"
    );
    assert!(!link.exists(), "the wedged link's socket is gone");

    // `PI_REMOTE_LINK=off`: commands work, and no link is left behind.
    let plain = tempfile::tempdir().unwrap();
    let mut off = near_env(plain.path(), &sshd, Some(&remote));
    off.push(("PI_REMOTE_LINK".to_owned(), "off".to_owned()));
    let (code, _, stderr) = pictl(&off, plain.path(), &["sessions", "--all", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!plain.path().join("run/remote").exists());

    // With no far daemon, `daemon status` says so (as locally), and starts none.
    world.daemon.kill9().await;
    let (code, stdout, stderr) = pictl(&env, near.path(), &["daemon", "status", "--json"]);
    assert_eq!(code, Some(3), "{stderr}");
    let status: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        status,
        serde_json::json!({"running": false, "remote": format!("{}@127.0.0.1:{}", user(), sshd.port)})
    );
    let (code, stdout, _) = pictl(&env, near.path(), &["daemon", "status", "--human"]);
    assert_eq!(code, Some(3));
    assert_eq!(
        stdout,
        format!(
            "The daemon on {}@127.0.0.1:{} is not running. Any other `pictl --remote` command starts it (`pictl daemon status` does not).\n",
            user(),
            sshd.port
        )
    );

    // A remote that is not an ssh address.
    let (code, _, stderr) = pictl(&env, near.path(), &["--remote", "devbox", "sessions"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--remote: \"devbox\" does not start with ssh://"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_far_sshd_that_will_not_forward_the_socket_leaves_the_bridge_alone_for_an_hour() {
    let world = World::start("anthropic-messages").await;
    let near = tempfile::tempdir().unwrap();
    let sshd = Sshd::start_with(
        near.path(),
        &world.daemon.env(),
        "AllowStreamLocalForwarding no",
    );
    let remote = sshd.remote(&workspace_binary("pictl"));
    let env = near_env(near.path(), &sshd, Some(&remote));
    let sessions = |env: &[(String, String)]| {
        let (code, _, stderr) = pictl(env, near.path(), &["sessions", "--all", "--json"]);
        assert_eq!(code, Some(0), "{stderr}");
    };
    // The first command opens a link: its socket listens here, but the far side refuses
    // every connection through it.
    sessions(&env);
    let link = wait_for_link(&near.path().join("run/remote"));
    // The next one finds the link cannot reach the daemon that runs there: it goes through
    // the bridge, and the link is closed and not tried again.
    sessions(&env);
    assert!(
        link.with_extension("refused").exists(),
        "the remote is marked as refusing to forward"
    );
    assert!(
        std::os::unix::net::UnixStream::connect(&link).is_err(),
        "the link is closed"
    );
    let runs = ssh_runs(near.path());
    sessions(&env);
    assert_eq!(
        ssh_runs(near.path()),
        runs + 1,
        "one ssh (the bridge's), no new link"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_ui_of_the_far_daemon_is_forwarded_through_ssh() {
    use tokio::io::AsyncBufReadExt as _;

    let world = World::start("anthropic-messages").await;
    let far_home = world.daemon.home.path().to_path_buf();
    let near = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(near.path(), &world.daemon.env());
    let remote = sshd.remote(&workspace_binary("pictl"));
    let (client, _events) = world.client().await;
    let far_session = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: far_home.display().to_string(),
            model: Some(MODEL.to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();

    let mut web = tokio::process::Command::new(workspace_binary("pictl"))
        .args(["--remote", &remote, "web", "--no-open", "--json"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(near_env(near.path(), &sshd, None))
        .current_dir(near.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(web.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(60), stdout.next_line())
        .await
        .expect("pictl web prints the link")
        .unwrap()
        .expect("a line");
    let printed: serde_json::Value = serde_json::from_str(&line).unwrap();
    let url = printed["url"].as_str().unwrap().to_owned();
    let far_port = std::fs::read_to_string(world.daemon.paths.ws_port_path())
        .unwrap()
        .trim()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(
        !url.starts_with(&format!("http://127.0.0.1:{far_port}/")),
        "a port of this side, forwarded: {url}"
    );
    let near_origin = url.split("/login").next().unwrap().to_owned();

    // A browser here, on the forwarded port, sees the far daemon's sessions.
    let mut browser = pi_test_support::browser::Browser::start().await;
    let page = browser.new_page(0).await;
    browser.goto(page, &url).await;
    browser
        .wait_for(page, "[data-testid=connection][data-state=connected]", None)
        .await;
    let item = format!(
        "[data-testid=session-item][data-session-id=\"{}\"]",
        far_session.id
    );
    browser.wait_for(page, &item, None).await;
    browser.close().await;

    // Ctrl+C ends the forward.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(web.id().unwrap() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), web.wait())
        .await
        .expect("pictl web ends on Ctrl+C")
        .unwrap();
    assert!(status.success(), "{status}");
    let port: u16 = near_origin.rsplit(':').next().unwrap().parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the forward stays open after pictl web ended"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
