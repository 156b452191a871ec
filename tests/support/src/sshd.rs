//! A real `sshd` on a loopback port for the `--remote` tests and bench: a throwaway host key
//! and client key, sessions that see the environment given (the test's daemon), killed when
//! dropped. Needs openssh-server (`tests/install-peers`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// An `sshd` on a loopback port; killed when dropped.
pub struct Sshd {
    child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The client key it accepts.
    pub client_key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Its connections first (each a process of its own session): a client's shared
        // connection (`pictl`'s link) then ends at once instead of on its idle time.
        for connection in children_of(self.child.id()) {
            if let Some(pid) = rustix::process::Pid::from_raw(connection) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The processes whose parent is `parent` (from `/proc`).
fn children_of(parent: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `PID (COMM) STATE PPID …`; COMM may hold spaces and parentheses.
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
        .collect()
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen is installed (tests/install-peers)");
    assert!(status.success(), "ssh-keygen failed");
}

/// This user's name (for `user@127.0.0.1`).
pub fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl Sshd {
    /// Starts sshd with its files in `dir`; its sessions see `env`.
    pub fn start(dir: &Path, env: &[(String, String)]) -> Sshd {
        Sshd::start_with(dir, env, "")
    }

    /// [`Sshd::start`] with `extra` lines in its configuration (`AllowStreamLocalForwarding
    /// no`, …).
    pub fn start_with(dir: &Path, env: &[(String, String)], extra: &str) -> Sshd {
        let sshd = Path::new("/usr/sbin/sshd");
        assert!(
            sshd.exists(),
            "sshd is missing: tests/install-peers installs openssh-server"
        );
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys"))
            .expect("authorized_keys");
        // sshd run by root checks for its privilege separation directory.
        if rustix::process::geteuid().is_root() {
            std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let set_env: Vec<String> = env
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPidFile none\nUsePAM no\nStrictModes no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin prohibit-password\nLogLevel QUIET\nSetEnv {}\n{extra}\n",
            set_env.join(" "),
            dir = dir.display(),
        );
        std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            // Its sessions outlive it by a moment; they must not hold the test's output.
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sshd starts");
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

    /// The ssh command line (`PI_REMOTE_SSH`) that logs in with the client key, without
    /// asking anything; `extra` options after it.
    pub fn ssh_command(&self, extra: &str) -> String {
        format!(
            "ssh -F /dev/null -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes {extra}",
            self.client_key.display()
        )
    }

    /// `ssh://USER@127.0.0.1:PORT:PROGRAM`.
    pub fn remote(&self, program: &Path) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}:{}",
            user(),
            self.port,
            program.display()
        )
    }
}

/// The shared link's socket (`pictl --remote`'s, in `RUNTIME/remote`) once it accepts
/// connections: ssh logs in and forwards in the background after the first command. Fails
/// after 30 s with what the link's ssh said.
pub fn wait_for_link(dir: &Path) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let live = std::fs::read_dir(dir).ok().and_then(|entries| {
            entries.flatten().map(|entry| entry.path()).find(|path| {
                path.extension().is_some_and(|ext| ext == "sock")
                    && std::os::unix::net::UnixStream::connect(path).is_ok()
            })
        });
        if let Some(path) = live {
            return path;
        }
        if Instant::now() > deadline {
            let said: String = std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "log"))
                        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
                        .collect()
                })
                .unwrap_or_default();
            panic!(
                "no shared link in {} within 30 s; ssh said: {said}",
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
