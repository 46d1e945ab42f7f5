//! [`CancelToken`]: a cloneable, one-shot "stop this run" flag that remembers why.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// Why a run was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// An `AbortSignal`, an `abort()` call or a `kill()`.
    Aborted,
    /// The run's `timeoutMs` elapsed.
    TimedOut,
}

impl CancelReason {
    /// Whether a run stopped for this reason reports itself `cancelled` (an abort).
    pub fn is_abort(self) -> bool {
        self == Self::Aborted
    }

    /// Whether a run stopped for this reason reports itself `timed_out`.
    pub fn is_timeout(self) -> bool {
        self == Self::TimedOut
    }
}

/// A cancellation flag shared between a run and whoever may stop it.
///
/// The first [`cancel`](Self::cancel) wins: a timeout that fires after an abort leaves the reason
/// `Aborted`. Waiting is possible from async code ([`cancelled`](Self::cancelled)) and cheap
/// polling from anywhere ([`reason`](Self::reason)).
#[derive(Clone, Debug)]
pub struct CancelToken {
    state: Arc<watch::Sender<Option<CancelReason>>>,
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self {
            state: Arc::new(watch::Sender::new(None)),
        }
    }

    /// Cancels with `reason` unless already cancelled; returns whether this call cancelled it.
    pub fn cancel(&self, reason: CancelReason) -> bool {
        self.state.send_if_modified(|state| {
            if state.is_some() {
                return false;
            }
            *state = Some(reason);
            true
        })
    }

    /// The reason, once cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        *self.state.borrow()
    }

    /// Whether the token has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.reason().is_some()
    }

    /// Resolves when the token is cancelled, with the reason.
    pub async fn cancelled(&self) -> CancelReason {
        let mut rx = self.state.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.unwrap_or(CancelReason::Aborted),
            // The sender lives in `self`, so it cannot be dropped while we wait.
            Err(_) => CancelReason::Aborted,
        }
    }

    /// Cancels with [`CancelReason::TimedOut`] after `after`, unless the returned guard is
    /// dropped first. Must be called inside a Tokio runtime.
    pub fn cancel_after(&self, after: Duration) -> TimeoutGuard {
        let token = self.clone();
        TimeoutGuard(tokio::spawn(async move {
            tokio::time::sleep(after).await;
            token.cancel(CancelReason::TimedOut);
        }))
    }
}

/// Keeps a [`CancelToken::cancel_after`] timer armed; dropping it disarms the timer.
#[derive(Debug)]
pub struct TimeoutGuard(tokio::task::JoinHandle<()>);

impl Drop for TimeoutGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_reason_wins() {
        let token = CancelToken::new();
        assert_eq!(token.reason(), None);
        assert!(token.cancel(CancelReason::Aborted));
        assert!(!token.cancel(CancelReason::TimedOut));
        assert_eq!(token.reason(), Some(CancelReason::Aborted));
        assert!(token.clone().is_cancelled());
    }

    #[tokio::test]
    async fn timeout_cancels_and_wakes_waiters() {
        let token = CancelToken::new();
        let _guard = token.cancel_after(Duration::from_millis(20));
        assert_eq!(token.cancelled().await, CancelReason::TimedOut);
    }

    #[tokio::test]
    async fn dropped_timeout_guard_disarms() {
        let token = CancelToken::new();
        drop(token.cancel_after(Duration::from_millis(5)));
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(token.reason(), None);
    }
}
