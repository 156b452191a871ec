//! Where `pid`'s extension host lives: its script and its pinned package's manifest and lock
//! file are built into the binary and written to `<data dir>/extension-host/` at start
//! (rewritten only when they changed); `npm ci` installs the package there on the host's
//! first start (decision 0017).
//!
//! Overrides: `PI_NODE` (the `node` program), `PI_EXTENSION_HOST_MODULES` (a `node_modules`
//! directory that already holds the pinned package: the tests' peers, a packaged install).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

const SCRIPT: &str = include_str!("../../extensions/host/host.mjs");
const MANIFEST: &str = include_str!("../../extensions/host/package.json");
const LOCK: &str = include_str!("../../extensions/host/package-lock.json");

/// The host's configuration for the daemon at `paths`, its files written.
pub fn config(paths: &pi_paths::Paths) -> anyhow::Result<crate::extensions::HostConfig> {
    let dir = paths.data_dir.join("extension-host");
    pi_tools::private_dir::ensure(&dir)?;
    for (name, text) in [
        ("host.mjs", SCRIPT),
        ("package.json", MANIFEST),
        ("package-lock.json", LOCK),
    ] {
        write_if_changed(&dir.join(name), text)?;
    }
    Ok(crate::extensions::HostConfig {
        node: std::env::var_os("PI_NODE")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("node")),
        script: dir.join("host.mjs"),
        modules: std::env::var_os("PI_EXTENSION_HOST_MODULES").map(PathBuf::from),
        log_path: paths.state_dir.join("extension-host.log"),
        agent_dir: paths.pi_agent_dir.clone(),
    })
}

fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
