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
    std::fs::write(dir.join(format!("{name}.1")), page)?;
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        write_man_pages(sub, dir)?;
    }
    Ok(())
}
