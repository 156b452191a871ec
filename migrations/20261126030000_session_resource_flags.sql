-- Sessions started without skills or context files in their system prompt (pi-subagents'
-- profile fields `noSkills` / `noContextFiles`, `session/create` `noSkills` / `noContextFiles`).
ALTER TABLE sessions ADD COLUMN no_skills INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN no_context_files INTEGER NOT NULL DEFAULT 0;
