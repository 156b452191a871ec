//! The optional confinement of the agent's commands (`sandbox: workspace-write | read-only`).
//!
//! A confined command is started through a helper: the daemon's own binary, called as
//! `pid __sandbox [--write DIR]... [--network] -- PROGRAM ARGS...`. The helper, still single
//! threaded, confines itself and then replaces itself with the program, so everything the
//! program starts stays confined. On Linux: Landlock lets the command read everywhere but
//! write only beneath the writable directories (and to terminal and null devices), and, unless
//! the network is allowed, denies TCP `bind`/`connect` (Landlock ABI 4) while a seccomp filter
//! refuses every socket that is not a Unix socket and `io_uring` (which could open sockets
//! behind seccomp's back). Where the kernel has no Landlock, the command runs with only the
//! network filter and says so on its output. On macOS the helper is `sandbox-exec` with a
//! profile from [`seatbelt_profile`].
//!
//! Architecture invariant: a sandbox that cannot be set up (bad arguments, a failed filter)
//! never runs the program unconfined; only a kernel without Landlock degrades, and says so.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::spawn::SpawnSpec;

/// The first argument that makes the daemon's binary the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox";

/// What the confined command may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SandboxMode {
    /// The working directory, temp directories and configured roots.
    WorkspaceWrite,
    /// Nothing (beyond null and terminal devices).
    ReadOnly,
}

impl SandboxMode {
    /// The setting's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }
}

/// A session's sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// What may be written.
    pub mode: SandboxMode,
    /// The helper binary (the daemon's own executable).
    pub helper: PathBuf,
    /// Directories writable in `workspace-write` besides the command's working directory and
    /// the temp directories.
    pub writable_roots: Vec<PathBuf>,
    /// Whether commands may open network sockets.
    pub network: bool,
}

impl Sandbox {
    /// The directories a command in `cwd` with environment `env` may write.
    pub fn writable(
        &self,
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Vec<PathBuf> {
        if self.mode == SandboxMode::ReadOnly {
            return Vec::new();
        }
        let mut roots = vec![cwd.to_path_buf(), PathBuf::from("/tmp")];
        if let Some(tmp) = env.get("TMPDIR").filter(|tmp| !tmp.is_empty()) {
            roots.push(PathBuf::from(tmp));
        }
        roots.extend(self.writable_roots.iter().cloned());
        roots.dedup();
        roots
    }

    /// `spec` started through the helper, confined.
    pub fn wrap(&self, spec: SpawnSpec) -> SpawnSpec {
        let writable = self.writable(&spec.cwd, &spec.env);
        let mut args: Vec<OsString> = Vec::new();
        let program;
        if cfg!(target_os = "macos") {
            program = PathBuf::from("/usr/bin/sandbox-exec");
            args.push("-p".into());
            args.push(seatbelt_profile(&writable, self.network).into());
        } else {
            program = self.helper.clone();
            args.push(HELPER_ARG.into());
            for root in &writable {
                args.push("--write".into());
                args.push(root.clone().into_os_string());
            }
            if self.network {
                args.push("--network".into());
            }
            args.push("--".into());
        }
        args.push(spec.program.into_os_string());
        args.extend(spec.args);
        SpawnSpec {
            program,
            args,
            cwd: spec.cwd,
            env: spec.env,
        }
    }

    /// Whether the file tools (`write`, `edit`, language-server edits) may write `path`
    /// (absolute) for a session in `cwd` with `env`: beneath one of the roots the session's
    /// commands may write, judged as the kernel judges it — symbolic links followed, a path
    /// that does not exist yet by its nearest existing ancestor.
    pub fn allows_write(
        &self,
        path: &Path,
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> bool {
        let Some(real) = resolve_existing_prefix(path) else {
            return false;
        };
        self.writable(cwd, env)
            .iter()
            .filter_map(|root| root.canonicalize().ok())
            .any(|root| real.starts_with(root))
    }

    /// What a file tool answers when [`Sandbox::allows_write`] refused `path`.
    pub fn refuse_write(&self, path: &Path, cwd: &Path) -> String {
        format!(
            "Cannot write {}: the sandbox does not let the agent write there.\n\n[Blocked by \
             the sandbox: {}. If the file must change, ask the user to change the `sandbox` \
             setting.]",
            path.display(),
            self.describe(cwd)
        )
    }

    /// What the sandbox allows, in a sentence for the model.
    pub fn describe(&self, cwd: &Path) -> String {
        let network = if self.network {
            "the network is allowed"
        } else {
            "the network is off"
        };
        match self.mode {
            SandboxMode::WorkspaceWrite => {
                let mut places = vec![cwd.display().to_string(), "/tmp".to_owned()];
                places.extend(
                    self.writable_roots
                        .iter()
                        .map(|root| root.display().to_string()),
                );
                format!(
                    "the sandbox (workspace-write) lets commands write only beneath {}; {network}",
                    places.join(", ")
                )
            }
            SandboxMode::ReadOnly => {
                format!("the sandbox (read-only) lets commands write nowhere; {network}")
            }
        }
    }
}

/// `path` with its longest existing prefix resolved (symbolic links followed, `..` taken
/// after them) and the rest, which does not exist yet, appended; `None` for a relative path.
fn resolve_existing_prefix(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut resolved = real;
            for part in missing.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        resolved.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => resolved.push(other),
                }
            }
            return Some(resolved);
        }
        let part = existing.components().next_back()?;
        missing.push(part);
        existing = existing.parent()?;
    }
}

/// What this machine enforces when a session's sandbox is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforcement {
    /// Landlock (files; TCP from ABI 4) and the seccomp socket filter; the newest ABI the
    /// kernel offers.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: u8,
    },
    /// The kernel has no Landlock: only the network filter; the file tools still keep to the
    /// roots.
    NetworkOnly,
    /// macOS `sandbox-exec`.
    Seatbelt,
}

impl Enforcement {
    /// In words, for status reports.
    pub fn describe(self) -> String {
        match self {
            Enforcement::Landlock { abi } => {
                format!("landlock (ABI {abi}) and a seccomp socket filter")
            }
            Enforcement::NetworkOnly => {
                "a seccomp socket filter only: this kernel has no Landlock, so commands' file \
                 writes are not confined (the file tools still keep to the roots)"
                    .to_owned()
            }
            Enforcement::Seatbelt => "macOS sandbox-exec".to_owned(),
        }
    }

    /// What this kernel offers, probed once (a Landlock ruleset is created and dropped; the
    /// daemon itself is never confined).
    pub fn of_this_machine() -> Enforcement {
        static PROBED: std::sync::OnceLock<Enforcement> = std::sync::OnceLock::new();
        *PROBED.get_or_init(|| {
            #[cfg(target_os = "linux")]
            {
                linux::probe()
            }
            #[cfg(target_os = "macos")]
            {
                Enforcement::Seatbelt
            }
            #[cfg(not(any(target_os = "linux", target_os = "macos")))]
            {
                Enforcement::NetworkOnly
            }
        })
    }
}

/// Whether `output` of a failed command looks like the sandbox refused something.
pub fn looks_denied(output: &str) -> bool {
    [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ]
    .iter()
    .any(|needle| output.contains(needle))
}

/// The macOS Seatbelt profile: read everything, write beneath `writable` (and the null and
/// terminal devices), network only if `network`.
pub fn seatbelt_profile(writable: &[PathBuf], network: bool) -> String {
    let mut profile = String::from(
        "(version 1)\n(deny default)\n(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n(allow file-read*)\n(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n",
    );
    for root in writable {
        let escaped = root
            .display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        profile.push_str(&format!("(allow file-write* (subpath \"{escaped}\"))\n"));
    }
    if network {
        profile.push_str("(allow network*)\n");
    } else {
        profile.push_str("(allow network* (remote unix-socket))\n");
    }
    profile
}

/// The helper's arguments.
#[derive(Debug, PartialEq, Eq)]
struct HelperArgs {
    writable: Vec<PathBuf>,
    network: bool,
    program: OsString,
    args: Vec<OsString>,
}

fn parse_helper_args(args: &[OsString]) -> Result<HelperArgs, String> {
    let mut writable = Vec::new();
    let mut network = false;
    let mut rest = args.iter();
    loop {
        match rest.next().and_then(|arg| arg.to_str()) {
            Some("--write") => match rest.next() {
                Some(dir) => writable.push(PathBuf::from(dir)),
                None => return Err("--write needs a directory".to_owned()),
            },
            Some("--network") => network = true,
            Some("--") => break,
            Some(other) => return Err(format!("unknown argument {other:?}")),
            None => return Err("missing `-- PROGRAM`".to_owned()),
        }
    }
    let program = rest
        .next()
        .cloned()
        .ok_or_else(|| "missing the program after `--`".to_owned())?;
    Ok(HelperArgs {
        writable,
        network,
        program,
        args: rest.cloned().collect(),
    })
}

/// The helper's `main`: confines this process as `args` (after [`HELPER_ARG`]) say and
/// replaces it with the program. Returns only on failure, with the exit code (126, as a shell
/// does for a program it cannot run).
pub fn helper_main(args: &[OsString]) -> std::process::ExitCode {
    #[allow(
        clippy::print_stderr,
        reason = "the helper's only channel is the command's output"
    )]
    let fail = |message: String| {
        eprintln!("pi sandbox: {message}");
        std::process::ExitCode::from(126)
    };
    let parsed = match parse_helper_args(args) {
        Ok(parsed) => parsed,
        Err(error) => return fail(error),
    };
    #[cfg(target_os = "linux")]
    {
        match linux::confine(&parsed.writable, parsed.network) {
            Ok(linux::Confined::Fully) => {}
            Ok(linux::Confined::NetworkOnly) => {
                #[allow(clippy::print_stderr, reason = "the model must know")]
                {
                    eprintln!(
                        "pi sandbox: this kernel has no Landlock, so file writes are not confined (only the network filter applies)"
                    );
                }
            }
            Err(error) => return fail(format!("cannot set up the sandbox: {error}")),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        return fail(
            "this platform confines commands with sandbox-exec, not this helper".to_owned(),
        );
    }
    #[allow(unreachable_code, reason = "the exec only returns on failure")]
    {
        use std::os::unix::process::CommandExt as _;
        let error = std::process::Command::new(&parsed.program)
            .args(&parsed.args)
            .exec();
        fail(format!(
            "cannot start {}: {error}",
            Path::new(&parsed.program).display()
        ))
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };

    /// The newest Landlock ABI this code asks for; older kernels get the best they have.
    const ABI_WANTED: ABI = ABI::V6;
    /// Devices every command may write (discarding output, talking to its terminal).
    const DEVICES: [&str; 7] = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
        "/dev/shm",
    ];
    const AF_UNIX: u64 = 1;

    /// How far the confinement went.
    pub(super) enum Confined {
        /// Files and network.
        Fully,
        /// The kernel has no Landlock: only the seccomp network filter.
        NetworkOnly,
    }

    /// The newest Landlock ABI the kernel accepts a ruleset for (created, never enforced).
    pub(super) fn probe() -> super::Enforcement {
        let versions = [
            (ABI::V6, 6),
            (ABI::V5, 5),
            (ABI::V4, 4),
            (ABI::V3, 3),
            (ABI::V2, 2),
            (ABI::V1, 1),
        ];
        for (abi, number) in versions {
            let created = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(abi))
                .and_then(|ruleset| ruleset.create());
            if created.is_ok() {
                return super::Enforcement::Landlock { abi: number };
            }
        }
        super::Enforcement::NetworkOnly
    }

    pub(super) fn confine(writable: &[PathBuf], network: bool) -> Result<Confined, String> {
        let read = AccessFs::from_read(ABI_WANTED);
        let all = AccessFs::from_all(ABI_WANTED);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(|error| error.to_string())?;
        if !network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI_WANTED))
                .map_err(|error| error.to_string())?;
        }
        let status = ruleset
            .create()
            .and_then(|created| created.add_rules(path_beneath_rules(["/"], read)))
            .and_then(|created| created.add_rules(path_beneath_rules(DEVICES, all)))
            .and_then(|created| created.add_rules(path_beneath_rules(writable, all)))
            .and_then(|created| created.restrict_self())
            .map_err(|error| error.to_string())?;
        if !network {
            deny_network()?;
        }
        Ok(match status.ruleset {
            RulesetStatus::NotEnforced => Confined::NetworkOnly,
            _ => Confined::Fully,
        })
    }

    /// seccomp: `socket` for anything but Unix sockets, and `io_uring_setup`, fail with EPERM.
    fn deny_network() -> Result<(), String> {
        let arch = std::env::consts::ARCH
            .try_into()
            .map_err(|_| format!("no seccomp support for {}", std::env::consts::ARCH))?;
        let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, AF_UNIX)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(|error| error.to_string())?;
        let rules = BTreeMap::from([
            (libc_sys::SOCKET, vec![not_unix]),
            (libc_sys::IO_URING_SETUP, Vec::new()),
        ]);
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(1), // EPERM
            arch,
        )
        .map_err(|error| error.to_string())?;
        let program: BpfProgram = filter
            .try_into()
            .map_err(|error: seccompiler::BackendError| error.to_string())?;
        seccompiler::apply_filter(&program).map_err(|error| error.to_string())
    }

    /// System call numbers (the `libc` crate's, for the architectures seccompiler supports).
    mod libc_sys {
        #[cfg(target_arch = "x86_64")]
        pub const SOCKET: i64 = 41;
        #[cfg(target_arch = "aarch64")]
        pub const SOCKET: i64 = 198;
        #[cfg(target_arch = "riscv64")]
        pub const SOCKET: i64 = 198;
        pub const IO_URING_SETUP: i64 = 425;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_arguments_round_trip_through_wrap() {
        let sandbox = Sandbox {
            mode: SandboxMode::WorkspaceWrite,
            helper: PathBuf::from("/usr/bin/pid"),
            writable_roots: vec![PathBuf::from("/opt/cache")],
            network: false,
        };
        let spec = SpawnSpec {
            program: PathBuf::from("/bin/bash"),
            args: vec!["-c".into(), "echo hi".into()],
            cwd: PathBuf::from("/work/repo"),
            env: [("TMPDIR".to_owned(), "/var/tmp/me".to_owned())].into(),
        };
        let wrapped = sandbox.wrap(spec);
        if cfg!(target_os = "macos") {
            return;
        }
        assert_eq!(wrapped.program, PathBuf::from("/usr/bin/pid"));
        assert_eq!(wrapped.args[0], HELPER_ARG);
        let parsed =
            parse_helper_args(&wrapped.args[1..]).expect("the helper reads what wrap wrote");
        assert_eq!(
            parsed,
            HelperArgs {
                writable: ["/work/repo", "/tmp", "/var/tmp/me", "/opt/cache"]
                    .map(PathBuf::from)
                    .to_vec(),
                network: false,
                program: "/bin/bash".into(),
                args: vec!["-c".into(), "echo hi".into()],
            }
        );
    }

    #[test]
    fn read_only_writes_nowhere_and_bad_helper_arguments_are_named() {
        let sandbox = Sandbox {
            mode: SandboxMode::ReadOnly,
            helper: PathBuf::from("/usr/bin/pid"),
            writable_roots: vec![PathBuf::from("/opt/cache")],
            network: true,
        };
        assert!(
            sandbox
                .writable(Path::new("/work"), &Default::default())
                .is_empty()
        );
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            parse_helper_args(&args(&["--write"])),
            Err("--write needs a directory".to_owned())
        );
        assert_eq!(
            parse_helper_args(&args(&["--frobnicate"])),
            Err("unknown argument \"--frobnicate\"".to_owned())
        );
        assert_eq!(
            parse_helper_args(&args(&["--network"])),
            Err("missing `-- PROGRAM`".to_owned())
        );
        assert_eq!(
            parse_helper_args(&args(&["--"])),
            Err("missing the program after `--`".to_owned())
        );
    }

    #[test]
    fn the_seatbelt_profile_writes_only_beneath_the_roots() {
        let profile = seatbelt_profile(&[PathBuf::from("/work/a \"b\"")], false);
        assert!(profile.contains("(deny default)"));
        assert!(profile.contains("(allow file-write* (subpath \"/work/a \\\"b\\\"\"))"));
        assert!(profile.contains("(allow network* (remote unix-socket))"));
        assert!(!profile.contains("(allow network*)\n"));
        assert!(seatbelt_profile(&[], true).contains("(allow network*)\n"));
    }
}
