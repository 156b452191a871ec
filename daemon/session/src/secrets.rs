//! Secrets at rest: a client sends its whole environment with `session/create`, and no
//! credential in it may reach the store. The rule is an allow-list: only variables known to
//! be harmless — the shell's, the locale's, the terminal's, the paths of language toolchains
//! ([`STORED_NAMES`]) — are stored, and only when their value does not look like a
//! credential either (a URL with a password, a PEM block, a JWT, a cloud or forge token:
//! [`looks_like_credential`]); the user's settings add names with `sessionEnv.include` and take
//! them away with `sessionEnv.exclude`. Everything else reaches the session's tools and its
//! provider in memory only. The store keeps the names, so a session loaded again (after a
//! daemon restart) knows what it lacks: it says so (`missingEnv`), and the next client that
//! attaches supplies them (`session/setEnv`).
//!
//! Only the global settings files count: a project file cannot make secrets persist.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use pi_util::wildcard::{Case, Wildcard};

/// Names (and `*` patterns) of the variables stored, unless their value looks like a
/// credential: what a shell, a terminal and the usual toolchains set, none of which holds a
/// secret.
pub const STORED_NAMES: &[&str] = &[
    // The shell, the user, the terminal and the locale.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "TERM",
    "COLORTERM",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "LESS",
    "MANPATH",
    "INFOPATH",
    "XDG_*",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "LS_COLORS",
    "GIT_EDITOR",
    "GIT_PAGER",
    "DEBIAN_FRONTEND",
    // Compilers and the toolchains' own directories.
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "CMAKE_PREFIX_PATH",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "JAVA_HOME",
    "NODE_PATH",
    "NODE_ENV",
    "NVM_DIR",
    "NVM_BIN",
    "NVM_INC",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CONDA_EXE",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "HOMEBREW_PREFIX",
    "HOMEBREW_CELLAR",
    "HOMEBREW_REPOSITORY",
];

/// [`STORED_NAMES`] compiled, once.
static STORED: LazyLock<Vec<Wildcard>> = LazyLock::new(|| name_patterns(STORED_NAMES));

/// Which variables are stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Patterns of names never stored (`sessionEnv.exclude`), whatever else says.
    exclude: Vec<Wildcard>,
    /// Patterns of names stored although they are not known to be harmless, whatever their
    /// value (`sessionEnv.include`: the user vouches for them).
    include: Vec<Wildcard>,
}

/// Variable name patterns: `*` and `?`, ignoring ASCII case.
fn name_patterns<S: AsRef<str>>(patterns: &[S]) -> Vec<Wildcard> {
    patterns
        .iter()
        .map(|pattern| Wildcard::new(pattern.as_ref(), Case::AsciiInsensitive))
        .collect()
}

impl EnvPolicy {
    /// The policy of `sessionEnv.exclude` and `sessionEnv.include`.
    pub fn new(exclude: &[String], include: &[String]) -> EnvPolicy {
        EnvPolicy {
            exclude: name_patterns(exclude),
            include: name_patterns(include),
        }
    }

    /// Whether `name=value` is kept in memory only.
    pub fn is_secret(&self, name: &str, value: &str) -> bool {
        if self.exclude.iter().any(|pattern| pattern.is_match(name)) {
            return true;
        }
        if self.include.iter().any(|pattern| pattern.is_match(name)) {
            return false;
        }
        let harmless = STORED.iter().any(|pattern| pattern.is_match(name));
        !harmless || looks_like_credential(value)
    }

    /// `env` split into (what may be stored, what stays in memory). `_` is neither: it is
    /// the path of the program that started the client, and every shell sets its own.
    pub fn split(
        &self,
        env: &BTreeMap<String, String>,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        env.iter()
            .filter(|(name, _)| name.as_str() != "_")
            .map(|(name, value)| (name.clone(), value.clone()))
            .partition(|(name, value)| !self.is_secret(name, value))
    }
}

/// Whether `value` has the shape of a credential: a URL with a password, a private key, a
/// JSON Web Token, or a token of a well-known service.
pub fn looks_like_credential(value: &str) -> bool {
    // `scheme://user:password@host`.
    let url_password = value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        authority
            .rsplit_once('@')
            .is_some_and(|(user_info, _)| user_info.contains(':'))
    });
    if url_password || value.contains("-----BEGIN") {
        return true;
    }
    // A JWT: three base64url parts, the first a JSON header.
    let jwt = value
        .split(|c: char| c.is_whitespace() || c == '=')
        .any(|word| {
            let parts: Vec<&str> = word.split('.').collect();
            parts.len() == 3 && parts[0].starts_with("eyJ") && parts[1].starts_with("eyJ")
        });
    if jwt {
        return true;
    }
    const PREFIXES: [&str; 17] = [
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxa-",
        "xoxb-",
        "xoxp-",
        "xoxs-",
        "sk-",
        "sk_live_",
        "npm_",
        "hf_",
    ];
    // A token may follow a `-` or `_` inside a word (`vim-ghp_…`, `key_AKIA…`).
    let token_at = |word: &str| {
        word.len() >= 16 && PREFIXES.iter().any(|prefix| word.starts_with(prefix))
            || word.starts_with("AIza") && word.len() >= 30
            || word.starts_with("pypi-") && word.len() >= 30
    };
    value
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(|word| {
            token_at(word)
                || word
                    .match_indices(['-', '_'])
                    .any(|(at, _)| token_at(&word[at + 1..]))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_harmless_names_with_harmless_values_are_stored() {
        let policy = EnvPolicy::default();
        for (name, value) in [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/alice"),
            ("LC_ALL", "C.UTF-8"),
            ("XDG_CONFIG_HOME", "/home/alice/.config"),
            ("EDITOR", "vim"),
            ("LS_COLORS", "rs=0:di=01;34:ln=01;36"),
            ("RUSTFLAGS", "-C target-cpu=native"),
            ("CARGO_HOME", "/home/alice/.cargo"),
        ] {
            assert!(!policy.is_secret(name, value), "{name}={value}");
        }
        for (name, value) in [
            // Not known to be harmless, whatever the value.
            ("ANTHROPIC_API_KEY", "x"),
            ("SMTP_PASS", "hunter2"),
            ("MY_SETTING", "plain"),
            // Known names holding credentials.
            ("XDG_DATA_DIRS", "https://alice:hunter2@example.com/share"),
            ("PYTHONPATH", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            ("LESS", "-----BEGIN OPENSSH PRIVATE KEY-----"),
        ] {
            assert!(policy.is_secret(name, value), "{name}={value}");
        }
        let tuned = EnvPolicy::new(
            &["EDITOR".to_owned(), "MY_*".to_owned()],
            &["PUBLIC_KEY_PATH".to_owned(), "MY_*".to_owned()],
        );
        assert!(tuned.is_secret("EDITOR", "vim"));
        assert!(tuned.is_secret("MY_PRIVATE_THING", "x"));
        assert!(!tuned.is_secret("PUBLIC_KEY_PATH", "/home/alice/.ssh/id.pub"));
        assert!(!tuned.is_secret("xdg_runtime_dir", "/run/user/1000"));
        let env: BTreeMap<String, String> = [("PATH", "/bin"), ("X_TOKEN", "t")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        let (kept, secret) = policy.split(&env);
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["PATH"]);
        assert_eq!(secret.keys().collect::<Vec<_>>(), ["X_TOKEN"]);
    }

    #[test]
    fn the_shells_underscore_is_neither_stored_nor_missed() {
        let env = BTreeMap::from([
            ("_".to_owned(), "/usr/bin/pictl".to_owned()),
            ("PATH".to_owned(), "/usr/bin".to_owned()),
            ("SMTP_PASS".to_owned(), "hunter2".to_owned()),
        ]);
        let (stored, held) = EnvPolicy::default().split(&env);
        assert_eq!(stored.keys().collect::<Vec<_>>(), ["PATH"]);
        assert_eq!(held.keys().collect::<Vec<_>>(), ["SMTP_PASS"]);
    }

    #[test]
    fn credential_shapes_are_recognized_in_any_value() {
        for value in [
            "postgres://app:s3cr3t@db.internal:5432/app",
            "redis://:s3cr3t@cache:6379/0",
            "https://user:token@github.com/org/repo.git",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "glpat-abcdefghij0123456789",
            "xoxb-123456789012-1234567890123-abcdefghijklmnop",
            "sk-ant-api03-abcdefghijklmnopqrstuvwx",
            "sk_live_abcdefghijklmnop0123",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz012",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "hf_abcdefghijklmnopqrstuvwxyz0123",
            // Inside a word, after a `-` or `_`.
            "vim-ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "key_AKIAIOSFODNN7EXAMPLE",
        ] {
            assert!(looks_like_credential(value), "{value}");
        }
        for value in [
            "/usr/local/bin:/usr/bin",
            "https://example.com/path@v1",
            "en_US.UTF-8",
            "skip",
            "rs=0:di=01;34",
            "/home/alice/.local/share/my-task-runner-with-a-long-name",
            "/opt/disk-sk-tools/bin",
        ] {
            assert!(!looks_like_credential(value), "{value}");
        }
    }

    #[test]
    fn the_allow_list_migration_names_the_variables_the_daemon_stores() {
        let sql = include_str!("../../../migrations/20261126070000_session_env_allow_list.sql");
        let listed: std::collections::BTreeSet<&str> = sql
            .lines()
            .filter_map(|line| line.trim().strip_prefix("('"))
            .filter_map(|rest| rest.split('\'').next())
            .collect();
        let stored: std::collections::BTreeSet<&str> = STORED_NAMES
            .iter()
            .copied()
            .filter(|name| !name.contains('*'))
            .collect();
        assert_eq!(listed, stored);
        for pattern in STORED_NAMES.iter().filter(|name| name.contains('*')) {
            assert!(
                sql.contains(&format!("key GLOB '{pattern}'")),
                "the migration lacks {pattern}"
            );
        }
    }
}
