//! `isolated` tasks: the child works in a `git worktree` of the parent's repository (detached
//! at `HEAD`); afterwards its changes (committed or not) are saved as a patch file first,
//! then, when the child succeeded, applied to the parent's tree with `git apply` (all or
//! nothing: a conflict is reported, never forced), and only then is the worktree removed.
//! Commits the child made also stay reachable from a `pi-task/<name>-<id>` branch.
//!
//! Invariant: nothing the child did is destroyed before it is in a patch file (or a branch).

use std::path::{Path, PathBuf};

use pi_tools::spawn::{SpawnSpec, Spawner};

/// A child's worktree.
#[derive(Clone, Debug)]
pub struct Worktree {
    /// The parent's repository (its top level).
    pub repo: PathBuf,
    /// The commit the worktree started from.
    pub base: String,
    /// The worktree.
    pub path: PathBuf,
    /// The child's working directory in it (the parent's, relative to the repository).
    pub cwd: PathBuf,
}

/// What became of an isolated child's changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// A sentence for the parent.
    pub message: String,
    /// The patch file, when there were changes.
    pub patch: Option<PathBuf>,
    /// Whether they are in the parent's tree now.
    pub applied: bool,
}

/// Why a task's worktree could not be made or its changes saved.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    /// git could not be run.
    #[error("cannot run git: {0}")]
    GitMissing(#[source] pi_tools::spawn::SpawnError),
    /// git failed (its stderr).
    #[error("{0}")]
    Git(String),
    /// The parent's directory is not in a repository.
    #[error("isolated needs a git repository, and {} is not in one", .0.display())]
    NotARepository(PathBuf),
    /// The repository has no commit.
    #[error("isolated needs a commit to start from, and {} has none yet", .0.display())]
    NoCommit(PathBuf),
    /// A directory could not be made.
    #[error("cannot create {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `git worktree add` failed.
    #[error("cannot create a worktree at {}: {error}", path.display())]
    Worktree {
        /// Where.
        path: PathBuf,
        /// git's stderr.
        error: Box<IsolationError>,
    },
    /// The patch could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WritePatch {
        /// The patch file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs git in `dir`: its stdout as text, or an error with its stderr.
async fn git(spawner: &Spawner, dir: &Path, args: &[&str]) -> Result<String, IsolationError> {
    git_bytes(spawner, dir, args)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs git in `dir` (under the daemon's guard, with the daemon's environment and no
/// terminal prompts): its stdout as it is (patches of files that are not UTF-8 stay exact),
/// or an error with its stderr.
async fn git_bytes(
    spawner: &Spawner,
    dir: &Path,
    args: &[&str],
) -> Result<Vec<u8>, IsolationError> {
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    env.insert("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned());
    let spec = SpawnSpec {
        program: PathBuf::from("git"),
        args: ["-C".into(), dir.as_os_str().to_owned()]
            .into_iter()
            .chain(args.iter().map(std::ffi::OsString::from))
            .collect(),
        cwd: dir.to_path_buf(),
        env,
    };
    let output = spawner
        .output(&spec)
        .await
        .map_err(IsolationError::GitMissing)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(IsolationError::Git(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ))
    }
}

/// A worktree for child `id` under `dir`, of the repository holding `parent_cwd`.
pub async fn create(
    spawner: &Spawner,
    parent_cwd: &Path,
    dir: &Path,
    id: &str,
) -> Result<Worktree, IsolationError> {
    let repo = git(spawner, parent_cwd, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| IsolationError::NotARepository(parent_cwd.to_path_buf()))?;
    let repo = PathBuf::from(repo.trim());
    let base = git(spawner, &repo, &["rev-parse", "HEAD"])
        .await
        .map_err(|_| IsolationError::NoCommit(repo.clone()))?
        .trim()
        .to_owned();
    std::fs::create_dir_all(dir).map_err(|source| IsolationError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(id);
    let shown = path.display().to_string();
    git(
        spawner,
        &repo,
        &["worktree", "add", "--detach", &shown, &base],
    )
    .await
    .map_err(|error| IsolationError::Worktree {
        path: path.clone(),
        error: Box::new(error),
    })?;
    let relative = parent_cwd
        .canonicalize()
        .ok()
        .and_then(|cwd| {
            let repo = repo.canonicalize().ok()?;
            cwd.strip_prefix(&repo).ok().map(Path::to_path_buf)
        })
        .unwrap_or_default();
    let cwd = path.join(relative);
    Ok(Worktree {
        repo,
        base,
        path,
        cwd,
    })
}

/// Saves child `id`'s changes in `worktree` as `<patches>/<id>.patch`, applies them to the
/// parent's tree when `apply` (holding `applying`, so two children never patch at once),
/// and removes the worktree.
pub async fn finish(
    spawner: &Spawner,
    worktree: &Worktree,
    patches: &Path,
    id: &str,
    name: &str,
    apply: bool,
    applying: &tokio::sync::Mutex<()>,
) -> Merged {
    let saved = {
        let _one_at_a_time = applying.lock().await;
        save_and_apply(spawner, worktree, patches, id, name, apply).await
    };
    match saved {
        Ok(merged) => {
            if let Err(error) = git(
                spawner,
                &worktree.repo,
                &[
                    "worktree",
                    "remove",
                    "--force",
                    &worktree.path.display().to_string(),
                ],
            )
            .await
            {
                tracing::warn!(worktree = %worktree.path.display(), %error, "cannot remove a task's worktree");
            }
            merged
        }
        // Nothing is saved: the worktree stays where it is.
        Err(error) => Merged {
            message: format!(
                "its changes could not be saved ({error}); they are still in {}",
                worktree.path.display()
            ),
            patch: None,
            applied: false,
        },
    }
}

async fn save_and_apply(
    spawner: &Spawner,
    worktree: &Worktree,
    patches: &Path,
    id: &str,
    name: &str,
    apply: bool,
) -> Result<Merged, IsolationError> {
    let path = &worktree.path;
    let head = git(spawner, path, &["rev-parse", "HEAD"]).await?;
    let mut kept = String::new();
    if head.trim() != worktree.base {
        let short: String = id.chars().take(8).collect();
        // A name the model chose: only what a branch name always allows.
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let safe = safe.trim_matches('-');
        let branch = format!(
            "pi-task/{}-{short}",
            if safe.is_empty() { "task" } else { safe }
        );
        git(
            spawner,
            &worktree.repo,
            &["branch", "--force", &branch, head.trim()],
        )
        .await?;
        kept = format!(" (its commits are on branch {branch})");
    }
    git(spawner, path, &["add", "--all"]).await?;
    let diff = git_bytes(
        spawner,
        path,
        &["diff", "--cached", "--binary", "--no-color", &worktree.base],
    )
    .await?;
    if diff.iter().all(u8::is_ascii_whitespace) {
        return Ok(Merged {
            message: format!("it changed no file{kept}"),
            patch: None,
            applied: false,
        });
    }
    std::fs::create_dir_all(patches).map_err(|source| IsolationError::CreateDir {
        path: patches.to_path_buf(),
        source,
    })?;
    let patch = patches.join(format!("{id}.patch"));
    std::fs::write(&patch, &diff).map_err(|source| IsolationError::WritePatch {
        path: patch.clone(),
        source,
    })?;
    let files = diff
        .split(|byte| *byte == b'\n')
        .filter(|line| line.starts_with(b"diff --git "))
        .count();
    if !apply {
        return Ok(Merged {
            message: format!(
                "it did not finish, so its changes ({files} file(s)) were not applied; they are \
                 in {}{kept}",
                patch.display()
            ),
            patch: Some(patch),
            applied: false,
        });
    }
    match git(
        spawner,
        &worktree.repo,
        &["apply", "--whitespace=nowarn", &patch.display().to_string()],
    )
    .await
    {
        Ok(_) => Ok(Merged {
            message: format!(
                "its changes ({files} file(s)) were applied to {}; the patch is in {}{kept}",
                worktree.repo.display(),
                patch.display()
            ),
            patch: Some(patch),
            applied: true,
        }),
        Err(error) => Ok(Merged {
            message: format!(
                "its changes conflict with {} and were not applied ({}); the patch is kept in \
                 {}{kept}",
                worktree.repo.display(),
                error
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("git apply failed"),
                patch.display()
            ),
            patch: Some(patch),
            applied: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_say_what_isolation_needs() {
        let cases = [
            (
                IsolationError::NotARepository("/work/notes".into()),
                "isolated needs a git repository, and /work/notes is not in one",
            ),
            (
                IsolationError::NoCommit("/work/repo".into()),
                "isolated needs a commit to start from, and /work/repo has none yet",
            ),
            (
                IsolationError::Worktree {
                    path: "/data/worktrees/t1".into(),
                    error: Box::new(IsolationError::Git(
                        "fatal: '/data/worktrees/t1' already exists".into(),
                    )),
                },
                "cannot create a worktree at /data/worktrees/t1: fatal: '/data/worktrees/t1' \
                 already exists",
            ),
            (
                IsolationError::CreateDir {
                    path: "/data/patches".into(),
                    source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
                },
                "cannot create /data/patches: permission denied",
            ),
            (
                IsolationError::WritePatch {
                    path: "/data/patches/t1.patch".into(),
                    source: std::io::Error::from(std::io::ErrorKind::StorageFull),
                },
                "cannot write /data/patches/t1.patch: no storage space",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
