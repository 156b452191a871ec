//! The poisoned-lock policy holds in every crate of the workspace, and the check finds what
//! it exists to catch.

use pi_tidy::{Workspace, lock_sites};

use super::workspace_root;

#[test]
fn every_lock_of_the_workspace_is_taken_over_when_poisoned() {
    let root = workspace_root();
    let workspace = Workspace::load(&root).unwrap();
    let mut sites = Vec::new();
    for member in &workspace.members {
        for target in &member.targets {
            sites.extend(lock_sites(&target.root, &root).unwrap());
        }
    }
    sites.dedup();
    let report: Vec<String> = sites.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "\n{}", report.join("\n"));
}

#[test]
fn unwrapped_skipped_and_matched_lock_results_are_found_and_the_rest_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let source = r#"use std::sync::{Mutex, PoisonError};
pub fn f(m: &Mutex<u8>, r: &std::sync::RwLock<u8>) -> Option<u8> {
    let a = m.lock().unwrap();
    let b = m
        .lock()
        .expect("held");
    if let Ok(mut c) = m.lock() {
        *c += 1;
    }
    let Ok(d) = r.read() else { return None };
    let e = r.write().ok()?;
    let fine = m.lock().unwrap_or_else(PoisonError::into_inner);
    // m.lock().unwrap() in a comment, and in a string:
    let _ = "m.lock().unwrap()";
    Some(*a + *b + *d + *e + *fine)
}
async fn g(m: &tokio::sync::Mutex<u8>) -> u8 {
    *m.lock().await
}
#[cfg(test)]
mod tests {
    fn t(m: &std::sync::Mutex<u8>) {
        let _ = m.lock().unwrap();
    }
}
"#;
    let root = dir.path().join("lib.rs");
    std::fs::write(&root, source).unwrap();
    let sites = lock_sites(&root, dir.path()).unwrap();
    let found: Vec<(usize, &str)> = sites
        .iter()
        .map(|site| (site.line, site.handling.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (3, ".unwrap()"),
            (5, ".expect"),
            (7, "let Ok("),
            (10, "let Ok("),
            (11, ".ok()"),
        ]
    );
    assert_eq!(
        sites[0].to_string(),
        "lib.rs:3: a lock's result is handled with `.unwrap()`; take a poisoned lock over with \
         `.unwrap_or_else(PoisonError::into_inner)`"
    );
}
