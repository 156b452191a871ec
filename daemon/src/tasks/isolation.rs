//! `isolated` tasks: the child works in a `git worktree` of the parent's repository (detached
//! at `HEAD`); afterwards its changes (committed or not) are saved as a patch file first,
//! then, when the child succeeded, applied to the parent's tree with `git apply` (all or
//! nothing: a conflict is reported, never forced), and only then is the worktree removed.
//! Commits the child made also stay reachable from a `pi-task/<name>-<id>` branch.
//!
//! Invariant: nothing the child did is destroyed before it is in a patch file (or a branch).

use std::path::{Path, PathBuf};

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

/// Runs git in `dir`: its stdout as text, or an error with its stderr.
async fn git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<String, String> {
    git_bytes(dir, args, input)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs git in `dir`: its stdout as it is (patches of files that are not UTF-8 stay exact),
/// or an error with its stderr.
async fn git_bytes(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut command = tokio::process::Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(if input.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|error| format!("cannot run git: {error}"))?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(input)
            .await
            .map_err(|error| format!("cannot feed git: {error}"))?;
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|error| format!("git failed: {error}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// A worktree for child `id` under `dir`, of the repository holding `parent_cwd`.
pub async fn create(parent_cwd: &Path, dir: &Path, id: &str) -> Result<Worktree, String> {
    let repo = git(parent_cwd, &["rev-parse", "--show-toplevel"], None)
        .await
        .map_err(|_| {
            format!(
                "isolated needs a git repository, and {} is not in one",
                parent_cwd.display()
            )
        })?;
    let repo = PathBuf::from(repo.trim());
    let base = git(&repo, &["rev-parse", "HEAD"], None)
        .await
        .map_err(|_| {
            format!(
                "isolated needs a commit to start from, and {} has none yet",
                repo.display()
            )
        })?
        .trim()
        .to_owned();
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let path = dir.join(id);
    let shown = path.display().to_string();
    git(&repo, &["worktree", "add", "--detach", &shown, &base], None)
        .await
        .map_err(|error| format!("cannot create a worktree at {shown}: {error}"))?;
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
    worktree: &Worktree,
    patches: &Path,
    id: &str,
    name: &str,
    apply: bool,
    applying: &tokio::sync::Mutex<()>,
) -> Merged {
    let saved = {
        let _one_at_a_time = applying.lock().await;
        save_and_apply(worktree, patches, id, name, apply).await
    };
    match saved {
        Ok(merged) => {
            if let Err(error) = git(
                &worktree.repo,
                &[
                    "worktree",
                    "remove",
                    "--force",
                    &worktree.path.display().to_string(),
                ],
                None,
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
    worktree: &Worktree,
    patches: &Path,
    id: &str,
    name: &str,
    apply: bool,
) -> Result<Merged, String> {
    let path = &worktree.path;
    let head = git(path, &["rev-parse", "HEAD"], None).await?;
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
            &worktree.repo,
            &["branch", "--force", &branch, head.trim()],
            None,
        )
        .await?;
        kept = format!(" (its commits are on branch {branch})");
    }
    git(path, &["add", "--all"], None).await?;
    let diff = git_bytes(
        path,
        &["diff", "--cached", "--binary", "--no-color", &worktree.base],
        None,
    )
    .await?;
    if diff.iter().all(u8::is_ascii_whitespace) {
        return Ok(Merged {
            message: format!("it changed no file{kept}"),
            patch: None,
            applied: false,
        });
    }
    std::fs::create_dir_all(patches)
        .map_err(|error| format!("cannot create {}: {error}", patches.display()))?;
    let patch = patches.join(format!("{id}.patch"));
    std::fs::write(&patch, &diff)
        .map_err(|error| format!("cannot write {}: {error}", patch.display()))?;
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
        &worktree.repo,
        &["apply", "--whitespace=nowarn", "-"],
        Some(&diff),
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
                error.lines().next().unwrap_or("git apply failed"),
                patch.display()
            ),
            patch: Some(patch),
            applied: false,
        }),
    }
}
