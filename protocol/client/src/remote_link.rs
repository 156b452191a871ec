//! The shared link to a far daemon. Once a `pictl --remote` command has reached the far
//! daemon through `pictl bridge`, it leaves one ssh connection in the background: `ssh -N
//! -L LINK:FAR_SOCKET`, a `ControlMaster` with `ControlPersist`, which forwards a Unix socket
//! in this user's runtime directory (`remote/KEY.sock`, 0600 in a 0700 directory) to the far
//! daemon's socket. Later commands to the same remote connect to that socket as to a local
//! daemon: no ssh process, no login and no far process per command, one channel opened over
//! the connection already there.
//!
//! The link ends after `PI_REMOTE_LINK` (an idle time, `10m` by default) without
//! connections, when the network goes (ssh's keep-alives notice within 45 s), or when killed;
//! `PI_REMOTE_LINK=off` never opens one. A link that does not answer within
//! [`LINK_ANSWER`] is closed and the command goes through `pictl bridge` as before. When
//! the far daemon is not running, the link cannot reach it: the bridge starts it.

use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pi_paths::Paths;
use pi_protocol::v1::{ClientCapabilities, ClientInfo, DaemonStatus, DaemonStatusParams};

use crate::client::{Client, Notifications};
use crate::error::ClientError;
use crate::remote::Remote;

/// How long a link may take to answer `initialize` before it is given up.
pub const LINK_ANSWER: Duration = Duration::from_secs(5);

/// A link being opened (or whose opening failed) this recently is not opened again.
const OPENING: Duration = Duration::from_secs(30);

/// The idle time when `PI_REMOTE_LINK` is unset.
const DEFAULT_IDLE: &str = "10m";

/// Room `ssh` needs after a control path for its temporary name (`.` and 16 characters), in
/// a Unix socket address of 108 bytes.
const MAX_LINK_PATH: usize = 108 - 1 - 17;

/// `PI_REMOTE_LINK` is neither `off` nor an idle time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "PI_REMOTE_LINK={0:?} is neither `off` nor an idle time such as 10m, 1h or 600 (seconds): \
     it says how long the shared ssh link to a remote daemon stays open without commands"
)]
pub struct BadLinkSetting(pub String);

/// The link to one remote (`user@host[:port]` and its far `pictl`).
#[derive(Clone, Debug)]
pub struct Link {
    /// The forwarded socket commands connect to.
    pub socket: PathBuf,
    /// ssh's control socket for the connection.
    control: PathBuf,
    /// What the background ssh says.
    log: PathBuf,
    /// `ControlPersist`'s idle time.
    idle: String,
}

/// The idle time `PI_REMOTE_LINK` (its value as given) asks for; `None` for `off`.
pub fn link_idle(setting: Option<&str>) -> Result<Option<String>, BadLinkSetting> {
    let Some(setting) = setting.map(str::trim).filter(|setting| !setting.is_empty()) else {
        return Ok(Some(DEFAULT_IDLE.to_owned()));
    };
    if matches!(
        setting.to_ascii_lowercase().as_str(),
        "off" | "no" | "false" | "0"
    ) {
        return Ok(None);
    }
    // ssh's time format, one unit: digits, then s, m, h, d or w (seconds without).
    let digits = setting.trim_end_matches(|c: char| "smhdwSMHDW".contains(c));
    let unit = setting.len() - digits.len();
    if digits.is_empty() || unit > 1 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(BadLinkSetting(setting.to_owned()));
    }
    Ok(Some(setting.to_owned()))
}

/// A stable name for `text` (FNV-1a, 64 bits, in hex): the same remote finds its link from
/// every process.
fn key(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

impl Link {
    /// The link of `remote` under `paths`' runtime directory, when links are on
    /// (`PI_REMOTE_LINK`) and its paths suit ssh.
    pub fn for_remote(remote: &Remote, paths: &Paths) -> Result<Option<Link>, BadLinkSetting> {
        let Some(idle) = link_idle(std::env::var("PI_REMOTE_LINK").ok().as_deref())? else {
            return Ok(None);
        };
        let dir = paths.runtime_dir.join("remote");
        let name = key(&format!("{}\0{}", remote.label(), remote.program));
        let link = Link {
            socket: dir.join(format!("{name}.sock")),
            control: dir.join(format!("{name}.ctl")),
            log: dir.join(format!("{name}.log")),
            idle,
        };
        // ssh reads `-L A:B` and `ControlPath=…` as words split on `:` and whitespace.
        let usable = |path: &Path| {
            path.to_str().is_some_and(|text| {
                text.len() <= MAX_LINK_PATH
                    && !text.contains(|c: char| c == ':' || c == '"' || c.is_whitespace())
            })
        };
        Ok((usable(&link.socket) && usable(&link.control)).then_some(link))
    }

    /// Connects through the link and performs the handshake; `None` when there is no live
    /// link or it cannot reach the far daemon (then the bridge is the way).
    pub(crate) async fn connect(
        &self,
        remote: &Remote,
        client_info: ClientInfo,
        capabilities: ClientCapabilities,
    ) -> Result<Option<(Client, Notifications)>, ClientError> {
        if !self.socket.exists() {
            return Ok(None);
        }
        let Ok(transport) = crate::client::connect_unix(&self.socket).await else {
            // Left behind by a link that ended: the next one replaces it.
            return Ok(None);
        };
        match tokio::time::timeout(
            LINK_ANSWER,
            Client::handshake(transport, client_info, capabilities),
        )
        .await
        {
            Ok(Ok(connected)) => Ok(Some(connected)),
            // The far daemon is not running (or the far sshd refuses to forward sockets).
            Ok(Err(ClientError::Disconnected { .. })) => Ok(None),
            Ok(Err(other)) => Err(other),
            Err(_) => {
                tracing::warn!(remote = %remote.label(), "the shared ssh link did not answer; closing it");
                self.close(remote);
                Ok(None)
            }
        }
    }

    /// Opens the link in the background when none is live, naming the far daemon's socket
    /// as `client` (connected through the bridge) reports it. Never fails the command: a
    /// link that cannot be opened leaves its reason in its log.
    pub(crate) async fn open(&self, remote: &Remote, client: &Client) {
        if tokio::net::UnixStream::connect(&self.socket).await.is_ok() || self.opened_lately() {
            return;
        }
        let far = match client.call::<DaemonStatus>(&DaemonStatusParams {}).await {
            Ok(status) => status.socket_path,
            Err(error) => {
                tracing::debug!(%error, "no far socket path for the shared ssh link");
                return;
            }
        };
        if far.contains(':') || far.contains(char::is_whitespace) {
            return;
        }
        if let Err(error) = self.spawn(remote, &far) {
            tracing::debug!(%error, "the shared ssh link was not started");
        }
    }

    /// Whether a link was started here lately (its log is fresh): it may still be logging
    /// in, or have failed; either way a new one would not help yet.
    fn opened_lately(&self) -> bool {
        std::fs::metadata(&self.log)
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age < OPENING)
    }

    fn spawn(&self, remote: &Remote, far: &str) -> std::io::Result<()> {
        if let Some(dir) = self.socket.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.log)?;
        let (program, args) =
            remote.link_command(&self.control, &self.socket, Path::new(far), &self.idle);
        // A process of its own, holding none of this one's pipes: it outlives this command
        // (ssh goes to the background once logged in) and ends on its idle time.
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()?;
        // Reaped when ssh has gone to the background (or failed).
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        Ok(())
    }

    /// Ends the link's connection (`ssh -O exit`), in the background.
    fn close(&self, remote: &Remote) {
        let (program, args) = remote.link_exit_command(&self.control);
        let _ = std::fs::remove_file(&self.socket);
        if let Ok(mut child) = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
        {
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_time_is_ssh_s_or_off() {
        assert_eq!(link_idle(None).unwrap().as_deref(), Some("10m"));
        assert_eq!(link_idle(Some(" ")).unwrap().as_deref(), Some("10m"));
        assert_eq!(link_idle(Some("off")).unwrap(), None);
        assert_eq!(link_idle(Some("0")).unwrap(), None);
        assert_eq!(link_idle(Some("1h")).unwrap().as_deref(), Some("1h"));
        assert_eq!(link_idle(Some("600")).unwrap().as_deref(), Some("600"));
        for bad in ["soon", "10 m", "1h30m", "m", "-5"] {
            let error = link_idle(Some(bad)).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!(
                    "PI_REMOTE_LINK={bad:?} is neither `off` nor an idle time such as 10m"
                )),
                "{error}"
            );
        }
    }

    #[test]
    fn a_remote_keeps_its_link_under_the_runtime_directory() {
        let home = tempfile::tempdir().unwrap();
        let paths =
            Paths::resolve(|name| (name == "PI_HOME").then(|| home.path().as_os_str().to_owned()))
                .unwrap();
        let remote = Remote::parse("ssh://me@devbox:2222").unwrap();
        let link = Link::for_remote(&remote, &paths).unwrap().unwrap();
        assert!(link.socket.starts_with(paths.runtime_dir.join("remote")));
        // Another far pictl is another link; the same remote finds the same one.
        let other = Remote::parse("ssh://me@devbox:2222:/opt/pictl").unwrap();
        assert_ne!(
            Link::for_remote(&other, &paths).unwrap().unwrap().socket,
            link.socket
        );
        assert_eq!(
            Link::for_remote(&remote, &paths).unwrap().unwrap().socket,
            link.socket
        );
        // A runtime directory too long for ssh's control path: no link, the bridge only.
        let deep = Paths {
            runtime_dir: PathBuf::from(format!("/run/{}", "d".repeat(70))),
            ..paths
        };
        assert!(Link::for_remote(&remote, &deep).unwrap().is_none());
    }
}
