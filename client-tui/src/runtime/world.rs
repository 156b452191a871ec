//! Facts the shell reads from the machine: how to show the working directory, its git branch,
//! the files for `@` completion (.gitignore-aware), `keybindings.json`, and image files.

use std::path::Path;

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
pub fn read_image(cwd: &Path, path: &str, fit: bool) -> Result<Option<ImageContent>, String> {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::home_dir().map(|home| home.join(rest)),
        None => Some(cwd.join(path)),
    };
    let Some(full) = expanded.filter(|full| full.is_file()) else {
        return Ok(None);
    };
    let bytes =
        std::fs::read(&full).map_err(|error| format!("cannot read {}: {error}", full.display()))?;
    let Some(kind) = pi_image::sniff(&bytes) else {
        return Err(format!(
            "{} is not a PNG, JPEG, GIF or WebP image",
            full.display()
        ));
    };
    let image = if fit {
        pi_image::prepare(&bytes, kind)
            .map_err(|error| format!("cannot attach {}: {error}", full.display()))?
    } else {
        pi_image::as_is(&bytes, kind)
    };
    Ok(Some(ImageContent {
        data: image.data,
        mime_type: image.mime.to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    /// A one-pixel red PNG.
    const PIXEL_PNG: [u8; 69] = [
        137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2,
        0, 0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0,
        3, 1, 1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
    ];

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
        std::fs::write(root.join("shot.png"), PIXEL_PNG).unwrap();
        std::fs::write(root.join("fake.png"), b"not a picture").unwrap();

        assert_eq!(display_cwd(&root.join("src"), Some(root)), "~/src");
        assert_eq!(display_cwd(root, Some(root)), "~");
        assert_eq!(display_cwd(root, None), root.display().to_string());
        assert_eq!(
            git_branch(&root.join("src/deep")).as_deref(),
            Some("feature/tui")
        );
        assert_eq!(
            list_files(root),
            ["fake.png", "shot.png", "src/deep/mod.rs", "src/main.rs"]
        );

        for fit in [true, false] {
            let image = read_image(root, "shot.png", fit).unwrap().unwrap();
            assert_eq!(image.mime_type, "image/png");
            assert_eq!(
                image.data,
                base64::engine::general_purpose::STANDARD.encode(PIXEL_PNG),
                "within the limits: byte for byte"
            );
        }
        assert_eq!(read_image(root, "missing.png", true), Ok(None));
        assert_eq!(
            read_image(root, "fake.png", true),
            Err(format!(
                "{}/fake.png is not a PNG, JPEG, GIF or WebP image",
                root.display()
            ))
        );
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
