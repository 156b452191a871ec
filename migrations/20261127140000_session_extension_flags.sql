-- The values a session gives the flags pi extensions register (pi's `--name[=value]` on its
-- command line, read with `pi.getFlag`): a JSON object, name → string or true.
ALTER TABLE sessions ADD COLUMN extension_flags TEXT NOT NULL DEFAULT '{}';
