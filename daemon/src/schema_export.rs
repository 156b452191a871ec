//! `pid schema --out DIR`: writes the protocol's JSON Schema files, replacing stale ones.

use std::path::Path;

use anyhow::Context as _;

/// Writes every schema file under `out`, and removes `.json` files there that the protocol no
/// longer defines.
pub fn write(out: &Path) -> anyhow::Result<()> {
    let files = pi_protocol::schema::generate();
    let expected: std::collections::BTreeSet<std::path::PathBuf> =
        files.iter().map(|file| out.join(&file.path)).collect();
    if out.exists() {
        remove_stale(out, &expected)?;
    }
    for file in &files {
        let path = out.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, &file.contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn remove_stale(
    dir: &Path,
    expected: &std::collections::BTreeSet<std::path::PathBuf>,
) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            remove_stale(&path, expected)?;
        } else if path.extension().is_some_and(|ext| ext == "json") && !expected.contains(&path) {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}
