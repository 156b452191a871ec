//! pi's changelog in the TUI: `CHANGELOG.md` (built in) split into releases — what is new
//! since the version last seen, shown once at the start of a fresh session (one line with
//! `collapseChangelog`), and all of it for `/changelog`.

/// The changelog, as released with this build.
pub const CHANGELOG: &str = include_str!("../../CHANGELOG.md");

/// The label of the changelog's transcript items.
pub const TITLE: &str = "What's New";

/// This build's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One release: its version and its section of the changelog (from its `## ` heading).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    /// `major.minor.patch`.
    pub version: (u64, u64, u64),
    /// The section, heading included.
    pub text: String,
}

/// A `major.minor.patch` version (a leading `v` and brackets allowed).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let text = text.trim().trim_start_matches('[').trim_start_matches('v');
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let mut parts = text[..end].split('.').map(|part| part.parse::<u64>().ok());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) => Some((major, minor, patch)),
        _ => None,
    }
}

/// The releases of `changelog`, in its order (newest first).
pub fn releases(changelog: &str) -> Vec<Release> {
    let mut releases: Vec<Release> = Vec::new();
    let mut current: Option<Release> = None;
    for line in changelog.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            releases.extend(current.take());
            current = parse_version(heading).map(|version| Release {
                version,
                text: String::new(),
            });
        }
        if let Some(release) = &mut current {
            release.text.push_str(line);
            release.text.push('\n');
        }
    }
    releases.extend(current);
    for release in &mut releases {
        let trimmed = release.text.trim_end().len();
        release.text.truncate(trimmed);
    }
    releases
}

/// What the start of a fresh session says, given the version last seen (`None`: a fresh
/// install, which says nothing): the releases since, or with `collapse` pi's one line.
pub fn whats_new(changelog: &str, last_seen: Option<&str>, collapse: bool) -> Option<String> {
    let last = parse_version(last_seen?)?;
    let newer: Vec<Release> = releases(changelog)
        .into_iter()
        .filter(|release| release.version > last)
        .collect();
    let latest = newer.first()?;
    if collapse {
        let (major, minor, patch) = latest.version;
        return Some(format!(
            "Updated to v{major}.{minor}.{patch}. Use /changelog to view full changelog."
        ));
    }
    Some(
        newer
            .iter()
            .map(|release| release.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
    )
}

/// `/changelog`: every release, oldest first (the newest next to the editor), as pi shows it.
pub fn full(changelog: &str) -> String {
    let releases = releases(changelog);
    if releases.is_empty() {
        return "No changelog entries found.".to_owned();
    }
    releases
        .iter()
        .rev()
        .map(|release| release.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# Changelog\n\nIntro.\n\n## [0.3.0] - 2027-01-02\n\n- Three.\n\n## [0.2.1]\n\n- Two.\n\n## 0.2.0\n\n- Zero.\n";

    #[test]
    fn releases_newer_than_the_last_seen_are_new() {
        assert_eq!(
            whats_new(LOG, Some("0.2.0"), false).as_deref(),
            Some("## [0.3.0] - 2027-01-02\n\n- Three.\n\n## [0.2.1]\n\n- Two.")
        );
        assert_eq!(
            whats_new(LOG, Some("0.2.0"), true).as_deref(),
            Some("Updated to v0.3.0. Use /changelog to view full changelog.")
        );
        assert_eq!(whats_new(LOG, Some("0.3.0"), false), None);
        assert_eq!(whats_new(LOG, None, false), None, "a fresh install");
        assert_eq!(whats_new(LOG, Some("garbage"), false), None);
    }

    #[test]
    fn the_full_changelog_ends_with_the_newest() {
        let full = full(LOG);
        assert!(full.starts_with("## 0.2.0"), "{full}");
        assert!(full.ends_with("- Three."), "{full}");
        assert_eq!(super::full("nothing"), "No changelog entries found.");
    }

    #[test]
    fn the_built_in_changelog_has_this_version() {
        let version = parse_version(VERSION).unwrap();
        assert!(
            releases(CHANGELOG)
                .iter()
                .any(|release| release.version == version),
            "CHANGELOG.md has no section for {VERSION}"
        );
    }
}
