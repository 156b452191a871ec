//! Shell completions and man pages, generated from the clap definition.
//!
//! `pictl completions SHELL` prints one shell's completion script; the hidden
//! `pictl generate-assets --out DIR` writes every script and man page into `DIR` (the
//! committed copies live in `packaging/`, and a test fails when they drift from the CLI).

use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use clap_complete::Shell;

use crate::error::CliError;

/// Shells with completion scripts.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CompletionShell {
    /// bash
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
}

impl CompletionShell {
    fn shell(self) -> Shell {
        match self {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

/// Prints the completion script of `shell`.
pub fn completions(mut command: clap::Command, shell: CompletionShell) -> ExitCode {
    let mut stdout = std::io::stdout();
    clap_complete::generate(shell.shell(), &mut command, "pictl", &mut stdout);
    ExitCode::SUCCESS
}

/// Writes `completions/{pictl.bash,_pictl,pictl.fish}` and `man/pictl*.1` under `out`.
pub fn generate(mut command: clap::Command, out: &Path) -> Result<ExitCode, CliError> {
    let write_error = |path: &Path, error: std::io::Error| {
        CliError::failed(format!("cannot write {}: {error}", path.display()))
    };
    let completions = out.join("completions");
    std::fs::create_dir_all(&completions).map_err(|e| write_error(&completions, e))?;
    for (shell, name) in [
        (Shell::Bash, "pictl.bash"),
        (Shell::Zsh, "_pictl"),
        (Shell::Fish, "pictl.fish"),
    ] {
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut command, "pictl", &mut script);
        let path = completions.join(name);
        std::fs::write(&path, script).map_err(|e| write_error(&path, e))?;
    }
    let man = out.join("man");
    std::fs::create_dir_all(&man).map_err(|e| write_error(&man, e))?;
    command.build();
    write_man_pages(&command, &man).map_err(|e| write_error(&man, e))?;
    Ok(ExitCode::SUCCESS)
}

/// One page per command and subcommand: `pictl.1`, `pictl-session.1`, `pictl-session-show.1`
/// (a built command's subcommands carry those names as display names).
fn write_man_pages(command: &clap::Command, dir: &Path) -> std::io::Result<()> {
    let name = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name());
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    page.extend_from_slice(EXIT_STATUS.as_bytes());
    if name == "pictl" {
        page.extend_from_slice(ENVIRONMENT.as_bytes());
        page.extend_from_slice(EXAMPLES.as_bytes());
    }
    page.extend_from_slice(SEE_ALSO.as_bytes());
    std::fs::write(dir.join(format!("{name}.1")), page)?;
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        write_man_pages(sub, dir)?;
    }
    Ok(())
}

/// Every page's exit codes (`docs/cli.md`).
const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success.
.TP
\fB1\fR
The command, or the run it started, failed (also a bad command line when installed as \fBpi\fR, as pi exits).
.TP
\fB2\fR
Usage error: an unknown command or flag, a bad value.
.TP
\fB3\fR
The daemon is unreachable, failed to start, or speaks another protocol version.
.TP
\fB130\fR
Interrupted (Ctrl+C); a run was aborted and the session kept.
"#;

/// `pictl(1)`'s environment.
const ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
\fBPI_HOME\fR
One directory for everything (config, data, runtime, state); the daemon of that home is used.
.TP
\fBPI_CODING_AGENT_DIR\fR
pi's agent directory (default \fI~/.pi/agent\fR): settings.json, models.json, auth.json, keybindings.json, skills, prompts, extensions, sessions.
.TP
\fBPI_CODING_AGENT_SESSION_DIR\fR
Where pi's session files are looked up (\fB--session\fR, \fB-c\fR, \fBpictl sessions\fR); \fB--session-dir\fR overrides it.
.TP
\fBXDG_RUNTIME_DIR\fR
Holds the daemon's socket (without it: \fI/tmp/pi-daemon-UID-KEY\fR).
.TP
\fBANTHROPIC_API_KEY\fR, \fBOPENAI_API_KEY\fR, \fBGEMINI_API_KEY\fR, ...
Provider keys, read from the environment of the client that starts a session.
.TP
\fBPI_OFFLINE\fR
Passed to the sessions' extensions (as \fB--offline\fR does).
.TP
\fBNO_COLOR\fR
No colour in tables.
"#;

/// `pictl(1)`'s examples.
const EXAMPLES: &str = r#".SH EXAMPLES
.nf
pictl                                   # the TUI on a new session here
pictl "List all .ts files in src/"      # the TUI, with a first prompt
pictl -p "Summarize README.md"          # print mode: the answer on stdout
git diff | pictl -p "Review this"       # piped stdin joins the first message
pictl --mode json -p "hi" | jq .type    # every event as a JSON line
pictl -c -p "And the tests?"            # continue the newest session here
pictl --session ~/.pi/agent/sessions/--home-me-app--/FILE.jsonl -p "go on"
pictl --model sonnet:high --tools read,grep -p "Audit src/"
pictl sessions                          # this directory's sessions (and pi's files)
pictl attach ID                         # the TUI on a running session
pictl daemon status                     # what the daemon runs
.fi
"#;

/// Every page's pointers.
const SEE_ALSO: &str = r#".SH "SEE ALSO"
\fBpid\fR(1), \fBpictl\fR(1); docs/cli.md and docs/install.md of the pi daemon.
"#;
