//! Reaching a daemon on another machine through the system `ssh` client: `pictl --remote
//! ssh://[user@]host[:port][:/path/to/pictl]` (or `PI_REMOTE`) runs `ssh … host pictl bridge`,
//! and the far `pictl bridge` joins its stdin and stdout to its own user's daemon (starting
//! it when none runs). No port is opened on either side; ssh's own authentication decides who
//! may connect.
//!
//! `PI_REMOTE_SSH` replaces the `ssh` command (words split on whitespace, no quoting: `ssh -i
//! KEY -o ControlMaster=auto …`; options with spaces belong in `~/.ssh/config`). ssh runs in
//! a process group of its own, so Ctrl+C reaches `pictl` (which aborts the far run) rather
//! than killing the connection; it cannot ask for a password then: log in with a key or an
//! agent. What ssh says on stderr is kept and shown with the error when the far side never
//! answers.

use std::sync::OnceLock;

/// The idle time when `PI_REMOTE_LINK` is unset.
const DEFAULT_IDLE: &str = "10m";

/// `PI_REMOTE_LINK` is neither `off` nor an idle time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "PI_REMOTE_LINK={0:?} is neither `off` nor an idle time such as 10m, 1h or 600 (seconds): \
     it says how long the shared ssh link to a remote daemon stays open without commands"
)]
pub struct BadLinkSetting(pub String);

/// The idle time `PI_REMOTE_LINK` (its value as given) asks for; `None` for `off` (or a
/// time of zero, which ssh would read as "for ever").
pub fn link_idle(setting: Option<&str>) -> Result<Option<String>, BadLinkSetting> {
    let Some(setting) = setting.map(str::trim).filter(|setting| !setting.is_empty()) else {
        return Ok(Some(DEFAULT_IDLE.to_owned()));
    };
    if matches!(
        setting.to_ascii_lowercase().as_str(),
        "off" | "no" | "false"
    ) {
        return Ok(None);
    }
    match seconds(setting) {
        None => Err(BadLinkSetting(setting.to_owned())),
        Some(0) => Ok(None),
        Some(_) => Ok(Some(setting.to_owned())),
    }
}

/// ssh's time format in seconds: numbers each followed by a unit (s, m, h, d, w; the last
/// may have none: seconds), as `90`, `10m` or `1h30m`; `None` when it is not one, or more
/// than ssh takes (a 32-bit count of seconds).
fn seconds(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = match rest.chars().next().map(|c| c.to_ascii_lowercase()) {
            None => 1,
            Some('s') => 1,
            Some('m') => 60,
            Some('h') => 3600,
            Some('d') => 86_400,
            Some('w') => 604_800,
            Some(_) => return None,
        };
        if !rest.is_empty() {
            rest = &rest[1..];
        }
        total = total.checked_add(number.checked_mul(unit)?)?;
    }
    (total <= i32::MAX as u64).then_some(total)
}

/// A remote daemon's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// `user@host` or `host`.
    pub destination: String,
    /// The SSH port, when not ssh's default (or its config's).
    pub port: Option<u16>,
    /// The `pictl` to run on the far side.
    pub program: String,
    /// The far bridge starts the daemon when none runs (not for `pictl daemon status`).
    pub start: bool,
}

/// Why a remote address cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0}: a remote is ssh://[user@]host[:port][:/path/to/pictl], for example ssh://me@devbox or ssh://me@devbox:2222:/opt/pi/bin/pictl"
)]
pub struct BadRemote(pub String);

/// What the far `pictl bridge --no-start` says on stderr when no daemon runs there: the near
/// side tells that apart from a failed login.
pub const NO_FAR_DAEMON: &str = "pictl bridge: no daemon runs on this host";

// `pictl --remote`, which wins over `PI_REMOTE`.
static CHOSEN: OnceLock<Remote> = OnceLock::new();

impl Remote {
    /// Parses `ssh://[user@]host[:port][:/path/to/pictl]`.
    pub fn parse(text: &str) -> Result<Remote, BadRemote> {
        let rest = text
            .trim()
            .strip_prefix("ssh://")
            .ok_or_else(|| BadRemote(format!("{text:?} does not start with ssh://")))?;
        let (address, program) = match rest.split_once(":/") {
            Some((address, path)) => (address, format!("/{path}")),
            None => (rest.trim_end_matches('/'), "pictl".to_owned()),
        };
        // `[::1]` or `user@[::1]`, with an optional `:port` after the bracket.
        let (address, bracketed) = match address.split_once('[') {
            Some((user, rest)) => match rest.split_once(']') {
                Some((host, after)) => (
                    format!("{user}{host}{after}"),
                    Some((user.len(), host.len())),
                ),
                None => return Err(BadRemote(format!("{text:?} opens a [ without closing it"))),
            },
            None => (address.to_owned(), None),
        };
        let split = match bracketed {
            // The port, if any, comes after the literal.
            Some((start, length)) => address[start + length..]
                .strip_prefix(':')
                .map(|port| (&address[..start + length], port)),
            None => address.rsplit_once(':'),
        };
        let (destination, port) = match split {
            Some((destination, port)) => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|port| *port > 0)
                    .ok_or_else(|| BadRemote(format!("{port:?} in {text:?} is not a port")))?;
                (destination, Some(port))
            }
            None => (address.as_str(), None),
        };
        let host = destination.rsplit('@').next().unwrap_or_default();
        if host.is_empty() || destination.contains(char::is_whitespace) {
            return Err(BadRemote(format!("{text:?} names no host")));
        }
        if destination.starts_with('-') {
            return Err(BadRemote(format!("{text:?}: a host cannot start with -")));
        }
        Ok(Remote {
            destination: destination.to_owned(),
            port,
            program,
            start: true,
        })
    }

    /// The remote in force: `pictl --remote`, else `PI_REMOTE`; `None` when neither (local).
    pub fn current() -> Result<Option<Remote>, BadRemote> {
        if let Some(chosen) = CHOSEN.get() {
            return Ok(Some(chosen.clone()));
        }
        match std::env::var("PI_REMOTE") {
            Ok(text) if !text.trim().is_empty() => Remote::parse(&text).map(Some),
            _ => Ok(None),
        }
    }

    /// Makes `self` the remote of this process (`pictl --remote`), over `PI_REMOTE`.
    pub fn choose(self) {
        let _ = CHOSEN.set(self);
    }

    /// The command that reaches the far daemon: ssh (or `PI_REMOTE_SSH`) running
    /// `PROGRAM bridge` there.
    pub fn command(&self) -> (String, Vec<String>) {
        let (program, mut args) = ssh_words();
        // No terminal: the connection carries the protocol's bytes, nothing else.
        args.push("-T".to_owned());
        if let Some(port) = self.port {
            args.push("-p".to_owned());
            args.push(port.to_string());
        }
        args.push(self.destination.clone());
        args.push("--".to_owned());
        args.push(self.program.clone());
        args.push("bridge".to_owned());
        if !self.start {
            args.push("--no-start".to_owned());
        }
        (program, args)
    }

    /// A command line for people to run `far` (words) on the far host with the same ssh
    /// command and address: `ssh [PI_REMOTE_SSH's options] [-p PORT] HOST PICTL …`.
    pub fn ssh_line(&self, far: &[&str]) -> String {
        let (program, mut args) = ssh_words();
        self.push_address(&mut args);
        args.push(self.program.clone());
        args.extend(far.iter().map(|word| (*word).to_owned()));
        format!("{program} {}", args.join(" "))
    }

    /// The command that forwards `127.0.0.1:local` here to the far daemon's loopback
    /// listener on port `far` (`pictl web --remote`): `ssh -N -L`, nothing run there.
    pub fn forward_command(&self, local: u16, far: u16) -> (String, Vec<String>) {
        let (program, mut args) = ssh_words();
        args.extend(
            ["-N", "-T", "-o", "ExitOnForwardFailure=yes", "-L"]
                .iter()
                .map(|word| (*word).to_owned()),
        );
        args.push(format!("127.0.0.1:{local}:127.0.0.1:{far}"));
        if let Some(port) = self.port {
            args.push("-p".to_owned());
            args.push(port.to_string());
        }
        args.push(self.destination.clone());
        (program, args)
    }

    /// The command that opens the shared link (see `client/link.rs`): a `ControlMaster` that
    /// forwards the Unix socket `link` here to the far daemon's socket `far`, ends after
    /// `idle` without connections, never prompts, and notices a dead network by keep-alives.
    /// Its options come before `PI_REMOTE_SSH`'s (ssh keeps the first value given), so a
    /// `ControlMaster` of the user's does not turn it into a client of another connection.
    pub fn link_command(
        &self,
        control: &std::path::Path,
        link: &std::path::Path,
        far: &std::path::Path,
        idle: &str,
    ) -> (String, Vec<String>) {
        let (program, words) = ssh_words();
        let mut args: Vec<String> = [
            "ControlMaster=yes".to_owned(),
            control_path(control),
            format!("ControlPersist={idle}"),
            // The forwarded socket is this user's only, whatever ssh's config says.
            "StreamLocalBindMask=0177".to_owned(),
            "ExitOnForwardFailure=yes".to_owned(),
            "BatchMode=yes".to_owned(),
            "ServerAliveInterval=15".to_owned(),
            "ServerAliveCountMax=3".to_owned(),
        ]
        .into_iter()
        .flat_map(|option| ["-o".to_owned(), option])
        .collect();
        args.extend(words);
        args.extend(["-N".to_owned(), "-T".to_owned(), "-L".to_owned()]);
        args.push(format!("{}:{}", link.display(), far.display()));
        self.push_address(&mut args);
        (program, args)
    }

    /// The command that ends the shared link's connection (`ssh -O exit`).
    pub fn link_exit_command(&self, control: &std::path::Path) -> (String, Vec<String>) {
        let (program, words) = ssh_words();
        let mut args = vec!["-o".to_owned(), control_path(control)];
        args.extend(words);
        args.extend(["-O".to_owned(), "exit".to_owned()]);
        self.push_address(&mut args);
        (program, args)
    }

    /// Whether `PI_REMOTE_SSH` leaves connection sharing to the link: `-S`, `-M`, `-O` and
    /// `-f` (alone or among other flags) would make ssh use or end another connection, or
    /// leave the link's own in the foreground for good.
    pub fn link_allowed(&self) -> bool {
        link_allowed_by(&ssh_words().1)
    }

    /// What names this remote's shared link: the address, the far program and the ssh
    /// command line (another `-l`, `-F` or key may reach another account).
    pub fn link_identity(&self) -> String {
        let (program, words) = ssh_words();
        format!(
            "{}\0{}\0{program} {}",
            self.label(),
            self.program,
            words.join(" ")
        )
    }

    /// `-p PORT` (when given) and the destination, ending a command line.
    fn push_address(&self, args: &mut Vec<String>) {
        if let Some(port) = self.port {
            args.push("-p".to_owned());
            args.push(port.to_string());
        }
        args.push(self.destination.clone());
    }

    /// How to name it to people: `me@devbox` (with the port when one is given).
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.destination),
            None => self.destination.clone(),
        }
    }
}

/// Whether ssh options `words` leave connection sharing to the link (see
/// [`Remote::link_allowed`]). An option's argument that looks like such flags (`-i ./Mf`)
/// counts too: that only costs the link.
fn link_allowed_by(words: &[String]) -> bool {
    !words.iter().any(|word| {
        word.strip_prefix('-').is_some_and(|flags| {
            !flags.starts_with('-')
                && (flags.starts_with('S')
                    || flags.starts_with('O')
                    || (flags.chars().all(|c| c.is_ascii_alphabetic())
                        && flags.contains(['M', 'f'])))
        })
    })
}

/// `ControlPath=PATH`, with `%` (which starts one of ssh's tokens there) doubled.
fn control_path(control: &std::path::Path) -> String {
    format!(
        "ControlPath={}",
        control.display().to_string().replace('%', "%%")
    )
}

/// The ssh program and its options: `PI_REMOTE_SSH` split on whitespace, or `ssh`.
fn ssh_words() -> (String, Vec<String>) {
    let ssh = std::env::var("PI_REMOTE_SSH")
        .ok()
        .filter(|ssh| !ssh.trim().is_empty())
        .unwrap_or_else(|| "ssh".to_owned());
    let mut words = ssh.split_whitespace().map(str::to_owned);
    let program = words.next().unwrap_or_else(|| "ssh".to_owned());
    (program, words.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_with_user_port_and_program() {
        assert_eq!(
            Remote::parse("ssh://me@devbox").unwrap(),
            Remote {
                destination: "me@devbox".to_owned(),
                port: None,
                program: "pictl".to_owned(),
                start: true,
            }
        );
        assert_eq!(
            Remote::parse("ssh://devbox:2222:/opt/pi/bin/pictl").unwrap(),
            Remote {
                destination: "devbox".to_owned(),
                port: Some(2222),
                program: "/opt/pi/bin/pictl".to_owned(),
                start: true,
            }
        );
        assert_eq!(
            Remote::parse("ssh://me@10.0.0.5:/home/me/.cargo/bin/pictl")
                .unwrap()
                .program,
            "/home/me/.cargo/bin/pictl"
        );
        let v6 = Remote::parse("ssh://me@[::1]:2222:/opt/pictl").unwrap();
        assert_eq!((v6.destination.as_str(), v6.port), ("me@::1", Some(2222)));
        assert_eq!(
            Remote::parse("ssh://[fe80::1]").unwrap().destination,
            "fe80::1"
        );
        assert_eq!(
            Remote::parse("ssh://me@devbox:2222:/opt/pictl")
                .unwrap()
                .ssh_line(&["daemon", "stop"]),
            "ssh -p 2222 me@devbox /opt/pictl daemon stop"
        );
        let (program, args) = Remote::parse("ssh://me@devbox:2222").unwrap().command();
        assert_eq!(program, "ssh");
        assert_eq!(
            args,
            ["-T", "-p", "2222", "me@devbox", "--", "pictl", "bridge"]
        );
    }

    #[test]
    fn the_link_forwards_a_socket_with_its_options_before_the_user_s() {
        let remote = Remote::parse("ssh://me@devbox:2222").unwrap();
        let (program, args) = remote.link_command(
            std::path::Path::new("/run/pi/remote/k.ctl"),
            std::path::Path::new("/run/pi/remote/k.sock"),
            std::path::Path::new("/run/user/1000/pi-daemon/pid.sock"),
            "10m",
        );
        assert_eq!(program, "ssh");
        let line = args.join(" ");
        assert!(
            line.starts_with(
                "-o ControlMaster=yes -o ControlPath=/run/pi/remote/k.ctl -o ControlPersist=10m "
            ),
            "{line}"
        );
        assert!(line.contains("-o BatchMode=yes"), "{line}");
        assert!(
            line.ends_with(
                "-N -T -L /run/pi/remote/k.sock:/run/user/1000/pi-daemon/pid.sock -p 2222 me@devbox"
            ),
            "{line}"
        );
        let (_, exit) = remote.link_exit_command(std::path::Path::new("/run/100%/k.ctl"));
        assert_eq!(
            exit.join(" "),
            "-o ControlPath=/run/100%%/k.ctl -O exit -p 2222 me@devbox"
        );
    }

    #[test]
    fn options_that_take_over_connection_sharing_leave_no_room_for_the_link() {
        let words = |line: &str| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        for allowed in [
            "",
            "-i /home/me/.ssh/devbox -o BatchMode=yes",
            "-o ControlMaster=auto -o ControlPath=/tmp/cm-%C -o ControlPersist=10m",
            "-F /dev/null -p 22 -A -4",
            "--",
        ] {
            assert!(link_allowed_by(&words(allowed)), "{allowed}");
        }
        for refused in [
            "-S /tmp/cm",
            "-S/tmp/cm",
            "-M",
            "-fN",
            "-NM",
            "-O check",
            "-Oexit",
        ] {
            assert!(!link_allowed_by(&words(refused)), "{refused}");
        }
    }

    #[test]
    fn the_idle_time_is_ssh_s_or_off() {
        assert_eq!(link_idle(None).unwrap().as_deref(), Some("10m"));
        assert_eq!(link_idle(Some(" ")).unwrap().as_deref(), Some("10m"));
        assert_eq!(link_idle(Some("1h")).unwrap().as_deref(), Some("1h"));
        assert_eq!(link_idle(Some("600")).unwrap().as_deref(), Some("600"));
        // Zero is "for ever" to ssh: no link rather than one that never ends.
        assert_eq!(link_idle(Some("1h30m")).unwrap().as_deref(), Some("1h30m"));
        assert_eq!(seconds("1h30m"), Some(5400));
        assert_eq!(seconds("1w2d3"), Some(604_800 + 2 * 86_400 + 3));
        for off in ["off", "OFF", "no", "0", "0s", "00m", "0h0m"] {
            assert_eq!(link_idle(Some(off)).unwrap(), None, "{off}");
        }
        for bad in [
            "soon",
            "10 m",
            "m",
            "-5",
            "10x",
            "1.5h",
            "99999999999999999999",
            "3000000000",
        ] {
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
    fn bad_addresses_say_what_a_remote_looks_like() {
        for (text, start) in [
            ("me@devbox", "\"me@devbox\" does not start with ssh://"),
            ("ssh://", "\"ssh://\" names no host"),
            ("ssh://me@", "\"ssh://me@\" names no host"),
            (
                "ssh://devbox:ssh",
                "\"ssh\" in \"ssh://devbox:ssh\" is not a port",
            ),
            (
                "ssh://-oProxyCommand=x",
                "\"ssh://-oProxyCommand=x\": a host cannot start with -",
            ),
            ("ssh://[::1", "\"ssh://[::1\" opens a [ without closing it"),
        ] {
            let error = Remote::parse(text).unwrap_err().to_string();
            assert!(error.starts_with(start), "{error}");
            assert!(
                error.ends_with("ssh://me@devbox:2222:/opt/pi/bin/pictl"),
                "{error}"
            );
        }
    }
}
