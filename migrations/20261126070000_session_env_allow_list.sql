-- Secrets at rest, second rule: only variables known to hold no secret are stored
-- (`session::secrets::STORED_NAMES`: the exact names below, `LC_*` and `XDG_*`), and only
-- when their value does not look like a credential; every other variable a row kept until
-- now moves to `secret_env_names` (the session asks for it again). The value checks are
-- coarser than `looks_like_credential`: whatever may be a credential goes.
CREATE TEMP TABLE harmless_env_names (name TEXT PRIMARY KEY);
INSERT INTO harmless_env_names (name) VALUES
    ('PATH'),
    ('HOME'),
    ('USER'),
    ('LOGNAME'),
    ('SHELL'),
    ('PWD'),
    ('OLDPWD'),
    ('SHLVL'),
    ('HOSTNAME'),
    ('HOSTTYPE'),
    ('OSTYPE'),
    ('MACHTYPE'),
    ('TERM'),
    ('COLORTERM'),
    ('TERM_PROGRAM'),
    ('TERM_PROGRAM_VERSION'),
    ('LANG'),
    ('LANGUAGE'),
    ('TZ'),
    ('TMPDIR'),
    ('TMP'),
    ('TEMP'),
    ('EDITOR'),
    ('VISUAL'),
    ('PAGER'),
    ('LESS'),
    ('MANPATH'),
    ('INFOPATH'),
    ('DISPLAY'),
    ('WAYLAND_DISPLAY'),
    ('NO_COLOR'),
    ('FORCE_COLOR'),
    ('CLICOLOR'),
    ('CLICOLOR_FORCE'),
    ('LS_COLORS'),
    ('GIT_EDITOR'),
    ('GIT_PAGER'),
    ('DEBIAN_FRONTEND'),
    ('CC'),
    ('CXX'),
    ('CFLAGS'),
    ('CXXFLAGS'),
    ('CPPFLAGS'),
    ('LDFLAGS'),
    ('PKG_CONFIG_PATH'),
    ('LD_LIBRARY_PATH'),
    ('LIBRARY_PATH'),
    ('CPATH'),
    ('CMAKE_PREFIX_PATH'),
    ('CARGO_HOME'),
    ('CARGO_TARGET_DIR'),
    ('RUSTUP_HOME'),
    ('RUSTUP_TOOLCHAIN'),
    ('RUSTFLAGS'),
    ('RUST_BACKTRACE'),
    ('RUST_LOG'),
    ('GOPATH'),
    ('GOROOT'),
    ('GOBIN'),
    ('JAVA_HOME'),
    ('NODE_PATH'),
    ('NODE_ENV'),
    ('NVM_DIR'),
    ('NVM_BIN'),
    ('NVM_INC'),
    ('PNPM_HOME'),
    ('BUN_INSTALL'),
    ('DENO_DIR'),
    ('PYENV_ROOT'),
    ('PYENV_VERSION'),
    ('VIRTUAL_ENV'),
    ('CONDA_PREFIX'),
    ('CONDA_DEFAULT_ENV'),
    ('CONDA_EXE'),
    ('PYTHONPATH'),
    ('PYTHONHOME'),
    ('PYTHONUNBUFFERED'),
    ('PYTHONDONTWRITEBYTECODE'),
    ('GEM_HOME'),
    ('GEM_PATH'),
    ('RBENV_ROOT'),
    ('HOMEBREW_PREFIX'),
    ('HOMEBREW_CELLAR'),
    ('HOMEBREW_REPOSITORY');

UPDATE sessions
SET secret_env_names = (
        SELECT COALESCE(json_group_array(name), '[]')
        FROM (SELECT value AS name FROM json_each(sessions.secret_env_names)
              UNION
              SELECT key FROM json_each(sessions.env)
              WHERE NOT ((key IN (SELECT name FROM harmless_env_names) OR key GLOB 'LC_*' OR key GLOB 'XDG_*')
           AND NOT (value GLOB '*://*:*@*' OR value GLOB '*-----BEGIN*'
                    OR value GLOB '*eyJ*.eyJ*' OR value GLOB '*AKIA*' OR value GLOB '*ASIA*'
                    OR value GLOB '*gh[pousr]_*' OR value GLOB '*github_pat_*'
                    OR value GLOB '*glpat-*' OR value GLOB '*xox[abps]-*' OR value GLOB '*sk-*'
                    OR value GLOB '*sk_live_*' OR value GLOB '*npm_*' OR value GLOB '*hf_*'
                    OR value GLOB '*AIza*' OR value GLOB '*pypi-*'))
              ORDER BY name)
    ),
    env = (
        SELECT COALESCE(json_group_object(key, value), '{}')
        FROM json_each(sessions.env)
        WHERE (key IN (SELECT name FROM harmless_env_names) OR key GLOB 'LC_*' OR key GLOB 'XDG_*')
           AND NOT (value GLOB '*://*:*@*' OR value GLOB '*-----BEGIN*'
                    OR value GLOB '*eyJ*.eyJ*' OR value GLOB '*AKIA*' OR value GLOB '*ASIA*'
                    OR value GLOB '*gh[pousr]_*' OR value GLOB '*github_pat_*'
                    OR value GLOB '*glpat-*' OR value GLOB '*xox[abps]-*' OR value GLOB '*sk-*'
                    OR value GLOB '*sk_live_*' OR value GLOB '*npm_*' OR value GLOB '*hf_*'
                    OR value GLOB '*AIza*' OR value GLOB '*pypi-*')
    )
WHERE env IS NOT NULL;

DROP TABLE harmless_env_names;
