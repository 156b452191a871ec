//! Whether a configuration file may be believed: the files that can make the daemon run a
//! program or send a key somewhere (`config.toml`, `mcp.json`, `settings.json`,
//! `models.json`, `auth.json`, extension directories) are refused when another user could have
//! written them, as sshd refuses such an `authorized_keys` (`StrictModes`).
//!
//! The file (symbolic links resolved) and every directory above it must belong to the current
//! user or to root, and must not be writable by others, nor by their group unless that group
//! is the owner's private group (no other member: the Debian and Ubuntu default, where files
//! are created `0664`). A world-writable directory with the sticky bit (`/tmp`) is fine: others
//! cannot replace what is in it.

use std::fmt;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Why a file is not believed; the message says how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UntrustedFile {
    /// The file or a directory above it belongs to another user.
    #[error(
        "{} belongs to uid {owner}, not to you (uid {own_uid}) or root, so another user could \
         have written {}; if you trust it, have it given to you (`sudo chown {own_uid} {}`), \
         otherwise remove it",
        .path.display(), .file.display(), .path.display()
    )]
    Owner {
        /// The file or directory.
        path: PathBuf,
        /// The configuration file refused.
        file: PathBuf,
        /// Its owner.
        owner: u32,
        /// The current user.
        own_uid: u32,
    },
    /// The file or a directory above it is writable by others.
    #[error(
        "{} is writable by {whom} (mode {:04o}), so another user could have written {}; fix it \
         with `chmod {fix} {}`",
        .path.display(), .mode, .file.display(), .path.display()
    )]
    Writable {
        /// The file or directory.
        path: PathBuf,
        /// The configuration file refused.
        file: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// "its group" or "every user".
        whom: Whom,
        /// The `chmod` argument that fixes it.
        fix: &'static str,
    },
}

/// Who besides the owner may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whom {
    /// The file's group, which has other members.
    Group,
    /// Every user.
    Others,
}

impl fmt::Display for Whom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Whom::Group => "its group, which has other members",
            Whom::Others => "every user",
        })
    }
}

/// Checks `file` as the module says. A file that does not exist passes (there is nothing to
/// believe); other errors reading metadata pass too, and the reader reports them.
pub fn check_trusted(file: &Path) -> Result<(), UntrustedFile> {
    let Ok(real) = file.canonicalize() else {
        return Ok(());
    };
    let own_uid = rustix::process::geteuid().as_raw();
    let groups = Groups::read();
    for path in real.ancestors() {
        let Ok(metadata) = std::fs::metadata(path) else {
            continue;
        };
        let owner = metadata.uid();
        if owner != own_uid && owner != 0 {
            return Err(UntrustedFile::Owner {
                path: path.to_path_buf(),
                file: file.to_path_buf(),
                owner,
                own_uid,
            });
        }
        let mode = metadata.mode() & 0o7777;
        let sticky_dir = metadata.is_dir() && mode & 0o1000 != 0;
        if sticky_dir {
            continue;
        }
        let writable = |whom, fix| UntrustedFile::Writable {
            path: path.to_path_buf(),
            file: file.to_path_buf(),
            mode,
            whom,
            fix,
        };
        if mode & 0o002 != 0 {
            return Err(writable(Whom::Others, "o-w"));
        }
        if mode & 0o020 != 0 && !groups.is_private(metadata.gid(), owner) {
            return Err(writable(Whom::Group, "g-w"));
        }
    }
    Ok(())
}

/// A directory the daemon or its clients would put their socket, locks or token in that is
/// not the current user's. The message says what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForeignDir {
    /// The directory belongs to another user: someone made it first to catch what would be
    /// put in it.
    #[error(
        "{} belongs to uid {owner}, not to you (uid {own_uid}); another user may have made it \
         to catch your daemon's socket or token. Remove it (`sudo rm -r {}`), or set \
         XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
        .dir.display(), .dir.display()
    )]
    NotYours {
        /// The directory.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// The current user.
        own_uid: u32,
    },
    /// A symbolic link at the directory's path belongs to another user.
    #[error(
        "{} is a symbolic link that belongs to uid {owner}, not to you (uid {own_uid}); another \
         user may have made it to redirect your daemon's socket and token. Remove it (`sudo rm \
         {}`), or set XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
        .dir.display(), .dir.display()
    )]
    ForeignLink {
        /// The link.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// The current user.
        own_uid: u32,
    },
}

/// Checks that `dir`, when it exists, is the current user's: neither it nor a symbolic link at
/// its path belongs to anyone else (as in a shared `/tmp`, where another user could create
/// the path first). A missing directory passes; the caller creates it.
pub fn check_owned_dir(dir: &Path) -> Result<(), ForeignDir> {
    let own_uid = rustix::process::geteuid().as_raw();
    let Ok(link) = std::fs::symlink_metadata(dir) else {
        return Ok(());
    };
    if link.uid() != own_uid {
        return Err(if link.file_type().is_symlink() {
            ForeignDir::ForeignLink {
                dir: dir.to_path_buf(),
                owner: link.uid(),
                own_uid,
            }
        } else {
            ForeignDir::NotYours {
                dir: dir.to_path_buf(),
                owner: link.uid(),
                own_uid,
            }
        });
    }
    if link.file_type().is_symlink()
        && let Ok(target) = std::fs::metadata(dir)
        && target.uid() != own_uid
    {
        return Err(ForeignDir::NotYours {
            dir: dir.to_path_buf(),
            owner: target.uid(),
            own_uid,
        });
    }
    Ok(())
}

/// `/etc/group` and `/etc/passwd`, enough to tell a user's private group.
struct Groups {
    // (gid, members) per line of /etc/group.
    groups: Vec<(u32, Vec<String>)>,
    // (name, uid, primary gid) per line of /etc/passwd.
    users: Vec<(String, u32, u32)>,
}

impl Groups {
    fn read() -> Groups {
        let read = |path| std::fs::read_to_string(path).unwrap_or_default();
        let groups = read("/etc/group")
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                let gid = fields.get(2)?.parse().ok()?;
                let members = fields
                    .get(3)
                    .map(|members| {
                        members
                            .split(',')
                            .filter(|member| !member.is_empty())
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                Some((gid, members))
            })
            .collect();
        let users = read("/etc/passwd")
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                Some((
                    (*fields.first()?).to_owned(),
                    fields.get(2)?.parse().ok()?,
                    fields.get(3)?.parse().ok()?,
                ))
            })
            .collect();
        Groups { groups, users }
    }

    /// Whether `gid` is `owner`'s alone: known, and no other user is in it, as a listed member
    /// or by primary group. Root's group 0 counts as root's.
    fn is_private(&self, gid: u32, owner: u32) -> bool {
        if gid == 0 && owner == 0 {
            return true;
        }
        let Some((_, members)) = self.groups.iter().find(|(id, _)| *id == gid) else {
            return false;
        };
        let owner_name = self
            .users
            .iter()
            .find(|(_, uid, _)| *uid == owner)
            .map(|(name, _, _)| name.as_str());
        let other_member = members
            .iter()
            .any(|member| Some(member.as_str()) != owner_name);
        let other_primary = self
            .users
            .iter()
            .any(|(_, uid, primary)| *primary == gid && *uid != owner);
        !other_member && !other_primary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn files_others_can_write_are_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir(&config).unwrap();
        chmod(&config, 0o700);
        let file = config.join("mcp.json");
        std::fs::write(&file, "{}").unwrap();
        chmod(&file, 0o600);
        assert_eq!(check_trusted(&file), Ok(()));
        assert_eq!(check_trusted(&config.join("missing.json")), Ok(()));

        chmod(&file, 0o666);
        let error = check_trusted(&file).unwrap_err();
        let real = file.canonicalize().unwrap();
        assert_eq!(
            error.to_string(),
            format!(
                "{real} is writable by every user (mode 0666), so another user could have \
                 written {shown}; fix it with `chmod o-w {real}`",
                real = real.display(),
                shown = file.display()
            )
        );
        chmod(&file, 0o600);
        chmod(&config, 0o777);
        let error = check_trusted(&file).unwrap_err();
        assert!(
            matches!(&error, UntrustedFile::Writable { path, whom: Whom::Others, .. }
                if *path == config.canonicalize().unwrap()),
            "{error}"
        );
        // A sticky world-writable directory (as /tmp) is fine.
        chmod(&config, 0o1777);
        assert_eq!(check_trusted(&file), Ok(()));
        chmod(&config, 0o700);

        // Another user's file (only root can make one here).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
            let error = check_trusted(&file).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "{real} belongs to uid 65534, not to you (uid 0) or root, so another user \
                     could have written {shown}; if you trust it, have it given to you (`sudo chown 0 \
                     {real}`), otherwise remove it",
                    real = real.display(),
                    shown = file.display()
                )
            );
        }
    }

    #[test]
    fn a_runtime_directory_another_user_made_first_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("pi-daemon-run");
        assert_eq!(
            check_owned_dir(&runtime),
            Ok(()),
            "missing: the caller makes it"
        );
        std::fs::create_dir(&runtime).unwrap();
        assert_eq!(check_owned_dir(&runtime), Ok(()));
        // One's own link to one's own directory is fine.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&runtime, &link).unwrap();
        assert_eq!(check_owned_dir(&link), Ok(()));
        // Another user's directory, or their link (only root can make them here).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&runtime, Some(65534), None).unwrap();
            let error = check_owned_dir(&runtime).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "{shown} belongs to uid 65534, not to you (uid 0); another user may have made \
                     it to catch your daemon's socket or token. Remove it (`sudo rm -r {shown}`), \
                     or set XDG_RUNTIME_DIR or PI_HOME to a directory of your own",
                    shown = runtime.display()
                )
            );
            // A link of ours to their directory.
            assert!(matches!(
                check_owned_dir(&link),
                Err(ForeignDir::NotYours { owner: 65534, .. })
            ));
            // Their link to our directory (they would have us write into our own project).
            std::os::unix::fs::chown(&runtime, Some(0), None).unwrap();
            std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
            let error = check_owned_dir(&link).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "{shown} is a symbolic link that belongs to uid 65534, not to you (uid 0); \
                     another user may have made it to redirect your daemon's socket and token. \
                     Remove it (`sudo rm {shown}`), or set XDG_RUNTIME_DIR or PI_HOME to a \
                     directory of your own",
                    shown = link.display()
                )
            );
        }
    }

    #[test]
    fn a_private_group_may_write_and_a_shared_one_may_not() {
        let groups = Groups {
            groups: vec![
                (1000, Vec::new()),
                (1001, vec!["alice".to_owned()]),
                (100, vec!["alice".to_owned(), "bob".to_owned()]),
                (1002, Vec::new()),
            ],
            users: vec![
                ("alice".to_owned(), 1000, 1000),
                ("bob".to_owned(), 1001, 1002),
                ("carol".to_owned(), 1003, 1002),
            ],
        };
        assert!(groups.is_private(1000, 1000));
        assert!(groups.is_private(1001, 1000));
        assert!(!groups.is_private(100, 1000));
        // Bob's primary group is also Carol's.
        assert!(!groups.is_private(1002, 1001));
        // An unknown group is not known to be private.
        assert!(!groups.is_private(4242, 1000));
        assert!(groups.is_private(0, 0));
        assert_eq!(
            Whom::Group.to_string(),
            "its group, which has other members"
        );
    }
}
