//! Facts the shell reads from the machine: how to show the working directory, its git branch,
//! the files for `@` completion (.gitignore-aware), `keybindings.json`, and image files.

use std::path::Path;

use base64::Engine as _;
use pi_protocol::v1::message::ImageContent;

/// Files listed at most for `@` completion.
const MAX_FILES: usize = 20_000;

/// `cwd` with the home directory shown as `~`.
pub fn display_cwd(cwd: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| cwd.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.display().to_string(),
    }
}

/// The branch checked out in the repository containing `cwd` (worktrees included), or the
/// short commit for a detached HEAD.
pub fn git_branch(cwd: &Path) -> Option<String> {
    let mut directory = Some(cwd);
    while let Some(current) = directory {
        let dot_git = current.join(".git");
        let git_dir = if dot_git.is_dir() {
            Some(dot_git)
        } else if dot_git.is_file() {
            std::fs::read_to_string(&dot_git).ok().and_then(|text| {
                text.trim()
                    .strip_prefix("gitdir:")
                    .map(|path| current.join(path.trim()))
            })
        } else {
            None
        };
        if let Some(git_dir) = git_dir {
            let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
            let head = head.trim();
            return Some(match head.strip_prefix("ref: refs/heads/") {
                Some(branch) => branch.to_owned(),
                None => head.chars().take(7).collect(),
            });
        }
        directory = current.parent();
    }
    None
}

/// Files under `cwd`, relative, sorted, honouring .gitignore and skipping hidden files.
pub fn list_files(cwd: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(cwd)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(cwd)
                .ok()
                .map(|path| path.display().to_string())
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

/// Reads an image file for a message; `Ok(None)` when the path is not a file.
pub fn read_image(cwd: &Path, path: &str) -> Result<Option<ImageContent>, String> {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::home_dir().map(|home| home.join(rest)),
        None => Some(cwd.join(path)),
    };
    let Some(full) = expanded.filter(|full| full.is_file()) else {
        return Ok(None);
    };
    let lower = path.to_ascii_lowercase();
    let mime_type = if lower.ends_with(".png") {
        "image/png"
    } else if lower.ends_with(".gif") {
        "image/gif"
    } else if lower.ends_with(".webp") {
        "image/webp"
    } else {
        "image/jpeg"
    };
    let bytes =
        std::fs::read(&full).map_err(|error| format!("cannot read {}: {error}", full.display()))?;
    Ok(Some(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        mime_type: mime_type.to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_branch_files_and_images_are_read_from_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/feature/tui\n").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("src/deep/mod.rs"), "").unwrap();
        std::fs::write(root.join("target/junk.o"), "").unwrap();
        std::fs::write(root.join("shot.png"), [0x89, b'P', b'N', b'G']).unwrap();

        assert_eq!(display_cwd(&root.join("src"), Some(root)), "~/src");
        assert_eq!(display_cwd(root, Some(root)), "~");
        assert_eq!(display_cwd(root, None), root.display().to_string());
        assert_eq!(
            git_branch(&root.join("src/deep")).as_deref(),
            Some("feature/tui")
        );
        assert_eq!(
            list_files(root),
            ["shot.png", "src/deep/mod.rs", "src/main.rs"]
        );

        let image = read_image(root, "shot.png").unwrap().unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.data, "iVBORw==");
        assert_eq!(read_image(root, "missing.png"), Ok(None));
    }

    #[test]
    fn a_worktree_names_its_branch_through_the_gitdir_file() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::write(git_dir.join("HEAD"), "0123456789abcdef\n").unwrap();
        let worktree = dir.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", git_dir.display()),
        )
        .unwrap();
        assert_eq!(git_branch(&worktree).as_deref(), Some("0123456"));
    }
}
