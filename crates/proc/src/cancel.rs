//! [`CancelToken`]: a cloneable, one-shot "stop this run" flag that remembers why.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

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
/// polling from anywhere ([`reason`](Self::reason)). Every run makes a token or two, most never
/// cancelled: one is an atomic and a waiter list, dropped without waking anybody.
#[derive(Clone, Debug)]
pub struct CancelToken {
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    /// [`NOT_CANCELLED`], or the reason's code ([`code`]).
    reason: AtomicU8,
    cancelled: Notify,
}

const NOT_CANCELLED: u8 = 0;

const ABORTED: u8 = 1;
const TIMED_OUT: u8 = 2;

fn code(reason: CancelReason) -> u8 {
    match reason {
        CancelReason::Aborted => ABORTED,
        CancelReason::TimedOut => TIMED_OUT,
    }
}

/// The reason [`code`] gave `code`, or `None` for [`NOT_CANCELLED`].
fn from_code(code: u8) -> Option<CancelReason> {
    match code {
        ABORTED => Some(CancelReason::Aborted),
        TIMED_OUT => Some(CancelReason::TimedOut),
        _ => None,
    }
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
            state: Arc::default(),
        }
    }

    /// Cancels with `reason` unless already cancelled; returns whether this call cancelled it.
    pub fn cancel(&self, reason: CancelReason) -> bool {
        let won = self
            .state
            .reason
            .compare_exchange(
                NOT_CANCELLED,
                code(reason),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if won {
            self.state.cancelled.notify_waiters();
        }
        won
    }

    /// The reason, once cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        from_code(self.state.reason.load(Ordering::Acquire))
    }

    /// Whether the token has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.reason().is_some()
    }

    /// Resolves when the token is cancelled, with the reason.
    pub async fn cancelled(&self) -> CancelReason {
        loop {
            // Registered before the check, so a cancel between the two still wakes it.
            let woken = self.state.cancelled.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if let Some(reason) = self.reason() {
                return reason;
            }
            woken.await;
        }
    }

    /// A run's deadline: cancels with [`CancelReason::TimedOut`] once `timeout` has passed, if
    /// the run has one, unless the returned guard is dropped first. Every runtime arms its runs'
    /// deadlines here. Must be called inside a Tokio runtime.
    pub fn deadline(&self, timeout: Option<Duration>) -> Option<TimeoutGuard> {
        timeout.map(|after| self.cancel_after(after))
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
    async fn every_waiter_wakes_with_the_first_reason() {
        let token = CancelToken::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let token = token.clone();
                tokio::spawn(async move { token.cancelled().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(token.cancel(CancelReason::Aborted));
        assert!(!token.cancel(CancelReason::TimedOut));
        for waiter in waiters {
            assert_eq!(waiter.await.expect("joined"), CancelReason::Aborted);
        }
        // A token cancelled before anyone waits resolves at once.
        assert_eq!(token.cancelled().await, CancelReason::Aborted);
    }

    #[tokio::test]
    async fn dropped_timeout_guard_disarms() {
        let token = CancelToken::new();
        drop(token.cancel_after(Duration::from_millis(5)));
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(token.reason(), None);
    }
}
