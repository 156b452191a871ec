//! `pictl --remote ssh://…` against a real `sshd` on a loopback port (a throwaway host key and
//! client key, started by the test): `pictl run` and `pictl sessions` through `--remote` and
//! `PI_REMOTE`, the TUI through the same bridge, and a far `pictl` that is not there. The
//! local side has a home of its own with no daemon and no model: only the far daemon (the
//! test's, named to the far side through sshd's `SetEnv`) can answer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::model_server::Turn;
use pi_test_support::workspace_binary;

use super::harness::{MODEL, World};
use super::tui::Tmux;

/// An `sshd` on a loopback port; killed when dropped.
struct Sshd {
    child: std::process::Child,
    port: u16,
    client_key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen is installed (tests/install-peers)");
    assert!(status.success());
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Starts sshd in `dir`, its sessions seeing `env`.
fn sshd(dir: &Path, env: &[(String, String)]) -> Sshd {
    let sshd = Path::new("/usr/sbin/sshd");
    assert!(
        sshd.exists(),
        "sshd is missing: tests/install-peers installs openssh-server"
    );
    keygen(&dir.join("host_key"));
    keygen(&dir.join("client_key"));
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    // sshd run by root checks for its privilege separation directory.
    if rustix::process::geteuid().is_root() {
        std::fs::create_dir_all("/run/sshd").unwrap();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let set_env: Vec<String> = env
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
         AuthorizedKeysFile {dir}/authorized_keys\nPidFile none\nUsePAM no\nStrictModes no\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
         PermitRootLogin prohibit-password\nLogLevel ERROR\nSetEnv {}\n",
        set_env.join(" "),
        dir = dir.display(),
    );
    std::fs::write(dir.join("sshd_config"), config).unwrap();
    let child = Command::new(sshd)
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .spawn()
        .unwrap();
    // Ready once it accepts connections.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "sshd did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Sshd {
        child,
        port,
        client_key: dir.join("client_key"),
    }
}

/// The environment of a `pictl` on the near side: a home of its own (no model; a daemon
/// started there would be seen),
/// ssh with the throwaway key, and `PI_REMOTE` when given.
fn near_env(near_home: &Path, sshd: &Sshd, remote: Option<&str>) -> Vec<(String, String)> {
    let mut env = vec![
        ("PI_HOME".to_owned(), near_home.display().to_string()),
        ("HOME".to_owned(), near_home.display().to_string()),
        (
            "PI_REMOTE_SSH".to_owned(),
            format!(
                "ssh -F /dev/null -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes",
                sshd.client_key.display()
            ),
        ),
    ];
    if let Some(remote) = remote {
        env.push(("PI_REMOTE".to_owned(), remote.to_owned()));
    }
    env
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
    let world = World::start("anthropic-messages").await;
    let far_home = world.daemon.home.path().to_path_buf();
    let far_project = far_home.join("project");
    std::fs::create_dir_all(&far_project).unwrap();
    let near = tempfile::tempdir().unwrap();
    let sshd = sshd(near.path(), &world.daemon.env());
    let pictl_path = workspace_binary("pictl");
    let remote = format!(
        "ssh://{}@127.0.0.1:{}:{}",
        user(),
        sshd.port,
        pictl_path.display()
    );

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

    // The TUI on that session, through the bridge.
    let tmux = Tmux::new(near.path());
    let mut tui_env = env.clone();
    tui_env.push(("TERM".to_owned(), "xterm-256color".to_owned()));
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
            "cannot reach the daemon on {}@127.0.0.1:{} through `ssh",
            user(),
            sshd.port
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("give its path: ssh://HOST:/path/to/pictl"),
        "{stderr}"
    );

    // No daemon ever ran on the near side.
    assert!(!near.path().join("state/pid.log").exists());

    // A remote that is not an ssh address.
    let (code, _, stderr) = pictl(&env, near.path(), &["--remote", "devbox", "sessions"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--remote: \"devbox\" does not start with ssh://"),
        "{stderr}"
    );
}
