//! pi packages, managed by pi's own package manager in the host (`DefaultPackageManager`):
//! what `pi install`, `pi remove`, `pi update` and `pi list` do, with their steps reported as
//! they happen. Installing runs the package's own scripts (npm), as in pi.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pi_supervisor::Child as _;
use serde_json::{Value, json};

use crate::{ExtensionError, ExtensionHost};

/// How long one package operation may take (an npm install or a clone of a large repo).
const PACKAGE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Where the steps of one operation go.
pub type Progress = Arc<dyn Fn(Value) + Send + Sync>;

/// What pi's package manager does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackageOp {
    /// `pi install SOURCE [-l]`.
    Install,
    /// `pi remove SOURCE [-l]`.
    Remove,
    /// `pi update [SOURCE]` (packages only).
    Update,
    /// `pi list`.
    List,
}

impl PackageOp {
    fn as_str(self) -> &'static str {
        match self {
            PackageOp::Install => "install",
            PackageOp::Remove => "remove",
            PackageOp::Update => "update",
            PackageOp::List => "list",
        }
    }
}

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

impl ExtensionHost {
    /// Runs `op` of pi's package manager in `cwd` (`source`, `local` as `pi` takes them),
    /// each step given to `progress`; answers with the host's result (`installedPath`,
    /// `removed`, `packages`). Starts the host if needed.
    pub async fn packages(
        self: &Arc<Self>,
        op: PackageOp,
        cwd: &std::path::Path,
        source: Option<&str>,
        local: bool,
        progress: Progress,
    ) -> Result<Value, ExtensionError> {
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        let user = format!("packages {token}");
        self.progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(token, progress);
        // Undone however this ends, the caller gone included.
        let _done = Done {
            host: self,
            user: &user,
            token: Some(token),
        };
        async {
            let running = self.connection(&user).await?;
            running
                .peer
                .request(
                    "packages",
                    json!({"op": op.as_str(), "cwd": cwd.display().to_string(),
                        "agentDir": self.config.agent_dir.display().to_string(),
                        "source": source, "local": local, "token": token}),
                    Some(PACKAGE_TIMEOUT),
                )
                .await
                .map_err(ExtensionError::from)
        }
        .await
    }

    /// A step the host reported for operation `token`.
    pub(crate) fn package_progress(&self, params: &Value) {
        let Some(token) = params["token"].as_u64() else {
            return;
        };
        let progress = self
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&token)
            .cloned();
        if let Some(progress) = progress {
            progress(params.clone());
        }
    }
}

/// An operation of the host's package manager or discovery for a caller (not a session):
/// when it ends or its caller goes away, the host no longer counts the caller as a user and
/// its progress goes nowhere.
pub(crate) struct Done<'a> {
    pub(crate) host: &'a Arc<ExtensionHost>,
    pub(crate) user: &'a str,
    pub(crate) token: Option<u64>,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            self.host
                .progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&token);
        }
        self.host.release(self.user);
    }
}
