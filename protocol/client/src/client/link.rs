//! The shared link to a far daemon. Once a `pictl --remote` command has reached the far
//! daemon through `pictl bridge`, it leaves one ssh connection in the background: `ssh -N
//! -L LINK:FAR_SOCKET`, a `ControlMaster` with `ControlPersist`, which forwards a Unix socket
//! in this user's runtime directory (`remote/KEY.sock`, 0600 in a 0700 directory) to the far
//! daemon's socket. Later commands to the same remote connect to that socket as to a local
//! daemon: no ssh process, no login and no far process per command, one channel opened over
//! the connection already there.
//!
//! The link ends after `PI_REMOTE_LINK` (an idle time, `10m` by default: [`link_idle`]) without
//! connections, when the network goes (ssh's keep-alives notice within 45 s), or when killed;
//! `PI_REMOTE_LINK=off` never opens one, nor does a `PI_REMOTE_SSH` that shares connections
//! its own way (`-S`, `-M`, `-O`, `-f`). A link that does not answer within [`LINK_ANSWER`]
//! is closed and the command goes through `pictl bridge` as before. When the far daemon is
//! not running the link cannot reach it and the bridge starts it; when the link cannot reach
//! the daemon that ran when it was opened and runs still (the far sshd refuses to forward
//! sockets), it is closed and none is opened to that remote for [`REFUSED_FOR`].
//!
//! Files, per remote `KEY` in `RUNTIME/remote/` (checked to be this user's): `KEY.sock` the
//! link, `KEY.ctl` ssh's control socket, `KEY.log` what the background ssh says, `KEY.far` the
//! far socket it forwards to and when that daemon had started, `KEY.lock` held while a link is being opened (one opener at a
//! time), `KEY.refused` when the far side would not forward.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pi_paths::Paths;
use pi_protocol::v1::{ClientCapabilities, ClientInfo, DaemonStatus, DaemonStatusParams};

use super::{Client, Notifications};
use crate::error::ClientError;
use crate::remote::{BadLinkSetting, Remote, link_idle};

/// How long a link may take to answer `initialize` before it is given up.
pub const LINK_ANSWER: Duration = Duration::from_secs(5);

/// A link being opened (or whose opening failed) this recently is not opened again.
const OPENING: Duration = Duration::from_secs(30);

/// How long no link is opened to a remote whose far side would not forward its socket.
pub const REFUSED_FOR: Duration = Duration::from_secs(3600);

/// Room `ssh` needs after a control path for its temporary name (`.` and 16 characters).
const MAX_LINK_PATH: usize = pi_paths::MAX_SOCKET_PATH_BYTES - 17;

/// The link to one remote (`user@host[:port]`, its far `pictl` and the ssh command line).
#[derive(Clone, Debug)]
pub struct Link {
    /// The forwarded socket commands connect to.
    pub socket: PathBuf,
    /// `ControlPersist`'s idle time.
    idle: String,
}

/// What trying the link found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missed {
    /// No live link.
    NoLink,
    /// A live link that did not reach a daemon.
    Failed,
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

/// Whether ssh takes `path` as it is in `-L A:B` and `ControlPath=…`: it splits those on `:`
/// and whitespace, and expands `%` tokens in them.
fn ssh_safe(path: &str) -> bool {
    !path.contains(|c: char| ":\"%".contains(c) || c.is_whitespace())
}

/// How long ago `path` was last written; `None` when it is not there.
fn age(path: &Path) -> Option<Duration> {
    let modified = std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

/// Runs `program` on its own (a process group of its own, holding none of this process's
/// pipes), reaped by a thread when it ends.
fn detached(program: &str, args: &[String], stderr: std::process::Stdio) -> std::io::Result<()> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

impl Link {
    /// The link of `remote` under `paths`' runtime directory, when links are on (`setting`:
    /// `PI_REMOTE_LINK`'s value), `PI_REMOTE_SSH` leaves connection sharing to it, and its
    /// paths suit ssh.
    pub fn for_remote(
        remote: &Remote,
        paths: &Paths,
        setting: Option<&str>,
    ) -> Result<Option<Link>, BadLinkSetting> {
        let Some(idle) = link_idle(setting)? else {
            return Ok(None);
        };
        if !remote.link_allowed() {
            return Ok(None);
        }
        let name = key(&remote.link_identity());
        let link = Link {
            socket: paths
                .runtime_dir
                .join("remote")
                .join(format!("{name}.sock")),
            idle,
        };
        let usable = |path: &Path| {
            path.to_str()
                .is_some_and(|text| text.len() <= MAX_LINK_PATH && ssh_safe(text))
        };
        Ok((usable(&link.socket) && usable(&link.file("ctl"))).then_some(link))
    }

    /// The link's file with extension `extension` (`ctl`, `log`, `far`, `lock`, `refused`).
    fn file(&self, extension: &str) -> PathBuf {
        self.socket.with_extension(extension)
    }

    /// Connects through the link and performs the handshake; what it missed when there is
    /// no live link or it could not reach the far daemon (then the bridge is the way).
    pub(crate) async fn connect(
        &self,
        remote: &Remote,
        client_info: ClientInfo,
        capabilities: ClientCapabilities,
    ) -> Result<Result<(Client, Notifications), Missed>, ClientError> {
        let Ok(transport) = super::connect_unix(&self.socket).await else {
            // Left behind by a link that ended: the next one replaces it.
            return Ok(Err(Missed::NoLink));
        };
        match tokio::time::timeout(
            LINK_ANSWER,
            Client::handshake(transport, client_info, capabilities),
        )
        .await
        {
            Ok(Ok(connected)) => Ok(Ok(connected)),
            // The far daemon is not running, or the far sshd would not forward.
            Ok(Err(ClientError::Disconnected { .. })) => Ok(Err(Missed::Failed)),
            Ok(Err(other)) => Err(other),
            Err(_) => {
                tracing::warn!(remote = %remote.label(), "the shared ssh link did not answer; closing it");
                let _ = std::fs::remove_file(&self.socket);
                let (program, args) = remote.link_exit_command(&self.file("ctl"));
                let _ = detached(&program, &args, std::process::Stdio::null());
                Ok(Err(Missed::NoLink))
            }
        }
    }

    /// After a command reached the far daemon through the bridge (`client`): opens the link
    /// when none is live, and closes one that `missed` a daemon that runs. Never fails the
    /// command: a link that cannot be opened leaves its reason in its log.
    pub(crate) async fn open(&self, remote: &Remote, client: &Client, missed: Missed) {
        if let Err(error) = self.try_open(remote, client, missed).await {
            tracing::debug!(%error, "the shared ssh link was not opened");
        }
    }

    async fn try_open(
        &self,
        remote: &Remote,
        client: &Client,
        missed: Missed,
    ) -> std::io::Result<()> {
        let live = tokio::net::UnixStream::connect(&self.socket).await.is_ok();
        if live && missed == Missed::NoLink {
            return Ok(());
        }
        if age(&self.file("refused")).is_some_and(|age| age < REFUSED_FOR) {
            return Ok(());
        }
        let Some(_lock) = self.opener_lock()? else {
            // Another command is opening it now.
            return Ok(());
        };
        let status = client
            .call::<DaemonStatus>(&DaemonStatusParams {})
            .await
            .map_err(std::io::Error::other)?;
        let far = status.socket_path;
        // The far socket the link forwards to, and when the daemon there then had started
        // (both the far host's: no clocks compared across machines).
        let recorded = std::fs::read_to_string(self.file("far")).unwrap_or_default();
        let (forwarded, started) = recorded.split_once('\n').unwrap_or((recorded.as_str(), ""));
        if missed == Missed::Failed {
            if forwarded == far && started != status.started_at.to_string() {
                // A daemon started since the link was opened (this command's bridge started
                // it, say): the one the link missed was not running; the link is fine.
                return Ok(());
            }
            self.end(remote).await;
            if forwarded == far {
                // A running daemon the link forwards to, out of its reach: the far sshd
                // refuses to forward sockets (`AllowStreamLocalForwarding`).
                tracing::warn!(remote = %remote.label(), "the far sshd does not forward the daemon's socket; no shared link for an hour (PI_REMOTE_LINK=off silences this)");
                std::fs::write(self.file("refused"), b"")?;
                return Ok(());
            }
        } else if age(&self.file("log")).is_some_and(|age| age < OPENING) {
            // Opened lately: still logging in, or failed (its log says why).
            return Ok(());
        }
        if !ssh_safe(&far) {
            return Ok(());
        }
        self.end(remote).await;
        std::fs::write(self.file("far"), format!("{far}\n{}", status.started_at))?;
        // Made anew, never through a link someone left there.
        let _ = std::fs::remove_file(self.file("log"));
        let log = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(self.file("log"))?;
        let (program, args) =
            remote.link_command(&self.file("ctl"), &self.socket, Path::new(&far), &self.idle);
        // ssh goes to the background once logged in, and ends on its idle time.
        detached(&program, &args, log.into())
    }

    /// Takes `KEY.lock` (made in the link's directory, checked to be this user's); `None`
    /// when another process holds it.
    fn opener_lock(&self) -> std::io::Result<Option<File>> {
        let dir = self.socket.parent().unwrap_or(Path::new("/"));
        if let Some(runtime) = dir.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(runtime)?;
            pi_paths::trust::check_owned_dir(runtime).map_err(std::io::Error::other)?;
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        pi_paths::trust::check_owned_dir(dir).map_err(std::io::Error::other)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(self.file("lock"))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(error)) => Err(error),
        }
    }

    /// Ends whatever is left of a link (with its lock held): a live control socket is told
    /// to exit (a new `ControlMaster` would otherwise find it and stay in the foreground for
    /// good), and dead sockets are removed (ssh then binds the link afresh, or fails rather
    /// than take another's).
    async fn end(&self, remote: &Remote) {
        let control = self.file("ctl");
        if tokio::net::UnixStream::connect(&control).await.is_ok() {
            let (program, args) = remote.link_exit_command(&control);
            let exited = tokio::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .status();
            let _ = tokio::time::timeout(Duration::from_secs(5), exited).await;
        }
        for path in [&control, &self.socket] {
            if tokio::net::UnixStream::connect(path).await.is_err() {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_keeps_its_link_under_the_runtime_directory() {
        let home = tempfile::tempdir().unwrap();
        let paths =
            Paths::resolve(|name| (name == "PI_HOME").then(|| home.path().as_os_str().to_owned()))
                .unwrap();
        let remote = Remote::parse("ssh://me@devbox:2222").unwrap();
        let link = Link::for_remote(&remote, &paths, None).unwrap().unwrap();
        assert!(link.socket.starts_with(paths.runtime_dir.join("remote")));
        assert_eq!(link.file("ctl"), link.socket.with_extension("ctl"));
        // Another far pictl is another link; the same remote finds the same one.
        let other = Remote::parse("ssh://me@devbox:2222:/opt/pictl").unwrap();
        assert_ne!(
            Link::for_remote(&other, &paths, None)
                .unwrap()
                .unwrap()
                .socket,
            link.socket
        );
        assert_eq!(
            Link::for_remote(&remote, &paths, None)
                .unwrap()
                .unwrap()
                .socket,
            link.socket
        );
        // Off: none.
        assert!(
            Link::for_remote(&remote, &paths, Some("off"))
                .unwrap()
                .is_none()
        );
        // A runtime directory too long for ssh's control path: no link, the bridge only.
        let deep = Paths {
            runtime_dir: PathBuf::from(format!("/run/{}", "d".repeat(70))),
            ..paths.clone()
        };
        assert!(Link::for_remote(&remote, &deep, None).unwrap().is_none());
        // Nor one whose path ssh would read as tokens or words.
        let odd = Paths {
            runtime_dir: PathBuf::from("/run/100%"),
            ..paths
        };
        assert!(Link::for_remote(&remote, &odd, None).unwrap().is_none());
    }
}
