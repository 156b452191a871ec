//! Project extensions are code the project brings: one loads only once the user approved it
//! (decision 0017), by its resolved path. A session that finds extensions nobody answered
//! about yet asks its clients once (`ui/ask`, the first answer wins) and goes on without
//! them; an approval loads them into every session that skipped them, a refusal is kept and
//! shown. `extensions/trust` (`pictl extensions trust`) answers for scripts.
//!
//! Invariant: at most one question per session is pending; it is withdrawn when the
//! session closes. A dismissed question is no answer: the next opening asks again.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_protocol::v1::UiRequest;

use crate::{Diagnostic, ExtensionHost};

/// The user's answers, kept by the daemon (its store).
pub trait Approvals: Send + Sync + 'static {
    /// The answer about the extension at `path`: approved, refused, or not asked yet.
    fn approval(&self, path: &str) -> Option<bool>;
    /// Records the answer about each of `paths` (a failure to store it is the keeper's to
    /// report; the answer holds for this daemon's life either way).
    fn record(&self, paths: Vec<String>, approved: bool) -> BoxFuture<'static, ()>;
}

/// No answers, none kept: every project extension waits (tests, benches).
#[derive(Debug, Default)]
pub struct NoApprovals;

impl Approvals for NoApprovals {
    fn approval(&self, _path: &str) -> Option<bool> {
        None
    }

    fn record(&self, _paths: Vec<String>, _approved: bool) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// Why a project extension did not load.
pub(crate) fn skipped(path: &str, approved: Option<bool>) -> Diagnostic {
    let error = match approved {
        Some(false) => {
            "a project extension you refused: not loaded (`pictl extensions trust \
                        PATH` in the project approves it)"
        }
        _ => {
            "a project extension not approved yet: not loaded until you approve it (answer \
              the question in an attached client, or `pictl extensions trust` in the project)"
        }
    };
    Diagnostic {
        path: path.to_owned(),
        error: error.to_owned(),
    }
}

impl ExtensionHost {
    /// Asks session `session_id`'s clients about the project extensions it skipped unasked
    /// (unless its question is pending); an answer is recorded and applied to every
    /// session.
    pub(crate) fn ask_approval(self: &Arc<Self>, session_id: &str, cwd: &str, paths: Vec<String>) {
        let mut sessions = self.sessions();
        let Some(session) = sessions.get_mut(session_id) else {
            return;
        };
        if session.approving.is_some() {
            return;
        }
        let port = session.port.clone();
        let title = format!("Load the pi extensions {cwd} brings?");
        let list: Vec<String> = paths.iter().map(|path| format!("  {path}")).collect();
        let message = format!(
            "This project has {} pi extension{} that would run with your permissions in every \
             session here:\n{}\nApprove once and they load from now on; refuse and they stay \
             off (`pictl extensions trust --forget` asks again).",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" },
            list.join("\n")
        );
        let host = self.clone();
        let asker = session_id.to_owned();
        let task = tokio::spawn(async move {
            let answer = port
                .ask(UiRequest::Confirm { title, message }, None)
                .await
                .filter(|answer| !answer.cancelled)
                .and_then(|answer| answer.confirmed);
            // The question is over: a new opening may ask again, and applying the answer
            // below must not abort this task.
            if let Some(session) = host.sessions().get_mut(&asker) {
                session.approving = None;
            }
            let Some(approved) = answer else {
                return;
            };
            // The answer holds at once (the store follows): a prompt sent right after it
            // waits for the extensions it approved.
            let stored = host.approvals.record(paths.clone(), approved);
            host.reconsider(&paths, approved);
            stored.await;
        });
        session.approving = Some(task.abort_handle());
    }

    /// The user answered about `paths`: sessions that skipped them load them (approved) or
    /// show the refusal, sessions that run them unload them (refused), and their pending
    /// questions about them are withdrawn.
    pub fn reconsider(self: &Arc<Self>, paths: &[String], approved: bool) {
        let touched: Vec<String> = {
            let mut sessions = self.sessions();
            sessions
                .iter_mut()
                .filter_map(|(id, session)| {
                    let set = session.set.borrow().clone()?;
                    let skipped_them = set
                        .skipped
                        .iter()
                        .any(|skipped| paths.contains(&skipped.path));
                    // A refusal of what a session runs now unloads it.
                    let runs_them = !approved
                        && set
                            .extensions
                            .iter()
                            .any(|extension| paths.contains(&extension.path));
                    if !skipped_them && !runs_them {
                        return None;
                    }
                    if let Some(task) = session.approving.take() {
                        task.abort();
                    }
                    if approved || runs_them {
                        // Loading again: what waits for the set (a run's tools, the prompt's
                        // hooks) waits for the new one.
                        session.set.send_replace(None);
                    } else {
                        session.set.send_modify(|set| {
                            if let Some(set) = set {
                                let set = Arc::make_mut(set);
                                set.unapproved.retain(|path| !paths.contains(path));
                                for skipped in &mut set.skipped {
                                    if paths.contains(&skipped.path) {
                                        *skipped = self::skipped(&skipped.path, Some(false));
                                    }
                                }
                            }
                        });
                        return None;
                    }
                    Some(id.clone())
                })
                .collect()
        };
        for session_id in touched {
            let host = self.clone();
            let paths = paths.to_vec();
            tokio::spawn(async move {
                let reopened = Arc::new(host.open(&session_id).await);
                let loaded: Vec<String> = reopened
                    .extensions
                    .iter()
                    .map(|extension| extension.path.clone())
                    .collect();
                let Some(port) = host.sessions().get(&session_id).map(|session| {
                    session.set.send_replace(Some(reopened.clone()));
                    session.port.clone()
                }) else {
                    // The session closed while its extensions loaded again: they go too.
                    host.close_in_host(&session_id).await;
                    return;
                };
                port.show(pi_protocol::v1::ExtensionUi::Notify {
                    message: if approved {
                        format!("Extensions loaded: {}", loaded.join(", "))
                    } else {
                        format!("Extensions refused and unloaded: {}", paths.join(", "))
                    },
                    level: pi_protocol::v1::NotifyLevel::Info,
                });
            });
        }
    }
}

impl ExtensionHost {
    /// The extensions the project in `cwd` brings (as pi's package manager finds them: its
    /// `.pi/extensions/`, its settings' `extensions` and installed `packages`), each with the
    /// user's answer. Starts the host if needed.
    pub async fn project_extensions(
        self: &Arc<Self>,
        cwd: &std::path::Path,
    ) -> Result<Vec<(String, Option<bool>)>, crate::ExtensionError> {
        let user = format!("extensions/trust {}", cwd.display());
        let discovered = {
            let _done = crate::packages::Done {
                host: self,
                user: &user,
                token: None,
            };
            async {
                let running = self.connection(&user).await?;
                self.discover(&running, cwd, &crate::Choice::default())
                    .await
            }
            .await
        };
        Ok(discovered?
            .extensions
            .into_iter()
            .filter(|found| found.scope == "project")
            .map(|found| {
                let approval = self.approvals.approval(&found.path);
                (found.path, approval)
            })
            .collect())
    }
}
