//! The vocabulary of approval settings (`approvals.mode`, `approvals.rules`): what happens to
//! a call, the modes' presets, and rules by tool, command and path, as the settings files
//! write them. Deciding a call — matching rules against it, the read-only command list and
//! the strictest-layer rule — is the policy's (`crate::policy::rules`).

use pi_util::wildcard::{Case, Wildcard};

/// What happens to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// It runs.
    Allow,
    /// A person decides.
    Ask,
    /// It does not run; the model reads why.
    Deny,
}

impl Action {
    /// `allow`, `ask`, `deny`.
    pub fn parse(text: &str) -> Option<Action> {
        match text {
            "allow" => Some(Action::Allow),
            "ask" => Some(Action::Ask),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }
}

/// A preset of defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Everything runs (pi's behaviour).
    #[default]
    Yolo,
    /// Reads run; writes, commands that may write, and other tools ask.
    AskWrites,
    /// Every call asks.
    AskAll,
    /// Reads run; writes and commands that may write are denied.
    ReadOnly,
}

impl Mode {
    /// `yolo`, `ask-writes`, `ask-all`, `read-only`.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "yolo" => Some(Mode::Yolo),
            "ask-writes" => Some(Mode::AskWrites),
            "ask-all" => Some(Mode::AskAll),
            "read-only" => Some(Mode::ReadOnly),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Yolo => "yolo",
            Mode::AskWrites => "ask-writes",
            Mode::AskAll => "ask-all",
            Mode::ReadOnly => "read-only",
        }
    }
}

/// Where a `path` rule applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathPattern {
    /// Inside the session's directory.
    InsideCwd,
    /// Outside it.
    OutsideCwd,
    /// A glob, relative to the session's directory unless absolute.
    Glob(String),
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Tool name wildcard (`bash`, `mcp__github__*`), ignoring ASCII case.
    pub tool: Wildcard,
    /// For `bash`: a wildcard every simple command of the line is matched against
    /// (`git push*`); the rule applies when one matches.
    pub command: Option<Wildcard>,
    /// For tools with a `path` argument.
    pub path: Option<PathPattern>,
    /// What happens.
    pub action: Action,
}

impl Rule {
    /// A rule for the tools `tool` matches (ASCII case ignored), whatever their arguments.
    pub fn for_tool(tool: &str, action: Action) -> Rule {
        Rule {
            tool: Wildcard::new(tool, Case::AsciiInsensitive),
            command: None,
            path: None,
            action,
        }
    }

    /// The rule, applying only when a simple command of the `bash` line matches `command`.
    pub fn with_command(mut self, command: &str) -> Rule {
        self.command = Some(Wildcard::new(command, Case::Sensitive));
        self
    }

    /// The rule, applying only to calls whose `path` argument is at `path`.
    pub fn with_path(mut self, path: PathPattern) -> Rule {
        self.path = Some(path);
        self
    }
}
