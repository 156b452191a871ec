//! Live configuration: watches `models.json`, `auth.json` and `settings.json` in our config
//! dir and pi's agent dir, and reloads them when they change, as pi rereads them on every run.
//!
//! A burst of changes (an editor's write, rename and chmod) is one reload, after the files
//! have been quiet for [`DEBOUNCE`]. A reload re-reads the model registry and the global
//! settings layers; a file that was good and no longer loads keeps its last good version (see
//! `ModelRegistry::reload` and `settings_parse::LastGoodLayers`). Every initialized connection
//! then gets `config/changed` with the files and the problems left, which `daemon/status`
//! also reports. Sessions see the change at their next `session/create`, `session/setModel`,
//! `model/list` or run.
//!
//! A missing directory is watched through its nearest existing ancestor, so creating
//! `~/.pi/agent` later starts watching it. A platform that cannot watch leaves the status with
//! a `watchError`; the files then load at start only.
//!
//! Invariant: the watcher never stops the daemon; every failure is logged and reported.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};
use pi_protocol::NotificationMethod as _;
use pi_protocol::v1::{ConfigChanged, ConfigChangedParams, ConfigStatus, ResourceDiagnostic};
use tokio::sync::Notify;

use crate::clients::Clients;
use crate::coding::ResourceRoots;
use crate::frame;
use crate::session::ModelService;
use pi_util::time::now_millis;

/// How long the files must be quiet before a reload.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// The longest a burst of changes delays its reload.
const MAX_DEBOUNCE: Duration = Duration::from_secs(1);

/// The files watched in each configuration directory.
const FILE_NAMES: [&str; 3] = ["models.json", "auth.json", "settings.json"];

/// What `daemon/status` reports about the configuration files; updated by the watcher.
#[derive(Debug, Default)]
pub struct ConfigFiles {
    // A sync mutex, never held across an await.
    status: Mutex<ConfigStatus>,
}

impl ConfigFiles {
    /// The status now.
    pub fn status(&self) -> ConfigStatus {
        self.lock().clone()
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, ConfigStatus> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Events seen since the last reload, shared with notify's thread.
#[derive(Debug, Default)]
struct Pending {
    // A sync mutex, never held across an await.
    changes: Mutex<Changes>,
    wake: Notify,
}

#[derive(Debug, Default)]
struct Changes {
    files: BTreeSet<PathBuf>,
    // A watched directory (or one on the way to it) appeared or went: watch anew.
    rearm: bool,
}

/// The configuration directories and the files in them.
#[derive(Clone, Debug)]
struct Targets {
    dirs: Vec<PathBuf>,
}

impl Targets {
    fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.dirs
            .iter()
            .flat_map(|dir| FILE_NAMES.iter().map(move |name| dir.join(name)))
    }

    /// Whether `path` is one of the files, or a directory on the way to one.
    fn classify(&self, path: &Path) -> Option<bool> {
        let is_file = path.parent().is_some_and(|parent| {
            self.dirs.iter().any(|dir| dir == parent)
                && path
                    .file_name()
                    .is_some_and(|name| FILE_NAMES.iter().any(|wanted| name == *wanted))
        });
        if is_file {
            return Some(false);
        }
        self.dirs
            .iter()
            .any(|dir| dir.starts_with(path))
            .then_some(true)
    }

    /// The directories to watch: each target's nearest existing ancestor-or-self, and the
    /// parent of an existing target (to see it deleted and created again).
    fn watch_points(&self) -> BTreeSet<PathBuf> {
        let mut points = BTreeSet::new();
        for dir in &self.dirs {
            if let Some(existing) = dir.ancestors().find(|candidate| candidate.is_dir()) {
                points.insert(existing.to_path_buf());
                if existing == dir
                    && let Some(parent) = dir.parent()
                    && parent.is_dir()
                {
                    points.insert(parent.to_path_buf());
                }
            }
        }
        points
    }
}

/// What the watcher reads, reloads and tells.
pub struct ConfigWatch {
    /// Our configuration directory.
    pub config_dir: PathBuf,
    /// pi's agent directory.
    pub pi_agent_dir: PathBuf,
    /// The model registry, reloaded.
    pub models: Arc<dyn ModelService>,
    /// Where settings are read from.
    pub roots: ResourceRoots,
    /// Where the status goes (`daemon/status`).
    pub files: Arc<ConfigFiles>,
    /// Who is told (`config/changed`).
    pub clients: Arc<Clients>,
    /// Stops the watcher.
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// Starts watching the configuration files for the daemon's lifetime (until
/// `watch.shutdown`). Records the files' problems at start in the status.
pub fn spawn(watch: ConfigWatch, tracker: &tokio_util::task::TaskTracker) {
    let targets = Targets {
        dirs: vec![watch.config_dir.clone(), watch.pi_agent_dir.clone()],
    };
    {
        let mut status = watch.files.lock();
        status.files = targets
            .files()
            .map(|path| path.display().to_string())
            .collect();
        status.diagnostics = diagnostics(watch.models.as_ref(), &watch.roots);
    }
    let pending = Arc::new(Pending::default());
    let watcher = {
        let pending = pending.clone();
        let targets = targets.clone();
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) => {
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                let mut woke = false;
                let mut changes = pending
                    .changes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                // Events were lost (the kernel's queue overflowed): look at everything again.
                if event.need_rescan() {
                    changes.rearm = true;
                    woke = true;
                }
                for path in &event.paths {
                    match targets.classify(path) {
                        Some(false) => {
                            changes.files.insert(path.clone());
                            woke = true;
                        }
                        Some(true) => {
                            changes.rearm = true;
                            woke = true;
                        }
                        None => {}
                    }
                }
                drop(changes);
                if woke {
                    pending.wake.notify_one();
                }
            }
            Err(error) => {
                // Whatever the error, look at everything again rather than miss an edit.
                tracing::warn!(%error, "configuration watch error");
                pending
                    .changes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .rearm = true;
                pending.wake.notify_one();
            }
        })
    };
    let mut watcher = match watcher {
        Ok(watcher) => watcher,
        Err(error) => {
            tracing::warn!(%error, "cannot watch the configuration files; edits need a restart");
            watch.files.lock().watch_error = Some(format!(
                "cannot watch the configuration files ({error}); restart the daemon \
                 (pictl daemon restart) after editing them"
            ));
            return;
        }
    };
    let mut watched = BTreeSet::new();
    arm(&mut watcher, &targets, &mut watched, &watch.files);
    tracker.spawn(async move {
        // The watcher lives as long as this task: dropping it stops notify's thread.
        loop {
            tokio::select! {
                () = watch.shutdown.cancelled() => return,
                () = pending.wake.notified() => {}
            }
            // Debounce: wait until the files have been quiet for a while, but not forever
            // (a file rewritten nonstop still gets reloaded).
            let give_up = tokio::time::Instant::now() + MAX_DEBOUNCE;
            loop {
                tokio::select! {
                    () = watch.shutdown.cancelled() => return,
                    () = pending.wake.notified() => {}
                    () = tokio::time::sleep(DEBOUNCE) => break,
                    () = tokio::time::sleep_until(give_up) => break,
                }
            }
            let changes = std::mem::take(
                &mut *pending
                    .changes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            let mut files: Vec<PathBuf> = changes.files.into_iter().collect();
            if changes.rearm {
                arm(&mut watcher, &targets, &mut watched, &watch.files);
                // Whatever the new directory holds is new to us.
                files.extend(targets.files().filter(|file| file.exists()));
                files.sort();
                files.dedup();
            }
            if files.is_empty() {
                continue;
            }
            reload(&watch, files).await;
        }
    });
}

/// (Re)starts watching the directories that lead to the configuration files. Every wanted
/// directory is watched again (a directory replaced by another of the same name lost its
/// watch with the old one); only those that worked count as watched.
fn arm(
    watcher: &mut notify::RecommendedWatcher,
    targets: &Targets,
    watched: &mut BTreeSet<PathBuf>,
    status: &ConfigFiles,
) {
    let wanted = targets.watch_points();
    for gone in watched.difference(&wanted) {
        // A removed directory's watch is already gone; nothing to report.
        let _ = watcher.unwatch(gone);
    }
    let mut errors = Vec::new();
    let mut working = BTreeSet::new();
    for point in &wanted {
        let _ = watcher.unwatch(point);
        match watcher.watch(point, RecursiveMode::NonRecursive) {
            Ok(()) => {
                working.insert(point.clone());
            }
            Err(error) => {
                tracing::warn!(path = %point.display(), %error, "cannot watch a configuration directory");
                errors.push(format!("{}: {error}", point.display()));
            }
        }
    }
    *watched = working;
    status.lock().watch_error = (!errors.is_empty()).then(|| {
        format!(
            "cannot watch {}; restart the daemon (pictl daemon restart) after editing the files there",
            errors.join("; ")
        )
    });
}

/// Reloads after `files` changed and tells every connection.
async fn reload(watch: &ConfigWatch, files: Vec<PathBuf>) {
    let models = watch.models.clone();
    let roots = watch.roots.clone();
    let found = tokio::task::spawn_blocking(move || {
        // A `!command` key may run a process: off the async threads.
        models.reload();
        diagnostics(models.as_ref(), &roots)
    })
    .await;
    let diagnostics = match found {
        Ok(diagnostics) => diagnostics,
        Err(error) => {
            tracing::error!(%error, "configuration reload failed");
            return;
        }
    };
    let files: Vec<String> = files
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    tracing::info!(files = ?files, problems = diagnostics.len(), "configuration reloaded");
    for diagnostic in &diagnostics {
        tracing::warn!(path = %diagnostic.path, problem = %diagnostic.message, "configuration problem");
    }
    {
        let mut status = watch.files.lock();
        status.reloads += 1;
        status.last_reload_at = Some(now_millis());
        status.diagnostics = diagnostics.clone();
    }
    let params = ConfigChangedParams { files, diagnostics };
    let Ok(frame) = frame::notification(ConfigChanged::NAME, &params) else {
        return;
    };
    for (sink, _) in watch.clients.list() {
        if sink.is_initialized() {
            let _ = sink.notify(
                ConfigChanged::NAME,
                crate::outbound::Outbound::Frame(frame.clone()),
            );
        }
    }
}

/// The problems of the model files and the global settings files now.
fn diagnostics(models: &dyn ModelService, roots: &ResourceRoots) -> Vec<ResourceDiagnostic> {
    let mut found: Vec<ResourceDiagnostic> = models
        .diagnostics()
        .into_iter()
        .map(|(path, message)| ResourceDiagnostic {
            kind: pi_protocol::v1::ResourceDiagnosticKind::Warning,
            path: path.display().to_string(),
            key: None,
            message,
        })
        .collect();
    let (_, settings) = roots.load_settings(None);
    found.extend(settings.iter().map(crate::session::convert::diagnostic));
    found
}
