-- Agent sessions: one row per session, and pi's v3 entry tree (id/parentId) per session.
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY NOT NULL,
    cwd               TEXT NOT NULL,
    -- JSON object of the client's environment for the session's tools; NULL = the daemon's.
    env               TEXT,
    name              TEXT,
    parent_session_id TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    -- The persisted leaf pointer (pi keeps it only in memory).
    leaf_id           TEXT,
    model_provider    TEXT,
    model_id          TEXT,
    thinking_level    TEXT NOT NULL,
    -- JSON array of active tool names.
    tools             TEXT NOT NULL,
    message_count     INTEGER NOT NULL DEFAULT 0,
    first_message     TEXT,
    -- Highest event seq known to be delivered; a restarted session continues after it.
    last_seq          INTEGER NOT NULL DEFAULT 0,
    -- 1 while a run is active; runs still marked at startup were interrupted by a crash.
    running           INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, id DESC);

CREATE TABLE entries (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    -- 8 lowercase hex characters, unique within the session.
    id         TEXT NOT NULL,
    parent_id  TEXT,
    -- Creation order within the session (pi's file order).
    ordinal    INTEGER NOT NULL,
    -- The seq of the session event that announced the entry.
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    -- The entry as pi writes it in a v3 session file.
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
) STRICT;

CREATE UNIQUE INDEX entries_by_ordinal ON entries (session_id, ordinal);
CREATE INDEX entries_by_seq ON entries (session_id, seq);
