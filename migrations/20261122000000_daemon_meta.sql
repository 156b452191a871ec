-- Daemon-wide facts that survive restarts: when the database was created, how often a daemon
-- opened it, when it last did.
CREATE TABLE daemon_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;
