-- What a session was started with on pi's command line beyond the columns of its own:
-- `--skill`/`--prompt-template` paths, `--no-prompt-templates`, and the `--tools` allowlist
-- over extension tools (JSON, `{}` for none).
ALTER TABLE sessions ADD COLUMN start_options TEXT NOT NULL DEFAULT '{}';
