-- A session's own approval mode (`session/setPolicy`, `pictl run --mode`), so it outlives a
-- daemon restart. NULL: the settings' mode.
ALTER TABLE sessions ADD COLUMN policy_mode TEXT;
