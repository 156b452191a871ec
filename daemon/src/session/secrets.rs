//! Secrets at rest: a client sends its whole environment with `session/create`; variables
//! whose names look like secrets (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`,
//! `*CREDENTIAL*`, any case, plus settings' `sessionEnv.exclude`, minus
//! `sessionEnv.include`) reach the session's tools and its provider in memory only. The store
//! keeps their names, so a session loaded again (after a daemon restart) knows what it lacks:
//! it says so, and the next client that attaches supplies them (`session/setEnv`).
//!
//! Only the global settings files count: a project file cannot make secrets persist.

use std::collections::BTreeMap;

/// Name patterns of secrets, always applied.
pub const DEFAULT_PATTERNS: [&str; 5] =
    ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*"];

/// Which variables are kept in memory only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// More patterns of names never stored (`sessionEnv.exclude`).
    pub exclude: Vec<String>,
    /// Patterns of names stored even though they look like secrets (`sessionEnv.include`).
    pub include: Vec<String>,
}

impl EnvPolicy {
    /// Whether `name` is kept in memory only.
    pub fn is_secret(&self, name: &str) -> bool {
        if self.include.iter().any(|pattern| glob_match(pattern, name)) {
            return false;
        }
        DEFAULT_PATTERNS
            .iter()
            .copied()
            .chain(self.exclude.iter().map(String::as_str))
            .any(|pattern| glob_match(pattern, name))
    }

    /// `env` split into (what may be stored, what stays in memory).
    pub fn split(
        &self,
        env: &BTreeMap<String, String>,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        env.iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .partition(|(name, _)| !self.is_secret(name))
    }
}

/// `*` (any run) and `?` (one character) against `name`, ignoring ASCII case.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    wildcard_match(&pattern.to_ascii_uppercase(), &name.to_ascii_uppercase())
}

/// `*` (any run, `/` included) and `?` (one character) against the whole of `text`.
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = text.chars().collect();
    let (mut p, mut n) = (0, 0);
    let (mut star, mut resume) = (None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            resume = n;
            p += 1;
        } else if let Some(at) = star {
            p = at + 1;
            resume += 1;
            n = resume;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_match_the_patterns_in_any_case() {
        let policy = EnvPolicy::default();
        for secret in [
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "KEY",
        ] {
            assert!(policy.is_secret(secret), "{secret}");
        }
        for plain in ["PATH", "HOME", "TERM", "EDITOR", "LANG"] {
            assert!(!policy.is_secret(plain), "{plain}");
        }
        let tuned = EnvPolicy {
            exclude: vec!["MY_*".to_owned()],
            include: vec!["PUBLIC_KEY_PATH".to_owned()],
        };
        assert!(tuned.is_secret("MY_PRIVATE_THING"));
        assert!(!tuned.is_secret("PUBLIC_KEY_PATH"));
        assert!(glob_match("a?c*", "abcdef") && !glob_match("a?c", "abcd"));
        let env: BTreeMap<String, String> = [("PATH", "/bin"), ("X_TOKEN", "t")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        let (kept, secret) = policy.split(&env);
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["PATH"]);
        assert_eq!(secret.keys().collect::<Vec<_>>(), ["X_TOKEN"]);
    }
}
