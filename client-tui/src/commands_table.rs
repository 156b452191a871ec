//! The slash commands the TUI knows, for completion, help and the command palette.

/// Built-in commands: name, arguments, description.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("model", "[search]", "Choose the model"),
    ("thinking", "[level]", "Set the thinking level"),
    ("new", "", "Start a new session here"),
    ("resume", "", "Attach to another session"),
    ("agents", "", "Attach to a subagent, or the parent"),
    ("approvals", "[mode]", "Set the approval mode"),
    ("tree", "", "Move to another point of the session tree"),
    ("fork", "", "New session from an earlier message"),
    ("name", "<name>", "Name the session"),
    ("label", "[text]", "Label the latest entry (empty clears)"),
    ("compact", "[instructions]", "Summarize older messages"),
    (
        "plan",
        "[on|off]",
        "Plan mode: read-only until a plan is approved",
    ),
    ("export", "[file]", "Write the session as HTML (or .jsonl)"),
    ("session", "", "Session info and stats"),
    ("clone", "", "Duplicate the session as a new one"),
    (
        "import",
        "<file.jsonl>",
        "Import a pi session file and resume it",
    ),
    ("share", "", "Share the session as a secret GitHub gist"),
    (
        "login",
        "[provider]",
        "Log in to a subscription (Claude/ChatGPT/Copilot)",
    ),
    ("logout", "[provider]", "Log out of a subscription"),
    (
        "mcp",
        "[action name]",
        "MCP servers; restart, enable, disable one",
    ),
    ("lsp", "[restart name]", "Language servers; restart one"),
    (
        "extensions",
        "[restart]",
        "pi extensions of this session; restart the host",
    ),
    ("copy", "", "Copy the last reply to the clipboard"),
    ("hotkeys", "", "Show key bindings"),
    ("settings", "", "Change settings"),
    (
        "scoped-models",
        "",
        "Choose the models Ctrl+P cycles through",
    ),
    ("changelog", "", "Show what changed in each release"),
    (
        "reload",
        "",
        "Reload keys, themes, settings, skills, prompts, extensions",
    ),
    ("detach", "", "Leave; the session keeps running"),
    ("quit", "", "Leave; the session keeps running"),
];
