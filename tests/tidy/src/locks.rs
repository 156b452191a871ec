//! The poisoned-lock policy (`docs/architecture.md`): a standard `Mutex` or `RwLock` whose
//! holder panicked is taken over — `.lock().unwrap_or_else(PoisonError::into_inner)` — never
//! unwrapped (a panic that spreads to every later user) nor skipped (`.ok()`, `if let Ok(…) =
//! m.lock()`: work silently not done). A site is a `.lock()`, `.read()` or `.write()` call
//! without arguments, in code that is not `#[cfg(test)]`, whose result is unwrapped, expected,
//! turned into an `Option`, tested, propagated with `?`, or matched with `let Ok(`.
//! (`.lock().await` and the like, tokio's locks, cannot be poisoned and are not sites.)

use std::fmt;
use std::path::Path;

use crate::TidyError;
use crate::modules::crate_files;

/// A lock result handled against the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSite {
    /// The file, relative to the workspace root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is done with the result (`.unwrap()`, `let Ok(`, ...).
    pub handling: String,
}

impl fmt::Display for LockSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: a lock's result is handled with `{}`; take a poisoned lock over with \
             `.unwrap_or_else(PoisonError::into_inner)`",
            self.file, self.line, self.handling
        )
    }
}

const CALLS: [&str; 3] = [".lock()", ".read()", ".write()"];
const AFTER: [&str; 7] = [
    ".unwrap()",
    ".expect(",
    ".ok()",
    ".is_ok()",
    ".is_err()",
    ".unwrap_or_default()",
    "?",
];

/// Every site of the crate whose root is `root_file` (paths shown relative to `display_root`).
pub fn lock_sites(root_file: &Path, display_root: &Path) -> Result<Vec<LockSite>, TidyError> {
    let mut sites = Vec::new();
    for file in crate_files(root_file)? {
        let shown = file
            .path
            .strip_prefix(display_root)
            .unwrap_or(&file.path)
            .display()
            .to_string();
        for (at, handling) in sites_in(&file.text) {
            let line = file.text[..at].matches('\n').count() + 1;
            sites.push(LockSite {
                file: shown.clone(),
                line,
                handling,
            });
        }
    }
    sites.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(sites)
}

/// Offsets and handlings of the sites in blanked `text`.
fn sites_in(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for call in CALLS {
        let mut from = 0;
        while let Some(offset) = text[from..].find(call) {
            let at = from + offset;
            from = at + call.len();
            let rest = text[from..].trim_start();
            if let Some(after) = AFTER.iter().find(|after| rest.starts_with(**after)) {
                found.push((at, after.trim_end_matches('(').to_owned()));
                continue;
            }
            if (rest.starts_with('{') || rest.starts_with("else")) && binds_ok(&text[..at]) {
                found.push((at, "let Ok(".to_owned()));
            }
        }
    }
    found
}

/// Whether the statement that ends at the end of `before` starts `let Ok(` (`if let`,
/// `while let`, `let … else`).
fn binds_ok(before: &str) -> bool {
    let start = before
        .rfind([';', '{', '}'])
        .map_or(0, |boundary| boundary + 1);
    let statement: String = before[start..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    statement.contains("let Ok(")
}
