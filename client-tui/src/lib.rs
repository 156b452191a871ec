//! pi-tui: the terminal UI (`pictl attach`). Built by the TUI issue.
