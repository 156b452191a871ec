//! How tools turn the model's path argument into an absolute path (pi's `resolveToCwd`): a
//! leading `@` is stripped, Unicode spaces become ASCII spaces, `~` is the session's home, and
//! relative paths are joined to the session's working directory and normalized lexically.
//!
//! Also `read`'s fallbacks for macOS screenshot names (narrow no-break space before `AM.`/`PM.`,
//! NFD, curly apostrophes), tried only when the plain path does not exist.

use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Resolves `input` against `cwd`, with `home` for `~`.
pub fn resolve(input: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let stripped = input.strip_prefix('@').unwrap_or(input);
    let text: String = stripped
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    let expanded = match (text.as_str(), home) {
        ("~", Some(home)) => home.to_path_buf(),
        (rest, Some(home)) if rest.starts_with("~/") => home.join(&rest[2..]),
        (other, _) => PathBuf::from(other),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    pi_paths::lexical::clean(&absolute)
}

/// Resolves like [`resolve`] and, if nothing exists there, tries the macOS spellings of the
/// name; returns the first that exists, or the plain resolution.
pub fn resolve_for_read(input: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let plain = resolve(input, cwd, home);
    if plain.exists() {
        return plain;
    }
    let text = plain.to_string_lossy().into_owned();
    let narrow = text
        .replace(" AM.", "\u{202F}AM.")
        .replace(" PM.", "\u{202F}PM.");
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly: String = curly.nfd().collect();
    [narrow, nfd, curly, nfd_curly]
        .into_iter()
        .map(PathBuf::from)
        .find(|candidate| candidate != &plain && candidate.exists())
        .unwrap_or(plain)
}

/// `path` relative to `base` with `/` separators, or `path` itself when it is not below `base`.
pub fn relative_display(path: &Path, base: &Path) -> String {
    let Ok(relative) = path.strip_prefix(base) else {
        return path.to_string_lossy().into_owned();
    };
    let parts: Vec<String> = relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// The spaces pi normalizes in paths: U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &str) {
        let resolved = resolve(
            input,
            Path::new("/work/project"),
            Some(Path::new("/home/u")),
        );
        assert_eq!(resolved, PathBuf::from(expect), "{input}");
    }

    #[test]
    fn paths_resolve_like_pi() {
        check("src/main.rs", "/work/project/src/main.rs");
        check("@src/main.rs", "/work/project/src/main.rs");
        check("./a/../b", "/work/project/b");
        check("/etc/hosts", "/etc/hosts");
        check("~", "/home/u");
        check("~/notes.md", "/home/u/notes.md");
        check("~other/x", "/work/project/~other/x");
        check("my\u{00A0}file.txt", "/work/project/my file.txt");
        check("../../..", "/");
    }

    #[test]
    fn relative_display_uses_slashes() {
        let base = Path::new("/a/b");
        assert_eq!(relative_display(Path::new("/a/b/c/d.rs"), base), "c/d.rs");
        assert_eq!(relative_display(Path::new("/x/y"), base), "/x/y");
    }
}
