-- Prompt history shared by every client (the editor's Up/Down and Ctrl+R): one row per
-- distinct text per working directory, with when it was last sent, and an FTS5 index over
-- the text kept in step by triggers.
CREATE TABLE prompt_history (
    id      INTEGER PRIMARY KEY,
    text    TEXT NOT NULL,
    cwd     TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    UNIQUE (text, cwd)
) STRICT;

CREATE INDEX prompt_history_by_time ON prompt_history (sent_at DESC, id DESC);

CREATE VIRTUAL TABLE prompt_history_fts USING fts5 (
    text,
    content = 'prompt_history',
    content_rowid = 'id'
);

CREATE TRIGGER prompt_history_after_insert AFTER INSERT ON prompt_history BEGIN
    INSERT INTO prompt_history_fts (rowid, text) VALUES (new.id, new.text);
END;

CREATE TRIGGER prompt_history_after_delete AFTER DELETE ON prompt_history BEGIN
    INSERT INTO prompt_history_fts (prompt_history_fts, rowid, text)
    VALUES ('delete', old.id, old.text);
END;
