//! The process between the daemon and a stdio MCP server (`pid __mcp-guard PROGRAM ARGS...`):
//! it leads a process group of its own, runs the server in it with the daemon's pipes as its
//! stdio, and takes the whole group down when the daemon goes — also when the daemon is
//! killed with SIGKILL, which no cleanup code sees: the kernel sends the guard SIGTERM when
//! its parent dies (`PR_SET_PDEATHSIG`), and the guard kills its group. Servers started by
//! `npx` or `uvx` run as grandchildren; the group reaches them too.
//!
//! With `PI_GUARD_STATUS=FILE` in its environment (not passed on), the guard writes the
//! server's exit code to FILE before it takes the group down (killing its own group kills the
//! guard too, so its own exit status cannot carry the code): background jobs need it.
//!
//! The daemon starts guards from one thread that lives as long as the daemon, because the
//! death signal follows the thread that started the process, not the process.

use std::process::ExitCode;

use rustix::process::{Signal, getpgrp, getppid, kill_process_group};

/// The environment variable naming the file the child's exit code goes to.
pub const STATUS_VARIABLE: &str = "PI_GUARD_STATUS";

/// Runs the guard for `program args...`; returns the server's exit code.
pub fn run(args: &[String]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        return ExitCode::from(2);
    };
    // A group (and session) of our own, so the daemon and we can signal the whole tree.
    let _ = rustix::process::setsid();
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
    runtime.block_on(async {
        let Ok(mut terminate) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        else {
            return ExitCode::from(5);
        };
        let status_file = std::env::var_os(STATUS_VARIABLE);
        let mut child = match tokio::process::Command::new(program)
            .args(rest)
            .env_remove(STATUS_VARIABLE)
            .spawn()
        {
            Ok(child) => child,
            Err(error) => {
                #[allow(clippy::print_stderr, reason = "goes to the server's log file")]
                {
                    eprintln!("cannot start {program}: {error}");
                }
                return ExitCode::from(127);
            }
        };
        tokio::select! {
            status = child.wait() => {
                // The server is gone; whatever it left behind goes with the group.
                let code = status.ok().and_then(|status| status.code()).unwrap_or(1);
                if let Some(file) = status_file {
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
