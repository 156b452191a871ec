# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_pictl_global_optspecs
    string join \n remote= provider= model= api-key= models= thinking= c/continue session= fork= session-dir= new no-session t/tools= no-tools no-builtin-tools approval-mode= system-prompt= append-system-prompt= skill= no-skills prompt-template= no-prompt-templates no-context-files theme= no-themes verbose offline cwd= e/extension= no-extensions p/print mode= r/resume export= list-models= v/version h/help
end

function __fish_pictl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_pictl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_pictl_using_subcommand
    set -l cmd (__fish_pictl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c pictl -n "__fish_pictl_needs_command" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_needs_command" -l provider -d 'Provider of --model (or, alone, use that provider\'s first model)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l model -d 'Model: provider/id, an id, or part of a name, with an optional :thinking suffix' -r
complete -c pictl -n "__fish_pictl_needs_command" -l api-key -d 'API key for the model\'s provider, for this session only (beats auth.json and the environment)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l models -d 'Model scope: comma-separated globs; without --model, the first match is used' -r
complete -c pictl -n "__fish_pictl_needs_command" -l thinking -d 'Thinking level: off, minimal, low, medium, high, xhigh (another value is a warning and ignored, as in pi)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l session -d 'Continue this session: a daemon session\'s id (or unique prefix), a pi session file\'s id prefix, or a pi session file (.jsonl)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l fork -d 'Copy this session (id, prefix or pi session file) into a new one and continue there' -r
complete -c pictl -n "__fish_pictl_needs_command" -l session-dir -d 'Where pi\'s session files are looked up (default: $PI_CODING_AGENT_SESSION_DIR, else ~/.pi/agent/sessions)' -r -F
complete -c pictl -n "__fish_pictl_needs_command" -s t -l tools -d 'Allow only these tools, built-in or from extensions (comma-separated names)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l approval-mode -d 'Approval mode of the session: yolo (default), ask-writes, ask-all, read-only' -r -f -a "yolo\t''
ask-writes\t''
ask-all\t''
read-only\t''"
complete -c pictl -n "__fish_pictl_needs_command" -l system-prompt -d 'Replace the system prompt of a new session (text, or a file to read it from)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l append-system-prompt -d 'Append to the system prompt of a new session (text, or a file to read it from; repeatable)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l skill -d 'Load this skill file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l prompt-template -d 'Load this prompt template file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l theme -d 'Load this pi theme file or directory for the TUI (repeatable)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l cwd -d 'Working directory of a new session, and where -c looks (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_needs_command" -s e -l extension -d 'Load this pi extension in new sessions besides the configured ones (a file, directory or package source; repeatable)' -r
complete -c pictl -n "__fish_pictl_needs_command" -l mode -d 'Output mode: text (default), json or rpc' -r
complete -c pictl -n "__fish_pictl_needs_command" -l export -d 'Export a session (a pi session file, or a daemon session id) to HTML and exit; the first message is the output file' -r
complete -c pictl -n "__fish_pictl_needs_command" -l list-models -d 'List the models that have a key (with an optional fuzzy search) and exit' -r
complete -c pictl -n "__fish_pictl_needs_command" -s c -l continue -d 'Continue the most recent session in the working directory (a new one if none)'
complete -c pictl -n "__fish_pictl_needs_command" -l new -d 'Start a new session (the default)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-session -d 'Use a new session and delete it afterwards'
complete -c pictl -n "__fish_pictl_needs_command" -l no-tools -d 'No tools at all, built-in or from extensions (-nt)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-builtin-tools -d 'No built-in tools; extension tools stay (-nbt)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-skills -d 'Load no discovered or configured skills; --skill ones still load (-ns)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-prompt-templates -d 'Load no discovered or configured prompt templates (-np)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-context-files -d 'Leave AGENTS.md and CLAUDE.md out of the system prompt (-nc)'
complete -c pictl -n "__fish_pictl_needs_command" -l no-themes -d 'Discover no pi themes (only --theme\'s and the built-ins)'
complete -c pictl -n "__fish_pictl_needs_command" -l verbose -d 'Show the TUI\'s full startup header (key hints, what loaded) even with quietStartup'
complete -c pictl -n "__fish_pictl_needs_command" -l offline -d 'No startup network operations: the session\'s extensions see PI_OFFLINE=1'
complete -c pictl -n "__fish_pictl_needs_command" -l no-extensions -d 'Load none of the configured pi extensions in new sessions (-e ones still load)'
complete -c pictl -n "__fish_pictl_needs_command" -s p -l print -d 'Non-interactive: process the messages, print the answer and exit'
complete -c pictl -n "__fish_pictl_needs_command" -s r -l resume -d 'Pick a session to resume in the TUI'
complete -c pictl -n "__fish_pictl_needs_command" -s v -s V -l version -d 'Print the version and exit'
complete -c pictl -n "__fish_pictl_needs_command" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_needs_command" -a "run" -d 'Send prompts and print the reply (pi\'s print and JSON modes)'
complete -c pictl -n "__fish_pictl_needs_command" -a "sessions" -d 'List sessions'
complete -c pictl -n "__fish_pictl_needs_command" -a "session" -d 'Show, rename, delete, fork, label, export or import a session'
complete -c pictl -n "__fish_pictl_needs_command" -a "send" -d 'Start a run in a session and return at once'
complete -c pictl -n "__fish_pictl_needs_command" -a "steer" -d 'Queue a message for after the running tools of a session'
complete -c pictl -n "__fish_pictl_needs_command" -a "follow-up" -d 'Queue a message for when a session\'s agent would stop'
complete -c pictl -n "__fish_pictl_needs_command" -a "abort" -d 'Abort a session\'s run; return once it is idle'
complete -c pictl -n "__fish_pictl_needs_command" -a "watch" -d 'Follow a session\'s events live'
complete -c pictl -n "__fish_pictl_needs_command" -a "models" -d 'List the models the daemon knows, with whether their provider has a key'
complete -c pictl -n "__fish_pictl_needs_command" -a "login" -d 'Log in to a subscription (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot), or store an API key, as pi\'s /login'
complete -c pictl -n "__fish_pictl_needs_command" -a "logout" -d 'Log out of a subscription (or remove an API key), as pi\'s /logout'
complete -c pictl -n "__fish_pictl_needs_command" -a "stats" -d 'Show tokens and cost by model and by day'
complete -c pictl -n "__fish_pictl_needs_command" -a "mcp" -d 'List or restart the MCP servers the daemon shares between sessions'
complete -c pictl -n "__fish_pictl_needs_command" -a "lsp" -d 'List or restart the language servers the daemon shares between sessions'
complete -c pictl -n "__fish_pictl_needs_command" -a "extensions" -d 'List the sessions\' pi extensions, or restart the extension host'
complete -c pictl -n "__fish_pictl_needs_command" -a "install" -d 'Install a pi package and add it to your settings (or the project\'s: -l), as `pi install`'
complete -c pictl -n "__fish_pictl_needs_command" -a "remove" -d 'Remove a pi package and its source from settings, as `pi remove`'
complete -c pictl -n "__fish_pictl_needs_command" -a "update" -d 'Update your pi packages (or one), as `pi update --extensions`'
complete -c pictl -n "__fish_pictl_needs_command" -a "list" -d 'List the pi packages of your settings and this project\'s, as `pi list`'
complete -c pictl -n "__fish_pictl_needs_command" -a "jobs" -d 'List (or kill) the background jobs sessions run'
complete -c pictl -n "__fish_pictl_needs_command" -a "rules" -d 'Test oh-my-pi\'s stream rules (TTSR) on a piece of a reply'
complete -c pictl -n "__fish_pictl_needs_command" -a "kernels" -d 'List the Python kernels of the sessions\' `python` tool'
complete -c pictl -n "__fish_pictl_needs_command" -a "acp" -d 'Serve the Agent Client Protocol on stdio (for Zed, JetBrains, Neovim), over daemon sessions'
complete -c pictl -n "__fish_pictl_needs_command" -a "rpc" -d 'Bridge pi\'s RPC protocol (pi --mode rpc) on stdio to a daemon session'
complete -c pictl -n "__fish_pictl_needs_command" -a "completions" -d 'Print a shell completion script'
complete -c pictl -n "__fish_pictl_needs_command" -a "generate-assets" -d 'Write completion scripts and man pages into a directory (packaging)'
complete -c pictl -n "__fish_pictl_needs_command" -a "daemon" -d 'Start, stop, restart or inspect the daemon'
complete -c pictl -n "__fish_pictl_needs_command" -a "attach" -d 'Open the TUI on a session (no ID: pick one of this directory\'s recent sessions)'
complete -c pictl -n "__fish_pictl_needs_command" -a "web" -d 'Open the web UI in a browser with a one-time login link (with --remote: forwarded through ssh)'
complete -c pictl -n "__fish_pictl_needs_command" -a "bridge" -d 'Join stdin and stdout to this user\'s daemon (the far side of --remote; run by ssh)'
complete -c pictl -n "__fish_pictl_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l provider -d 'Provider of --model (or, alone, use that provider\'s first model)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l model -d 'Model: provider/id, an id, or part of a name, with an optional :thinking suffix' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l api-key -d 'API key for the model\'s provider, for this session only (beats auth.json and the environment)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l models -d 'Model scope: comma-separated globs; without --model, the first match is used' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l thinking -d 'Thinking level: off, minimal, low, medium, high, xhigh (another value is a warning and ignored, as in pi)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l session -d 'Continue this session: a daemon session\'s id (or unique prefix), a pi session file\'s id prefix, or a pi session file (.jsonl)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l fork -d 'Copy this session (id, prefix or pi session file) into a new one and continue there' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l session-dir -d 'Where pi\'s session files are looked up (default: $PI_CODING_AGENT_SESSION_DIR, else ~/.pi/agent/sessions)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand run" -s t -l tools -d 'Allow only these tools, built-in or from extensions (comma-separated names)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l approval-mode -d 'Approval mode of the session: yolo (default), ask-writes, ask-all, read-only' -r -f -a "yolo\t''
ask-writes\t''
ask-all\t''
read-only\t''"
complete -c pictl -n "__fish_pictl_using_subcommand run" -l system-prompt -d 'Replace the system prompt of a new session (text, or a file to read it from)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l append-system-prompt -d 'Append to the system prompt of a new session (text, or a file to read it from; repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l skill -d 'Load this skill file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l prompt-template -d 'Load this prompt template file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l theme -d 'Load this pi theme file or directory for the TUI (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l cwd -d 'Working directory of a new session, and where -c looks (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand run" -s e -l extension -d 'Load this pi extension in new sessions besides the configured ones (a file, directory or package source; repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l mode -d 'Output: text (the final answer, the default), json (every event as pi writes it) or rpc (pi\'s RPC protocol, as `pictl rpc`)' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand run" -s c -l continue -d 'Continue the most recent session in the working directory (a new one if none)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l new -d 'Start a new session (the default)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-session -d 'Use a new session and delete it afterwards'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-tools -d 'No tools at all, built-in or from extensions (-nt)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-builtin-tools -d 'No built-in tools; extension tools stay (-nbt)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-skills -d 'Load no discovered or configured skills; --skill ones still load (-ns)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-prompt-templates -d 'Load no discovered or configured prompt templates (-np)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-context-files -d 'Leave AGENTS.md and CLAUDE.md out of the system prompt (-nc)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-themes -d 'Discover no pi themes (only --theme\'s and the built-ins)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l verbose -d 'Show the TUI\'s full startup header (key hints, what loaded) even with quietStartup'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l offline -d 'No startup network operations: the session\'s extensions see PI_OFFLINE=1'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l no-extensions -d 'Load none of the configured pi extensions in new sessions (-e ones still load)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -s p -l print -d 'Print mode (what `pictl run` does anyway; accepted as pi\'s -p)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l json -d 'Print every event as a JSON line, after a header line (deltas only; --mode json writes pi\'s exact lines)'
complete -c pictl -n "__fish_pictl_using_subcommand run" -l pi-compat -d 'With --json: include the cumulative partial message in message_update, as pi does'
complete -c pictl -n "__fish_pictl_using_subcommand run" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l cwd -d 'Sessions of this working directory (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l session-dir -d 'Where pi\'s session files are (default: $PI_CODING_AGENT_SESSION_DIR, else ~/.pi/agent/sessions)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l all -d 'Sessions of every working directory'
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l json -d 'Print one JSON object per session'
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -l tree -d 'Show subagents under the session whose `task` call started them'
complete -c pictl -n "__fish_pictl_using_subcommand sessions" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "show" -d 'Show a session\'s metadata and its current branch'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "rename" -d 'Name a session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "rm" -d 'Delete sessions and everything they stored'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "fork" -d 'Copy a session\'s history before a user message into a new session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "label" -d 'Label an entry, or clear its label'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "export" -d 'Export a session as pi\'s JSONL session file or as an HTML page'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "import" -d 'Import a pi session file (JSONL, versions 1 to 3) as a new session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and not __fish_seen_subcommand_from show rename rm fork label export import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from show" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from show" -l json -d 'Print the metadata and the branch\'s entries as one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from rename" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from rename" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from rm" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from fork" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from fork" -l json -d 'Print the new session and the message text as JSON'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from fork" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from label" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from label" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from export" -s o -l output -d 'Write to this file instead of stdout' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from export" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from export" -l jsonl -d 'pi\'s JSONL session format (the default)'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from export" -l html -d 'A self-contained HTML page of the current branch'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from import" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from import" -l json -d 'Print the new session as JSON'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show a session\'s metadata and its current branch'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "rename" -d 'Name a session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Delete sessions and everything they stored'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "fork" -d 'Copy a session\'s history before a user message into a new session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "label" -d 'Label an entry, or clear its label'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "export" -d 'Export a session as pi\'s JSONL session file or as an HTML page'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "import" -d 'Import a pi session file (JSONL, versions 1 to 3) as a new session'
complete -c pictl -n "__fish_pictl_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand send" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand send" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand steer" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand steer" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand follow-up" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand follow-up" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand abort" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand abort" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand watch" -l after-seq -d 'Replay the durable events after this seq first' -r
complete -c pictl -n "__fish_pictl_using_subcommand watch" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand watch" -l json -d 'Print the snapshot and every event as JSON lines'
complete -c pictl -n "__fish_pictl_using_subcommand watch" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand models" -l session -d 'With this session\'s models too: the providers its pi extensions register (id or unique prefix)' -r
complete -c pictl -n "__fish_pictl_using_subcommand models" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand models" -l available -d 'Only models whose provider has a key'
complete -c pictl -n "__fish_pictl_using_subcommand models" -l json -d 'Print one JSON object per model'
complete -c pictl -n "__fish_pictl_using_subcommand models" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand login" -l enterprise -d 'Use this GitHub Enterprise domain for Copilot (`""`: github.com)' -r
complete -c pictl -n "__fish_pictl_using_subcommand login" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand login" -l key -d 'Store an API key for PROVIDER instead, read from stdin'
complete -c pictl -n "__fish_pictl_using_subcommand login" -l no-browser -d 'Print the URL without opening a browser'
complete -c pictl -n "__fish_pictl_using_subcommand login" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand logout" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand logout" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand stats" -l since -d 'Only usage from this UTC day (YYYY-MM-DD) or this many days back (7d)' -r
complete -c pictl -n "__fish_pictl_using_subcommand stats" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand stats" -l json -d 'Print the sums as one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand stats" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "list" -d 'List the servers (one per definition, shared by every session) and, for this directory, the definitions a session here sees'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "restart" -d 'Restart a server by name (its failures are forgotten)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "logs" -d 'Print the end of a server\'s stderr log'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "disable" -d 'Stop a session from using a server (its next run goes without it)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "enable" -d 'Let a session use a server again'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "trust" -d 'Approve a server this directory\'s .mcp.json or .pi/mcp.json defines, so sessions here start it without asking (or refuse it, or forget the answer)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and not __fish_seen_subcommand_from list restart logs disable enable trust help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from list" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from restart" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from logs" -l lines -d 'How many of the last lines' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from logs" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from logs" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from disable" -l session -d 'The session' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from disable" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from enable" -l session -d 'The session' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from enable" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from trust" -l cwd -d 'The project directory (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from trust" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from trust" -l deny -d 'Refuse it: sessions never start it and stop asking'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from trust" -l forget -d 'Forget the answer: sessions ask again'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from trust" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the servers (one per definition, shared by every session) and, for this directory, the definitions a session here sees'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Restart a server by name (its failures are forgotten)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "logs" -d 'Print the end of a server\'s stderr log'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Stop a session from using a server (its next run goes without it)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Let a session use a server again'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "trust" -d 'Approve a server this directory\'s .mcp.json or .pi/mcp.json defines, so sessions here start it without asking (or refuse it, or forget the answer)'
complete -c pictl -n "__fish_pictl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and not __fish_seen_subcommand_from list restart help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and not __fish_seen_subcommand_from list restart help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and not __fish_seen_subcommand_from list restart help" -f -a "list" -d 'List the language servers (one per server and workspace root, shared by every session working there)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and not __fish_seen_subcommand_from list restart help" -f -a "restart" -d 'Restart the servers of a name (their failures are forgotten; the next use starts them)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and not __fish_seen_subcommand_from list restart help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from list" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from restart" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the language servers (one per server and workspace root, shared by every session working there)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Restart the servers of a name (their failures are forgotten; the next use starts them)'
complete -c pictl -n "__fish_pictl_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -f -a "list" -d 'Show the extension host and each session\'s extensions, with what failed to load'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -f -a "restart" -d 'End the extension host (failures forgotten); the next use starts it again'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -f -a "trust" -d 'Approve the extensions this project brings (they run only once approved); sessions that skipped them load them now'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and not __fish_seen_subcommand_from list restart trust help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from list" -l session -d 'Only this session' -r
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from list" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from restart" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from trust" -l cwd -d 'The project directory (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from trust" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from trust" -l deny -d 'Refuse them: sessions never load them and stop asking'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from trust" -l forget -d 'Forget the answer: the next session asks again'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from trust" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from help" -f -a "list" -d 'Show the extension host and each session\'s extensions, with what failed to load'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from help" -f -a "restart" -d 'End the extension host (failures forgotten); the next use starts it again'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from help" -f -a "trust" -d 'Approve the extensions this project brings (they run only once approved); sessions that skipped them load them now'
complete -c pictl -n "__fish_pictl_using_subcommand extensions; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand install" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand install" -s l -l local -d 'Install for this project (.pi/settings.json) instead of for you (~/.pi/agent)'
complete -c pictl -n "__fish_pictl_using_subcommand install" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand remove" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand remove" -s l -l local -d 'Remove it from this project\'s settings (.pi/settings.json)'
complete -c pictl -n "__fish_pictl_using_subcommand remove" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand update" -l extension -d 'Update one package (pi\'s spelling of the positional source)' -r
complete -c pictl -n "__fish_pictl_using_subcommand update" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand update" -l extensions -d 'Packages only (pi\'s flag; pictl updates only packages)'
complete -c pictl -n "__fish_pictl_using_subcommand update" -l self -d 'Update pi itself: pictl cannot; update it the way you installed it'
complete -c pictl -n "__fish_pictl_using_subcommand update" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand list" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand list" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand list" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand jobs" -l session -d 'Only this session\'s jobs (id or unique prefix)' -r
complete -c pictl -n "__fish_pictl_using_subcommand jobs" -l kill -d 'Kill this job (and everything it started)' -r
complete -c pictl -n "__fish_pictl_using_subcommand jobs" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand jobs" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand jobs" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and not __fish_seen_subcommand_from test help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand rules; and not __fish_seen_subcommand_from test help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and not __fish_seen_subcommand_from test help" -f -a "test" -d 'Show which stream rules would fire on TEXT (exit 0: one fires, 1: none, 2: a bad call)'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and not __fish_seen_subcommand_from test help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from test" -l source -d 'Where the text comes from: text, thinking or tool:NAME' -r
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from test" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from test" -l all -d 'Test every stream rule of this directory\'s project and of the user instead of one file'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from test" -l json -d 'Print the outcome as JSON'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "test" -d 'Show which stream rules would fire on TEXT (exit 0: one fires, 1: none, 2: a bad call)'
complete -c pictl -n "__fish_pictl_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand kernels" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand kernels" -l json -d 'Print one JSON object'
complete -c pictl -n "__fish_pictl_using_subcommand kernels" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand acp" -l model -d 'Model for new sessions (`provider/id`); the daemon\'s default otherwise' -r
complete -c pictl -n "__fish_pictl_using_subcommand acp" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand acp" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l provider -d 'Provider of --model (or, alone, use that provider\'s first model)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l model -d 'Model: provider/id, an id, or part of a name, with an optional :thinking suffix' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l api-key -d 'API key for the model\'s provider, for this session only (beats auth.json and the environment)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l models -d 'Model scope: comma-separated globs; without --model, the first match is used' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l thinking -d 'Thinking level: off, minimal, low, medium, high, xhigh (another value is a warning and ignored, as in pi)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l session -d 'Continue this session: a daemon session\'s id (or unique prefix), a pi session file\'s id prefix, or a pi session file (.jsonl)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l fork -d 'Copy this session (id, prefix or pi session file) into a new one and continue there' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l session-dir -d 'Where pi\'s session files are looked up (default: $PI_CODING_AGENT_SESSION_DIR, else ~/.pi/agent/sessions)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -s t -l tools -d 'Allow only these tools, built-in or from extensions (comma-separated names)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l approval-mode -d 'Approval mode of the session: yolo (default), ask-writes, ask-all, read-only' -r -f -a "yolo\t''
ask-writes\t''
ask-all\t''
read-only\t''"
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l system-prompt -d 'Replace the system prompt of a new session (text, or a file to read it from)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l append-system-prompt -d 'Append to the system prompt of a new session (text, or a file to read it from; repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l skill -d 'Load this skill file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l prompt-template -d 'Load this prompt template file or directory too (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l theme -d 'Load this pi theme file or directory for the TUI (repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l cwd -d 'Working directory of a new session, and where -c looks (default: the current one)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -s e -l extension -d 'Load this pi extension in new sessions besides the configured ones (a file, directory or package source; repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -s c -l continue -d 'Continue the most recent session in the working directory (a new one if none)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l new -d 'Start a new session (the default)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-session -d 'Use a new session and delete it afterwards'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-tools -d 'No tools at all, built-in or from extensions (-nt)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-builtin-tools -d 'No built-in tools; extension tools stay (-nbt)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-skills -d 'Load no discovered or configured skills; --skill ones still load (-ns)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-prompt-templates -d 'Load no discovered or configured prompt templates (-np)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-context-files -d 'Leave AGENTS.md and CLAUDE.md out of the system prompt (-nc)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-themes -d 'Discover no pi themes (only --theme\'s and the built-ins)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l verbose -d 'Show the TUI\'s full startup header (key hints, what loaded) even with quietStartup'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l offline -d 'No startup network operations: the session\'s extensions see PI_OFFLINE=1'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l no-extensions -d 'Load none of the configured pi extensions in new sessions (-e ones still load)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -l ready -d 'Write {"type":"ready",...} on stdout once the session is attached (pi has no ready line)'
complete -c pictl -n "__fish_pictl_using_subcommand rpc" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand completions" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c pictl -n "__fish_pictl_using_subcommand generate-assets" -l out -d 'The directory (`packaging/` in the repository)' -r -F
complete -c pictl -n "__fish_pictl_using_subcommand generate-assets" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand generate-assets" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -f -a "start" -d 'Start the daemon unless it runs; return once it is ready'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -f -a "stop" -d 'Stop the daemon gracefully, killing it if it does not exit in time'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -f -a "restart" -d 'Stop the daemon, then start a new one'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -f -a "status" -d 'Report whether the daemon runs, and its status; exit 3 when it does not'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and not __fish_seen_subcommand_from start stop restart status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from start" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from stop" -l timeout -d 'Seconds to wait for a graceful exit before killing' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from stop" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from restart" -l timeout -d 'Seconds to wait for a graceful exit before killing' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from restart" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from status" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from status" -l json -d 'One JSON object (the default when stdout is not a terminal)'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from status" -l human -d 'Lines for a person (the default on a terminal)'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "start" -d 'Start the daemon unless it runs; return once it is ready'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop the daemon gracefully, killing it if it does not exit in time'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Stop the daemon, then start a new one'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "status" -d 'Report whether the daemon runs, and its status; exit 3 when it does not'
complete -c pictl -n "__fish_pictl_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand attach" -l api-key -d 'Use this API key for the session\'s model\'s provider, for this session only (beats auth.json and the environment; needs a session id)' -r
complete -c pictl -n "__fish_pictl_using_subcommand attach" -s e -l extension -d 'Load this pi extension in new sessions besides the configured ones (a file, directory or package source; repeatable)' -r
complete -c pictl -n "__fish_pictl_using_subcommand attach" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand attach" -l no-extensions -d 'Load none of the configured pi extensions in new sessions (-e ones still load)'
complete -c pictl -n "__fish_pictl_using_subcommand attach" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand web" -l port -d 'With --remote: the loopback port here that forwards to the far daemon (default: a free one)' -r
complete -c pictl -n "__fish_pictl_using_subcommand web" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand web" -l no-open -d 'Print the link without opening a browser'
complete -c pictl -n "__fish_pictl_using_subcommand web" -l json -d 'Print the link as JSON ({url, expiresAt})'
complete -c pictl -n "__fish_pictl_using_subcommand web" -l revoke -d 'Log every browser out of the web UI (their logins stop working at once)'
complete -c pictl -n "__fish_pictl_using_subcommand web" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand bridge" -l remote -d 'Run against the daemon on another machine, through ssh (also PI_REMOTE): ssh://[user@]host[:port][:/path/to/pictl]' -r
complete -c pictl -n "__fish_pictl_using_subcommand bridge" -l no-start -d 'Do not start the daemon when none runs'
complete -c pictl -n "__fish_pictl_using_subcommand bridge" -s h -l help -d 'Print help'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "run" -d 'Send prompts and print the reply (pi\'s print and JSON modes)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "sessions" -d 'List sessions'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "session" -d 'Show, rename, delete, fork, label, export or import a session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "send" -d 'Start a run in a session and return at once'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "steer" -d 'Queue a message for after the running tools of a session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "follow-up" -d 'Queue a message for when a session\'s agent would stop'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "abort" -d 'Abort a session\'s run; return once it is idle'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "watch" -d 'Follow a session\'s events live'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "models" -d 'List the models the daemon knows, with whether their provider has a key'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "login" -d 'Log in to a subscription (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot), or store an API key, as pi\'s /login'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "logout" -d 'Log out of a subscription (or remove an API key), as pi\'s /logout'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "stats" -d 'Show tokens and cost by model and by day'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "mcp" -d 'List or restart the MCP servers the daemon shares between sessions'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "lsp" -d 'List or restart the language servers the daemon shares between sessions'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "extensions" -d 'List the sessions\' pi extensions, or restart the extension host'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "install" -d 'Install a pi package and add it to your settings (or the project\'s: -l), as `pi install`'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "remove" -d 'Remove a pi package and its source from settings, as `pi remove`'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "update" -d 'Update your pi packages (or one), as `pi update --extensions`'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "list" -d 'List the pi packages of your settings and this project\'s, as `pi list`'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "jobs" -d 'List (or kill) the background jobs sessions run'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "rules" -d 'Test oh-my-pi\'s stream rules (TTSR) on a piece of a reply'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "kernels" -d 'List the Python kernels of the sessions\' `python` tool'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "acp" -d 'Serve the Agent Client Protocol on stdio (for Zed, JetBrains, Neovim), over daemon sessions'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "rpc" -d 'Bridge pi\'s RPC protocol (pi --mode rpc) on stdio to a daemon session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "completions" -d 'Print a shell completion script'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "generate-assets" -d 'Write completion scripts and man pages into a directory (packaging)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "daemon" -d 'Start, stop, restart or inspect the daemon'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "attach" -d 'Open the TUI on a session (no ID: pick one of this directory\'s recent sessions)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "web" -d 'Open the web UI in a browser with a one-time login link (with --remote: forwarded through ssh)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "bridge" -d 'Join stdin and stdout to this user\'s daemon (the far side of --remote; run by ssh)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and not __fish_seen_subcommand_from run sessions session send steer follow-up abort watch models login logout stats mcp lsp extensions install remove update list jobs rules kernels acp rpc completions generate-assets daemon attach web bridge help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "show" -d 'Show a session\'s metadata and its current branch'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "rename" -d 'Name a session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "rm" -d 'Delete sessions and everything they stored'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "fork" -d 'Copy a session\'s history before a user message into a new session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "label" -d 'Label an entry, or clear its label'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "export" -d 'Export a session as pi\'s JSONL session file or as an HTML page'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "import" -d 'Import a pi session file (JSONL, versions 1 to 3) as a new session'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "list" -d 'List the servers (one per definition, shared by every session) and, for this directory, the definitions a session here sees'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "restart" -d 'Restart a server by name (its failures are forgotten)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "logs" -d 'Print the end of a server\'s stderr log'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "disable" -d 'Stop a session from using a server (its next run goes without it)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "enable" -d 'Let a session use a server again'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "trust" -d 'Approve a server this directory\'s .mcp.json or .pi/mcp.json defines, so sessions here start it without asking (or refuse it, or forget the answer)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from lsp" -f -a "list" -d 'List the language servers (one per server and workspace root, shared by every session working there)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from lsp" -f -a "restart" -d 'Restart the servers of a name (their failures are forgotten; the next use starts them)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from extensions" -f -a "list" -d 'Show the extension host and each session\'s extensions, with what failed to load'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from extensions" -f -a "restart" -d 'End the extension host (failures forgotten); the next use starts it again'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from extensions" -f -a "trust" -d 'Approve the extensions this project brings (they run only once approved); sessions that skipped them load them now'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from rules" -f -a "test" -d 'Show which stream rules would fire on TEXT (exit 0: one fires, 1: none, 2: a bad call)'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "start" -d 'Start the daemon unless it runs; return once it is ready'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "stop" -d 'Stop the daemon gracefully, killing it if it does not exit in time'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "restart" -d 'Stop the daemon, then start a new one'
complete -c pictl -n "__fish_pictl_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "status" -d 'Report whether the daemon runs, and its status; exit 3 when it does not'
