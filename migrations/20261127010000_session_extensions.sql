-- pi extensions a session loads besides the configured ones (pi's `-e FILE`,
-- `session/create` `extensions`, a JSON array of strings) and whether it loads none of the
-- configured ones (pi's `--no-extensions`).
ALTER TABLE sessions ADD COLUMN extensions TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sessions ADD COLUMN no_extensions INTEGER NOT NULL DEFAULT 0;
