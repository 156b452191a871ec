-- Subagents: a session a `task` call started has its parent in `parent_session_id` and the
-- task's name here (forks have a parent and no task name).
ALTER TABLE sessions ADD COLUMN task_name TEXT;
CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;
