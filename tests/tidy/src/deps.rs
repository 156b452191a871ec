//! The unused-dependency check.
//!
//! A dependency is used when its name starts a path (`name::x`, `::name::x`, `#[name::x]`) or
//! is imported (`use name`, `extern crate name`) in code of its kind:
//! - normal: the non-test code of the member's library and binaries, and `build.rs`;
//! - dev: that, plus test code and everything under `tests/`, `benches/` and `examples/`;
//! - build: `build.rs`.
//!
//! A dependency declared only for a feature it turns on is listed with its reason under
//! `[package.metadata.tidy] feature-only`; a listed name that is not declared is reported too.

use std::fmt;
use std::path::Path;

use crate::TidyError;
use crate::lexer::{blank, is_ident_byte, skip_whitespace};
use crate::manifest::{DependencyKind, Member, Workspace};
use crate::modules::crate_files;

/// A declared dependency the member's code never names.
#[derive(Debug, PartialEq, Eq)]
pub struct UnusedDependency {
    pub package: String,
    pub key: String,
    pub kind: DependencyKind,
}

impl fmt::Display for UnusedDependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let section = match self.kind {
            DependencyKind::Normal => "dependencies",
            DependencyKind::Dev => "dev-dependencies",
            DependencyKind::Build => "build-dependencies",
        };
        write!(
            f,
            "{}: [{section}] {} is never used; remove it, or list it under \
             [package.metadata.tidy] feature-only with the reason",
            self.package, self.key
        )
    }
}

/// Every unused dependency of every member.
pub fn unused_dependencies(workspace: &Workspace) -> Result<Vec<UnusedDependency>, TidyError> {
    let mut unused = Vec::new();
    for member in &workspace.members {
        unused.extend(member_unused(member)?);
    }
    Ok(unused)
}

fn member_unused(member: &Member) -> Result<Vec<UnusedDependency>, TidyError> {
    // Non-test code of the targets.
    let mut normal = String::new();
    let mut target_files = Vec::new();
    for target in &member.targets {
        for file in crate_files(&target.root)? {
            normal.push_str(&file.text);
            normal.push('\n');
            target_files.push(file.path);
        }
    }
    let build = match member.dir.join("build.rs") {
        path if path.is_file() => blank(&read(&path)?),
        _ => String::new(),
    };
    // Test code too: every file of the targets unblanked of `#[cfg(test)]`, and the test trees.
    let mut dev = String::new();
    for path in &target_files {
        dev.push_str(&blank(&read(path)?));
        dev.push('\n');
    }
    for directory in ["src", "tests", "benches", "examples"] {
        for path in rust_files(&member.dir.join(directory))? {
            if !target_files.contains(&path) {
                dev.push_str(&blank(&read(&path)?));
                dev.push('\n');
            }
        }
    }

    let mut unused = Vec::new();
    for dependency in &member.dependencies {
        if member.feature_only.contains_key(&dependency.key) {
            continue;
        }
        let used = match dependency.kind {
            DependencyKind::Normal => {
                names_crate(&normal, &dependency.lib_name)
                    || names_crate(&build, &dependency.lib_name)
            }
            DependencyKind::Dev => {
                names_crate(&dev, &dependency.lib_name)
                    || names_crate(&normal, &dependency.lib_name)
            }
            DependencyKind::Build => names_crate(&build, &dependency.lib_name),
        };
        if !used {
            unused.push(UnusedDependency {
                package: member.name.clone(),
                key: dependency.key.clone(),
                kind: dependency.kind,
            });
        }
    }
    for key in member.feature_only.keys() {
        if !member.dependencies.iter().any(|d| &d.key == key) {
            unused.push(UnusedDependency {
                package: member.name.clone(),
                key: key.clone(),
                kind: DependencyKind::Normal,
            });
        }
    }
    Ok(unused)
}

/// Whether blanked `text` names the crate `name` as a path root or an import.
fn names_crate(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = text[from..].find(name) {
        let at = from + offset;
        let end = at + name.len();
        from = end;
        let whole_word = (at == 0 || !is_ident_byte(bytes[at - 1]))
            && bytes.get(end).is_none_or(|&b| !is_ident_byte(b));
        if !whole_word {
            continue;
        }
        let after = skip_whitespace(bytes, end);
        let before: Vec<u8> = bytes[..at]
            .iter()
            .rev()
            .copied()
            .skip_while(u8::is_ascii_whitespace)
            .take(12)
            .collect();
        let after_separator = before.starts_with(b"::");
        let starts_path = bytes[after..].starts_with(b"::")
            && (!after_separator || before.get(2).is_none_or(|&b| !is_ident_byte(b)));
        // `use name` and `extern crate name`, read backwards.
        let imported = (before.starts_with(b"esu")
            && before.get(3).is_none_or(|&b| !is_ident_byte(b)))
            || before.starts_with(b"etarc");
        if starts_path || imported {
            return true;
        }
    }
    false
}

fn read(path: &Path) -> Result<String, TidyError> {
    std::fs::read_to_string(path).map_err(|source| TidyError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Every `.rs` file under `directory` (none when it does not exist), sorted.
fn rust_files(directory: &Path) -> Result<Vec<std::path::PathBuf>, TidyError> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let entries = match std::fs::read_dir(&directory) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(TidyError::Read {
                    path: directory,
                    source,
                });
            }
        };
        for entry in entries {
            let path = entry
                .map_err(|source| TidyError::Read {
                    path: directory.clone(),
                    source,
                })?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}
