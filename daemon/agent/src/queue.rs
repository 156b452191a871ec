//! The steering and follow-up queues a run drains, shared between the session (which pushes)
//! and the running loop (which takes).
//!
//! Steering messages are delivered after the running tools finish (tool calls not yet started
//! are skipped); follow-ups only when the agent would otherwise stop. Mode `one-at-a-time`
//! delivers one message per injection point, `all` delivers the whole queue.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::message::AgentMessage;

/// How many queued messages are delivered at one injection point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueMode {
    /// One message at a time (pi's default).
    #[default]
    OneAtATime,
    /// Everything queued.
    All,
}

/// The two queues. Shared behind an `Arc`.
#[derive(Debug, Default)]
pub struct MessageQueues {
    // A sync mutex, never held across await.
    inner: Mutex<Queues>,
    // Notified whenever a steering message is pushed, so a run waiting to start its next tool
    // call can skip it at once.
    steering_pushed: Notify,
}

#[derive(Debug, Default)]
struct Queues {
    steering: VecDeque<AgentMessage>,
    follow_up: VecDeque<AgentMessage>,
    steering_mode: QueueMode,
    follow_up_mode: QueueMode,
}

/// The queued messages' texts, for clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueTexts {
    /// Steering messages.
    pub steering: Vec<String>,
    /// Follow-up messages.
    pub follow_up: Vec<String>,
}

impl MessageQueues {
    /// Empty queues with the given modes.
    pub fn new(steering_mode: QueueMode, follow_up_mode: QueueMode) -> Self {
        MessageQueues {
            inner: Mutex::new(Queues {
                steering_mode,
                follow_up_mode,
                ..Queues::default()
            }),
            steering_pushed: Notify::new(),
        }
    }

    /// The queues. A lock poisoned by a panic elsewhere is taken over: every change under it
    /// is a single push, take or assignment, so its data is whole, and a message is never
    /// dropped for it.
    fn queues(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a steering message.
    pub fn push_steering(&self, message: AgentMessage) {
        {
            let mut queues = self.queues();
            queues.steering.push_back(message);
        }
        self.steering_pushed.notify_waiters();
    }

    /// Queues a follow-up message.
    pub fn push_follow_up(&self, message: AgentMessage) {
        {
            let mut queues = self.queues();
            queues.follow_up.push_back(message);
        }
    }

    /// Whether a steering message waits.
    pub fn has_steering(&self) -> bool {
        !self.queues().steering.is_empty()
    }

    /// Takes steering messages per the steering mode.
    pub fn take_steering(&self) -> Vec<AgentMessage> {
        let mut queues = self.queues();
        let mode = queues.steering_mode;
        take(&mut queues.steering, mode)
    }

    /// Takes follow-up messages per the follow-up mode.
    pub fn take_follow_up(&self) -> Vec<AgentMessage> {
        let mut queues = self.queues();
        let mode = queues.follow_up_mode;
        take(&mut queues.follow_up, mode)
    }

    /// Empties both queues, steering first, returning what was queued.
    pub fn drain_all(&self) -> Vec<AgentMessage> {
        let mut queues = self.queues();
        let mut all: Vec<AgentMessage> = queues.steering.drain(..).collect();
        all.extend(queues.follow_up.drain(..));
        all
    }

    /// Sets the delivery modes.
    pub fn set_modes(&self, steering_mode: QueueMode, follow_up_mode: QueueMode) {
        {
            let mut queues = self.queues();
            queues.steering_mode = steering_mode;
            queues.follow_up_mode = follow_up_mode;
        }
    }

    /// The queued messages' texts.
    pub fn texts(&self) -> QueueTexts {
        let queues = self.queues();
        QueueTexts {
            steering: queues
                .steering
                .iter()
                .map(|m| m.user_text().unwrap_or_default())
                .collect(),
            follow_up: queues
                .follow_up
                .iter()
                .map(|m| m.user_text().unwrap_or_default())
                .collect(),
        }
    }

    /// Number of queued messages.
    pub fn len(&self) -> usize {
        let queues = self.queues();
        queues.steering.len() + queues.follow_up.len()
    }

    /// Whether both queues are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resolves when a steering message is pushed after this call began.
    pub async fn steering_pushed(&self) {
        self.steering_pushed.notified().await;
    }
}

fn take(queue: &mut VecDeque<AgentMessage>, mode: QueueMode) -> Vec<AgentMessage> {
    match mode {
        QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
        QueueMode::All => queue.drain(..).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> AgentMessage {
        AgentMessage::user(t, Vec::new(), 0)
    }

    #[test]
    fn modes_deliver_one_or_all() {
        let queues = MessageQueues::new(QueueMode::OneAtATime, QueueMode::All);
        queues.push_steering(text("a"));
        queues.push_steering(text("b"));
        queues.push_follow_up(text("c"));
        queues.push_follow_up(text("d"));
        assert_eq!(
            queues.texts(),
            QueueTexts {
                steering: vec!["a".into(), "b".into()],
                follow_up: vec!["c".into(), "d".into()]
            }
        );
        assert_eq!(queues.take_steering().len(), 1);
        assert!(queues.has_steering());
        assert_eq!(queues.take_follow_up().len(), 2);
        assert_eq!(queues.len(), 1);
        assert_eq!(queues.drain_all().len(), 1);
        assert!(queues.is_empty());
    }
}
