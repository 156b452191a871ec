//! The guard: the process between the daemon and every process it starts
//! (`pid __guard [OPTIONS] -- PROGRAM ARGS...`, run by [`crate::spawn::Spawner`]). It leads a
//! process group and session of its own, puts back the user's file-creation mask (the daemon
//! runs with `077` so that everything it writes itself is private), runs the program in its
//! group, and takes the whole tree down when the daemon goes — also when the daemon is killed
//! with SIGKILL, which no cleanup code of the daemon sees.
//!
//! Two ways to notice the daemon is gone, one per mode:
//! - **Server mode** (MCP and language servers, jobs, kernels: programs that keep their stdio
//!   for the daemon): the kernel sends the guard SIGTERM when the thread that started it dies
//!   (`PR_SET_PDEATHSIG`), so the daemon starts these guards from one long-lived thread. When
//!   the program exits the guard kills its group, and with `--status FILE` writes the
//!   program's exit code to FILE first (killing its own group kills the guard too, so its own
//!   exit status cannot carry the code).
//! - **Exec mode** (`--exec`: the `bash` tool, user `!` commands, git; programs whose stdin is
//!   empty): the guard's stdin is one end of a socket pair whose other end the daemon holds.
//!   The program gets an empty stdin; when it exits, the guard writes its raw wait status as a
//!   line to the socket, then stays, as the child subreaper of everything the program left
//!   running (`cmd &`), until the last of them exits. The daemon keeps its end open while the
//!   guard lives; when the daemon dies its end closes, the guard reads end-of-file and kills
//!   the group and every process it adopted. The daemon asks for the same by closing its end
//!   (abort, timeout).
//!
//! Architecture invariant: a guard never outlives the daemon by more than the time it takes to
//! send SIGKILL to what it guards.

use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::os::fd::AsFd as _;
use std::process::ExitCode;

use rustix::process::{Pid, Signal, getpgrp, getpid, getppid, kill_process, kill_process_group};

/// The first argument that selects the guard in the `pid` binary.
pub const HELPER_ARG: &str = "__guard";

/// What the guard was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardArgs {
    /// The file-creation mask to give the program.
    pub umask: Option<u32>,
    /// Server mode: where the program's exit code goes.
    pub status_file: Option<OsString>,
    /// Exec mode: stdin is the control socket.
    pub exec: bool,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

impl GuardArgs {
    /// The arguments after [`HELPER_ARG`] that ask for `self`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        if let Some(umask) = self.umask {
            args.push("--umask".into());
            args.push(format!("{umask:03o}").into());
        }
        if let Some(file) = &self.status_file {
            args.push("--status".into());
            args.push(file.clone());
        }
        if self.exec {
            args.push("--exec".into());
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// Reads the arguments after [`HELPER_ARG`].
    pub fn parse(args: &[OsString]) -> Result<GuardArgs, String> {
        let mut parsed = GuardArgs {
            umask: None,
            status_file: None,
            exec: false,
            command: Vec::new(),
        };
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.to_str() {
                Some("--umask") => {
                    let value = rest.next().and_then(|value| value.to_str());
                    let mask = value.and_then(|value| u32::from_str_radix(value, 8).ok());
                    match mask {
                        Some(mask) if mask <= 0o777 => parsed.umask = Some(mask),
                        _ => return Err(format!("--umask needs an octal mask, got {value:?}")),
                    }
                }
                Some("--status") => match rest.next() {
                    Some(file) => parsed.status_file = Some(file.clone()),
                    None => return Err("--status needs a file".to_owned()),
                },
                Some("--exec") => parsed.exec = true,
                Some("--") => {
                    parsed.command = rest.cloned().collect();
                    break;
                }
                _ => return Err(format!("unknown guard argument {arg:?}")),
            }
        }
        if parsed.command.is_empty() {
            return Err("no program to run after --".to_owned());
        }
        Ok(parsed)
    }
}

/// The guard's `main`: runs as `args` (after [`HELPER_ARG`]) say; returns its exit code.
pub fn main(args: &[OsString]) -> ExitCode {
    let args = match GuardArgs::parse(args) {
        Ok(args) => args,
        Err(error) => {
            #[allow(clippy::print_stderr, reason = "the guard's only way to report")]
            {
                eprintln!("pid __guard: {error}");
            }
            return ExitCode::from(2);
        }
    };
    // A group (and session) of our own, so the daemon and we can signal the whole tree.
    let _ = rustix::process::setsid();
    if let Some(mask) = args.umask {
        rustix::process::umask(rustix::fs::Mode::from_bits_truncate(mask));
    }
    if args.exec {
        exec_mode(&args)
    } else {
        server_mode(&args)
    }
}

fn server_mode(args: &GuardArgs) -> ExitCode {
    #[cfg(target_os = "linux")]
    if rustix::process::set_parent_process_death_signal(Some(Signal::TERM)).is_err() {
        return ExitCode::from(3);
    }
    // The daemon may have died between starting us and the line above.
    if getppid().is_none() {
        return ExitCode::from(4);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(_) => return ExitCode::from(5),
    };
    let (program, rest) = match args.command.split_first() {
        Some(split) => split,
        None => return ExitCode::from(2),
    };
    runtime.block_on(async {
        let Ok(mut terminate) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        else {
            return ExitCode::from(5);
        };
        let mut child = match tokio::process::Command::new(program).args(rest).spawn() {
            Ok(child) => child,
            Err(error) => {
                #[allow(clippy::print_stderr, reason = "goes to the server's log file")]
                {
                    eprintln!("cannot start {}: {error}", program.to_string_lossy());
                }
                return ExitCode::from(127);
            }
        };
        tokio::select! {
            status = child.wait() => {
                // The program is gone; whatever it left behind goes with the group.
                let code = status.ok().and_then(|status| status.code()).unwrap_or(1);
                if let Some(file) = &args.status_file {
                    let _ = std::fs::write(file, code.to_string());
                }
                let _ = kill_process_group(getpgrp(), Signal::KILL);
                ExitCode::from(u8::try_from(code).unwrap_or(1))
            }
            _ = terminate.recv() => {
                let _ = kill_process_group(getpgrp(), Signal::KILL);
                ExitCode::from(143)
            }
        }
    })
}

fn exec_mode(args: &GuardArgs) -> ExitCode {
    let control = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => std::os::unix::net::UnixStream::from(fd),
        Err(_) => return ExitCode::from(3),
    };
    // Everything the program leaves running is adopted by us when its parent exits, so we can
    // wait for it and kill it.
    #[cfg(target_os = "linux")]
    if rustix::process::set_child_subreaper(Some(getpid())).is_err() {
        return ExitCode::from(3);
    }
    let (program, rest) = match args.command.split_first() {
        Some(split) => split,
        None => return ExitCode::from(2),
    };
    let child = std::process::Command::new(program)
        .args(rest)
        .stdin(std::process::Stdio::null())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(error) => {
            // Reported like a shell does: the error on stderr, status 127.
            #[allow(clippy::print_stderr, reason = "the command's own output")]
            {
                eprintln!("cannot start {}: {error}", program.to_string_lossy());
            }
            let _ = (&control).write_all(format!("{}\n", 127 << 8).as_bytes());
            return ExitCode::from(127);
        }
    };
    let child_pid = child.id();
    let mut writer = match control.try_clone() {
        Ok(writer) => writer,
        Err(_) => {
            kill_everything();
            return ExitCode::from(3);
        }
    };
    // The reaper: reports the program's status, then waits for whatever it left behind; the
    // guard ends when nothing is left.
    let reaper = std::thread::Builder::new()
        .name("guard-reaper".to_owned())
        .spawn(move || {
            loop {
                match rustix::process::wait(rustix::process::WaitOptions::empty()) {
                    Ok(Some((pid, status))) => {
                        if pid.as_raw_nonzero().get() as u32 == child_pid {
                            let _ = writer.write_all(format!("{}\n", status.as_raw()).as_bytes());
                        }
                    }
                    Ok(None) => {}
                    Err(rustix::io::Errno::INTR) => {}
                    // ECHILD: nothing left.
                    Err(_) => std::process::exit(0),
                }
            }
        });
    if reaper.is_err() {
        kill_everything();
        return ExitCode::from(3);
    }
    // The watcher: the daemon never writes; end-of-file (or an error) means it is gone or
    // wants the command killed.
    let mut buffer = [0u8; 64];
    loop {
        match (&control).read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    kill_everything();
    ExitCode::from(137)
}

/// SIGKILL to every descendant of the guard (also those that left its group or session),
/// then to the guard's group, the guard included. Descendants are killed before the guard, so
/// that what their deaths orphan is adopted by the guard (its subreaper) and found by the next
/// round.
fn kill_everything() {
    #[cfg(target_os = "linux")]
    {
        let own = getpid().as_raw_nonzero().get();
        for _round in 0..3 {
            let descendants = descendants(own);
            if descendants.is_empty() {
                break;
            }
            for pid in descendants.into_iter().filter_map(Pid::from_raw) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
    let _ = kill_process_group(getpgrp(), Signal::KILL);
}

/// Every live descendant of `root` (from `/proc`), zombies left out.
#[cfg(target_os = "linux")]
fn descendants(root: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: std::collections::HashMap<i32, Vec<i32>> = std::collections::HashMap::new();
    for pid in entries.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`; the name may hold spaces and parentheses.
        let mut fields = stat.rsplit_once(") ").map(|(_, rest)| rest.split(' '));
        let state = fields.as_mut().and_then(Iterator::next);
        let parent = fields
            .as_mut()
            .and_then(Iterator::next)
            .and_then(|ppid| ppid.parse::<i32>().ok());
        if let (Some(state), Some(parent)) = (state, parent)
            && state != "Z"
        {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(parent) = queue.pop() {
        for &child in children.get(&parent).into_iter().flatten() {
            found.push(child);
            queue.push(child);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip_and_errors_say_what_is_wrong() {
        let args = GuardArgs {
            umask: Some(0o022),
            status_file: Some("/run/x.status".into()),
            exec: true,
            command: vec!["/bin/sh".into(), "-c".into(), "echo --".into()],
        };
        let written = args.to_args();
        assert_eq!(
            written,
            [
                "--umask",
                "022",
                "--status",
                "/run/x.status",
                "--exec",
                "--",
                "/bin/sh",
                "-c",
                "echo --"
            ]
            .map(OsString::from)
        );
        assert_eq!(GuardArgs::parse(&written), Ok(args));
        let parse =
            |args: &[&str]| GuardArgs::parse(&args.iter().map(OsString::from).collect::<Vec<_>>());
        assert_eq!(
            parse(&["--umask", "9", "--", "x"]),
            Err("--umask needs an octal mask, got Some(\"9\")".to_owned())
        );
        assert_eq!(parse(&["--"]), Err("no program to run after --".to_owned()));
        assert_eq!(
            parse(&["--bogus"]),
            Err("unknown guard argument \"--bogus\"".to_owned())
        );
    }
}
