//! oh-my-pi's internal URLs for sessions that use its tools: `local://` (a scratch directory
//! of the session, shared with its subagents: the parent's), `skill://NAME[/FILE]` (a skill's
//! file), which the file tools take as paths and `bash` gets as paths; and `history://[ID]`
//! (a session's concise transcript; this session's without an id), which `read` reads.
//!
//! Architecture invariant: a `local://` path never leaves the scratch directory — `..` is
//! resolved by text and the deepest existing directory by the file system (symbolic links
//! included) before the path is given out.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// The scratch directory's scheme.
pub const LOCAL: &str = "local://";
/// The skills' scheme.
pub const SKILL: &str = "skill://";
/// The transcripts' scheme.
pub const HISTORY: &str = "history://";
/// The rulebook's scheme.
pub const RULE: &str = "rule://";

/// A session's places.
#[derive(Debug)]
pub struct SessionPlaces {
    /// The scratch directory (created on first use, private).
    pub local: PathBuf,
    /// Where the session's skills are found.
    pub roots: Option<crate::coding::ResourceRoots>,
    /// The session's working directory.
    pub cwd: PathBuf,
}

impl SessionPlaces {
    fn local(&self, rest: &str) -> Result<PathBuf, String> {
        create_private_dir(&self.local).map_err(|error| {
            format!(
                "cannot make the session's local:// directory {}: {error}",
                self.local.display()
            )
        })?;
        let rest = rest.trim_start_matches('/');
        let joined = pi_paths::lexical::normalize(&self.local.join(rest));
        if !joined.starts_with(&self.local) {
            return Err(format!(
                "{LOCAL}{rest} leaves the session's local directory; use a path inside it"
            ));
        }
        // The deepest existing ancestor, with symbolic links resolved, must be inside too.
        let real_root = self
            .local
            .canonicalize()
            .unwrap_or_else(|_| self.local.clone());
        let mut existing = joined.as_path();
        while !existing.exists() {
            match existing.parent() {
                Some(parent) => existing = parent,
                None => break,
            }
        }
        if let Ok(real) = existing.canonicalize()
            && !real.starts_with(&real_root)
        {
            return Err(format!(
                "{LOCAL}{rest} leads out of the session's local directory through a link"
            ));
        }
        Ok(joined)
    }

    fn skill(&self, rest: &str) -> Result<PathBuf, String> {
        let (name, file) = match rest.split_once('/') {
            Some((name, file)) => (name, file),
            None => (rest, ""),
        };
        let Some(roots) = &self.roots else {
            return Err("this session has no skills".to_owned());
        };
        let skills = crate::coding::resources::load(roots, &self.cwd).skills;
        let Some(skill) = skills.iter().find(|skill| skill.name == name) else {
            let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
            return Err(if names.is_empty() {
                format!("no skill named {name:?}; this session has no skills")
            } else {
                format!(
                    "no skill named {name:?}; the skills are {}",
                    names.join(", ")
                )
            });
        };
        if file.is_empty() {
            return Ok(skill.file_path.clone());
        }
        let joined = pi_paths::lexical::normalize(&skill.base_dir.join(file));
        if !joined.starts_with(&skill.base_dir) {
            return Err(format!(
                "{SKILL}{rest} leaves the skill's directory; name a file inside it"
            ));
        }
        Ok(joined)
    }
}

impl pi_tools::UrlPlaces for SessionPlaces {
    fn place(&self, url: &str) -> Option<Result<PathBuf, String>> {
        if let Some(rest) = url.strip_prefix(LOCAL) {
            return Some(self.local(rest));
        }
        if let Some(rest) = url.strip_prefix(SKILL) {
            return Some(self.skill(rest));
        }
        None
    }

    fn expand(&self, command: &str) -> String {
        static URL: LazyLock<Option<Regex>> =
            LazyLock::new(|| Regex::new(r#"(?:local|skill)://[^\s'"`;|&<>()$]*"#).ok());
        let Some(url) = URL.as_ref() else {
            return command.to_owned();
        };
        url.replace_all(command, |found: &regex::Captures<'_>| {
            let text = &found[0];
            match self.place(text) {
                Some(Ok(path)) => quote(&path),
                // Left as written: the command fails and says so.
                _ => text.to_owned(),
            }
        })
        .into_owned()
    }
}

/// `path` as one shell word.
fn quote(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// `read`'s reader of `history://` transcripts.
#[derive(Debug)]
pub struct Histories {
    /// The daemon's sessions.
    pub sessions: crate::session::SessionsWeak,
    /// The reading session (`history://` alone).
    pub session_id: String,
}

impl pi_tools::UriReader for Histories {
    fn scheme(&self) -> &str {
        HISTORY
    }

    fn describe(&self) -> String {
        "Also reads a session's concise transcript given as history://<session id> \
         (history:// alone: this session's)."
            .to_owned()
    }

    fn path_hint(&self) -> String {
        "history://<session id>".to_owned()
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        Box::pin(async move {
            let id = uri.trim_start_matches(HISTORY).trim_end_matches('/');
            let id = if id.is_empty() {
                self.session_id.as_str()
            } else {
                id
            };
            let sessions = self
                .sessions
                .upgrade()
                .ok_or_else(|| "the daemon is stopping".to_owned())?;
            let (row, entries) = sessions
                .all_entries(id)
                .await
                .map_err(|error| format!("cannot read {uri}: {error}"))?;
            let title = row
                .name
                .clone()
                .or(row.task_name.clone())
                .unwrap_or_else(|| row.id.clone());
            Ok(vec![pi_tools::UriContent::Text(
                crate::tasks::tool::transcript(&format!("Session {title}"), &entries),
            )])
        })
    }
}

/// `read`'s reader of the rulebook (`rule://NAME`).
#[derive(Debug)]
pub struct RuleBook {
    /// Where the session's rules are found.
    pub roots: Option<crate::coding::ResourceRoots>,
    /// The session's working directory.
    pub cwd: PathBuf,
}

impl pi_tools::UriReader for RuleBook {
    fn scheme(&self) -> &str {
        RULE
    }

    fn describe(&self) -> String {
        "Also reads the rulebook's rules given as rule://NAME.".to_owned()
    }

    fn path_hint(&self) -> String {
        "rule://NAME".to_owned()
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        Box::pin(async move {
            let name = uri
                .trim_start_matches(RULE)
                .trim_end_matches('/')
                .to_owned();
            let Some(roots) = self.roots.clone() else {
                return Err("this session has no rules".to_owned());
            };
            let cwd = self.cwd.clone();
            let rules = tokio::task::spawn_blocking(move || {
                crate::coding::resources::load(&roots, &cwd).rules
            })
            .await
            .map_err(|error| format!("cannot read the rules: {error}"))?;
            match rules.iter().find(|rule| rule.name == name) {
                Some(rule) => Ok(vec![pi_tools::UriContent::Text(format!(
                    "# Rule {} ({})

{}",
                    rule.name,
                    rule.path.display(),
                    rule.body
                ))]),
                None if rules.is_empty() => {
                    Err(format!("no rule named {name:?}; this session has no rules"))
                }
                None => Err(format!(
                    "no rule named {name:?}; the rules are {}",
                    rules
                        .iter()
                        .map(|rule| rule.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tools::UrlPlaces as _;

    fn places(dir: &Path) -> SessionPlaces {
        SessionPlaces {
            local: dir.join("artifacts/s1/local"),
            roots: None,
            cwd: dir.to_path_buf(),
        }
    }

    #[test]
    fn local_urls_stay_inside_the_scratch_directory() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let plan = places.place("local://PLAN.md").unwrap().unwrap();
        assert_eq!(plan, dir.path().join("artifacts/s1/local/PLAN.md"));
        assert!(
            dir.path().join("artifacts/s1/local").is_dir(),
            "made on first use"
        );
        assert_eq!(
            places.place("local://notes/../a.txt").unwrap().unwrap(),
            dir.path().join("artifacts/s1/local/a.txt")
        );
        assert_eq!(
            places.place("local://../../secret").unwrap().unwrap_err(),
            "local://../../secret leaves the session's local directory; use a path inside it"
        );
        std::os::unix::fs::symlink("/etc", dir.path().join("artifacts/s1/local/out")).unwrap();
        assert_eq!(
            places.place("local://out/passwd").unwrap().unwrap_err(),
            "local://out/passwd leads out of the session's local directory through a link"
        );
        assert!(places.place("src/main.rs").is_none());
        assert_eq!(
            places.place("skill://pdf").unwrap().unwrap_err(),
            "this session has no skills"
        );
    }

    #[test]
    fn bash_gets_paths_for_the_urls_in_its_command() {
        let dir = tempfile::tempdir().unwrap();
        let places = places(dir.path());
        let local = dir.path().join("artifacts/s1/local");
        assert_eq!(
            places.expand("cat local://notes.txt | wc -l > local://count"),
            format!(
                "cat {}/notes.txt | wc -l > {}/count",
                local.display(),
                local.display()
            )
        );
        assert_eq!(places.expand("echo 'no urls'"), "echo 'no urls'");
        assert_eq!(
            places.expand("cat local://../x"),
            "cat local://../x",
            "a refused URL is left for the command to fail on"
        );
    }
}
