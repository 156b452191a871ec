//! Project servers are code the project asks to run: one starts only after the user approved
//! it, by file and definition hash (an edited definition is asked about again). The question
//! goes to the clients watching the session that first needs the server (`ui/ask`: the first
//! answer wins); `mcp/trust` (`pictl mcp trust`) answers it for scripts. Answers live in the
//! store and in memory.
//!
//! Invariant: at most one question per (file, hash) is pending at a time; it is withdrawn when
//! its session stops, and asked again by the next session that needs the server. A dismissed
//! question (no answer) is not an answer: the server is asked about again on the next run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use futures_util::future::BoxFuture;

use super::ServerDefinition;
use pi_store::{McpTrustRow, Store};

/// Asks the people watching a session a yes/no question; `None` when nobody answered.
pub trait Approver: Send + Sync + std::fmt::Debug {
    /// Asks `title` / `message` of session `session_id`'s clients.
    fn confirm(
        &self,
        session_id: String,
        title: String,
        message: String,
    ) -> BoxFuture<'static, Option<bool>>;
}

/// Where a definition stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Defined by a user-level file.
    UserFile,
    /// A project server the user approved.
    Approved,
    /// A project server the user refused.
    Denied,
    /// A project server not answered about yet.
    Unanswered,
}

impl Approval {
    /// May it start?
    pub fn allows_start(self) -> bool {
        matches!(self, Approval::UserFile | Approval::Approved)
    }

    /// Its name in `mcp/list`.
    pub fn as_str(self) -> &'static str {
        match self {
            Approval::UserFile => "user file",
            Approval::Approved => "approved",
            Approval::Denied => "denied",
            Approval::Unanswered => "not approved yet",
        }
    }
}

type TrustKey = (String, String);

/// The answers, and the questions pending.
#[derive(Debug, Default)]
pub struct Trust {
    store: OnceLock<Store>,
    // Sync mutexes, never held across an await.
    answers: Mutex<HashMap<TrustKey, bool>>,
    // The pending question of each definition: the session asked and the asking task.
    asking: Mutex<HashMap<TrustKey, (String, tokio::task::AbortHandle)>>,
}

fn trust_key(definition: &ServerDefinition) -> TrustKey {
    (
        definition.file.display().to_string(),
        definition.definition_hash.clone(),
    )
}

impl Trust {
    /// Keeps answers in `store` and loads the ones there.
    pub async fn attach_store(&self, store: Store) -> Result<(), pi_store::StoreError> {
        let rows = store.mcp_trust().await?;
        {
            let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
            for row in rows {
                answers.insert((row.file, row.definition_hash), row.approved);
            }
        }
        let _ = self.store.set(store);
        Ok(())
    }

    /// Where `definition` stands.
    pub fn approval(&self, definition: &ServerDefinition) -> Approval {
        if definition.trusted {
            return Approval::UserFile;
        }
        match self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&trust_key(definition))
        {
            Some(true) => Approval::Approved,
            Some(false) => Approval::Denied,
            None => Approval::Unanswered,
        }
    }

    /// Records the answer of a question (memory, then the store).
    async fn record(
        &self,
        definition: &ServerDefinition,
        approved: bool,
    ) -> Result<(), pi_store::StoreError> {
        let key = trust_key(definition);
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), approved);
        match self.store.get() {
            Some(store) => {
                store
                    .record_mcp_trust(&McpTrustRow {
                        file: key.0,
                        definition_hash: key.1,
                        approved,
                        decided_at: pi_util::time::now_millis(),
                    })
                    .await
            }
            None => Ok(()),
        }
    }

    /// Records an answer given outside a question (`mcp/trust`), withdrawing the pending
    /// question; `None` forgets it.
    pub async fn answer(
        &self,
        definition: &ServerDefinition,
        approved: Option<bool>,
    ) -> Result<(), pi_store::StoreError> {
        let key = trust_key(definition);
        {
            let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
            match approved {
                Some(approved) => answers.insert(key.clone(), approved),
                None => answers.remove(&key),
            };
        }
        if let Some((_, task)) = self
            .asking
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key)
        {
            task.abort();
        }
        let Some(store) = self.store.get() else {
            return Ok(());
        };
        match approved {
            Some(approved) => {
                store
                    .record_mcp_trust(&McpTrustRow {
                        file: key.0,
                        definition_hash: key.1,
                        approved,
                        decided_at: pi_util::time::now_millis(),
                    })
                    .await
            }
            None => store.forget_mcp_trust(&key.0, &key.1).await,
        }
    }

    /// Asks session `session_id`'s clients about `definition` through `approver` (the
    /// session's own, given with each acquisition) unless a question about it is pending;
    /// `then` runs with the answer once recorded.
    pub fn ask(
        self: &Arc<Self>,
        approver: Arc<dyn Approver>,
        session_id: &str,
        definition: &ServerDefinition,
        then: impl FnOnce(bool) + Send + 'static,
    ) {
        let key = trust_key(definition);
        let mut asking = self.asking.lock().unwrap_or_else(PoisonError::into_inner);
        if asking.contains_key(&key) {
            return;
        }
        let title = format!(
            "Start MCP server \"{}\" from {}?",
            definition.name,
            definition.file.display()
        );
        let message = format!(
            "This project defines an MCP server, which runs {} with your permissions. Approve \
             it once and it starts for every session that sees this file, until its definition \
             changes.",
            describe(definition)
        );
        let trust = self.clone();
        let definition = definition.clone();
        let task_key = key.clone();
        let session = session_id.to_owned();
        let task = tokio::spawn(async move {
            let answer = approver.confirm(session, title, message).await;
            if let Some(approved) = answer
                && let Err(error) = trust.record(&definition, approved).await
            {
                tracing::warn!(server = definition.name, %error, "cannot store the answer");
            }
            // From here on no await: the question ends and `then` runs, or the task was
            // aborted before (its session stopped) and neither happens.
            trust
                .asking
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&task_key);
            if let Some(approved) = answer {
                then(approved);
            }
        });
        asking.insert(key, (session_id.to_owned(), task.abort_handle()));
    }

    /// Session `session_id` stopped: its pending questions are withdrawn.
    pub fn session_closed(&self, session_id: &str) {
        self.asking
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, (session, task)| {
                let keep = session != session_id;
                if !keep {
                    task.abort();
                }
                keep
            });
    }
}

/// What a definition runs, in a few words, as its file writes it (variables unexpanded: the
/// question shows what is approved, and no secret from the environment).
pub fn describe(definition: &ServerDefinition) -> String {
    match &definition.transport {
        super::Transport::Stdio { .. } => format!("`{}`", definition.written),
        super::Transport::Http { .. } => format!("a connection to {}", definition.written),
    }
}
