//! Questions for the people watching a session (`ui/ask`), broadcast to every attached client
//! (`ui/request`), answered by the first `ui/respond`, closed everywhere by `ui/resolved`. The
//! registry owns the table of pending questions; asking and answering are its methods.
//!
//! Invariants: a request is pending from its broadcast until it is answered, times out, or its
//! asker goes away (the asking request's future is dropped when its connection closes) — in
//! each case it leaves the table exactly once and `ui/resolved` is broadcast. Pending requests
//! are re-sent to clients that attach to their session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pi_protocol::v1::{
    UiAnswer, UiAskParams, UiAskResponse, UiRequestParams, UiResolvedParams, UiRespondParams,
    UiRespondResponse,
};
use tokio::sync::oneshot;

use super::actor::Command;
use super::events::Notice;
use super::services::SessionsWeak;
use super::{SessionError, SessionRegistry};

/// Pending questions of every session.
#[derive(Debug, Default)]
pub struct Questions {
    // A sync mutex, never held across an await. Request id → pending request.
    pending: Mutex<HashMap<String, Pending>>,
    next_id: AtomicU64,
}

#[derive(Debug)]
struct Pending {
    params: UiRequestParams,
    // Dropped (unanswered) when the request times out or its asker goes away. With who
    // answered.
    answer: oneshot::Sender<(UiAnswer, String)>,
}

impl SessionRegistry {
    /// Asks the clients attached to `params.session_id` and waits for the first answer, the
    /// timeout (a cancelled answer), or the caller's cancellation (the future is dropped).
    pub async fn ask(&self, params: UiAskParams) -> Result<UiAskResponse, SessionError> {
        let broker = &self.questions;
        let request_id = format!("ui-{}", broker.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let request = UiRequestParams {
            session_id: params.session_id.clone(),
            request_id: request_id.clone(),
            request: params.request,
        };
        let (sender, receiver) = oneshot::channel();
        broker.table().insert(
            request_id.clone(),
            Pending {
                params: request.clone(),
                answer: sender,
            },
        );
        // From here on, leaving early (error, timeout, dropped future) withdraws the request.
        let withdraw = Withdraw {
            sessions: self.weak(),
            session_id: params.session_id.clone(),
            request_id: request_id.clone(),
        };
        broadcast(self, &params.session_id, Notice::Question(request.clone())).await?;
        let answer = match params.timeout_ms {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms), receiver)
                .await
                .ok()
                .and_then(Result::ok),
            None => receiver.await.ok(),
        };
        // Answered: `respond` already removed it, so this is a no-op; otherwise it withdraws.
        drop(withdraw);
        let (answer, answered_by) = match answer {
            Some((answer, by)) => (answer, Some(by)),
            None => (cancelled(), None),
        };
        Ok(UiAskResponse {
            request_id,
            answer,
            answered_by,
        })
    }

    /// Answers a pending request; `accepted: false` when it was answered already or is gone.
    /// `by` names the answering client.
    pub async fn respond(
        &self,
        params: UiRespondParams,
        by: String,
    ) -> Result<UiRespondResponse, SessionError> {
        let pending = {
            let mut table = self.questions.table();
            match table.get(&params.request_id) {
                Some(pending) if pending.params.session_id == params.session_id => {
                    table.remove(&params.request_id)
                }
                Some(_) | None => None,
            }
        };
        let Some(pending) = pending else {
            return Ok(UiRespondResponse { accepted: false });
        };
        let _ = pending.answer.send((params.answer.clone(), by));
        let resolved = UiResolvedParams {
            session_id: params.session_id.clone(),
            request_id: params.request_id,
            answer: params.answer,
        };
        // The answer is recorded whatever happens to the broadcast.
        let _ = broadcast(self, &params.session_id, Notice::Resolved(resolved)).await;
        Ok(UiRespondResponse { accepted: true })
    }

    /// How many clients attached to `session_id` show questions now (none: nobody could
    /// answer one; a session not loaded has none).
    pub async fn question_hearers(&self, session_id: &str) -> usize {
        self.call_loaded(session_id, |reply| Command::QuestionHearers { reply })
            .await
            .and_then(Result::ok)
            .unwrap_or(0)
    }

    /// The questions pending for `session_id` (for a newly attached client).
    pub fn pending_questions(&self, session_id: &str) -> Vec<UiRequestParams> {
        self.questions
            .table()
            .values()
            .filter(|pending| pending.params.session_id == session_id)
            .map(|pending| pending.params.clone())
            .collect()
    }

    /// How many questions wait in each session that has any (`session/list`'s `questions`).
    pub fn questions_by_session(&self) -> HashMap<String, u32> {
        let mut counts = HashMap::new();
        for pending in self.questions.table().values() {
            *counts.entry(pending.params.session_id.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// How many questions are pending (for status and tests).
    pub fn pending_question_count(&self) -> usize {
        self.questions.table().len()
    }
}

impl Questions {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Withdraws a request on drop unless it was answered: removes it and tells the watchers.
struct Withdraw {
    sessions: SessionsWeak,
    session_id: String,
    request_id: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(sessions) = self.sessions.upgrade() else {
            return;
        };
        if sessions
            .questions
            .table()
            .remove(&self.request_id)
            .is_none()
        {
            return;
        }
        let resolved = UiResolvedParams {
            session_id: self.session_id.clone(),
            request_id: self.request_id.clone(),
            answer: cancelled(),
        };
        // Drop cannot await: announce from a task (a runtime always exists here, the request
        // ran on it).
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let session_id = resolved.session_id.clone();
                let _ = broadcast(&sessions, &session_id, Notice::Resolved(resolved)).await;
            });
        }
    }
}

fn cancelled() -> UiAnswer {
    UiAnswer {
        cancelled: true,
        ..UiAnswer::default()
    }
}

/// Tells every client attached to `session_id` `notice` (through its actor).
async fn broadcast(
    sessions: &SessionRegistry,
    session_id: &str,
    notice: Notice,
) -> Result<(), SessionError> {
    sessions
        .call(session_id, |reply| Command::Notify {
            notice: notice.clone(),
            reply,
        })
        .await
        .map(|_| ())
}
