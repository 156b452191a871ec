//! The process between the daemon and a stdio MCP server (`pid __mcp-guard PROGRAM ARGS...`):
//! it leads a process group of its own, runs the server in it with the daemon's pipes as its
//! stdio, and takes the whole group down when the daemon goes — also when the daemon is
//! killed with SIGKILL, which no cleanup code sees: the kernel sends the guard SIGTERM when
//! its parent dies (`PR_SET_PDEATHSIG`), and the guard kills its group. Servers started by
//! `npx` or `uvx` run as grandchildren; the group reaches them too.
//!
//! The daemon starts guards from one thread that lives as long as the daemon, because the
//! death signal follows the thread that started the process, not the process.

use std::process::ExitCode;

use rustix::process::{Signal, getpgrp, getppid, kill_process_group};

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
        let mut child = match tokio::process::Command::new(program).args(rest).spawn() {
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
                let _ = kill_process_group(getpgrp(), Signal::KILL);
                let code = status.ok().and_then(|status| status.code()).unwrap_or(1);
                ExitCode::from(u8::try_from(code).unwrap_or(1))
            }
            _ = terminate.recv() => {
                let _ = kill_process_group(getpgrp(), Signal::KILL);
                ExitCode::from(143)
            }
        }
    })
}
