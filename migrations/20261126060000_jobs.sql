-- Background jobs (`bash` with `background: true`): one row per job, kept after it ends so a
-- job that was running when the daemon stopped is reported as lost, never forgotten.
CREATE TABLE jobs (
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL,
    command    TEXT NOT NULL,
    cwd        TEXT NOT NULL,
    tty        INTEGER NOT NULL,
    state      TEXT NOT NULL,
    exit_code  INTEGER,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    spool      TEXT NOT NULL
) STRICT;
CREATE INDEX jobs_by_session ON jobs (session_id, started_at);
