-- Per-session system prompt overrides, set when the session is created (`pictl run
-- --system-prompt`, `--append-system-prompt`): a replacement for the default prompt body and
-- text appended after it. NULL means none.
ALTER TABLE sessions ADD COLUMN system_prompt TEXT;
ALTER TABLE sessions ADD COLUMN append_system_prompt TEXT;
