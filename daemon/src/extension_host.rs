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

/// The host's configuration for the daemon at `paths` (each hook given `hook_timeout`), its
/// files written.
pub fn config(
    paths: &pi_paths::Paths,
    hook_timeout: std::time::Duration,
) -> anyhow::Result<crate::extensions::HostConfig> {
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
        // Set but empty: as unset (pi's package installed on the host's first start).
        modules: std::env::var_os("PI_EXTENSION_HOST_MODULES")
            .filter(|modules| !modules.is_empty())
            .map(PathBuf::from),
        log_path: paths.state_dir.join("extension-host.log"),
        agent_dir: paths.pi_agent_dir.clone(),
        hook_timeout,
    })
}

/// pi's package as the host runs it (its `README.md`, `docs/`, `examples/`): under
/// `PI_EXTENSION_HOST_MODULES`, or where the host's first start installs it.
pub fn pi_package_dir(paths: &pi_paths::Paths) -> PathBuf {
    let modules = std::env::var_os("PI_EXTENSION_HOST_MODULES")
        .filter(|modules| !modules.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| paths.data_dir.join("extension-host").join("node_modules"));
    modules.join("@mariozechner").join("pi-coding-agent")
}

fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The user's answers about project extensions (decision 0017): in memory, and in the
/// store once attached.
#[derive(Debug, Default)]
pub struct ExtensionTrust {
    store: std::sync::OnceLock<crate::store::Store>,
    // A sync mutex, never held across an await.
    answers: std::sync::Mutex<std::collections::HashMap<String, bool>>,
}

impl ExtensionTrust {
    /// Keeps answers in `store` and loads the ones there.
    pub async fn attach_store(
        &self,
        store: crate::store::Store,
    ) -> Result<(), crate::store::StoreError> {
        let rows = store.extension_trust().await?;
        self.answers()
            .extend(rows.into_iter().map(|row| (row.path, row.approved)));
        let _ = self.store.set(store);
        Ok(())
    }

    fn answers(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, bool>> {
        self.answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records (`Some`) or forgets (`None`) the answer about each of `paths`.
    pub async fn answer(
        &self,
        paths: &[String],
        approved: Option<bool>,
    ) -> Result<(), crate::store::StoreError> {
        {
            let mut answers = self.answers();
            for path in paths {
                match approved {
                    Some(approved) => answers.insert(path.clone(), approved),
                    None => answers.remove(path),
                };
            }
        }
        let Some(store) = self.store.get() else {
            return Ok(());
        };
        match approved {
            Some(approved) => store.record_extension_trust(&rows(paths, approved)).await,
            None => store.forget_extension_trust(paths).await,
        }
    }
}

impl crate::extensions::Approvals for ExtensionTrust {
    fn approval(&self, path: &str) -> Option<bool> {
        self.answers().get(path).copied()
    }

    fn record(
        &self,
        paths: Vec<String>,
        approved: bool,
    ) -> futures_util::future::BoxFuture<'static, ()> {
        let store = self.store.get().cloned();
        {
            let mut answers = self.answers();
            for path in &paths {
                answers.insert(path.clone(), approved);
            }
        }
        Box::pin(async move {
            let Some(store) = store else {
                return;
            };
            if let Err(error) = store.record_extension_trust(&rows(&paths, approved)).await {
                tracing::warn!(%error, "cannot store the answer about project extensions; it holds until the daemon stops");
            }
        })
    }
}

fn rows(paths: &[String], approved: bool) -> Vec<crate::store::ExtensionTrustRow> {
    let decided_at = pi_util::time::now_millis();
    paths
        .iter()
        .map(|path| crate::store::ExtensionTrustRow {
            path: path.clone(),
            approved,
            decided_at,
        })
        .collect()
}
