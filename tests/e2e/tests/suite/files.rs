//! The daemon's files and other local users, on the real `pid`: started with `umask 000` on a
//! fresh install, everything it creates (directories, database and its WAL, artifacts, token,
//! port file, socket, lock) is private, while what its tools create in a project follows the
//! user's mask; another user can neither read the database nor write the configuration. A
//! configuration file another user could have written (`mcp.json`, `settings.json`,
//! `models.json`, `config.toml`) is refused with the `chmod`/`chown` that fixes it.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use pi_protocol::v1::{
    DaemonStatus, DaemonStatusParams, McpList, McpListParams, SessionBash, SessionBashParams,
    SettingsGet, SettingsGetParams,
};
use serde_json::json;

use super::harness::World;
use super::mcp_faults::{caller, run, session, tool_results};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every file and directory under `root` with permission bits for group or others.
fn shared_entries(root: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let mut queue = vec![root.to_path_buf()];
    while let Some(path) = queue.pop() {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.file_type().is_symlink() {
            continue;
        }
        if metadata.mode() & 0o077 != 0 {
            found.push((path.clone(), metadata.mode() & 0o7777));
        }
        if metadata.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                queue.push(entry.unwrap().path());
            }
        }
    }
    found
}

/// Runs `command` as user `nobody`: whether it succeeded, and its stderr.
fn as_another_user(command: &str) -> (bool, String) {
    let output = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/bin/sh",
            "-c",
            command,
        ])
        .output()
        .expect("setpriv (util-linux) runs commands as another user");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_install_under_umask_000_keeps_every_file_private_from_other_users() {
    let mut world =
        World::start_with("anthropic-messages", &[("work/README", "x\n".to_owned())]).await;
    world.server.respond_with(caller);
    // A fresh install: nothing of the daemon's own exists yet when it starts under umask 000.
    world.daemon.kill9().await;
    let paths = world.daemon.paths.clone();
    for dir in [
        &paths.config_dir,
        &paths.data_dir,
        &paths.state_dir,
        &paths.runtime_dir,
    ] {
        std::fs::remove_dir_all(dir).unwrap();
    }
    world.daemon.set_launch_umask(0o000);
    world.daemon.restart().await;

    let home = world.daemon.home.path().to_path_buf();
    let work = home.join("work");
    let (client, mut events, id) = session(&world, &work.display().to_string()).await;
    // A tool call with output big enough for an artifact, and a user command, each making a
    // file in the project.
    let seen = run(
        &client,
        &mut events,
        &id,
        &format!(
            "call bash {}",
            json!({"command": "seq 1 200000; touch made-by-bash"})
        ),
    )
    .await;
    let (_, content, is_error, _) = tool_results(&seen).remove(0);
    assert!(!is_error && content.contains("artifact://"), "{content}");
    client
        .call::<SessionBash>(&SessionBashParams {
            session_id: id.clone(),
            command: "touch made-by-user".to_owned(),
            exclude_from_context: false,
        })
        .await
        .unwrap();
    // The user's mask is theirs: what the tools make in the project follows it.
    for made in ["made-by-bash", "made-by-user"] {
        let mode = std::fs::metadata(work.join(made)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o666, "{made} has mode {mode:o}");
    }

    // Everything of the daemon's own is private.
    assert!(
        paths.database_path().exists() && paths.ws_port_path().exists(),
        "the daemon wrote no database or port file"
    );
    let mut shared = Vec::new();
    for dir in [
        &paths.config_dir,
        &paths.data_dir,
        &paths.state_dir,
        &paths.runtime_dir,
    ] {
        shared.extend(shared_entries(dir));
    }
    assert!(shared.is_empty(), "readable by others: {shared:#?}");

    // Another user, who can reach the home as on a usual system, gets nothing.
    chmod(&home, 0o755);
    let (read, error) = as_another_user(&format!("cat '{}'", paths.database_path().display()));
    assert!(!read && error.contains("Permission denied"), "{error}");
    let (wrote, error) = as_another_user(&format!(
        "echo '{{}}' > '{}'",
        paths.config_dir.join("mcp.json").display()
    ));
    assert!(!wrote && error.contains("Permission denied"), "{error}");
    let (listed, error) = as_another_user(&format!("ls '{}'", paths.data_dir.display()));
    assert!(!listed && error.contains("Permission denied"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_another_user_could_write_is_refused_with_the_fix() {
    let mcp = json!({"mcpServers": {"planted": {"command": "touch", "args": ["/tmp/pwned"]}}});
    let models = json!({"providers": {"planted": {
        "baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions", "apiKey": "x",
        "models": [{"id": "m"}]
    }}});
    let mut world =
        World::start_with("anthropic-messages", &[("work/README", "x\n".to_owned())]).await;
    let paths = world.daemon.paths.clone();
    let mcp_json = paths.config_dir.join("mcp.json");
    let settings_json = paths.pi_agent_dir.join("settings.json");
    let models_json = paths.config_dir.join("models.json");
    std::fs::write(&mcp_json, mcp.to_string()).unwrap();
    std::fs::write(
        &settings_json,
        json!({"defaultThinkingLevel": "high"}).to_string(),
    )
    .unwrap();
    std::fs::write(&models_json, models.to_string()).unwrap();
    for file in [&mcp_json, &settings_json, &models_json] {
        chmod(file, 0o666);
    }
    // The daemon reads them all again at start.
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let (client, _events) = world.client().await;
    let work = world.daemon.home.path().join("work").display().to_string();
    let fix = |file: &Path| {
        let real = file.canonicalize().unwrap();
        format!(
            "{real} is writable by every user (mode 0666), so another user could have written \
             {file}; fix it with `chmod o-w {real}`",
            real = real.display(),
            file = file.display()
        )
    };

    let list = client
        .call::<McpList>(&McpListParams {
            cwd: Some(work.clone()),
        })
        .await
        .unwrap();
    assert!(list.definitions.is_empty(), "{:?}", list.definitions);
    let messages: Vec<&str> = list
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages.contains(
            &format!(
                "is refused, and its servers are not used: {}",
                fix(&mcp_json)
            )
            .as_str()
        ),
        "{messages:#?}"
    );

    let settings = client
        .call::<SettingsGet>(&SettingsGetParams {
            cwd: Some(work.clone()),
        })
        .await
        .unwrap();
    assert_ne!(settings.settings.default_thinking_level, "high");
    let messages: Vec<&str> = settings
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages.contains(
            &format!(
                "is refused, and the file is ignored: {}",
                fix(&settings_json)
            )
            .as_str()
        ),
        "{messages:#?}"
    );

    let status = client
        .call::<DaemonStatus>(&DaemonStatusParams {})
        .await
        .unwrap();
    let messages: Vec<&str> = status
        .config
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    let expected = format!(
        "{} is refused: {}; using the built-in models without this file",
        models_json.display(),
        fix(&models_json)
    );
    assert!(
        messages.contains(&expected.as_str()),
        "{messages:#?}\n{expected}"
    );

    // A file another user owns is refused too (only root can make one here).
    if rustix::process::geteuid().is_root() {
        chmod(&mcp_json, 0o600);
        std::os::unix::fs::chown(&mcp_json, Some(65534), None).unwrap();
        let list = client
            .call::<McpList>(&McpListParams {
                cwd: Some(work.clone()),
            })
            .await
            .unwrap();
        let real = mcp_json.canonicalize().unwrap();
        let expected = format!(
            "is refused, and its servers are not used: {real} belongs to uid 65534, not to you \
             (uid 0) or root, so another user could have written {file}; if you trust it, have \
             it given to you (`sudo chown 0 {real}`), otherwise remove it",
            real = real.display(),
            file = mcp_json.display()
        );
        assert!(
            list.diagnostics.iter().any(|d| d.message == expected),
            "{:#?}",
            list.diagnostics
        );
    }

    // The daemon's own configuration: it refuses to start.
    let config = paths.config_file();
    std::fs::write(&config, "").unwrap();
    chmod(&config, 0o666);
    drop(client);
    world.daemon.kill9().await;
    let output = world.daemon.spawn_second().output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("refusing {}: {}", config.display(), fix(&config))),
        "{stderr}"
    );
    // Said once, not again as a cause.
    assert_eq!(stderr.matches("fix it with").count(), 1, "{stderr}");
}

/// `pid` and `pictl` with `PI_HOME=home` (the runtime directory is `home/run`), the
/// environment otherwise the test's, plus `extra`: whether it succeeded, and its stderr. One
/// still running after 30 s is killed and fails the test (a daemon that should have refused
/// to start).
fn run_with_home(
    binary: &str,
    home: &Path,
    args: &[&str],
    extra: &[(&str, &str)],
) -> (bool, String) {
    let child = std::process::Command::new(pi_test_support::workspace_binary(binary))
        .args(args)
        .env("PI_HOME", home)
        .env("PI_DAEMON_BIN", pi_test_support::workspace_binary("pid"))
        .envs(extra.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let output = match finished.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid as i32).unwrap(),
                rustix::process::Signal::KILL,
            );
            panic!("{binary} {args:?} was still running after 30 s");
        }
    };
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_runtime_directory_or_socket_of_another_user_gets_nothing() {
    // Only root can make another user's files here; the test is about those files.
    assert!(
        rustix::process::geteuid().is_root(),
        "this test needs root to create another user's directory and socket"
    );
    let home = tempfile::tempdir().unwrap();
    chmod(home.path(), 0o755);
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    chmod(&project, 0o755);
    let runtime = home.path().join("run");

    // Another user made the runtime directory's path first: a link to the owner's project
    // (as in a shared /tmp when XDG_RUNTIME_DIR is unset).
    std::os::unix::fs::symlink(&project, &runtime).unwrap();
    std::os::unix::fs::lchown(&runtime, Some(65534), Some(65534)).unwrap();
    let link_refused = format!(
        "{run} is a symbolic link that belongs to uid 65534, not to you (uid 0); another user \
         may have made it to redirect your daemon's socket and token. Remove it (`sudo rm \
         {run}`), or set XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
        run = runtime.display()
    );
    let (started, stderr) = run_with_home("pid", home.path(), &[], &[]);
    assert!(!started);
    assert!(stderr.contains(&link_refused), "{stderr}");
    let (ran, stderr) = run_with_home("pictl", home.path(), &["daemon", "status"], &[]);
    assert!(!ran);
    assert!(stderr.contains(&link_refused), "{stderr}");
    let (ran, stderr) = run_with_home("pictl", home.path(), &["daemon", "start"], &[]);
    assert!(!ran);
    assert!(stderr.contains(&link_refused), "{stderr}");
    // Starting a daemon would not help: no such hint.
    let (ran, stderr) = run_with_home("pictl", home.path(), &["sessions"], &[]);
    assert!(!ran);
    assert!(stderr.contains(&link_refused), "{stderr}");
    assert!(!stderr.contains("pictl daemon start"), "{stderr}");
    // Nothing was made in, or changed about, the project.
    assert_eq!(std::fs::metadata(&project).unwrap().mode() & 0o777, 0o755);
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 0);

    // Their directory.
    std::fs::remove_file(&runtime).unwrap();
    std::fs::create_dir(&runtime).unwrap();
    std::os::unix::fs::chown(&runtime, Some(65534), Some(65534)).unwrap();
    let (started, stderr) = run_with_home("pid", home.path(), &[], &[]);
    assert!(!started);
    assert!(
        stderr.contains(&format!(
            "{run} belongs to uid 65534, not to you (uid 0); another user may have made it to \
             catch your daemon's socket or token. Remove it (`sudo rm -r {run}`), or set \
             XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
            run = runtime.display()
        )),
        "{stderr}"
    );

    // The directory is the owner's, but the socket in it is served by another user (who
    // could write there while it was open to everyone): the client sends nothing, not even
    // `initialize` with its environment.
    std::os::unix::fs::chown(&runtime, Some(0), Some(0)).unwrap();
    chmod(&runtime, 0o777);
    let socket = runtime.join("pid.sock");
    let heard = home.path().join("heard");
    let listener = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            "import socket, sys\n\
             s = socket.socket(socket.AF_UNIX)\n\
             s.bind(sys.argv[1]); s.listen(1)\n\
             print('ready', flush=True)\n\
             c, _ = s.accept(); c.settimeout(5)\n\
             data = b''\n\
             try:\n    while chunk := c.recv(65536): data += chunk\n\
             except OSError: pass\n\
             open(sys.argv[2], 'wb').write(data)\n",
        ])
        .arg(&socket)
        .arg(&heard)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect(
            "/usr/bin/python3 (installed by tests/install-peers) plays the other user's daemon",
        );
    let mut listener = listener;
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(listener.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready");
    chmod(home.path(), 0o777);
    let (ran, stderr) = run_with_home(
        "pictl",
        home.path(),
        &["run", "--no-session", "tell me the secret"],
        &[("SECRET_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJ012345")],
    );
    assert!(!ran);
    assert!(
        stderr.contains(&format!(
            "{socket} is served by a process of uid 65534, not by you (uid 0): another user may \
             be posing as your daemon, so nothing was sent. Remove the socket (`sudo rm \
             {socket}`), or set XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
            socket = socket.display()
        )),
        "{stderr}"
    );
    let status = listener.wait().unwrap();
    assert!(status.success(), "the listener failed: {status}");
    assert_eq!(
        std::fs::read(&heard).unwrap(),
        b"",
        "the client sent something"
    );
}
