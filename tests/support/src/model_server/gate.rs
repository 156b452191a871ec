//! [`Gate`]: holds a scripted stream mid-way until the test releases it, and tells the test
//! when the stream got there.

use std::sync::Arc;

use tokio::sync::watch;

/// Holds a stream after a number of events until the test calls [`Gate::release`]. Cheap to
/// clone; clones are the same gate. A gate opens once and stays open.
#[derive(Clone, Debug)]
pub struct Gate {
    inner: Arc<GateState>,
}

#[derive(Debug)]
struct GateState {
    /// Set to `true` by the stream task when it waits at the gate; [`Gate::reached`] waits
    /// for it. Never dropped while the gate lives, so waiting never fails.
    reached: watch::Sender<bool>,
    /// Set to `true` by [`Gate::release`]; the waiting stream task waits for it.
    released: watch::Sender<bool>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new()
    }
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Gate {
            inner: Arc::new(GateState {
                reached: watch::Sender::new(false),
                released: watch::Sender::new(false),
            }),
        }
    }

    /// Opens the gate: a stream waiting at it continues, later ones pass.
    pub fn release(&self) {
        self.inner.released.send_replace(true);
    }

    /// Resolves once a stream waits at this gate (immediately if one already did).
    pub async fn reached(&self) {
        let mut reached = self.inner.reached.subscribe();
        // The sender lives as long as `self`, so waiting cannot fail.
        let _ = reached.wait_for(|reached| *reached).await;
    }

    /// Called by the stream task: marks the gate reached and waits for the release.
    pub(super) async fn wait_at(&self) {
        self.inner.reached.send_replace(true);
        let mut released = self.inner.released.subscribe();
        // The sender lives as long as `self`, so waiting cannot fail.
        let _ = released.wait_for(|released| *released).await;
    }
}
