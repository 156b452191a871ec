-- MCP servers a session was told not to use (`mcp/setEnabled`), by name; gone with the
-- session.
CREATE TABLE session_mcp_disabled (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    server     TEXT NOT NULL,
    PRIMARY KEY (session_id, server)
) STRICT;
