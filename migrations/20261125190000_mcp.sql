-- MCP: the user's answers about servers defined by project files (code the project asks to
-- run), by file and definition hash; and each server's last tool list, by definition hash,
-- so a session can offer a slow server's tools before it is ready.
CREATE TABLE mcp_trust (
    file            TEXT NOT NULL,
    definition_hash TEXT NOT NULL,
    approved        INTEGER NOT NULL,
    decided_at      INTEGER NOT NULL,
    PRIMARY KEY (file, definition_hash)
) STRICT;

CREATE TABLE mcp_tool_cache (
    definition_hash TEXT PRIMARY KEY,
    tools           TEXT NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
