//! The workspace as its manifests describe it: members, their targets' root files and their
//! declared dependencies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::TidyError;

/// The members of one cargo workspace.
#[derive(Debug)]
pub struct Workspace {
    /// The directory of the root `Cargo.toml`.
    pub root: PathBuf,
    pub members: Vec<Member>,
}

/// One package of the workspace.
#[derive(Debug)]
pub struct Member {
    /// The package name (`pi-daemon`).
    pub name: String,
    /// The directory of its `Cargo.toml`.
    pub dir: PathBuf,
    /// Its library and binaries; tests, benches and examples are not targets here.
    pub targets: Vec<Target>,
    pub dependencies: Vec<Dependency>,
    /// `[package.metadata.tidy] feature-only`: dependencies declared only to turn on a feature
    /// of a crate used through another one, each with the reason.
    pub feature_only: BTreeMap<String, String>,
}

/// A library or a binary: one crate root.
#[derive(Debug)]
pub struct Target {
    /// The package name for the library, the binary's name for a binary (`pid`).
    pub name: String,
    /// The crate root file (`src/lib.rs`, `src/main.rs`, or the manifest's `path`).
    pub root: PathBuf,
}

/// One declared dependency.
#[derive(Debug)]
pub struct Dependency {
    /// The key in the manifest (`serde_json`, or the new name of a renamed package).
    pub key: String,
    /// The name code uses for it: the key with `-` as `_`.
    pub lib_name: String,
    pub kind: DependencyKind,
}

/// Which table a dependency is declared in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DependencyKind {
    /// `[dependencies]` or `[target.*.dependencies]`.
    Normal,
    /// `[dev-dependencies]` or `[target.*.dev-dependencies]`.
    Dev,
    /// `[build-dependencies]` or `[target.*.build-dependencies]`.
    Build,
}

impl Workspace {
    /// Reads the root manifest at `root` and every member's manifest.
    pub fn load(root: &Path) -> Result<Workspace, TidyError> {
        let manifest_path = root.join("Cargo.toml");
        let manifest = read_toml(&manifest_path)?;
        let members = manifest
            .get("workspace")
            .and_then(|workspace| workspace.get("members"))
            .and_then(Value::as_array)
            .ok_or_else(|| TidyError::Shape {
                path: manifest_path.clone(),
                message: "no [workspace] members list".into(),
            })?;
        let mut loaded = Vec::new();
        for member in members {
            let Some(relative) = member.as_str() else {
                return Err(TidyError::Shape {
                    path: manifest_path,
                    message: format!("a member is not a string: {member:?}"),
                });
            };
            if relative.contains(['*', '?', '[']) {
                return Err(TidyError::Shape {
                    path: manifest_path,
                    message: format!("member globs are not supported: {relative}"),
                });
            }
            loaded.push(Member::load(&root.join(relative))?);
        }
        Ok(Workspace {
            root: root.to_path_buf(),
            members: loaded,
        })
    }
}

impl Member {
    fn load(dir: &Path) -> Result<Member, TidyError> {
        let manifest_path = dir.join("Cargo.toml");
        let manifest = read_toml(&manifest_path)?;
        let shape = |message: &str| TidyError::Shape {
            path: manifest_path.clone(),
            message: message.into(),
        };
        let package = manifest
            .get("package")
            .and_then(Value::as_table)
            .ok_or_else(|| shape("no [package]"))?;
        let name = package
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| shape("no package name"))?
            .to_string();

        let mut targets = Vec::new();
        let lib_path = manifest
            .get("lib")
            .and_then(|lib| lib.get("path"))
            .and_then(Value::as_str)
            .map(|path| dir.join(path))
            .or_else(|| Some(dir.join("src/lib.rs")).filter(|path| path.is_file()));
        if let Some(root) = lib_path {
            targets.push(Target {
                name: name.clone(),
                root,
            });
        }
        let bins = manifest.get("bin").and_then(Value::as_array);
        for bin in bins.into_iter().flatten() {
            let bin_name = bin
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| shape("a [[bin]] without a name"))?;
            let root = match bin.get("path").and_then(Value::as_str) {
                Some(path) => dir.join(path),
                None if bin_name == name => dir.join("src/main.rs"),
                None => dir.join("src/bin").join(format!("{bin_name}.rs")),
            };
            targets.push(Target {
                name: bin_name.to_string(),
                root,
            });
        }
        let main = dir.join("src/main.rs");
        if main.is_file() && !targets.iter().any(|target| target.root == main) {
            targets.push(Target {
                name: name.clone(),
                root: main,
            });
        }

        let mut dependencies = Vec::new();
        collect_dependencies(&manifest, &mut dependencies);
        let targets_table = manifest.get("target").and_then(Value::as_table);
        for (_, platform) in targets_table.into_iter().flatten() {
            if let Some(platform) = platform.as_table() {
                collect_dependencies(platform, &mut dependencies);
            }
        }

        let feature_only = package
            .get("metadata")
            .and_then(|metadata| metadata.get("tidy"))
            .and_then(|tidy| tidy.get("feature-only"))
            .and_then(Value::as_table)
            .map(|table| {
                table
                    .iter()
                    .map(|(key, reason)| (key.clone(), reason.as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default();

        Ok(Member {
            name,
            dir: dir.to_path_buf(),
            targets,
            dependencies,
            feature_only,
        })
    }
}

fn collect_dependencies(table: &Table, into: &mut Vec<Dependency>) {
    for (section, kind) in [
        ("dependencies", DependencyKind::Normal),
        ("dev-dependencies", DependencyKind::Dev),
        ("build-dependencies", DependencyKind::Build),
    ] {
        let declared = table.get(section).and_then(Value::as_table);
        for (key, _) in declared.into_iter().flatten() {
            into.push(Dependency {
                key: key.clone(),
                lib_name: key.replace('-', "_"),
                kind,
            });
        }
    }
}

fn read_toml(path: &Path) -> Result<Table, TidyError> {
    let text = std::fs::read_to_string(path).map_err(|source| TidyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.parse::<Table>().map_err(|source| TidyError::Toml {
        path: path.to_path_buf(),
        source,
    })
}
