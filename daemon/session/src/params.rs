//! Path-like request parameters: they must be absolute (the daemon's own working directory
//! means nothing to a client), and `.` and `..` are resolved lexically, as pi's
//! `path.resolve` does, so `/a/b/../c` names `/a/c` whether or not `/a/b` exists and every
//! session of one directory records the same `cwd`.

use std::path::{Path, PathBuf};

use pi_paths::lexical::normalize_absolute;

use crate::SessionError;

/// `text` as an absolute path with `.` and `..` resolved, or an `invalid_params` error naming
/// `field`.
pub fn absolute_path(field: &'static str, text: &str) -> Result<PathBuf, SessionError> {
    normalize_absolute(Path::new(text)).ok_or_else(|| {
        SessionError::invalid(
            field,
            format!(
                "{field} must be an absolute path, and {text:?} is not; the daemon's working \
                 directory is not the client's, so send the full path"
            ),
        )
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
        let SessionError::InvalidParams { field, message } = error else {
            panic!("not invalid params: {error:?}");
        };
        assert_eq!(field, Some("cwd"));
        assert!(message.contains("must be an absolute path"));
    }
}
