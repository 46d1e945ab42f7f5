//! [`PersistentShell`]: one session kept alive between runs, runs serialised in call order, and
//! [`execute_once`] for a fresh session per call.

use std::future::Future;
use std::sync::{Arc, Mutex};

use shellwright_proc::{CancelReason, CancelToken};
use tokio::sync::{oneshot, watch};

use crate::error::ShellError;
use crate::output::ChunkHandler;
use crate::session::{RunRequest, RunResult, Session, SessionOptions};

/// A shell whose cwd, variables and functions survive between runs (DESIGN §3.1).
///
/// The session is created lazily by the first run, and dropped — so the next run starts fresh —
/// after `exit`, an error, a cancellation or a timeout. Cloning gives another handle to the same
/// shell.
#[derive(Clone)]
pub struct PersistentShell {
    inner: Arc<Inner>,
}

struct Inner {
    options: SessionOptions,
    session: tokio::sync::Mutex<Option<Session>>,
    /// Completes when the most recently queued run is done: each run waits for the one queued
    /// before it, which is what makes the order the *call* order rather than the poll order.
    queue_tail: Mutex<Option<oneshot::Receiver<()>>>,
    active: Mutex<Option<ActiveRun>>,
}

/// The run currently holding the session, for [`PersistentShell::abort`].
#[derive(Clone)]
struct ActiveRun {
    cancel: CancelToken,
    finished: watch::Receiver<bool>,
}

impl PersistentShell {
    pub fn new(options: SessionOptions) -> Self {
        let inner = Inner {
            options,
            session: tokio::sync::Mutex::new(None),
            queue_tail: Mutex::new(None),
            active: Mutex::new(None),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Queues `request` behind the runs queued before this call and returns the run, which
    /// streams its output to `on_chunk`. A request whose token is already cancelled resolves at
    /// once without running.
    pub fn run(
        &self,
        request: RunRequest,
        on_chunk: ChunkHandler,
    ) -> impl Future<Output = Result<RunResult, ShellError>> + Send + use<> {
        let (my_turn_done, next_turn) = oneshot::channel::<()>();
        let previous = lock(&self.inner.queue_tail).replace(next_turn);
        let inner = Arc::clone(&self.inner);
        async move {
            if let Some(reason) = request.cancel.reason() {
                return Ok(stopped(reason));
            }
            if let Some(previous) = previous {
                // An error only means the previous run was dropped: its turn is over too.
                let _ = previous.await;
            }
            let mut slot = inner.session.lock().await;
            let (finished_tx, finished) = watch::channel(false);
            *lock(&inner.active) = Some(ActiveRun {
                cancel: request.cancel.clone(),
                finished,
            });
            let outcome = run_in(&mut slot, &inner.options, &request, on_chunk).await;
            *lock(&inner.active) = None;
            let _ = finished_tx.send(true);
            drop(my_turn_done);
            outcome
        }
    }

    /// Cancels the running command, if any, and waits until it has ended.
    pub async fn abort(&self) {
        let active = lock(&self.inner.active).clone();
        if let Some(mut active) = active {
            active.cancel.cancel(CancelReason::Aborted);
            let _ = active.finished.wait_for(|done| *done).await;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn stopped(reason: CancelReason) -> RunResult {
    RunResult {
        exit_code: None,
        cancelled: reason == CancelReason::Aborted,
        timed_out: reason == CancelReason::TimedOut,
    }
}

/// Runs in the session held by `slot`, creating it first if needed, and drops it when the run
/// ended in a way that does not keep a session.
async fn run_in(
    slot: &mut Option<Session>,
    options: &SessionOptions,
    request: &RunRequest,
    on_chunk: ChunkHandler,
) -> Result<RunResult, ShellError> {
    if let Some(reason) = request.cancel.reason() {
        return Ok(stopped(reason));
    }
    let session = match slot {
        Some(session) => session,
        None => slot.insert(Session::create(options).await?),
    };
    let outcome = session.run(request, on_chunk).await;
    // A cwd that cannot be entered is refused before anything runs: the session is untouched.
    let keep = match &outcome {
        Ok(o) => o.keep_session,
        Err(error) => matches!(error, ShellError::Cwd(_)),
    };
    if !keep {
        *slot = None;
    }
    outcome.map(|o| o.result)
}

/// Runs `request` in a fresh session that is dropped afterwards.
pub async fn execute_once(
    options: SessionOptions,
    request: RunRequest,
    on_chunk: ChunkHandler,
) -> Result<RunResult, ShellError> {
    let mut slot = None;
    if let Some(reason) = request.cancel.reason() {
        return Ok(stopped(reason));
    }
    slot.insert(Session::create(&options).await?)
        .end_after_run();
    run_in(&mut slot, &options, &request, on_chunk).await
}
