//! `pid`: the pi daemon binary. Runs in the foreground (what systemd and launchd want) until
//! SIGTERM, SIGINT or `daemon/shutdown`; `pid schema` exports the protocol's JSON Schemas.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

/// jemalloc, with its background threads giving freed memory back to the system (decision
/// 0014); also the `malloc` of the C code linked in (SQLite).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The bytes jemalloc has handed out now (its statistics are refreshed first).
fn heap_bytes() -> Option<u64> {
    tikv_jemalloc_ctl::epoch::advance().ok()?;
    let allocated = tikv_jemalloc_ctl::stats::allocated::read().ok()?;
    u64::try_from(allocated).ok()
}

/// The pi daemon: hosts agent sessions behind a JSON-RPC protocol.
#[derive(Debug, Parser)]
#[command(name = "pid", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Mark this daemon as started by a client and leave the client's session (set by pi-client)
    #[arg(long, hide = true)]
    autostarted: bool,
    /// Write logs (and stdout, stderr) to this file instead of stderr, rotated to FILE.1 at
    /// `log.max_bytes` of config.toml
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon in the foreground (the default)
    Run,
    /// Write the protocol's JSON Schema files into a directory
    Schema {
        /// Directory to write into (the repository keeps them in `protocol/schema`)
        #[arg(long)]
        out: PathBuf,
    },
    /// Print the resolved directories and files as one JSON object
    Paths,
    /// Print this manual page (roff; packaging/man/pid.1)
    #[command(hide = true)]
    Man,
}

fn main() -> ExitCode {
    // The sandbox helper of `bash` (see `pi_tools::sandbox`); its arguments may be any bytes.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if raw.first().and_then(|first| first.to_str()) == Some(pi_tools::sandbox::HELPER_ARG) {
        return pi_tools::sandbox::helper_main(&raw[1..]);
    }
    // The process between the daemon and every process it starts (see `pi_tools::guard`).
    if raw.first().and_then(|first| first.to_str()) == Some(pi_tools::guard::HELPER_ARG) {
        return pi_tools::guard::main(&raw[1..]);
    }
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Run) {
        Command::Run => match cli
            .log_file
            .as_deref()
            .map(pi_daemon::logging::file::LogFile::open)
            .transpose()
        {
            Ok(log_file) => {
                pi_daemon::logging::init(log_file.clone());
                pi_daemon::run(pi_daemon::RunOptions {
                    autostarted: cli.autostarted,
                    log_file,
                    heap_bytes: Some(heap_bytes),
                })
            }
            Err(error) => Err(error.into()),
        },
        Command::Schema { out } => pi_daemon::schema_export::write(&out),
        Command::Paths => pi_daemon::lifecycle::print_paths(),
        Command::Man => print_man_page(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            #[allow(clippy::print_stderr, reason = "the binary's last word to the user")]
            {
                eprintln!("pid: error: {error:#}");
            }
            ExitCode::FAILURE
        }
    }
}

/// `pid(1)`: clap's page, then exit status, environment, files, examples.
fn print_man_page() -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    page.extend_from_slice(MAN_EXTRA.as_bytes());
    std::io::stdout().write_all(&page)?;
    Ok(())
}

const MAN_EXTRA: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Stopped cleanly (SIGTERM, SIGINT, \fBpictl daemon stop\fR).
.TP
\fB1\fR
Could not start (a bad config.toml, directories of another user, another daemon running) or failed.
.SH ENVIRONMENT
.TP
\fBPI_HOME\fR
One directory for config, data, runtime and state (tests, several daemons).
.TP
\fBPI_CODING_AGENT_DIR\fR
pi's agent directory (default \fI~/.pi/agent\fR), read for settings, models, keys, skills, prompts, extensions.
.TP
\fBXDG_RUNTIME_DIR\fR
Holds the socket, its lock and the WebSocket token (without it: \fI/tmp/pi-daemon-UID-KEY\fR).
.TP
\fBPI_LOG\fR, \fBPI_LOG_FORMAT\fR
Log level (\fBinfo\fR, \fBdebug\fR, ...) and \fBjson\fR for JSON lines.
.SH FILES
.TP
\fI~/.config/pi-daemon/config.toml\fR
The daemon's own settings (WebSocket, limits, log size).
.TP
\fI~/.config/pi-daemon/settings.json\fR, \fI~/.pi/agent/settings.json\fR, \fIPROJECT/.pi/settings.json\fR
pi's settings, ours over pi's, the project's over both.
.TP
\fI~/.pi/agent/models.json\fR, \fI~/.pi/agent/auth.json\fR
Custom models and providers; keys and logins (shared with pi).
.TP
\fImcp.json\fR (both directories, and the project's \fI.pi/mcp.json\fR, \fI.mcp.json\fR)
MCP servers.
.TP
\fI~/.local/share/pi-daemon/pi.db\fR
Sessions, usage, approvals (SQLite).
.TP
\fI~/.local/state/pi-daemon/pid.log\fR
The log of an autostarted daemon.
.SH EXAMPLES
.nf
pid                          # run in the foreground (what systemd and launchd want)
pid paths                    # where everything is
pid --log-file /tmp/pid.log  # log to a file, rotated
PI_HOME=/tmp/try pid         # a separate daemon with its own everything
.fi
.SH "SEE ALSO"
\fBpictl\fR(1); docs/install.md of the pi daemon.
"#;
