//! Directories only the daemon's user may enter: created with mode 0700, an existing one
//! tightened to it, one that belongs to another user refused. The daemon's own directories
//! and the Python kernels' socket directory are made this way.

use std::fs::DirBuilder;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// Why a directory could not be made private. The texts name the directory and the cause
/// (each variant's `error` is part of its text, not a separate source).
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    /// It could not be created. Check the parent's permissions and the disk.
    #[error("cannot create {}: {error}", dir.display())]
    Create { dir: PathBuf, error: std::io::Error },
    /// Its owner and mode could not be read. Check the parent's permissions.
    #[error("cannot inspect {}: {error}", dir.display())]
    Inspect { dir: PathBuf, error: std::io::Error },
    /// Another user owns it. Remove it, or point the daemon elsewhere (`PI_HOME`).
    #[error(
        "{} belongs to uid {owner}, not to you (uid {own}); remove it or set PI_HOME elsewhere",
        dir.display()
    )]
    NotOwned { dir: PathBuf, owner: u32, own: u32 },
    /// It, or a symbolic link at its path, belongs to another user (who made it first, as in
    /// a shared `/tmp`).
    #[error(transparent)]
    Foreign(#[from] pi_paths::trust::ForeignDir),
    /// Its mode could not be tightened to 0700. Fix its permissions by hand.
    #[error("cannot make {} private (0700): {error}", dir.display())]
    Tighten { dir: PathBuf, error: std::io::Error },
}

/// Creates `dir` (and its parents) with mode 0700, or tightens an existing one (logged);
/// refuses a directory that belongs to another user, or a symbolic link of another user at
/// its path (checked before anything is created or changed through it).
pub fn ensure(dir: &Path) -> Result<(), PrivateDirError> {
    pi_paths::trust::check_owned_dir(dir)?;
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|error| PrivateDirError::Create {
            dir: dir.to_path_buf(),
            error,
        })?;
    let metadata = std::fs::metadata(dir).map_err(|error| PrivateDirError::Inspect {
        dir: dir.to_path_buf(),
        error,
    })?;
    let own = rustix::process::geteuid().as_raw();
    if metadata.uid() != own {
        return Err(PrivateDirError::NotOwned {
            dir: dir.to_path_buf(),
            owner: metadata.uid(),
            own,
        });
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|error| {
            PrivateDirError::Tighten {
                dir: dir.to_path_buf(),
                error,
            }
        })?;
        tracing::info!(
            dir = %dir.display(),
            previous_mode = format!("{:o}", metadata.permissions().mode() & 0o777),
            "made a directory private (0700)"
        );
    }
    Ok(())
}
