//! Paths with `.` and `..` resolved by their text alone, as Node's `path.resolve` does: no
//! file system access, so a path names the same place whether or not it exists, and symlinks
//! are not followed.

use std::path::{Component, Path, PathBuf};

/// `path` without `.`, each `..` applied to the component before it; a `..` with nothing
/// before it (at the root, or at the start of a relative path) is dropped.
pub fn clean(path: &Path) -> PathBuf {
    let mut cleaned = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => cleaned.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                cleaned.pop();
            }
            Component::Normal(part) => cleaned.push(part),
        }
    }
    cleaned
}

/// [`clean`] of `path` (`..` at the root stays at the root); `None` unless it is absolute.
pub fn normalize_absolute(path: &Path) -> Option<PathBuf> {
    path.is_absolute().then(|| clean(path))
}

/// `path` without `.`, each `..` applied to the component before it; a `..` with nothing to
/// apply to is kept (`a/../../b` is `../b`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normalized.pop() {
                    normalized.push(component);
                }
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                normalized.push(component);
            }
        }
    }
    normalized
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{clean, normalize, normalize_absolute};

    #[test]
    fn dots_resolve_by_text() {
        let absolute =
            |input: &str| normalize_absolute(Path::new(input)).map(PathBuf::into_os_string);
        assert_eq!(absolute("/a/b/../c"), Some("/a/c".into()));
        assert_eq!(absolute("/a/./b/"), Some("/a/b".into()));
        assert_eq!(absolute("/../../etc"), Some("/etc".into()));
        assert_eq!(absolute("/"), Some("/".into()));
        assert_eq!(absolute("a/b"), None);
        assert_eq!(absolute("../a"), None);
        assert_eq!(absolute(""), None);
        assert_eq!(clean(Path::new("a/../../b")), Path::new("b"));
        assert_eq!(normalize(Path::new("a/../../b")), Path::new("../b"));
        assert_eq!(normalize(Path::new("/x/./y/../z")), Path::new("/x/z"));
    }
}
