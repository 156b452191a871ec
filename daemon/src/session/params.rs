//! Path-like request parameters: they must be absolute (the daemon's own working directory
//! means nothing to a client), and `.` and `..` are resolved lexically, as pi's
//! `path.resolve` does, so `/a/b/../c` names `/a/c` whether or not `/a/b` exists and every
//! session of one directory records the same `cwd`.

use std::path::{Component, Path, PathBuf};

use pi_protocol::{ErrorKind, ErrorObject};

/// `text` as an absolute path with `.` and `..` resolved, or an `invalid_params` error naming
/// `field`.
pub fn absolute_path(field: &str, text: &str) -> Result<PathBuf, ErrorObject> {
    normalize_absolute(Path::new(text)).ok_or_else(|| {
        ErrorObject::new(
            ErrorKind::InvalidParams,
            format!(
                "{field} must be an absolute path, and {text:?} is not; the daemon's working \
                 directory is not the client's, so send the full path"
            ),
        )
        .with_field(field)
    })
}

/// `path` with `.` and `..` resolved lexically (`..` at the root stays at the root); `None`
/// unless it is absolute.
pub fn normalize_absolute(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => normalized.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                normalized.pop();
            }
            Component::Normal(part) => normalized.push(part),
        }
    }
    Some(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_dots_and_refuses_relative_paths() {
        let check = |input: &str| normalize_absolute(Path::new(input)).map(PathBuf::into_os_string);
        assert_eq!(check("/a/b/../c"), Some("/a/c".into()));
        assert_eq!(check("/a/./b/"), Some("/a/b".into()));
        assert_eq!(check("/../../etc"), Some("/etc".into()));
        assert_eq!(check("/"), Some("/".into()));
        assert_eq!(check("a/b"), None);
        assert_eq!(check("../a"), None);
        assert_eq!(check(""), None);
        let error = absolute_path("cwd", "../x").unwrap_err();
        assert_eq!(error.kind(), Some(ErrorKind::InvalidParams));
        assert_eq!(error.data.unwrap().field.as_deref(), Some("cwd"));
        assert!(error.message.contains("must be an absolute path"));
    }
}
