//! Path-like request parameters: they must be absolute (the daemon's own working directory
//! means nothing to a client), and `.` and `..` are resolved lexically, as pi's
//! `path.resolve` does, so `/a/b/../c` names `/a/c` whether or not `/a/b` exists and every
//! session of one directory records the same `cwd`.

use std::path::{Path, PathBuf};

use pi_paths::lexical::normalize_absolute;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_dots_and_refuses_relative_paths() {
        assert_eq!(
            absolute_path("cwd", "/a/b/../c").unwrap(),
            PathBuf::from("/a/c")
        );
        let error = absolute_path("cwd", "../x").unwrap_err();
        assert_eq!(error.kind(), Some(ErrorKind::InvalidParams));
        assert_eq!(error.data.unwrap().field.as_deref(), Some("cwd"));
        assert!(error.message.contains("must be an absolute path"));
    }
}
