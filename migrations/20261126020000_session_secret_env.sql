-- Secrets at rest: client variables whose names look like secrets are no longer stored with
-- a session, only their names (a session loaded again asks for them). Rows written before
-- keep theirs until now: this scrubs them, with the same name patterns as
-- `session::secrets::DEFAULT_PATTERNS` (LIKE ignores ASCII case).
ALTER TABLE sessions ADD COLUMN secret_env_names TEXT NOT NULL DEFAULT '[]';

UPDATE sessions
SET secret_env_names = (
        SELECT COALESCE(json_group_array(key), '[]')
        FROM (SELECT key FROM json_each(sessions.env)
              WHERE key LIKE '%KEY%' OR key LIKE '%SECRET%' OR key LIKE '%TOKEN%'
                 OR key LIKE '%PASSWORD%' OR key LIKE '%CREDENTIAL%'
              ORDER BY key)
    ),
    env = (
        SELECT COALESCE(json_group_object(key, value), '{}')
        FROM json_each(sessions.env)
        WHERE NOT (key LIKE '%KEY%' OR key LIKE '%SECRET%' OR key LIKE '%TOKEN%'
                   OR key LIKE '%PASSWORD%' OR key LIKE '%CREDENTIAL%')
    )
WHERE env IS NOT NULL;
